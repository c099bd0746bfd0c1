// paper_workloads_test.cc — the shared workloads (workloads/) under the
// crash simulator, small: softwrap, softwrap-local and undo recover every
// crash image under the x86 and Themis models; undo-themis does under
// Themis and is caught under x86, where its undo records may persist after
// the data they protect — except in TATP, whose update_location stores one
// aligned word and nothing else: without its fence the record may persist
// after the word, but an image holding the new word and no record is the
// state after the transaction, which is legal, so no crash can show it.
// CI runs SOFTWRAP_CRASH_PAPER_WORKLOADS (a comma-separated list; default:
// all of them, two seeds of 8 transactions, about 20 s); longer:
//   softwrap crashtest --full --workload themis
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <tuple>

#include "crashsim/paper_workloads.h"
#include "crashsim/sim_test_util.h"
#include "crashsim/simulator.h"
#include "pool/pool.h"
#include "workloads/registry.h"

namespace softwrap::crashsim {
namespace {

std::vector<std::string> ci_workloads() {
  const char* env = std::getenv("SOFTWRAP_CRASH_PAPER_WORKLOADS");
  std::vector<std::string> out;
  if (env && *env) {
    std::istringstream in(env);
    for (std::string w; std::getline(in, w, ',');) out.push_back(w);
  } else {
    for (const workloads::Info* i : workloads::all_workloads()) out.push_back(i->name);
  }
  return out;
}

class PaperWorkloadCrashTest : public ::testing::TestWithParam<NamedCase> {};

TEST_P(PaperWorkloadCrashTest, EveryImageRecoversToBeforeOrAfter) {
  const auto [name, e, p] = GetParam();
  const SimResult r = run_named(name, e, p);
  EXPECT_EQ(r.failures, 0u) << first(r);
  EXPECT_EQ(r.runs, 2u);
  EXPECT_GT(r.crash_points, 16u);
  EXPECT_GT(r.images, 50u);
}

INSTANTIATE_TEST_SUITE_P(
    Ci, PaperWorkloadCrashTest,
    ::testing::Combine(::testing::ValuesIn(ci_workloads()),
                       ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                       ::testing::Values(Persistency::kX86, Persistency::kThemis)),
    case_name);

class UndoThemisCrashTest : public ::testing::TestWithParam<std::string> {};

TEST_P(UndoThemisCrashTest, PassesUnderThemisAndIsCaughtUnderX86) {
  const SimResult themis = run_named(GetParam(), SW_ENGINE_UNDO_THEMIS, Persistency::kThemis);
  EXPECT_EQ(themis.failures, 0u) << first(themis);
  EXPECT_GT(themis.images, 50u);
  const SimResult x86 = run_named(GetParam(), SW_ENGINE_UNDO_THEMIS, Persistency::kX86, 1);
  if (GetParam() == "tatp") {  // one store per transaction: nothing to catch (see above)
    EXPECT_EQ(x86.failures, 0u) << first(x86);
    return;
  }
  EXPECT_GT(x86.failures, 0u) << "undo-themis was not caught under the x86 model";
  EXPECT_NE(first(x86).find("undo:"), std::string::npos) << first(x86);
}

INSTANTIATE_TEST_SUITE_P(Ci, UndoThemisCrashTest, ::testing::ValuesIn(ci_workloads()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return test_name(i.param); });

TEST(PaperWorkloads, EveryRegistryWorkloadIsACrashWorkload) {
  ASSERT_EQ(registry_workloads().size(), workloads::all_workloads().size());
  for (const workloads::Info* i : workloads::all_workloads()) {
    const Workload* w = find_workload(i->name);
    ASSERT_NE(w, nullptr) << i->name;
    EXPECT_NE(w->check_image, nullptr);
  }
  EXPECT_EQ(themis_workloads().size(), workloads::themis_workloads().size());
  for (const Workload& w : registry_workloads()) {
    const bool wcl_paper = std::string(workloads::find_workload(w.name)->paper).rfind("WCL", 0) == 0;
    EXPECT_EQ((w.flags & SW_CONFIG_WCL) != 0, wcl_paper) << w.name << ": the WCL paper's workloads run with WCL";
  }
}

TEST(PaperWorkloads, NonatomicIsCaught) {
  const SimResult r = run_named(ci_workloads()[0], SW_ENGINE_NONATOMIC, Persistency::kX86, 1);
  EXPECT_GT(r.failures, 0u);
}

}  // namespace
}  // namespace softwrap::crashsim
