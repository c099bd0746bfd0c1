// msync_medium.h — x86 instructions plus msync, for mappings without DAX.
//
// On a file that is not mapped with MAP_SYNC the page cache stands between
// the CPU caches and the device, so clwb + sfence reaches only DRAM.  This
// medium moves bytes as X86Medium does — but for streams and retirement's
// home runs, which on ext4 and XFS it writes to the file with pwrite
// (below) — and additionally remembers, per
// thread, which pages the thread flushed or streamed since its last
// fence; fence() makes those pages durable, drain() the whole mapping.
//
// On ext4 and XFS, streams (only the logs stream) are staged per thread
// and written to the file with pwrite, a run of contiguous ones at a time, at the thread's
// fence (or at publish_streams, or when a stream does not continue the
// run): a lane's pages are then never writable in the page tables, so
// writing them back needs no write-protect (a TLB shootdown IPI per page)
// and the next lines in the same page no write fault.
//
// One device flush per fence, shared by threads that fence at once.  On a
// file system every msync(MS_SYNC) or fdatasync ends in a device flush
// (ext4_sync_file and xfs_file_fsync send a cache-flush command), so a
// fence that synced each dirty range with its own msync paid one flush per
// range.  Instead, a sync starts every range writing back with
// sync_file_range (after waiting for writeback already under way, which
// may carry older content), waits once for all of them over their span (no
// flush), and syncs the last range again with msync(MS_SYNC), which finds
// it written and flushes the device: a cache flush covers every write
// completed before it.  (Starting the last range with the others, not in
// the msync after the wait, keeps the device's writes in flight together:
// 10-28 % more commits/s with 4 committing threads, 10-17 % with batches
// of 100, measured side by side.)  Syncing a span
// from the lowest to the highest dirty page with one msync would also be
// one flush, but the kernel then writes back every dirty page inside the
// span — pages retirement dirtied and will dirty again — and each page it
// cleans is write-protected, so the next store to it faults
// (ext4_page_mkwrite): measured 2x slower on batches of B+tree inserts.
// msync (not fdatasync) for the last range, because fdatasync writes back
// every dirty page of the file.  The journal commit that block allocation
// needs (a first write to a preallocated extent) belongs to the inode and
// is made by that msync for all the ranges.
//
// Two groups, each with its own syncs: commits (fences of kind commit and
// data order) and the rest (retirement's, which write back many scattered
// home pages).  A commit never queues behind a retirement sync; the two
// run side by side, each with its flush (side by side: batches of 100
// B+tree inserts up to 10 % more inserts/s, 4 committing threads up to
// 18 % more commits/s; the runs are noisy).
//
// Group commit: a fencing thread adds its ranges to its group's pending ones and
// waits for a sync that *starts* after that; if none is running it makes
// it itself (the leader, syncing every waiting thread's ranges), else it
// waits for the running one to end and then one of the waiting threads
// leads the next.  A thread whose data another thread's sync covered counts
// fences_shared; a leader counts device_syncs, and device_syncs_commit if
// the sync covers a commit's fence (whoever leads it: the retirement
// thread's sync may carry a commit), so that device_syncs_commit per wrap
// is the device flushes wraps cost: 1 for a single committer, less when
// commits share.
//
// Why this keeps the fence's promise (the kernel may write any dirty page
// back at any time, in any order): a fence promises only that what this
// thread flushed or streamed before it is durable before the fence
// returns.  The thread's stores reached the page cache before it
// registered (the sfence orders streamed lines), the sync covering it
// starts after it registered and writes its pages with their content at
// that moment, and the flush follows their completion.  Syncing more than
// asked (other threads' pages) is always legal.
//
// The mapping may grow (a pool that grows in place): extend() moves its
// end, which flushes and drain() read atomically.
//
// The per-thread page lists live in thread-local storage keyed by a unique,
// never reused medium id (not the medium's address, which a later medium may
// reuse).  A list holds up to kMaxRanges merged page ranges; when it is full
// the two ranges closest to each other become one (the pages between them
// are synced too: legal, and free where they are clean, as writeback skips
// clean pages).  It used to write its ranges back there and then, each with
// its own wait for the device: a retirement thread writing a few hundred
// scattered home pages spent ~100 us per range before its fence, fell
// behind, and the commits that helped it paid the same waits in the middle
// of their wraps (side by side, batches of 100 B+tree inserts: 125k against
// 173k inserts/s).  A slot left behind by a destroyed medium is recognised
// through a process-wide registry of live ids and reused.
//
// sync_file_range is used only where it is known to write back the pages
// of the mapping: on ext4 and XFS (writeback_reaches_mapping).  On other
// file systems — overlayfs, Docker's usual root, acts on the overlay
// inode's empty page cache, not on the real file's pages the mapping holds,
// and returns 0 having written nothing — and without a file descriptor
// (fd < 0: tests), every range is synced with its own msync, one flush
// each, as msync always reaches the mapping's pages.
//
// A failed msync or sync_file_range means dirty pages may have been
// dropped by the kernel, and retrying would falsely report success (the
// lesson of PostgreSQL's "fsyncgate"); since fence() cannot report
// failure, the process stops with a message (fail-stop): recovery on the
// next open restores consistency.
#ifndef SOFTWRAP_MEDIUM_MSYNC_MEDIUM_H_
#define SOFTWRAP_MEDIUM_MSYNC_MEDIUM_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "medium/x86_medium.h"

namespace softwrap {

struct DirtyPages;  // a thread's unsynced pages (msync_medium.cc)

class MsyncMedium : public X86Medium {
 public:
  static constexpr uint32_t kMaxRanges = 32;
  static constexpr size_t kStageBytes = 128 << 10;  // a thread's unwritten stream run, at most

  // How a sync writes the pending ranges back (for measurements; the
  // pool picks kRanges): kRanges as above; kSpan one msync from the lowest
  // to the highest pending page; kWholeFile one msync of the whole mapping
  // (what fdatasync does).  SOFTWRAP_MSYNC_SPAN=span|file selects the others.
  enum class Reach { kRanges, kSpan, kWholeFile };

  // The mapping [base, base+len) must stay mapped until the medium is
  // destroyed.  Flushes outside it are performed but not synced.
  MsyncMedium(void* base, size_t len);
  // fd: the mapped file (for sync_file_range), or -1.  The medium uses it
  // only if writeback_reaches_mapping(fd).
  MsyncMedium(void* base, size_t len, FlushInsn insn, bool use_avx, int fd = -1, Reach reach = Reach::kRanges);
  ~MsyncMedium() override;

  void flush(const void* addr, size_t n) override;
  void stream(void* dst, const void* src, size_t n) override;
  void fence(FenceKind kind) override;
  void drain() override;
  void publish_streams() override;
  void write_through(void* dst, const void* src, size_t n) override;
  void extend(size_t len) override;

  // Whether sync_file_range on fd writes back the pages a shared mapping
  // of fd holds: true on ext4 and XFS, false elsewhere (fstatfs).
  static bool writeback_reaches_mapping(int fd);
  // Whether this medium writes ranges back with sync_file_range.
  bool uses_file_range() const { return fd_ >= 0; }

  // What this medium asked of the kernel (all threads), for tests.
  uint64_t msync_calls() const { return msync_calls_.load(std::memory_order_relaxed); }
  uint64_t msync_bytes() const { return msync_bytes_.load(std::memory_order_relaxed); }

  // Threads waiting for a sync to start or end (for tests).
  uint32_t waiting() {
    uint32_t n = 0;
    for (Group& g : groups_) {
      std::lock_guard<std::mutex> l(g.mu);
      n += g.waiting;
    }
    return n;
  }

  // Test seam: called by a leader with the group's lock released, just
  // before its system call (a test holds a sync open to make others wait).
  void set_before_sync_hook(void (*hook)(void* arg), void* arg) {
    hook_ = hook;
    hook_arg_ = arg;
  }

 private:
  struct Range {
    uintptr_t begin, end;
  };
  void note_dirty(const void* addr, size_t n);
  // Whether [a, a+n) (n > 0) is written to the file with pwrite: the file
  // is on ext4 or XFS (fd_ >= 0) and the bytes lie inside the mapping.
  bool on_file(uintptr_t a, size_t n) const {
    return fd_ >= 0 && n != 0 && a >= map_begin_ && a + n <= map_end_.load(std::memory_order_acquire);
  }
  // pwrite of [at, at+n) of the mapping's bytes from src (fail-stop).
  void write_file(uintptr_t at, const void* src, size_t n);
  // Writes the thread's staged stream run to the file and empties it.
  void write_stage(DirtyPages& d);
  // Makes the ranges durable with the group (see the top of this file).
  void sync_shared(const Range* r, uint32_t n, FenceKind kind);
  // Writes rs back and flushes the device once (rs sorted and coalesced
  // in place; empty: nothing to do).
  void sync_ranges(std::vector<Range>& rs);
  void msync_pages(uintptr_t begin, uintptr_t end);
  void file_range(uintptr_t begin, uintptr_t end, unsigned flags);  // sync_file_range, fail-stop

  uint64_t id_;
  // The mapped file where its pages are written back to a device (ext4,
  // XFS: writeback_reaches_mapping): sync_file_range, and pwrite of streams
  // and home runs.  Else -1: each range is msynced, and streams and home
  // runs are stored through the mapping (on tmpfs syncing a written page
  // costs nothing, and a pwrite would be a system call more: TPC-C on the
  // VFS in /dev/shm ran 0.92x with it).
  int fd_;
  Reach reach_;
  uintptr_t map_begin_;  // page-aligned start of the mapping
  std::atomic<uintptr_t> map_end_;  // grows with the pool (extend)
  uintptr_t page_mask_;  // page size - 1
  std::atomic<uint64_t> msync_calls_{0};
  std::atomic<uint64_t> msync_bytes_{0};

  // A group (guarded by mu): syncs started and finished (a sync's number
  // is its place in that order), whether one is running, and the ranges of
  // the threads waiting for the next one.
  struct Group {
    std::mutex mu;
    std::condition_variable done_cv;
    uint64_t started = 0, finished = 0;
    bool running = false;
    std::vector<Range> pending;
    bool pending_commit = false;  // a commit's fence waits for the next sync
    uint32_t waiting = 0;
  };
  Group& group_for(FenceKind kind);
  Group groups_[2];  // [0] commit fences, [1] the rest (retirement, ...)
  void (*hook_)(void*) = nullptr;
  void* hook_arg_ = nullptr;
};

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_MSYNC_MEDIUM_H_
