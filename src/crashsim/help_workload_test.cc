// help_workload_test.cc — the workloads of commits that help retirement
// (help_workload.h) under the crash simulator, small (seeds of 8 wraps):
// softwrap recovers every crash image under the x86 and Themis models (and
// so do the other engines, for which the workloads are ordinary ones);
// the foreground really writes home (help:home crash points) and the
// control variant — a helping commit that also writes its own words home
// before its commit fence — is caught.  Longer:
//   softwrap crashtest --full --workload help --images 1000000
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crashsim/help_workload.h"
#include "crashsim/sim_test_util.h"
#include "crashsim/simulator.h"
#include "pool/pool.h"

namespace softwrap::crashsim {
namespace {

std::vector<std::string> names() { return names_of(help_workloads()); }

class HelpCrashTest : public ::testing::TestWithParam<NamedCase> {};

TEST_P(HelpCrashTest, EveryImageRecoversToBeforeOrAfter) {
  const auto [name, e, p] = GetParam();
  const SimResult r = run_named(name, e, p, 0, {1, 2});
  EXPECT_EQ(r.failures, 0u) << first(r);
  EXPECT_GT(r.crash_points, 16u);
  EXPECT_GT(r.images, 200u);
}

INSTANTIATE_TEST_SUITE_P(Help, HelpCrashTest,
                         ::testing::Combine(::testing::ValuesIn(names()),
                                            ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL),
                                            ::testing::Values(Persistency::kX86, Persistency::kThemis)),
                         case_name);

// The foreground writes home in every workload (crash points at the
// commit fence of a wrap that helped) and so does retirement.
TEST(HelpCrashCoverage, CommitsAndRetirementBothWriteHome) {
  for (const std::string& name : names()) {
    const SimResult r = run_named(name, SW_ENGINE_SOFTWRAP, Persistency::kX86);
    std::string seen;
    for (const auto& [label, n] : r.points_by_label) seen += " " + label + "=" + std::to_string(n);
    EXPECT_GT(r.points_by_label.count("help:commit"), 0u) << name << ":" << seen;
    EXPECT_GT(r.points_by_label.count("retire:home"), 0u) << name << ":" << seen;
  }
}

TEST(HelpCrashControl, OwnWordsHomeBeforeTheCommitAreCaught) {
  for (const char* name : {"help_words", "help_wcl"}) {
    for (Persistency p : {Persistency::kX86, Persistency::kThemis}) {
      const SimResult r =
          run_named(name, SW_ENGINE_SOFTWRAP, p, 1, {1, 2, 3, 4}, FreshControl::kNone, HelpControl::kOwnBeforeCommit);
      EXPECT_GT(r.failures, 0u) << name << " (" << persistency_name(p)
                                << "): a helping commit that writes its own words home early was not caught";
    }
  }
}

}  // namespace
}  // namespace softwrap::crashsim
