// workload_cell.h — a workload (workloads/) attached to a pool file, and
// the timed slices the Themis and WCL experiments measure it in.
//
// Approach: a cell opens a copy of a workload's setup image with the
// sw_config under test, attaches the workload and faults the mapping in;
// slice() runs it for a while between two sw_pool_quiesce calls (what
// retirement left is done untimed, so it never runs into the next cell's
// slice), checks that the pool committed exactly the transactions the
// workload ran, and adds the slice's counters to the cell.  close()
// verifies the structure: a wrong answer fails the experiment.
#ifndef SOFTWRAP_BENCH_SUITE_WORKLOAD_CELL_H_
#define SOFTWRAP_BENCH_SUITE_WORKLOAD_CELL_H_

#include <memory>
#include <string>
#include <vector>

#include "harness.h"
#include "workloads/registry.h"
#include "workloads/runner.h"

namespace softwrap::bench {

struct WorkloadCell {
  std::string what;  // names the cell in messages ("cq on undo (x86)")
  sw_pool* p = nullptr;
  std::vector<workloads::ApiAccess> acc;
  std::unique_ptr<workloads::Workload> w;
  uint64_t tx = 0;  // transactions of the recorded slices
  sw_stats sum{};   // ... and their counters

  // Opens the pool file at `path` with c and attaches the workload
  // (params.threads accesses).
  void open(const std::string& path, const sw_config& c, const workloads::Info& info,
            const workloads::Params& params);
  // Verifies the workload and closes the pool.
  void close();
};

// Transactions per second of one slice: per second of wall time, and per
// second of the running threads' CPU time (which leaves out the time other
// jobs on the machine took the CPU: the fairer measure for single-threaded
// cells, whose engines never block).
struct Rate {
  double wall, cpu;
  uint64_t transactions;
};

// Sets the workload up (one thread, nonatomic engine, x86: untimed) in a
// new pool file at `path` sized by workloads::pool_bytes, verifies it and
// closes it: the image every cell of the workload copies.
void setup_image(const std::string& path, const workloads::Info& info, const workloads::Params& params);

// Copies a pool file (a setup image) to `to`, replacing it.
void copy_pool(const std::string& from, const std::string& to);

// Runs `n` transactions of one thread of the workload on the pool at
// `path` (nonatomic engine, x86) under a store observer, adding them to
// *h, and verifies the workload: the Themis (Fig. 8) and WCL (Fig. 2)
// profiles of what the transactions store.
void observe(const std::string& path, const workloads::Info& info, const workloads::Params& params, uint64_t n,
             workloads::StoreHistogram* h);

// One slice of `seconds` (batches of 4 transactions per thread); with
// `record`, its transactions and counters are added to the cell.
Rate slice(WorkloadCell& c, double seconds, bool record);
// One slice of exactly `per_thread` transactions per thread: cells of one
// image that run the same counts go through the same transactions, however
// fast each is (a workload whose passes differ in cost, such as ssca2's,
// then never compares one pass on one cell with another on the other).
Rate slice_count(WorkloadCell& c, uint64_t per_thread, bool record);

// Exactly `n` transactions of thread 0 of a one-thread workload, run on the
// calling thread: no thread is started or joined inside the timing (which
// the limit's slices of a millisecond or two would notice), and a pinned
// caller runs them on its CPU.
workloads::Timed run_here(workloads::Workload& w, uint64_t n);
// One slice of run_here(c.w, n) between two quiesces, checked and
// recorded as slice_count's.
Rate slice_here(WorkloadCell& c, uint64_t n, bool record);

}  // namespace softwrap::bench

#endif  // SOFTWRAP_BENCH_SUITE_WORKLOAD_CELL_H_
