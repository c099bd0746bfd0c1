// fresh_workload_test.cc — the fresh-memory workloads (fresh_workload.h)
// under the crash simulator, small (seeds of 8 wraps each):
// softwrap, softwrap-local and undo recover every crash image under the x86
// and Themis models; undo-themis does under Themis and is caught under x86;
// nonatomic is caught under both.  The control variants
// (ResolvedConfig::fresh_control: fresh blocks unflushed at the commit; on
// the redo engines, a small wrap's blocks unlogged, or logged and left
// unflushed) must be caught.  Longer:
//   softwrap crashtest --full --workload fresh --images 1000000
#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <tuple>

#include "crashsim/fresh_workload.h"
#include "crashsim/sim_test_util.h"
#include "crashsim/simulator.h"
#include "pool/pool.h"

namespace softwrap::crashsim {
namespace {

std::vector<std::string> names() { return names_of(fresh_workloads()); }

class FreshCrashTest : public ::testing::TestWithParam<NamedCase> {};

TEST_P(FreshCrashTest, EveryImageRecoversToBeforeOrAfter) {
  const auto [name, e, p] = GetParam();
  const SimResult r = run_named(name, e, p, 0, {1});
  EXPECT_EQ(r.failures, 0u) << first(r);
  EXPECT_EQ(r.runs, 1u);
  EXPECT_GT(r.crash_points, 16u);
  EXPECT_GT(r.images, 200u);
  EXPECT_GT(r.nested_images, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Fresh, FreshCrashTest,
    ::testing::Combine(::testing::ValuesIn(names()),
                       ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                       ::testing::Values(Persistency::kX86, Persistency::kThemis, Persistency::kPageCache)),
    case_name);

// The cases the workloads exist for are reached: aborted wraps, a wrap the
// trace ends inside (fresh_abort's last), retirement between a free and
// the next allocation (fresh_reuse's small tables).
TEST(FreshCrashCoverage, AbortsOpenWrapsAndRetirementAreCrashPoints) {
  const SimResult abort = run_named("fresh_abort", SW_ENGINE_SOFTWRAP, Persistency::kX86);
  EXPECT_GT(abort.points_by_label.count("wrap-abort"), 0u);
  // Each run ends inside a wrap: one more wrap-open than wrap-close and
  // wrap-abort together.
  const auto count = [&](const char* l) {
    return abort.points_by_label.count(l) ? abort.points_by_label.at(l) : uint64_t{0};
  };
  EXPECT_EQ(count("wrap-open"), count("wrap-close") + count("wrap-abort") + 2);
  const SimResult reuse = run_named("fresh_reuse", SW_ENGINE_SOFTWRAP, Persistency::kX86);
  EXPECT_GT(reuse.points_by_label.count("retire:home"), 0u);
}

class FreshUndoThemisTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FreshUndoThemisTest, PassesUnderThemisAndIsCaughtUnderX86) {
  const SimResult themis = run_named(GetParam(), SW_ENGINE_UNDO_THEMIS, Persistency::kThemis);
  EXPECT_EQ(themis.failures, 0u) << first(themis);
  EXPECT_GT(themis.images, 200u);
  const SimResult x86 = run_named(GetParam(), SW_ENGINE_UNDO_THEMIS, Persistency::kX86, 1);
  EXPECT_GT(x86.failures, 0u) << "undo-themis was not caught under the x86 model";
}

TEST_P(FreshUndoThemisTest, NonatomicIsCaught) {
  EXPECT_GT(run_named(GetParam(), SW_ENGINE_NONATOMIC, Persistency::kX86, 1).failures, 0u);
  EXPECT_GT(run_named(GetParam(), SW_ENGINE_NONATOMIC, Persistency::kThemis, 1).failures, 0u);
}

INSTANTIATE_TEST_SUITE_P(Fresh, FreshUndoThemisTest, ::testing::ValuesIn(names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The control: fresh blocks left unflushed at the commit.  fresh_alloc and
// fresh_commit commit fresh bytes in their first wrap, so a crash right
// after that commit may find the commit durable and the bytes not.  Each
// engine under the model it is correct under (undo-themis: Themis).
// kSkipFlush: nothing flushed, on every engine.  The redo engines log a
// wrap's fresh blocks of at most FreshSet::kLogMax bytes in its frame
// instead of fencing them: kSkipLog (not logged) is caught at the commit,
// kSkipLoggedFlush (logged, the last line never flushed) once retirement
// has made the frame unreplayable while the block is still linked.
using ControlCase = std::tuple<sw_engine_kind, Persistency, FreshControl>;
class FreshControlTest : public ::testing::TestWithParam<ControlCase> {};

std::string variant(FreshControl c) { return std::string("variant=") + fresh_control_name(c); }

TEST_P(FreshControlTest, IsCaught) {
  const auto [e, p, c] = GetParam();
  std::vector<const char*> names = {"fresh_alloc", "fresh_commit"};
  if (c == FreshControl::kSkipLoggedFlush) names = {"fresh_small"};  // seen once a frame retired
  for (const char* name : names) {
    const SimResult r = run_named(name, e, p, 1, {1, 2}, c);
    EXPECT_GT(r.failures, 0u) << name << ": " << variant(c) << " was not caught";
    EXPECT_NE(first(r).find(variant(c)), std::string::npos) << first(r);
  }
}

std::vector<ControlCase> control_cases() {
  std::vector<ControlCase> v;
  for (Persistency p : {Persistency::kX86, Persistency::kThemis}) {
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL}) {
      for (FreshControl c : {FreshControl::kSkipFlush, FreshControl::kSkipLog, FreshControl::kSkipLoggedFlush}) {
        v.emplace_back(e, p, c);
      }
    }
    v.emplace_back(SW_ENGINE_UNDO, p, FreshControl::kSkipFlush);
  }
  v.emplace_back(SW_ENGINE_UNDO_THEMIS, Persistency::kThemis, FreshControl::kSkipFlush);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Engines, FreshControlTest, ::testing::ValuesIn(control_cases()),
                         [](const ::testing::TestParamInfo<ControlCase>& i) {
                           return test_name(engine_kind_name(std::get<0>(i.param))) + "_" +
                                  persistency_name(std::get<1>(i.param)) + "_" +
                                  test_name(fresh_control_name(std::get<2>(i.param)));
                         });

}  // namespace
}  // namespace softwrap::crashsim
