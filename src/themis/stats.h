// stats.h — what a simulation run measures.
#ifndef SOFTWRAP_THEMIS_STATS_H_
#define SOFTWRAP_THEMIS_STATS_H_

#include <cstdint>
#include <vector>

#include "themis/config.h"

namespace softwrap::themis {

// Counts of cycle values: exact up to kExact, one bin above.
struct Histogram {
  static constexpr Cycle kExact = 2048;
  std::vector<uint64_t> counts = std::vector<uint64_t>(kExact + 1, 0);
  uint64_t total = 0;
  Cycle max = 0;
  void add(Cycle c) {
    ++counts[c < kExact ? c : kExact];
    ++total;
    if (c > max) max = c;
  }
  // Smallest value v with at least fraction q of the samples <= v (bins
  // above kExact report kExact).
  Cycle quantile(double q) const;
  void merge(const Histogram& o);
};

struct CoreStats {
  Cycle finish = 0;         // when its last operation retired
  Cycle measured = 0;       // finish - end of its warm-up
  uint64_t ops = 0, loads = 0, stores = 0, streams = 0, flushes = 0, fences = 0;
  Cycle fence_stall = 0;    // cycles the core waited at fences
  Cycle sb_stall = 0;       // ... for a store-buffer slot
  Cycle load_stall = 0;     // ... for load data beyond an L1 hit
  uint64_t l1_misses = 0;
};

struct Stats {
  std::vector<CoreStats> cores;
  Cycle cycles = 0;             // the run: max over cores of `measured`
  Histogram wbb_wait;           // Fig. 11: cycles a writeback waited for its DA pointer
  uint64_t writebacks = 0;      // entries into the WBBs
  uint64_t wcb_overflows = 0;   // Section V-E
  uint64_t wcb_allocations = 0, wcb_coalesced = 0;
  uint64_t wcb_drain_requests = 0;  // drains asked by waiting writebacks
  uint64_t llc_misses = 0;
  uint64_t pm_writes = 0, pm_reads = 0, pm_write_merges = 0;
  uint64_t pm_write_queue_full = 0;  // arrivals that found the write queue full
  uint64_t version_regressions = 0;  // a line persisted older data after newer (must be 0)
  // themis-mc
  uint64_t seq_stamped = 0;         // writebacks that left a WBB with a number
  uint64_t seq_write_throughs = 0;  // ... of which not clwb's: the LLC sent them on (extra PM writes)
  uint64_t pm_held = 0;             // writes the controller held (stamped, or merged into a held entry)
  uint64_t pm_held_max = 0;         // most entries held at once
  uint64_t pm_held_full = 0;        // numbered arrivals that waited: every holdable slot was held
  Histogram pm_hold_wait;           // cycles a held write waited at the controller
  uint64_t seq_guard_stalls = 0;    // entry allocations that waited for the wrap guard
  uint64_t seq_misjudged = 0;       // modulo comparisons that disagreed with the true counts (must be 0)
  uint64_t seq_wbb_guard_waits = 0; // numbered writebacks kept in the WBB by a full generation counter
  uint64_t seq_out_of_order = 0;    // entries that arrived out of their core's order (must be 0)
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_STATS_H_
