// help_workload.h — the crash simulator's workloads for commits that help
// retirement (issue 24, alias_ring.h).  Tiny alias tables switch every few
// wraps; inline retirement writes a seeded few chunks per step
// (Workload::retire_stepwise), so the committing wraps between the steps
// claim the rest, before their commit fences, and a word that several
// tables hold goes home from the foreground and from retirement in every
// order the seeds give.  Not in workloads() (the suite's default set):
// `softwrap crashtest --workload help` runs all three, `--workload NAME`
// one; crashsim_help_test (CTest, label crash) runs them small.
#ifndef SOFTWRAP_CRASHSIM_HELP_WORKLOAD_H_
#define SOFTWRAP_CRASHSIM_HELP_WORKLOAD_H_

#include <vector>

#include "crashsim/driver.h"

namespace softwrap::crashsim {

// help_words, help_pages, help_wcl (help_workload.cc).
const std::vector<Workload>& help_workloads();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_HELP_WORKLOAD_H_
