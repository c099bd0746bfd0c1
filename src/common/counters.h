// counters.h — per-thread event counters, cheap enough to leave on.
//
// Each thread that touches a pool owns a Counters block (registered with the
// pool and summed on demand by sw_pool_stats).  Code deep in the stack (the
// medium, the log writer) does not get the block passed down: the API layer
// points the thread-local `tls_counters` at the caller's block on entry, and
// the retirement thread points it at its own.  Counting is then a plain,
// unsynchronized increment of a thread-private cache line.  Fields are
// relaxed atomics only so that the summing thread's reads are not data
// races; increments compile to ordinary add instructions.
#ifndef SOFTWRAP_COMMON_COUNTERS_H_
#define SOFTWRAP_COMMON_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "softwrap/softwrap.h"

namespace softwrap {

// Why a fence was issued (sw_stats maps the kinds to the Themis paper's
// classes: kLogOrder is non-temporal -> temporal, kDataOrder and kRetire
// temporal -> non-temporal).  undo-themis elides exactly kLogOrder.
enum class FenceKind : uint8_t {
  kCommit = 0,   // makes a wrap durable (redo commit, undo commit record)
  kLogOrder,     // orders a streamed undo record before the data store it protects
  kRetire,       // retirement, truncation, home write-back
  kOther,        // pool metadata, abort, recovery, close
  kDataOrder,    // orders flushed data before the log record that depends on it
  kCount
};

// Bucket of a removable-fence distance (the inverse of sw_gap_bucket_low).
unsigned gap_bucket(uint64_t distance);

class Counter {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  void set(uint64_t v) { v_.store(v, std::memory_order_relaxed); }
  void reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

struct alignas(64) Counters {
  Counter wraps, aborts, loads, stores, log_bytes, streamed_lines, flushes;
  Counter fences[static_cast<int>(FenceKind::kCount)];
  Counter home_writes, alias_hits, alias_misses, table_switches, retire_ns, retired_entries;
  Counter wcl_full, wcl_half, wcl_paired, wcl_eliminated, log_words_saved, log_lines_saved, nvram_words;
  Counter wcl_allowed2;    // sw_stats.log_halfwords_allowed
  Counter wcl_uncompared;  // sw_stats.wcl_words_uncompared
  Counter fences_elided;
  Counter fresh_words, fresh_blocks;  // sw_stats.fresh_words / fresh_blocks
  Counter help_entries, throttle_waits;  // sw_stats.help_entries / throttle_waits
  Counter device_syncs, device_syncs_commit, fences_shared;  // sw_stats.device_syncs / ...
  // Removable-fence distances (sw_stats.removable_gap_*).  last_ticks == 0:
  // no point yet since the last reset.
  Counter gaps, gap_cycles[SW_GAP_BUCKETS], gap_events[SW_GAP_BUCKETS];
  Counter last_ticks, last_events;

  // Persistent-memory events of this thread so far: loads, stores,
  // streamed and flushed lines, fences.
  uint64_t events() const;
  // A non-temporal -> temporal fence point (issued or elided): records the
  // distance from this thread's previous one.
  void removable_fence_point();
  void add_to(sw_stats* out) const;
  void reset();
};

// Block of the current thread for the pool being operated on; nullptr means
// the per-thread scratch block.  constinit: no TLS-init call on each access.
extern thread_local constinit Counters* tls_counters;
// The calling thread's scratch block (used while tls_counters is null, i.e.
// while no pool has set it).
Counters* scratch_counters();

inline Counters& counters() {
  Counters* c = tls_counters;
  return c ? *c : *scratch_counters();
}

// Scope guard for code that counts into a specific block (the API layer).
class CountersScope {
 public:
  explicit CountersScope(Counters* c) : saved_(tls_counters) { tls_counters = c; }
  ~CountersScope() { tls_counters = saved_; }
  CountersScope(const CountersScope&) = delete;
  CountersScope& operator=(const CountersScope&) = delete;

 private:
  Counters* saved_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_COMMON_COUNTERS_H_
