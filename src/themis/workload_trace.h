// workload_trace.h — traces of the paper's workloads (workloads/) for the
// Themis simulator.
//
// record_workload() creates a pool file whose medium is a TraceMedium
// (the medium factory seam), builds the workload's initial structure
// untraced, then records `transactions` transactions per thread with
// loads and work on, and has the workload verify its structure.  On a
// shared machine a single measurement is noisy (preemption, other
// programs in the caches), so a single-threaded workload is then run again
// `work_passes` times on fresh pools recording only its work (4 bytes an
// event, which also disturbs the program's caches less than 48-byte
// events), and each event keeps the smallest work measured: per event, the
// least-disturbed run (SPS: 14.3 us of work per transaction, min of 3
// work-only runs, against 64 us for the whole untraced transaction).  Baseline
// runs the `undo` engine's trace (every fence); Themis and Ideal run the
// `undo-themis` engine's (no non-temporal->temporal fences; it opens on
// the trace medium, which declares the Themis rule).  Single-threaded
// runs of the two engines are the same program but for those fences:
// share_work() checks that, event by event, and gives both traces the
// smaller of the two measured works for each event, so the designs are
// compared on identical work (the rest of the noise of a shared machine
// is in neither).
#ifndef SOFTWRAP_THEMIS_WORKLOAD_TRACE_H_
#define SOFTWRAP_THEMIS_WORKLOAD_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "medium/trace_medium.h"
#include "softwrap/softwrap.h"
#include "workloads/workload.h"

namespace softwrap::themis {

struct RecordSpec {
  std::string workload;                  // registry name ("sps")
  sw_engine_kind engine = SW_ENGINE_UNDO;  // undo or undo-themis
  workloads::Params params;              // threads, seed, tx_size, scale
  uint64_t transactions = 1000;          // per thread
  std::string pool_dir = "/dev/shm";
  unsigned work_passes = 2;              // work-only reruns (single-threaded only)
};

struct Recorded {
  std::vector<TraceEvent> events;  // with loads and work
  double ticks_per_ns = 0;         // of TraceEvent::work
  uint64_t transactions = 0;  // committed wraps in the trace (all threads)
  double stores_per_tx = 0;   // temporal data stores ("undo:data") per committed wrap
  uint64_t removable_fences = 0;  // FenceKind::kLogOrder fences in the trace
  uint64_t fences = 0;
};

// False (why) if the pool cannot be made, the workload fails or its
// verify() finds the structure wrong after the run.
bool record_workload(const RecordSpec& spec, Recorded* out, std::string* why);

// REQUIRES: single-threaded traces of the same workload run on `undo` and
// `undo-themis`.  Checks that `themis` is `undo` without its kLogOrder
// fences, event by event (kind, thread, offset, bytes, count; not values,
// whose checksums depend on the pool) (false and why otherwise) and sets each event's work in both to
// the smaller of the two measurements (a dropped fence's work counts with
// the event after it).
bool share_work(std::vector<TraceEvent>* undo, std::vector<TraceEvent>* themis, std::string* why);

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_WORKLOAD_TRACE_H_
