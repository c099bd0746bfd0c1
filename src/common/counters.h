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

struct sw_stats;

namespace softwrap {

// Why a fence was issued; the Themis work elides exactly one kind.
enum class FenceKind : uint8_t {
  kCommit = 0,   // makes a wrap durable (redo commit, undo commit record)
  kLogOrder,     // orders an undo record before the data store it protects
  kRetire,       // retirement, truncation, home write-back
  kOther,        // pool metadata, recovery, close
  kCount
};

class Counter {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  void reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

struct alignas(64) Counters {
  Counter wraps, aborts, loads, stores, log_bytes, streamed_lines, flushes;
  Counter fences[static_cast<int>(FenceKind::kCount)];
  Counter home_writes, alias_hits, alias_misses, table_switches, retire_ns, retired_entries;
  Counter wcl_full, wcl_half, wcl_paired, wcl_eliminated, log_words_saved, log_lines_saved, nvram_words;

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
