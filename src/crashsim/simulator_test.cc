// simulator_test.cc — the crash simulator end to end: every engine passes
// every workload under every model (x86, Themis, page cache), the controls
// fail as they must, and the quick suite (what `softwrap crashtest --quick`
// runs) passes, as does its page cache counterpart (`--model page-cache`,
// with 4 KiB pages and with 512-byte sectors).
#include "crashsim/simulator.h"

#include <gtest/gtest.h>

#include <initializer_list>

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
                                            ::testing::Values(Persistency::kX86, Persistency::kThemis,
                                                              Persistency::kPageCache)));

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

// A run of nonatomic on bank (it fails at once) under `model`.
SimOptions nonatomic_bank(Persistency model) {
  SimOptions o;
  o.engine = SW_ENGINE_NONATOMIC;
  o.model = model;
  o.en.max_exhaustive = 256;
  o.stop_after_failures = 1;
  return o;
}

// Its first failure report ("" after a failed expectation).
std::string first_report(const SimOptions& o) {
  Simulator sim(o);
  SimResult r;
  sim.run(*find_workload("bank"), 1, 6, &r);
  EXPECT_GT(r.failures, 0u);
  EXPECT_FALSE(r.reports.empty());
  return r.reports.empty() ? std::string() : r.reports[0];
}

// The controls of one model (a name holding any of `tags`): each must be
// caught, and with all_fail each must have failed (none is a "passes"
// control).  Returns how many there are.
size_t model_controls(const SuiteResult& r, std::initializer_list<const char*> tags, bool all_fail) {
  size_t n = 0;
  for (const ControlResult& c : r.controls) {
    bool mine = false;
    for (const char* t : tags) mine |= c.name.find(t) != std::string::npos;
    if (!mine) continue;
    ++n;
    EXPECT_TRUE(c.caught) << c.name << "\n" << c.detail;
    if (all_fail) EXPECT_GT(c.failures, 0u) << c.name;
  }
  return n;
}

TEST(CrashSuiteTest, QuickSuitePasses) {
  SuiteOptions o;
  const SuiteResult r = run_suite(o);
  EXPECT_GE(r.images, 100000u);
  EXPECT_EQ(r.failures, 0u) << (r.reports.empty() ? "" : r.reports[0]);
  EXPECT_EQ(r.controls_caught(), r.controls.size());
  EXPECT_EQ(r.controls.size(), 34u);
  EXPECT_TRUE(r.passed()) << r.summary();
}

// The page cache model (an ordinary file under the msync medium) has a
// test of its own, smaller than the quick suite (two rounds), with the
// controls: the 34 above and those of the page cache, which must fail
// under it too.
TEST(CrashSuiteTest, PageCacheSuitePasses) {
  SuiteOptions o;
  o.models = {Persistency::kPageCache};
  o.min_rounds = 2;
  const SuiteResult r = run_suite(o);
  EXPECT_GE(r.images, 100000u);
  EXPECT_GT(r.nested_images, 0u);
  EXPECT_EQ(r.failures, 0u) << (r.reports.empty() ? "" : r.reports[0]);
  EXPECT_EQ(model_controls(r, {"(page-cache)"}, true), 15u);
  EXPECT_EQ(r.controls.size(), 34u + 15u);
  EXPECT_TRUE(r.passed()) << r.summary();
}

// The eADR model (persistent caches): every engine in the medium's
// cpu-cache form, both stream forms, one round of the default workloads,
// with its controls (the 34 above and 8 of its own).
TEST(CrashSuiteTest, EadrSuitePasses) {
  SuiteOptions o;
  o.models = {Persistency::kEadr};
  o.min_rounds = 1;
  o.max_rounds = 1;
  const SuiteResult r = run_suite(o);
  EXPECT_GE(r.images, 100000u);
  EXPECT_GT(r.nested_images, 0u);
  EXPECT_EQ(r.failures, 0u) << (r.reports.empty() ? "" : r.reports[0]);
  EXPECT_EQ(model_controls(r, {"eadr", "cpu-cache form"}, false), 8u);
  EXPECT_EQ(r.controls.size(), 34u + 8u);
  EXPECT_TRUE(r.passed()) << r.summary();
}

// A failure report under the eADR model names the visible stores' prefix
// and reproduces with the model and the stream form.
TEST(CrashControlTest, EadrReportsNameTheVisibleStoresAndTheForm) {
  SimOptions o = nonatomic_bank(Persistency::kEadr);
  o.cpu_cache.on = true;
  o.cpu_cache.streams = StreamForm::kTemporal;
  const std::string rep = first_report(o);
  EXPECT_NE(rep.find("model=eadr medium=cpu-cache/temporal"), std::string::npos) << rep;
  EXPECT_NE(rep.find("visible stores from 0x"), std::string::npos) << rep;
  EXPECT_NE(rep.find("--model eadr --cpu-cache temporal --workload bank"), std::string::npos) << rep;
}

// Sectors as the unit of writeback: a page write may tear on power loss.
// One round, no controls (the failures they show are the page's).
TEST(CrashSuiteTest, SectorWritebackSuitePasses) {
  SuiteOptions o;
  o.models = {Persistency::kPageCache};
  o.writeback_unit = kSectorUnit;
  o.min_rounds = 1;
  o.max_rounds = 1;
  o.controls = false;
  const SuiteResult r = run_suite(o);
  EXPECT_GE(r.images, 100000u);
  EXPECT_EQ(r.failures, 0u) << (r.reports.empty() ? "" : r.reports[0]);
  EXPECT_TRUE(r.passed()) << r.summary();
}

// A failure report under the page cache model names pages and reproduces
// with the model (and a writeback unit other than the page).
TEST(CrashControlTest, PageCacheReportsNamePagesAndTheModel) {
  for (uint32_t unit : {kSyncPage, kSectorUnit}) {
    SimOptions o = nonatomic_bank(Persistency::kPageCache);
    o.writeback_unit = unit;
    const std::string rep = first_report(o);
    EXPECT_NE(rep.find("model=page-cache"), std::string::npos) << rep;
    if (unit == kSyncPage) {
      EXPECT_NE(rep.find("persisted: page 0x"), std::string::npos) << rep;
      EXPECT_NE(rep.find("--model page-cache --workload bank"), std::string::npos) << rep;
    } else {
      EXPECT_NE(rep.find("persisted: writeback unit 0x"), std::string::npos) << rep;
      EXPECT_NE(rep.find("--model page-cache --writeback-unit 512 --workload bank"), std::string::npos) << rep;
    }
  }
}

}  // namespace
}  // namespace softwrap::crashsim
