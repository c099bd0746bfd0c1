// simulator_test.cc — the crash simulator end to end: every engine passes
// every workload under both models, the controls fail as they must, and the
// quick suite (what `softwrap crashtest --quick` runs) passes.
#include "crashsim/simulator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "crashsim/sim_test_util.h"
#include "crashsim/suite.h"

namespace softwrap::crashsim {
namespace {

SimResult run_all(sw_engine_kind e, Persistency p, uint32_t size, bool skip = false) {
  SimOptions o;
  o.engine = e;
  o.model = p;
  o.redo_skip_commit_validation = skip;
  o.en.max_exhaustive = 256;
  Simulator sim(o);
  SimResult r;
  for (const Workload& w : workloads()) sim.run(w, 3, size, &r);
  return r;
}

class EngineCrashTest : public ::testing::TestWithParam<std::tuple<sw_engine_kind, Persistency>> {};

TEST_P(EngineCrashTest, EveryImageRecoversToBeforeOrAfter) {
  const auto [e, p] = GetParam();
  const SimResult r = run_all(e, p, 6);
  EXPECT_EQ(r.failures, 0u) << first(r);
  EXPECT_GT(r.images, 1000u);
  EXPECT_GT(r.nested_images, 0u);
  EXPECT_EQ(r.runs, workloads().size());
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineCrashTest,
                         ::testing::Combine(::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL,
                                                              SW_ENGINE_UNDO),
                                            ::testing::Values(Persistency::kX86, Persistency::kThemis)));

TEST(CrashControlTest, NonatomicIsCaught) {
  const SimResult r = run_all(SW_ENGINE_NONATOMIC, Persistency::kX86, 6);
  EXPECT_GT(r.failures, 0u);
  ASSERT_FALSE(r.reports.empty());
  EXPECT_NE(r.reports[0].find("minimal image"), std::string::npos) << r.reports[0];
  EXPECT_NE(r.reports[0].find("nonatomic:data"), std::string::npos) << r.reports[0];
}

TEST(CrashControlTest, UndoThemisIsCaughtUnderX86AndPassesUnderThemis) {
  const SimResult x86 = run_all(SW_ENGINE_UNDO_THEMIS, Persistency::kX86, 6);
  EXPECT_GT(x86.failures, 0u);
  ASSERT_FALSE(x86.reports.empty());
  EXPECT_NE(x86.reports[0].find("undo:"), std::string::npos) << x86.reports[0];
  const SimResult themis = run_all(SW_ENGINE_UNDO_THEMIS, Persistency::kThemis, 6);
  EXPECT_EQ(themis.failures, 0u) << first(themis);
}

TEST(CrashControlTest, RedoWithoutCommitValidationIsCaught) {
  EXPECT_GT(run_all(SW_ENGINE_SOFTWRAP, Persistency::kX86, 6, true).failures, 0u);
  EXPECT_GT(run_all(SW_ENGINE_SOFTWRAP_LOCAL, Persistency::kThemis, 6, true).failures, 0u);
}

// Growth: the pool grows three times in each run, and every crash image
// (between the zone's format and its durable size, too) opens and
// recovers.  A growth that persists the size without fencing the zone
// first, and the nonatomic engine, are caught on the same workload.
SimResult run_grow(sw_engine_kind e, Persistency p, bool skip_zone_fence) {
  SimOptions o;
  o.engine = e;
  o.model = p;
  o.grow_skip_zone_fence = skip_zone_fence;
  o.en.max_exhaustive = 256;
  o.stop_after_failures = skip_zone_fence || e == SW_ENGINE_NONATOMIC ? 1 : 0;
  Simulator sim(o);
  SimResult r;
  for (uint64_t seed = 1; seed <= 2; ++seed) sim.run(*find_workload("grow"), seed, 12, &r);
  return r;
}

TEST(CrashGrowthTest, GrowthCrashPointsRecover) {
  const SimResult r = run_grow(SW_ENGINE_SOFTWRAP, Persistency::kX86, false);
  EXPECT_EQ(r.failures, 0u) << first(r);
  EXPECT_GE(r.points_by_label.count("grow:zone") ? r.points_by_label.at("grow:zone") : 0, 6u)
      << "the pool did not grow three times per run";
  EXPECT_GE(r.points_by_label.count("grow:size") ? r.points_by_label.at("grow:size") : 0, 6u);
}

TEST(CrashControlTest, GrowthWithoutZoneFenceIsCaught) {
  const SimResult r = run_grow(SW_ENGINE_SOFTWRAP, Persistency::kX86, true);
  EXPECT_GT(r.failures, 0u);
  ASSERT_FALSE(r.reports.empty());
  EXPECT_NE(r.reports[0].find("zone 1 at offset"), std::string::npos) << r.reports[0];
  EXPECT_NE(r.reports[0].find("grow:size"), std::string::npos) << r.reports[0];
}

TEST(CrashControlTest, NonatomicIsCaughtOnGrowth) {
  EXPECT_GT(run_grow(SW_ENGINE_NONATOMIC, Persistency::kThemis, false).failures, 0u);
}

TEST(CrashSuiteTest, QuickSuitePasses) {
  SuiteOptions o;
  const SuiteResult r = run_suite(o);
  EXPECT_GE(r.images, 100000u);
  EXPECT_EQ(r.failures, 0u) << (r.reports.empty() ? "" : r.reports[0]);
  EXPECT_EQ(r.controls_caught(), r.controls.size());
  EXPECT_EQ(r.controls.size(), 21u);
  EXPECT_TRUE(r.passed()) << r.summary();
}

}  // namespace
}  // namespace softwrap::crashsim
