// object_workload.h — the crash simulator's object-write workloads (issue
// 39): sw_modify views written with plain stores — shifts inside nodes,
// objects modified twice, partly and across two, larger than a shadow page
// and many small ones, mixed with word stores, sw_write and sw_memset of
// the same bytes, in blocks allocated and freed in the same wrap — with
// aborts and a last wrap left open.  Not in workloads() (the suite's
// default set): `softwrap crashtest --workload objects` runs all three,
// `--workload NAME` one; crashsim_object_test (CTest, label crash) runs them
// small, with the control that must be caught (changes not logged).
#ifndef SOFTWRAP_CRASHSIM_OBJECT_WORKLOAD_H_
#define SOFTWRAP_CRASHSIM_OBJECT_WORKLOAD_H_

#include <vector>

#include "crashsim/driver.h"

namespace softwrap::crashsim {

// obj_nodes, obj_large, obj_alloc (object_workload.cc).
const std::vector<Workload>& object_workloads();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_OBJECT_WORKLOAD_H_
