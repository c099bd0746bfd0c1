// suite.h — the evaluation suite behind `softwrap bench`: one experiment
// per figure or table of the SoftWrAP papers' evaluations, and the Themis
// paper's (exp_themis.cc) and the write-combined logging paper's
// (exp_wcl.cc).
//
// Approach: an experiment is a function that measures cells through the
// public C API (harness.h) and writes CSV files under
// <out>/<experiment>/; after it, plot.py (run with /usr/bin/python3 and
// Debian's matplotlib) draws <experiment>.png from those files with the
// paper's values beside ours.  Correctness checks (array contents,
// counters) throw and fail the experiment; the papers' performance claims
// are recorded as PASS/FAIL in meta.csv and, without --quick, also make the
// command's exit status 1.
#ifndef SOFTWRAP_BENCH_SUITE_SUITE_H_
#define SOFTWRAP_BENCH_SUITE_SUITE_H_

#include <string>
#include <vector>

#include "harness.h"

namespace softwrap::bench {

struct Experiment {
  const char* name;
  const char* title;
  void (*run)(Context& ctx);
};

// In suite order (cheap first).
const std::vector<Experiment>& experiments();

// Runs the named experiments ("all" = every one); prints one summary line
// per experiment to stdout.  Returns 0, or 1 if an experiment failed (or,
// without --quick, a paper claim did not hold).
int run_suite(const std::vector<std::string>& names, const SuiteOptions& o);

// The experiments (exp_*.cc).
void run_fig4(Context& ctx);
void run_table2(Context& ctx);
void run_fig6(Context& ctx);
void run_fig7(Context& ctx);
void run_fig8(Context& ctx);
void run_fig9(Context& ctx);
void run_fig10(Context& ctx);
void run_fig11(Context& ctx);
void run_fig12(Context& ctx);
void run_workshop(Context& ctx);
void run_pmdk(Context& ctx);
void run_themis(Context& ctx);
void run_themis_sim(Context& ctx);
void run_wcl(Context& ctx);
void run_limit(Context& ctx);
void run_limit_cpu_cache(Context& ctx);

}  // namespace softwrap::bench

#endif  // SOFTWRAP_BENCH_SUITE_SUITE_H_
