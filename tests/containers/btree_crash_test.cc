// btree_crash_test.cc — the B+tree under the crash simulator: for every
// engine that promises atomicity and both persistency models, every legal
// crash image at every crash point of the btree workload recovers to the
// tree (integer or std::string keys and values) before or after the interrupted wrap, byte for byte over all of its
// reachable state (see src/crashsim/btree_workload.cc), and recovery is
// idempotent.  The nonatomic engine is the control: it must be caught.
#include <gtest/gtest.h>

#include <tuple>

#include "crashsim/btree_workload.h"
#include "crashsim/simulator.h"

namespace softwrap::crashsim {
namespace {

SimResult run_btree(sw_engine_kind e, Persistency p, uint32_t size, const Workload& w = btree_workload()) {
  SimOptions o;
  o.engine = e;
  o.model = p;
  o.en.max_exhaustive = 256;
  Simulator sim(o);
  SimResult r;
  for (uint64_t seed : {1, 2, 3}) sim.run(w, seed, size, &r);
  return r;
}

class BtreeCrashTest : public ::testing::TestWithParam<std::tuple<sw_engine_kind, Persistency>> {};

TEST_P(BtreeCrashTest, EveryImageRecoversToTheTreeBeforeOrAfter) {
  const auto [e, p] = GetParam();
  const SimResult r = run_btree(e, p, 30);
  EXPECT_EQ(r.failures, 0u) << (r.reports.empty() ? "" : r.reports[0]);
  EXPECT_EQ(r.runs, 3u);
  EXPECT_GT(r.crash_points, 300u);
  EXPECT_GT(r.images, 5000u);
}

TEST_P(BtreeCrashTest, StringTreeRecoversToTheTreeBeforeOrAfter) {
  const auto [e, p] = GetParam();
  const SimResult r = run_btree(e, p, 30, btree_string_workload());
  EXPECT_EQ(r.failures, 0u) << (r.reports.empty() ? "" : r.reports[0]);
  EXPECT_EQ(r.runs, 3u);
  EXPECT_GT(r.crash_points, 300u);
  EXPECT_GT(r.images, 5000u);
}

INSTANTIATE_TEST_SUITE_P(Engines, BtreeCrashTest,
                         ::testing::Combine(::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL,
                                                              SW_ENGINE_UNDO),
                                            ::testing::Values(Persistency::kX86, Persistency::kThemis)));

TEST(BtreeCrashControlTest, NonatomicIsCaught) {
  EXPECT_GT(run_btree(SW_ENGINE_NONATOMIC, Persistency::kX86, 10).failures, 0u);
  EXPECT_GT(run_btree(SW_ENGINE_NONATOMIC, Persistency::kX86, 10, btree_string_workload()).failures, 0u);
}

}  // namespace
}  // namespace softwrap::crashsim
