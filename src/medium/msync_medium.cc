// msync_medium.cc — per-thread dirty spans, synced at fence with one
// system call shared by the threads fencing at once (msync_medium.h).
//
// Hot path (flush/stream): the x86 operation, then one thread-local lookup
// (the last slot used, normally a hit) and two compares widening the
// thread's span.  The registry of live medium ids is touched only when a
// medium is created or destroyed and when a thread meets a medium for the
// first time.
#include "medium/msync_medium.h"

#include <fcntl.h>  // sync_file_range (_GNU_SOURCE: g++ defines it)
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "common/thread_state.h"

namespace softwrap {

// One thread's unsynced pages of one medium, and the run of streamed
// bytes it has not written to the file yet (stage: [st_begin, +st_len)).
struct DirtyPages {
  uint64_t medium_id = 0;
  uint32_t n = 0;
  struct {
    uintptr_t begin, end;
  } r[MsyncMedium::kMaxRanges + 1];  // + a spare slot for merging when full
  uintptr_t st_begin = 0;
  size_t st_len = 0;
  std::unique_ptr<unsigned char[]> st_buf;  // kStageBytes, made at first use
  void clear() { n = 0; }
};

namespace {

struct ThreadDirty {
  std::vector<std::unique_ptr<DirtyPages>> slots;
  DirtyPages* last = nullptr;
};

// Lives as long as its thread (thread_state.h): fences issued from exit
// handlers and static destructors (a pool closed there) still find it.
using TlsDirty = ThreadState<ThreadDirty>;

// Ids of the MsyncMedium objects alive in the process.  Leaked on purpose:
// a medium destroyed during static destruction must still find it.
struct LiveRegistry {
  std::mutex mu;
  std::vector<uint64_t> ids;
  uint64_t next_id = 1;
};

LiveRegistry& registry() {
  static LiveRegistry* r = new LiveRegistry;
  return *r;
}

DirtyPages* find_dirty(uint64_t id) {
  ThreadDirty& t = TlsDirty::get();
  if (t.last != nullptr && t.last->medium_id == id) return t.last;
  for (auto& s : t.slots) {
    if (s->medium_id == id) {
      t.last = s.get();
      return t.last;
    }
  }
  return nullptr;
}

DirtyPages& dirty_for(uint64_t id) {
  if (DirtyPages* d = find_dirty(id)) return *d;
  ThreadDirty& t = TlsDirty::get();
  DirtyPages* slot = nullptr;
  {
    LiveRegistry& reg = registry();
    std::lock_guard<std::mutex> g(reg.mu);
    for (auto& s : t.slots) {
      if (std::find(reg.ids.begin(), reg.ids.end(), s->medium_id) == reg.ids.end()) {
        slot = s.get();  // its medium is gone: its pages need no sync
        break;
      }
    }
  }
  if (slot == nullptr) {
    t.slots.push_back(std::make_unique<DirtyPages>());
    slot = t.slots.back().get();
  }
  slot->medium_id = id;
  slot->clear();
  slot->st_len = 0;  // a gone medium's unwritten stream needs no writing
  t.last = slot;
  return *slot;
}

[[noreturn]] void sync_failed(const char* call, uintptr_t begin, uintptr_t end, int err) {
  fprintf(stderr,
          "softwrap: %s(%p, %zu) failed: %s; flushed data may not be durable, "
          "stopping the process (the pool recovers on the next open)\n",
          call, reinterpret_cast<void*>(begin), static_cast<size_t>(end - begin), strerror(err));
  abort();
}

bool counts_as_commit(FenceKind k) { return k == FenceKind::kCommit || k == FenceKind::kDataOrder; }

}  // namespace

MsyncMedium::MsyncMedium(void* base, size_t len)
    : MsyncMedium(base, len, cpu_features().flush, cpu_features().avx) {}

MsyncMedium::MsyncMedium(void* base, size_t len, FlushInsn insn, bool use_avx, int fd, Reach reach)
    : X86Medium(insn, use_avx, "msync", false),
      fd_(fd >= 0 && writeback_reaches_mapping(fd) ? fd : -1),
      reach_(reach) {
  props_.syncs_pages = true;
  props_.wcl_default = WclDefault::kRanges;
  props_.home_runs = fd_ >= 0;  // retirement's runs by pwrite (home_writer.h)
  long page = sysconf(_SC_PAGESIZE);
  page_mask_ = static_cast<uintptr_t>(page > 0 ? page : 4096) - 1;
  auto b = reinterpret_cast<uintptr_t>(base);
  map_begin_ = b & ~page_mask_;
  map_end_.store((b + len + page_mask_) & ~page_mask_, std::memory_order_relaxed);
  LiveRegistry& reg = registry();
  std::lock_guard<std::mutex> g(reg.mu);
  id_ = reg.next_id++;
  reg.ids.push_back(id_);
}

MsyncMedium::~MsyncMedium() {
  LiveRegistry& reg = registry();
  std::lock_guard<std::mutex> g(reg.mu);
  reg.ids.erase(std::remove(reg.ids.begin(), reg.ids.end(), id_), reg.ids.end());
}

bool MsyncMedium::writeback_reaches_mapping(int fd) {
  constexpr long kExt4 = 0xEF53;  // EXT4_SUPER_MAGIC (also ext2/ext3)
  constexpr long kXfs = 0x58465342;  // XFS_SUPER_MAGIC
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return false;
  return fs.f_type == kExt4 || fs.f_type == kXfs;
}

void MsyncMedium::msync_pages(uintptr_t begin, uintptr_t end) {
  if (msync(reinterpret_cast<void*>(begin), end - begin, MS_SYNC) != 0) sync_failed("msync", begin, end, errno);
  msync_calls_.fetch_add(1, std::memory_order_relaxed);
  msync_bytes_.fetch_add(end - begin, std::memory_order_relaxed);
  counters().device_syncs.add();
}

void MsyncMedium::file_range(uintptr_t begin, uintptr_t end, unsigned flags) {
  if (sync_file_range(fd_, static_cast<off_t>(begin - map_begin_), static_cast<off_t>(end - begin), flags) != 0) {
    sync_failed("sync_file_range", begin, end, errno);
  }
}

void MsyncMedium::sync_ranges(std::vector<Range>& rs) {
  std::sort(rs.begin(), rs.end(), [](const Range& x, const Range& y) { return x.begin < y.begin; });
  size_t n = 0;
  for (const Range& r : rs) {
    if (n != 0 && r.begin <= rs[n - 1].end) {
      rs[n - 1].end = std::max(rs[n - 1].end, r.end);
    } else {
      rs[n++] = r;
    }
  }
  rs.resize(n);
  if (n == 0) return;
  if (reach_ != Reach::kRanges) {
    const uintptr_t b = reach_ == Reach::kSpan ? rs.front().begin : map_begin_;
    const uintptr_t e = reach_ == Reach::kSpan ? rs.back().end : map_end_.load(std::memory_order_acquire);
    msync_pages(b, e);
    return;
  }
  if (fd_ < 0) {
    for (size_t i = 0; i + 1 < n; ++i) msync_pages(rs[i].begin, rs[i].end);
  } else if (n > 1) {
    // Every range's writeback started at once, the last one's too (after
    // writeback already under way, which may hold older content), then one
    // wait for all of them over their span: the device has them all in
    // flight together, and the msync below finds the last range written
    // and only flushes.
    for (size_t i = 0; i < n; ++i) {
      file_range(rs[i].begin, rs[i].end, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE);
    }
    file_range(rs[0].begin, rs[n - 1].end, SYNC_FILE_RANGE_WAIT_AFTER);
  }
  msync_pages(rs[n - 1].begin, rs[n - 1].end);  // the last range, and the flush for all
}

void MsyncMedium::note_dirty(const void* addr, size_t n) {
  if (n == 0) return;
  auto a = reinterpret_cast<uintptr_t>(addr);
  uintptr_t begin = std::max(a & ~page_mask_, map_begin_);
  uintptr_t end = std::min((a + n + page_mask_) & ~page_mask_, map_end_.load(std::memory_order_acquire));
  if (begin >= end) return;
  DirtyPages& d = dirty_for(id_);
  for (uint32_t i = d.n; i-- > 0;) {  // newest first: sequential writers hit at once
    auto& r = d.r[i];
    if (begin <= r.end && end >= r.begin) {
      r.begin = std::min(r.begin, begin);
      r.end = std::max(r.end, end);
      return;
    }
  }
  if (d.n == kMaxRanges) {
    // Full: merge the two ranges with the smallest gap between them (the
    // pages in the gap are synced too: legal, and free when clean, as
    // writeback skips clean pages).
    auto& r = d.r;
    r[d.n].begin = begin;  // the spare slot
    r[d.n].end = end;
    std::sort(r, r + d.n + 1, [](const auto& x, const auto& y) { return x.begin < y.begin; });
    auto gap = [&r](uint32_t i) { return r[i + 1].begin > r[i].end ? r[i + 1].begin - r[i].end : 0; };
    uint32_t best = 0;
    for (uint32_t i = 1; i < d.n; ++i) {
      if (gap(i) < gap(best)) best = i;
    }
    r[best].end = std::max(r[best].end, r[best + 1].end);
    for (uint32_t i = best + 1; i < d.n; ++i) r[i] = r[i + 1];
    return;
  }
  d.r[d.n].begin = begin;
  d.r[d.n].end = end;
  ++d.n;
}

void MsyncMedium::flush(const void* addr, size_t n) {
  X86Medium::flush(addr, n);
  note_dirty(addr, n);
}

void MsyncMedium::write_file(uintptr_t at, const void* src, size_t n) {
  auto* s = static_cast<const unsigned char*>(src);
  while (n > 0) {
    const ssize_t w = pwrite(fd_, s, n, static_cast<off_t>(at - map_begin_));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) sync_failed("pwrite", at, at + n, w < 0 ? errno : EIO);
    s += w;
    at += static_cast<uintptr_t>(w);
    n -= static_cast<size_t>(w);
  }
}

// Streams (the log's lines) go to the file with pwrite, a run of
// contiguous ones at a time, never through the mapping: the lane's pages
// are then never writable in this process's page tables, so writing them
// back needs no write-protect (a TLB shootdown IPI per page to every CPU
// running a thread of the process) and the next commit's lines in the same
// page take no write fault.  A run waits in the thread's stage until a
// stream that does not continue it, a full stage, or the thread's fence:
// like lines in a write-combining buffer, streamed bytes are promised
// durable (and visible) only after the fence, and only the logs stream.
void MsyncMedium::stream(void* dst, const void* src, size_t n) {
  const auto a = reinterpret_cast<uintptr_t>(dst);
  if (!on_file(a, n)) {
    X86Medium::stream(dst, src, n);
    note_dirty(dst, n);
    return;
  }
  DirtyPages& d = dirty_for(id_);
  if (d.st_len != 0 && (a != d.st_begin + d.st_len || d.st_len + n > kStageBytes)) write_stage(d);
  if (n > kStageBytes) {
    write_file(a, src, n);
  } else {
    if (!d.st_buf) d.st_buf.reset(new unsigned char[kStageBytes]);
    if (d.st_len == 0) d.st_begin = a;
    std::memcpy(d.st_buf.get() + d.st_len, src, n);
    d.st_len += n;
  }
  counters().nvram_words.add(words_touched(dst, n));
  counters().streamed_lines.add((line_up(a + n) - line_down(a)) / kCacheLine);
  note_dirty(dst, n);
}

// Home runs (retirement's HomeWriter) go to the file with pwrite, as
// streams do, for the same reason: home pages that are never writable in
// the page tables are written back without a write-protect IPI, and the
// next retirement's stores to them take no fault.  Written at once (the
// bytes are visible when this returns), synced at the fence.
void MsyncMedium::write_through(void* dst, const void* src, size_t n) {
  const auto a = reinterpret_cast<uintptr_t>(dst);
  if (!on_file(a, n)) {
    Medium::write_through(dst, src, n);
    return;
  }
  write_file(a, src, n);
  counters().nvram_words.add(words_touched(dst, n));
  note_dirty(dst, n);
}

void MsyncMedium::publish_streams() {
  DirtyPages* d = find_dirty(id_);
  if (d != nullptr && d->st_len != 0) write_stage(*d);
}

void MsyncMedium::write_stage(DirtyPages& d) {
  write_file(d.st_begin, d.st_buf.get(), d.st_len);
  d.st_len = 0;
}

void MsyncMedium::fence(FenceKind kind) {
  X86Medium::fence(kind);  // streamed lines reach the page cache first
  DirtyPages* d = find_dirty(id_);
  if (d == nullptr) return;
  if (d->st_len != 0) write_stage(*d);
  if (d->n == 0) return;
  Range rs[kMaxRanges];
  for (uint32_t i = 0; i < d->n; ++i) rs[i] = Range{d->r[i].begin, d->r[i].end};
  const uint32_t n = d->n;
  d->clear();
  sync_shared(rs, n, kind);
}

MsyncMedium::Group& MsyncMedium::group_for(FenceKind kind) {
  return counts_as_commit(kind) ? groups_[0] : groups_[1];
}

void MsyncMedium::sync_shared(const Range* r, uint32_t n, FenceKind kind) {
  Group& g = group_for(kind);
  std::unique_lock<std::mutex> lk(g.mu);
  g.pending.insert(g.pending.end(), r, r + n);
  g.pending_commit |= counts_as_commit(kind);
  // A sync running now took its ranges before these were added: the first
  // sync that covers this thread is the next to start.
  const uint64_t mine = g.started + 1;
  bool led = false;
  std::vector<Range> rs;
  while (g.finished < mine) {
    if (g.running) {
      ++g.waiting;
      g.done_cv.wait(lk);
      --g.waiting;
      continue;
    }
    g.running = true;
    const uint64_t number = ++g.started;
    rs.swap(g.pending);
    g.pending.clear();
    const bool for_commit = g.pending_commit;
    g.pending_commit = false;
    lk.unlock();
    if (hook_ != nullptr) hook_(hook_arg_);
    sync_ranges(rs);
    if (for_commit) counters().device_syncs_commit.add();
    led = true;
    lk.lock();
    g.finished = number;
    g.running = false;
    g.done_cv.notify_all();
  }
  if (!led) counters().fences_shared.add();
}

void MsyncMedium::extend(size_t len) {
  map_end_.store((map_begin_ + len + page_mask_) & ~page_mask_, std::memory_order_release);
}

void MsyncMedium::drain() {
  X86Medium::drain();
  if (DirtyPages* d = find_dirty(id_)) {
    if (d->st_len != 0) write_stage(*d);
    d->clear();
  }
  const uintptr_t end = map_end_.load(std::memory_order_acquire);
  if (end <= map_begin_) return;
  const Range all{map_begin_, end};
  sync_shared(&all, 1, FenceKind::kOther);
}

}  // namespace softwrap
