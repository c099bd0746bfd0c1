// btree_workload.h — the crash simulator's B+tree workloads: random
// inserts and erases on a small-node softwrap::btree_map, 1-3 per wrap,
// some wraps aborted; and its std::string twin.  Not in workloads() (the
// engine suites stay as they are); the container tests run them
// (tests/containers/btree_crash_test.cc).
#ifndef SOFTWRAP_CRASHSIM_BTREE_WORKLOAD_H_
#define SOFTWRAP_CRASHSIM_BTREE_WORKLOAD_H_

#include "crashsim/driver.h"

namespace softwrap::crashsim {

const Workload& btree_workload();
// The same on btree_map<std::string, std::string>, with value overwrites.
const Workload& btree_string_workload();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_BTREE_WORKLOAD_H_
