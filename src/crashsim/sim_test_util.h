// sim_test_util.h — what the crash simulator's tests share: running a
// named workload on one engine and model, the first failure report, and
// test names for (workload, engine, model) cases.
#ifndef SOFTWRAP_CRASHSIM_SIM_TEST_UTIL_H_
#define SOFTWRAP_CRASHSIM_SIM_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

#include "crashsim/simulator.h"
#include "pool/pool.h"

namespace softwrap::crashsim {

// Runs workload `name` (8 wraps per seed) on engine e under model p,
// enumerating up to 256 pending items exhaustively; stops after
// stop_after failures (0: never).  fresh, help: control variants
// (ResolvedConfig::fresh_control, help_control).
inline SimResult run_named(const std::string& name, sw_engine_kind e, Persistency p, uint64_t stop_after = 0,
                           std::initializer_list<uint64_t> seeds = {1, 2},
                           FreshControl fresh = FreshControl::kNone, HelpControl help = HelpControl::kNone) {
  SimOptions o;
  o.engine = e;
  o.model = p;
  o.en.max_exhaustive = 256;
  o.stop_after_failures = stop_after;
  o.fresh_control = fresh;
  o.help_control = help;
  Simulator sim(o);
  SimResult r;
  const Workload* w = find_workload(name);
  EXPECT_NE(w, nullptr) << name;
  if (!w) return r;
  for (uint64_t seed : seeds) sim.run(*w, seed, 8, &r);
  return r;
}

inline std::string first(const SimResult& r) { return r.reports.empty() ? "" : r.reports[0]; }

// The names of a set of workloads (a test's parameters).
inline std::vector<std::string> names_of(const std::vector<Workload>& ws) {
  std::vector<std::string> out;
  for (const Workload& w : ws) out.push_back(w.name);
  return out;
}

// GoogleTest names allow no '-' ("undo-themis", "stmb7-s").
inline std::string test_name(std::string name) {
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

using NamedCase = std::tuple<std::string, sw_engine_kind, Persistency>;
inline std::string case_name(const ::testing::TestParamInfo<NamedCase>& i) {
  return test_name(std::get<0>(i.param)) + "_" + test_name(engine_kind_name(std::get<1>(i.param))) + "_" +
         test_name(persistency_name(std::get<2>(i.param)));
}

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_SIM_TEST_UTIL_H_
