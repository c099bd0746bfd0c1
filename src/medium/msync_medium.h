// msync_medium.h — x86 instructions plus msync, for mappings without DAX.
//
// On a file that is not mapped with MAP_SYNC the page cache stands between
// the CPU caches and the device, so clwb + sfence reaches only DRAM.  This
// medium moves bytes exactly as X86Medium does and additionally remembers,
// per thread, which pages the thread flushed or streamed since its last
// fence; fence() msyncs (MS_SYNC) those pages, drain() the whole mapping.
//
// The mapping may grow (a pool that grows in place): extend() moves its
// end, which flushes and drain() read atomically.
//
// The per-thread page lists live in thread-local storage keyed by a unique,
// never reused medium id (not the medium's address, which a later medium may
// reuse).  A list holds up to kMaxRanges merged page ranges; when it is full
// the ranges are synced early, which is always legal (flushed data may
// persist at any time).  A slot left behind by a destroyed medium is
// recognised through a process-wide registry of live ids and reused.
//
// A failed msync means dirty pages may have been dropped by the kernel, and
// retrying would falsely report success (the lesson of PostgreSQL's
// "fsyncgate"); since fence() cannot report failure, the process stops with
// a message (fail-stop): recovery on the next open restores consistency.
#ifndef SOFTWRAP_MEDIUM_MSYNC_MEDIUM_H_
#define SOFTWRAP_MEDIUM_MSYNC_MEDIUM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "medium/x86_medium.h"

namespace softwrap {

class MsyncMedium : public X86Medium {
 public:
  static constexpr uint32_t kMaxRanges = 32;

  // The mapping [base, base+len) must stay mapped until the medium is
  // destroyed.  Flushes outside it are performed but not synced.
  MsyncMedium(void* base, size_t len);
  MsyncMedium(void* base, size_t len, FlushInsn insn, bool use_avx);
  ~MsyncMedium() override;

  void flush(const void* addr, size_t n) override;
  void stream(void* dst, const void* src, size_t n) override;
  void fence(FenceKind kind) override;
  void drain() override;
  void extend(size_t len) override;

  // What this medium asked of the kernel (all threads), for tests.
  uint64_t msync_calls() const { return msync_calls_.load(std::memory_order_relaxed); }
  uint64_t msync_bytes() const { return msync_bytes_.load(std::memory_order_relaxed); }

 private:
  void note_dirty(const void* addr, size_t n);
  void sync_pages(uintptr_t begin, uintptr_t end);

  uint64_t id_;
  uintptr_t map_begin_;  // page-aligned start of the mapping
  std::atomic<uintptr_t> map_end_;  // grows with the pool (extend)
  uintptr_t page_mask_;  // page size - 1
  std::atomic<uint64_t> msync_calls_{0};
  std::atomic<uint64_t> msync_bytes_{0};
};

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_MSYNC_MEDIUM_H_
