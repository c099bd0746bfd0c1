// scm_emu_medium.cc — completion-stamped write-combining queue.
//
// submit() takes the lock once per call, reads the clock once (the lines of
// one flush or stream arrive together) and walks the lines; for each line
// it drops completed entries from the head, combines with a pending entry
// for the same line, or appends a new entry stamped max(now, last) + Tw.
// A full queue releases the lock, spins until the head's stamp and retries,
// so other threads keep submitting and pcommitting meanwhile.
#include "medium/scm_emu_medium.h"

#include <cpuid.h>
#include <immintrin.h>
#include <x86intrin.h>
#include <sched.h>

#include <algorithm>
#include <chrono>

#include "common/counters.h"
#include "common/thread_state.h"

namespace softwrap {

namespace {

uint64_t steady_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The emulator reads the clock at every request.  On this kind of machine
// (a VM with kvm-clock) clock_gettime costs 25 ns alone but several times
// that right after streaming stores, which made the emulator's own
// overhead grow with the lines a wrap streams.  With an invariant TSC
// (CPUID 0x80000007, EDX bit 8) the time is the TSC scaled by a factor
// measured once against steady_clock over 2 ms; otherwise steady_clock.
struct TscClock {
  bool ok = false;
  double ns_per_tick = 0;
  uint64_t tsc0 = 0, ns0 = 0;
};

const TscClock& tsc_clock() {
  static const TscClock clock = [] {
    TscClock c;
    unsigned a, b, cx, d;
    if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u || !__get_cpuid(0x80000007u, &a, &b, &cx, &d) ||
        !(d & (1u << 8))) {
      return c;
    }
    const uint64_t n0 = steady_ns(), t0 = __rdtsc();
    while (steady_ns() - n0 < 2'000'000) _mm_pause();
    const uint64_t n1 = steady_ns(), t1 = __rdtsc();
    if (t1 <= t0) return c;
    c.ok = true;
    c.ns_per_tick = static_cast<double>(n1 - n0) / static_cast<double>(t1 - t0);
    c.tsc0 = t1;
    c.ns0 = n1;
    return c;
  }();
  return clock;
}

}  // namespace

uint64_t scm_now_ns() {
  const TscClock& c = tsc_clock();
  if (!c.ok) return steady_ns();
  return c.ns0 + static_cast<uint64_t>(static_cast<double>(__rdtsc() - c.tsc0) * c.ns_per_tick);
}

void scm_spin_until(uint64_t deadline_ns) {
  while (scm_now_ns() < deadline_ns) _mm_pause();
}

void SpinLock::lock() {
  for (unsigned spins = 0;;) {
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    while (locked_.load(std::memory_order_relaxed)) {
      if (++spins < 4096) {
        _mm_pause();
      } else {
        sched_yield();  // the holder was probably preempted
      }
    }
  }
}

WriteCombiningQueue::WriteCombiningQueue(uint32_t entries, uint32_t write_ns)
    : ring_(std::max<uint32_t>(entries, 1)), write_ns_(write_ns) {}

void WriteCombiningQueue::submit(uintptr_t first, uintptr_t end) {
  const uint32_t cap = static_cast<uint32_t>(ring_.size());
  lock_.lock();
  uint64_t now = scm_now_ns();  // the lines of one call arrive together
  for (uintptr_t line = first; line < end;) {
    while (count_ != 0 && ring_[head_].done_ns <= now) {
      head_ = head_ + 1 == cap ? 0 : head_ + 1;
      --count_;
    }
    bool combined = false;
    for (uint32_t i = 0, j = head_; i < count_; ++i, j = j + 1 == cap ? 0 : j + 1) {
      if (ring_[j].line == line) {
        combined = true;
        break;
      }
    }
    if (combined) {
      ++stats_.lines_combined;
      line += kCacheLine;
      continue;
    }
    if (count_ == cap) {
      uint64_t head_done = ring_[head_].done_ns;
      ++stats_.full_waits;
      lock_.unlock();
      scm_spin_until(head_done);
      lock_.lock();
      now = scm_now_ns();
      continue;  // re-examine: others may have queued meanwhile
    }
    uint64_t done = std::max(now, last_completion_.load(std::memory_order_relaxed)) + write_ns_;
    uint32_t tail = head_ + count_;
    if (tail >= cap) tail -= cap;
    ring_[tail] = Entry{line, done};
    ++count_;
    last_completion_.store(done, std::memory_order_release);
    ++stats_.lines_written;
    line += kCacheLine;
  }
  lock_.unlock();
}

WriteCombiningQueue::Stats WriteCombiningQueue::stats() {
  lock_.lock();
  Stats s = stats_;
  lock_.unlock();
  return s;
}

namespace {
std::atomic<uint64_t> g_next_medium_id{1};

// The calling thread's queue of the medium it used last (a thread works on
// one pool at a time; a switch costs one lookup under the medium's mutex).
struct QueueCache {
  uint64_t medium_id = 0;
  WriteCombiningQueue* queue = nullptr;
};
thread_local constinit QueueCache tls_queue;
// Every medium this thread used; lives as long as the thread (thread_state.h).
using KnownQueues = std::vector<std::pair<uint64_t, WriteCombiningQueue*>>;
using TlsQueues = ThreadState<KnownQueues>;
}  // namespace

ScmEmuMedium::ScmEmuMedium(const ScmTiming& t) : ScmEmuMedium(t, cpu_features().flush, cpu_features().avx) {}

ScmEmuMedium::ScmEmuMedium(const ScmTiming& t, FlushInsn insn, bool use_avx)
    : X86Medium(insn, use_avx, "scm-emu", true),
      timing_(t),
      id_(g_next_medium_id.fetch_add(1)),
      shared_(t.entries, t.write_ns) {
  props_.wcl_default = t.write_ns >= kWclMinLineNs ? WclDefault::kAll : WclDefault::kRanges;
}

WriteCombiningQueue& ScmEmuMedium::queue() {
  if (timing_.shared) return shared_;
  if (tls_queue.medium_id == id_) return *tls_queue.queue;
  return queue_slow();
}

WriteCombiningQueue& ScmEmuMedium::queue_slow() {
  WriteCombiningQueue* q = nullptr;
  KnownQueues& tls_queues = TlsQueues::get();
  for (const auto& [id, known] : tls_queues) {
    if (id == id_) q = known;
  }
  if (!q) {
    std::lock_guard<std::mutex> g(mu_);
    queues_.push_back(std::make_unique<WriteCombiningQueue>(timing_.entries, timing_.write_ns));
    q = queues_.back().get();
    // Entries of media that no longer exist are harmless (ids never repeat);
    // keep the list short anyway.
    if (tls_queues.size() >= 16) tls_queues.erase(tls_queues.begin());
    tls_queues.emplace_back(id_, q);
  }
  tls_queue = QueueCache{id_, q};
  return *q;
}

WriteCombiningQueue::Stats ScmEmuMedium::queue_stats() {
  WriteCombiningQueue::Stats sum = shared_.stats();
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& q : queues_) {
    const WriteCombiningQueue::Stats s = q->stats();
    sum.lines_written += s.lines_written;
    sum.lines_combined += s.lines_combined;
    sum.full_waits += s.full_waits;
  }
  return sum;
}

void ScmEmuMedium::flush(const void* addr, size_t n) {
  if (n == 0) return;
  X86Medium::flush(addr, n);
  auto a = reinterpret_cast<uintptr_t>(addr);
  queue().submit(line_down(a), line_up(a + n));
}

void ScmEmuMedium::stream(void* dst, const void* src, size_t n) {
  if (n == 0) return;
  X86Medium::stream(dst, src, n);
  auto d = reinterpret_cast<uintptr_t>(dst);
  queue().submit(line_down(d), line_up(d + n));
}

void ScmEmuMedium::wait_then_serialize(uint64_t last_completion_ns) {
  // Wait for the last queued line, then Ts: one deadline, one spin.
  const uint64_t now = scm_now_ns();
  scm_spin_until(std::max(now, last_completion_ns) + timing_.serialize_ns);
}

void ScmEmuMedium::fence(FenceKind kind) {
  X86Medium::fence(kind);
  wait_then_serialize(queue().last_completion_ns());
}

void ScmEmuMedium::drain() {
  X86Medium::drain();
  uint64_t last = shared_.last_completion_ns();
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& q : queues_) last = std::max(last, q->last_completion_ns());
  }
  wait_then_serialize(last);
}

}  // namespace softwrap
