// fresh_workload.h — the crash simulator's fresh-memory workloads (issue
// 23): blocks a wrap allocates (sw_pmalloc, sw_pzalloc, the first
// sw_pool_root) are filled with word stores, sw_write and sw_memset,
// linked into owned data and committed, aborted, freed and allocated again
// in the same wrap, or left in a wrap the trace ends inside.  Not in
// workloads() (the suite's default set): `softwrap crashtest --workload
// fresh` runs all five, `--workload NAME` one; crashsim_fresh_test (CTest,
// label crash) runs them small.
#ifndef SOFTWRAP_CRASHSIM_FRESH_WORKLOAD_H_
#define SOFTWRAP_CRASHSIM_FRESH_WORKLOAD_H_

#include <vector>

#include "crashsim/driver.h"

namespace softwrap::crashsim {

// fresh_alloc, fresh_abort, fresh_reuse, fresh_commit, fresh_small
// (fresh_workload.cc).
const std::vector<Workload>& fresh_workloads();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_FRESH_WORKLOAD_H_
