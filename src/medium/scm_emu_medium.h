// scm_emu_medium.h — the SoftWrAP papers' emulated storage-class memory.
//
// Full paper, section V-B: the device accepts cache lines into an N-entry
// (default 8) write-combining queue and writes one line at a time, each
// taking Tw.  A line already pending in the queue is combined (no new
// entry).  When the queue is full the writer waits for its head to
// complete.  pcommit waits until the last queued line has completed and
// then pays a serialization overhead Ts (the paper bookends its delay loop
// with CPUID).
//
// Here every flushed line and every line touched by a stream is one
// request.  Which queue a request joins is the model's one choice:
//   per-thread (default)  every thread has its own queue and a pcommit
//       waits only for the calling thread's queue — the papers' emulator
//       (the original SoftWrAP code keeps its queue in thread-local
//       storage), so a background thread's writes (retirement) never delay
//       a foreground commit, and threads scale as in the paper's Fig. 9;
//   shared  one queue per medium — i.e. per device — for all threads, as a
//       single memory controller would be; a pcommit waits for every line
//       any thread queued before it.
// drain() (pool close) waits for every queue either way.  Time is simulated with
// completion stamps rather than a device thread: an entry inserted at time
// `now` completes at max(now, completion of the previous entry) + Tw, and
// entries whose stamp has passed are dropped from the head when the queue
// is next touched.  Waiting is a busy-wait on the monotonic clock (no
// sleeps: the delays are microseconds) and never happens under the queue's
// spinlock, which is held only for the bookkeeping of a few entries.
//
// The bytes themselves move through the inherited x86 operations, so the
// medium is as durable as X86Medium on DAX (and, like it, not durable
// against power loss on a page-cache mapping).
#ifndef SOFTWRAP_MEDIUM_SCM_EMU_MEDIUM_H_
#define SOFTWRAP_MEDIUM_SCM_EMU_MEDIUM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "medium/x86_medium.h"

namespace softwrap {

// Nanoseconds of a monotonic clock (steady_clock).
uint64_t scm_now_ns();
// Busy-waits until scm_now_ns() >= deadline.
void scm_spin_until(uint64_t deadline_ns);

// Test-and-test-and-set lock for critical sections of a few dozen
// instructions; yields only if the holder seems descheduled.
class SpinLock {
 public:
  void lock();
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// The device's write-combining queue of cache lines.
class WriteCombiningQueue {
 public:
  WriteCombiningQueue(uint32_t entries, uint32_t write_ns);
  WriteCombiningQueue(const WriteCombiningQueue&) = delete;
  WriteCombiningQueue& operator=(const WriteCombiningQueue&) = delete;

  // Submits the lines [first, end) (64-byte aligned addresses), in order,
  // waiting for space as needed.
  void submit(uintptr_t first, uintptr_t end);

  // Completion time of the last line queued so far: once the clock passes
  // it, everything submitted before this call is written.
  uint64_t last_completion_ns() const { return last_completion_.load(std::memory_order_acquire); }

  // Statistics since construction (all threads), for tests and benchmarks.
  struct Stats {
    uint64_t lines_written = 0;   // entries inserted (device line writes)
    uint64_t lines_combined = 0;  // requests merged into a pending entry
    uint64_t full_waits = 0;      // times a submitter waited for space
  };
  Stats stats();

 private:
  struct Entry {
    uintptr_t line;
    uint64_t done_ns;
  };

  SpinLock lock_;
  std::vector<Entry> ring_;  // GUARDED_BY(lock_)
  uint32_t head_ = 0;        // GUARDED_BY(lock_)
  uint32_t count_ = 0;       // GUARDED_BY(lock_)
  const uint64_t write_ns_;
  std::atomic<uint64_t> last_completion_{0};  // written under lock_
  Stats stats_;                               // GUARDED_BY(lock_)
};

struct ScmTiming {
  uint32_t write_ns = 1000;     // Tw
  uint32_t serialize_ns = 220;  // Ts
  uint32_t entries = 8;         // queue length, >= 1
  bool shared = false;          // one queue for all threads (else one per thread)
};

class ScmEmuMedium : public X86Medium {
 public:
  explicit ScmEmuMedium(const ScmTiming& t);
  ScmEmuMedium(const ScmTiming& t, FlushInsn insn, bool use_avx);

  void flush(const void* addr, size_t n) override;
  void stream(void* dst, const void* src, size_t n) override;
  // sfence + pcommit: waits for the calling thread's queue (per-thread
  // model) or the device's queue (shared), then Ts.
  void fence(FenceKind kind) override;
  // Waits for every queue, then Ts; counted as a fence of kind kOther.
  void drain() override;

  const ScmTiming& timing() const { return timing_; }
  // Sums over all queues.
  WriteCombiningQueue::Stats queue_stats();

 private:
  WriteCombiningQueue& queue();  // the calling thread's queue
  WriteCombiningQueue& queue_slow();
  void wait_then_serialize(uint64_t last_completion_ns);

  ScmTiming timing_;
  const uint64_t id_;  // tells this medium from an earlier one at the same address
  WriteCombiningQueue shared_;
  std::mutex mu_;  // guards queues_
  std::vector<std::unique_ptr<WriteCombiningQueue>> queues_;  // per-thread model, one per thread that wrote
};

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_SCM_EMU_MEDIUM_H_
