// share_workload_test.cc — the workloads of a pool shared by several
// handles (share_workload.h) under the crash simulator, small (seeds of 8
// wraps): every crash image recovers to a prefix of the owner's wraps on
// softwrap, softwrap-local and undo under the x86 and Themis models; the
// crash points include the give-up's and the take's fences and, in
// share_dead, recovery's fences in the trace (a handle recovering a dead
// holder); and the control — write access given up before the commits are
// home (ResolvedConfig::share_skip_quiesce) — is caught, by the crash
// images.  Longer:
//   softwrap crashtest --full --workload share --images 1000000
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crashsim/share_workload.h"
#include "crashsim/sim_test_util.h"
#include "crashsim/simulator.h"
#include "pool/pool.h"

namespace softwrap::crashsim {
namespace {

std::vector<std::string> names() { return names_of(share_workloads()); }

std::string labels(const SimResult& r) {
  std::string seen;
  for (const auto& [label, n] : r.points_by_label) seen += " " + label + "=" + std::to_string(n);
  return seen;
}

class ShareCrashTest : public ::testing::TestWithParam<NamedCase> {};

TEST_P(ShareCrashTest, EveryImageRecoversToAPrefixOfTheWraps) {
  const auto [name, e, p] = GetParam();
  const SimResult r = run_named(name, e, p, 0, {1, 2, 3});
  EXPECT_EQ(r.failures, 0u) << first(r);
  EXPECT_GT(r.crash_points, 16u);
  EXPECT_GT(r.images, 200u);
  // Write access passed between handles, traced: crash points at the
  // marker fences of both directions.
  EXPECT_GT(r.points_by_label.count("share:take"), 0u) << labels(r);
  EXPECT_GT(r.points_by_label.count("share:give-up"), 0u) << labels(r);
}

INSTANTIATE_TEST_SUITE_P(Share, ShareCrashTest,
                         ::testing::Combine(::testing::ValuesIn(names()),
                                            ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL,
                                                              SW_ENGINE_UNDO),
                                            ::testing::Values(Persistency::kX86, Persistency::kThemis)),
                         case_name);

// The give-up's quiesce writes commits home in the trace (retirement and
// the watermark; the local engine writes home at each commit and persists
// its watermark there), and in share_dead the
// handles that take write access from a dead holder recover it: its
// committed frames replayed (redo engines), its open wrap rolled back
// (undo), with crash points at those fences and at the deaths.
TEST(ShareCrashCoverage, GiveUpsWriteHomeAndTakesRecoverTheDead) {
  {
    const SimResult r = run_named("share_pass", SW_ENGINE_SOFTWRAP, Persistency::kX86);
    EXPECT_GT(r.points_by_label.count("retire:home"), 0u) << labels(r);
    EXPECT_GT(r.points_by_label.count("truncate:watermark"), 0u) << labels(r);
    EXPECT_GT(r.points_by_label.count("grow:size"), 0u) << labels(r);  // the others follow it at their takes
  }
  {
    const SimResult r = run_named("share_pass", SW_ENGINE_SOFTWRAP_LOCAL, Persistency::kX86);
    EXPECT_GT(r.points_by_label.count("local:home"), 0u) << labels(r);
    EXPECT_GT(r.points_by_label.count("truncate:watermark"), 0u) << labels(r);
  }
  for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL}) {
    const SimResult r = run_named("share_dead", e, Persistency::kX86);
    EXPECT_GT(r.points_by_label.count("recovery:redo-replay"), 0u) << engine_kind_name(e) << ":" << labels(r);
    EXPECT_GT(r.points_by_label.count("recovery:watermark"), 0u) << engine_kind_name(e) << ":" << labels(r);
    EXPECT_GT(r.points_by_label.count("wrap-died"), 0u) << engine_kind_name(e) << ":" << labels(r);
    EXPECT_GT(r.points_by_label.count("crashsim:death"), 0u) << engine_kind_name(e) << ":" << labels(r);
  }
  {
    const SimResult r = run_named("share_dead", SW_ENGINE_UNDO, Persistency::kX86);
    EXPECT_GT(r.points_by_label.count("recovery:undo-rollback"), 0u) << labels(r);
    EXPECT_GT(r.points_by_label.count("wrap-died"), 0u) << labels(r);
  }
}

// Write access given up before the commits are home (for softwrap-local,
// whose commits write home as they end: before its watermark is persisted):
// the next holder numbers its commits from the stale watermark, below the
// previous holder's frames, and writes its frames over theirs, so committed
// wraps are lost or replayed out of order.  Caught by the crash images (a
// failing image, not only a load the workload checks) on both redo engines
// under both models.  (share_dead on softwrap-local shows it in fewer
// seeds: each dead holder's recovery persists the watermark the skipped
// quiesce left behind, and the last process writes alone.  The undo engine
// has no such variant: its commits are home when they return.)
TEST(ShareCrashControl, GivingUpBeforeCommitsAreHomeIsCaught) {
  for (const char* name : {"share_pass", "share_dead"}) {
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL}) {
      if (e == SW_ENGINE_SOFTWRAP_LOCAL && std::string(name) == "share_dead") continue;
      for (Persistency p : {Persistency::kX86, Persistency::kThemis}) {
        SimOptions o;
        o.engine = e;
        o.model = p;
        o.en.max_exhaustive = 256;
        o.stop_after_failures = 1;
        o.max_reports = 4;
        o.share_skip_quiesce = true;
        Simulator sim(o);
        SimResult r;
        for (uint64_t seed = 1; seed <= 8 && r.failures == r.run_failures; ++seed) {
          sim.run(*find_workload(name), seed, 8, &r);
        }
        std::string image_report;
        for (const std::string& rep : r.reports) {
          if (image_report.empty() && rep.find("crash point:") != std::string::npos) image_report = rep;
        }
        EXPECT_GT(r.failures - r.run_failures, 0u)
            << name << " on " << engine_kind_name(e) << " (" << persistency_name(p)
            << "): write access given up before the commits are home was not caught by a crash image; " << first(r);
        EXPECT_NE(image_report.find("variant=share-skip-quiesce"), std::string::npos) << image_report;
      }
    }
  }
}

}  // namespace
}  // namespace softwrap::crashsim
