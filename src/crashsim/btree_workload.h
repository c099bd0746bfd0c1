// btree_workload.h — the crash simulator's B+tree workload: random inserts
// and erases on a small-node softwrap::btree_map, 1-3 per wrap, some wraps
// aborted.  Not in workloads() (the engine suites stay as they are); the
// container tests run it (tests/containers/btree_crash_test.cc).
#ifndef SOFTWRAP_CRASHSIM_BTREE_WORKLOAD_H_
#define SOFTWRAP_CRASHSIM_BTREE_WORKLOAD_H_

#include "crashsim/workload.h"

namespace softwrap::crashsim {

const Workload& btree_workload();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_BTREE_WORKLOAD_H_
