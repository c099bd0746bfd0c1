// msync_medium.cc — per-thread dirty page ranges, synced at fence.
//
// Hot path (flush/stream): the x86 operation, then one thread-local lookup
// (the last slot used, normally a hit) and a merge into at most kMaxRanges
// ranges.  fence(): sort, coalesce and msync each range.  The registry of
// live medium ids is touched only when a medium is created or destroyed and
// when a thread meets a medium for the first time.
#include "medium/msync_medium.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "common/thread_state.h"

namespace softwrap {
namespace {

struct PageRange {
  uintptr_t begin;
  uintptr_t end;
};

// One thread's unsynced pages of one medium.
struct DirtyPages {
  uint64_t medium_id = 0;
  uint32_t n = 0;
  PageRange r[MsyncMedium::kMaxRanges];
};

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
  slot->n = 0;
  t.last = slot;
  return *slot;
}

// Sorts, coalesces and syncs d's ranges; empties d.
template <typename SyncFn>
void sync_dirty(DirtyPages& d, SyncFn&& sync) {
  std::sort(d.r, d.r + d.n, [](const PageRange& x, const PageRange& y) { return x.begin < y.begin; });
  uint32_t i = 0;
  while (i < d.n) {
    PageRange cur = d.r[i++];
    while (i < d.n && d.r[i].begin <= cur.end) cur.end = std::max(cur.end, d.r[i++].end);
    sync(cur.begin, cur.end);
  }
  d.n = 0;
}

[[noreturn]] void msync_failed(uintptr_t begin, uintptr_t end, int err) {
  fprintf(stderr,
          "softwrap: msync(%p, %zu, MS_SYNC) failed: %s; flushed data may not be durable, "
          "stopping the process (the pool recovers on the next open)\n",
          reinterpret_cast<void*>(begin), static_cast<size_t>(end - begin), strerror(err));
  abort();
}

}  // namespace

MsyncMedium::MsyncMedium(void* base, size_t len)
    : MsyncMedium(base, len, cpu_features().flush, cpu_features().avx) {}

MsyncMedium::MsyncMedium(void* base, size_t len, FlushInsn insn, bool use_avx)
    : X86Medium(insn, use_avx, "msync", false) {
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

void MsyncMedium::sync_pages(uintptr_t begin, uintptr_t end) {
  if (msync(reinterpret_cast<void*>(begin), end - begin, MS_SYNC) != 0) msync_failed(begin, end, errno);
  msync_calls_.fetch_add(1, std::memory_order_relaxed);
  msync_bytes_.fetch_add(end - begin, std::memory_order_relaxed);
}

void MsyncMedium::note_dirty(const void* addr, size_t n) {
  if (n == 0) return;
  auto a = reinterpret_cast<uintptr_t>(addr);
  uintptr_t begin = std::max(a & ~page_mask_, map_begin_);
  uintptr_t end = std::min((a + n + page_mask_) & ~page_mask_, map_end_.load(std::memory_order_acquire));
  if (begin >= end) return;
  DirtyPages& d = dirty_for(id_);
  for (uint32_t i = d.n; i-- > 0;) {  // newest first: sequential writers hit at once
    PageRange& r = d.r[i];
    if (begin <= r.end && end >= r.begin) {
      r.begin = std::min(r.begin, begin);
      r.end = std::max(r.end, end);
      return;
    }
  }
  if (d.n == kMaxRanges) sync_dirty(d, [this](uintptr_t b, uintptr_t e) { sync_pages(b, e); });
  d.r[d.n++] = PageRange{begin, end};
}

void MsyncMedium::flush(const void* addr, size_t n) {
  X86Medium::flush(addr, n);
  note_dirty(addr, n);
}

void MsyncMedium::stream(void* dst, const void* src, size_t n) {
  X86Medium::stream(dst, src, n);
  note_dirty(dst, n);
}

void MsyncMedium::fence(FenceKind kind) {
  X86Medium::fence(kind);
  DirtyPages* d = find_dirty(id_);
  if (d != nullptr && d->n != 0) sync_dirty(*d, [this](uintptr_t b, uintptr_t e) { sync_pages(b, e); });
}

void MsyncMedium::extend(size_t len) {
  map_end_.store((map_begin_ + len + page_mask_) & ~page_mask_, std::memory_order_release);
}

void MsyncMedium::drain() {
  X86Medium::drain();
  const uintptr_t end = map_end_.load(std::memory_order_acquire);
  if (end > map_begin_) sync_pages(map_begin_, end);
  if (DirtyPages* d = find_dirty(id_)) d->n = 0;
}

}  // namespace softwrap
