// crash_workload.h — the crash simulator's SQLite workload: a small
// database on the softwrap VFS inside the simulated pool, a handful of
// transactions (each one wrap), checked at every crash image by bytes and by
// SQL (see crash_workload.cc).  Not in crashsim::workloads(), which must not
// depend on SQLite; sqlite/crash_test.cc runs it.
#ifndef SOFTWRAP_SQLITE_CRASH_WORKLOAD_H_
#define SOFTWRAP_SQLITE_CRASH_WORKLOAD_H_

#include "crashsim/driver.h"

namespace softwrap::crashsim {

const Workload& sqlite_workload();
// The same on a pool without SW_CONFIG_WCL (the VFS's wcl=0).
const Workload& sqlite_whole_pages_workload();

// The same program with the byte-level check switched off (it owns no
// bytes, only the allocation count): the SQL check alone must tell a
// crash image before or after a transaction from one in between.  A
// control: run with the nonatomic engine, it must fail.
const Workload& sqlite_sql_only_workload();

// How many crash images the SQL check has looked at in this process.
uint64_t sqlite_image_checks();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_SQLITE_CRASH_WORKLOAD_H_
