// share_workload.h — the crash simulator's workloads for pools shared
// between processes (SW_CONFIG_SHARED, api/share.h; issue 26).  Two
// handles of one pool image (Workload::handles = 2), each another
// "process" on its own thread, take turns holding write access: every
// passing of it is a give-up (the engine's quiesce: retirement and the
// watermark, then the marker) and a take (the marker, and a reload of the
// allocator and the engine when the other handle wrote), all traced, so
// the simulator crashes the pool at each of their fences.  In share_dead
// one of them dies (holding write access with commits not home, or with a
// wrap open, or between sessions) and the other recovers it when it takes
// write access: crash points inside that recovery.  Not in workloads()
// (the quick suite's set): `softwrap crashtest --workload share` runs both,
// `--workload NAME` one; `--full` runs them with the default set;
// crashsim_share_test (CTest, label crash) runs them small.
#ifndef SOFTWRAP_CRASHSIM_SHARE_WORKLOAD_H_
#define SOFTWRAP_CRASHSIM_SHARE_WORKLOAD_H_

#include <vector>

#include "crashsim/driver.h"

namespace softwrap::crashsim {

// share_pass, share_dead (share_workload.cc).
const std::vector<Workload>& share_workloads();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_SHARE_WORKLOAD_H_
