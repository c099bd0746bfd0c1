// object_workload_test.cc — the object-write workloads (object_workload.h)
// under the crash simulator, small (one seed of 8 wraps each): softwrap,
// softwrap-local and undo recover every crash image under the x86, Themis
// and page-cache models; undo-themis does under Themis and is caught under
// x86; nonatomic is caught.  The control (ResolvedConfig::objects_unlogged:
// the changed bytes of an object written home before the commit record,
// or stored to with no undo record) must be caught on every engine that
// logs, and so must the allocator-words control (alloc_unlogged).  Longer:
//   softwrap crashtest --full --workload objects --images 2000000
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

#include "crashsim/object_workload.h"
#include "crashsim/sim_test_util.h"
#include "crashsim/simulator.h"
#include "pool/pool.h"

namespace softwrap::crashsim {
namespace {

std::vector<std::string> names() { return names_of(object_workloads()); }

class ObjectCrashTest : public ::testing::TestWithParam<NamedCase> {};

TEST_P(ObjectCrashTest, EveryImageRecoversToBeforeOrAfter) {
  const auto [name, e, p] = GetParam();
  const SimResult r = run_named(name, e, p, 0, {1});
  EXPECT_EQ(r.failures, 0u) << first(r);
  EXPECT_EQ(r.runs, 1u);
  EXPECT_GT(r.crash_points, 16u);
  EXPECT_GT(r.images, 200u);
}

INSTANTIATE_TEST_SUITE_P(
    Objects, ObjectCrashTest,
    ::testing::Combine(::testing::ValuesIn(names()),
                       ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                       ::testing::Values(Persistency::kX86, Persistency::kThemis, Persistency::kPageCache)),
    case_name);

class ObjectUndoThemisTest : public ::testing::TestWithParam<std::string> {};

// Under x86 undo-themis must be caught where objects of old data are
// written in place (obj_alloc writes mostly fresh blocks, which need no
// undo record: it is not asked to fail).
TEST_P(ObjectUndoThemisTest, PassesUnderThemisAndIsCaughtUnderX86) {
  const SimResult themis = run_named(GetParam(), SW_ENGINE_UNDO_THEMIS, Persistency::kThemis);
  EXPECT_EQ(themis.failures, 0u) << first(themis);
  EXPECT_GT(themis.images, 200u);
  if (GetParam() == "obj_alloc") return;
  const SimResult x86 = run_named(GetParam(), SW_ENGINE_UNDO_THEMIS, Persistency::kX86, 1);
  EXPECT_GT(x86.failures, 0u) << "undo-themis was not caught under the x86 model";
}

TEST_P(ObjectUndoThemisTest, NonatomicIsCaught) {
  EXPECT_GT(run_named(GetParam(), SW_ENGINE_NONATOMIC, Persistency::kX86, 1).failures, 0u);
}

INSTANTIATE_TEST_SUITE_P(Objects, ObjectUndoThemisTest, ::testing::ValuesIn(names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The in-place path is really taken: crash points at the ordering fence
// of an object's undo records (the redo engines' object commits are
// writes, seen by the control above failing when they are not logged).
TEST(ObjectCrashCoverage, InPlaceObjectsFenceTheirUndoRecords) {
  const SimResult undo = run_named("obj_nodes", SW_ENGINE_UNDO, Persistency::kX86);
  EXPECT_GT(undo.points_by_label.count("undo:object"), 0u);
}

// The control: an object's changed bytes not logged.
using ControlCase = std::tuple<sw_engine_kind, Persistency>;
class ObjectControlTest : public ::testing::TestWithParam<ControlCase> {};

// Workloads `names` (seeds 1 and 2, 8 wraps) on engine e under model p
// with the control variant `set` puts into the options; stops at the first
// failure.
SimResult run_variant(std::initializer_list<const char*> names, sw_engine_kind e, Persistency p,
                      void (*set)(SimOptions&)) {
  SimOptions o;
  o.engine = e;
  o.model = p;
  o.en.max_exhaustive = 256;
  o.stop_after_failures = 1;
  set(o);
  Simulator sim(o);
  SimResult r;
  for (const char* name : names) {
    const Workload* w = find_workload(name);
    EXPECT_NE(w, nullptr) << name;
    if (!w) continue;
    for (uint64_t seed : {1, 2}) sim.run(*w, seed, 8, &r);
  }
  return r;
}

TEST_P(ObjectControlTest, UnloggedChangesAreCaught) {
  const auto [e, p] = GetParam();
  for (const char* name : {"obj_nodes", "obj_large"}) {
    const SimResult r = run_variant({name}, e, p, [](SimOptions& o) { o.objects_unlogged = true; });
    EXPECT_GT(r.failures, 0u) << name << ": unlogged object changes were not caught";
    EXPECT_NE(first(r).find("variant=objects-unlogged"), std::string::npos) << first(r);
  }
}

// The control of allocator words: stored home in place, not through the
// engine (ResolvedConfig::alloc_unlogged).  A crash before a commit then
// keeps an allocation or a free the wrap never committed.
TEST_P(ObjectControlTest, UnloggedAllocatorWordsAreCaught) {
  const auto [e, p] = GetParam();
  const SimResult r = run_variant({"alloc", "obj_alloc"}, e, p, [](SimOptions& o) { o.alloc_unlogged = true; });
  EXPECT_GT(r.failures, 0u) << "allocator words not logged were not caught";
  EXPECT_NE(first(r).find("variant=alloc-unlogged"), std::string::npos) << first(r);
}

INSTANTIATE_TEST_SUITE_P(Objects, ObjectControlTest,
                         ::testing::Combine(::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL,
                                                              SW_ENGINE_UNDO),
                                            ::testing::Values(Persistency::kX86, Persistency::kThemis,
                                                              Persistency::kPageCache)),
                         [](const ::testing::TestParamInfo<ControlCase>& i) {
                           return test_name(engine_kind_name(std::get<0>(i.param))) + "_" +
                                  test_name(persistency_name(std::get<1>(i.param)));
                         });

}  // namespace
}  // namespace softwrap::crashsim
