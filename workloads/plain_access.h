// plain_access.h — the limit: workloads on volatile memory.
//
// Approach.  PlainAccess satisfies the access concept (access.h) with
// nothing but what a program on plain DRAM would do: blocks come from the
// C allocator (16-byte aligned), loads and stores are plain loads and
// stores, read and write are memcpy, and a wrap keeps only its nesting
// depth — no persistence, no log, no atomicity (abort is a no-op: the
// workloads abort only before their first store).  Offsets are the
// blocks' addresses (base 0), so off() and ptr() are casts and 0 is null.
// It is what `softwrap bench limit` measures every engine against: nothing
// but the workload itself may cost time here.
//
// The one addition is bookkeeping that lets a PlainHeap free what its
// workload never freed (a workload leaves its structure behind): each
// access appends the blocks it allocates and frees to logs of its own —
// one store into a sequential buffer per call, no lock, no lookup — and
// the heap frees, when destroyed, every block allocated more often than
// freed.  Threads each use their own access (PlainHeap::access()); a
// block allocated by one thread may be freed by another.
#ifndef SOFTWRAP_WORKLOADS_PLAIN_ACCESS_H_
#define SOFTWRAP_WORKLOADS_PLAIN_ACCESS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "access.h"

namespace softwrap::workloads {

class PlainAccess;

// A volatile "pool": the root object and the blocks the workload's
// accesses allocated.  Outlives its accesses; destroying it frees every
// block still allocated.
class PlainHeap {
 public:
  PlainHeap() = default;
  ~PlainHeap() {
    std::vector<void*> allocated, freed;
    for (const auto& log : logs_) {
      log->allocated.append_to(&allocated);
      log->freed.append_to(&freed);
    }
    // A block is live when its address was returned more often than freed
    // (the allocator reuses addresses): a sorted multiset difference.
    std::sort(allocated.begin(), allocated.end());
    std::sort(freed.begin(), freed.end());
    size_t f = 0;
    for (size_t a = 0; a < allocated.size(); ++a) {
      while (f < freed.size() && freed[f] < allocated[a]) ++f;
      if (f < freed.size() && freed[f] == allocated[a]) {
        ++f;
      } else {
        std::free(allocated[a]);
      }
    }
    std::free(root_);
  }
  PlainHeap(const PlainHeap&) = delete;
  PlainHeap& operator=(const PlainHeap&) = delete;

  // A new access with logs of its own: one per thread.
  PlainAccess access();

 private:
  friend class PlainAccess;

  // Append-only list of addresses in fixed chunks: an append never copies
  // what is already there (no pause inside a timed run).
  class AddressLog {
   public:
    void add(void* p) {
      if (used_ == kChunk) {
        chunks_.push_back(std::make_unique<void*[]>(kChunk));
        used_ = 0;
      }
      chunks_.back()[used_++] = p;
    }
    void append_to(std::vector<void*>* out) const {
      for (size_t c = 0; c < chunks_.size(); ++c) {
        const size_t n = c + 1 == chunks_.size() ? used_ : kChunk;
        out->insert(out->end(), chunks_[c].get(), chunks_[c].get() + n);
      }
    }

   private:
    static constexpr size_t kChunk = 4096;
    std::vector<std::unique_ptr<void*[]>> chunks_;
    size_t used_ = kChunk;
  };
  struct Logs {
    AddressLog allocated, freed;
  };

  void* root(size_t n) {
    std::lock_guard<std::mutex> g(mu_);
    if (root_ == nullptr && n > 0) {
      root_ = std::calloc(1, (n + 15) & ~size_t{15});
      if (root_ == nullptr) throw WorkloadError("PlainAccess: no memory for a root object of " + std::to_string(n) +
                                                " bytes");
      root_size_ = n;
    }
    if (n > root_size_) throw WorkloadError("PlainAccess: the root object is smaller than asked");
    return root_;
  }

  std::mutex mu_;  // logs_ and the root's creation
  std::vector<std::unique_ptr<Logs>> logs_;
  void* root_ = nullptr;
  size_t root_size_ = 0;
};

// The access concept on a PlainHeap.  Copies share their logs: give each
// thread its own PlainHeap::access().
class PlainAccess {
 public:
  void open() { ++depth_; }
  void close() {
    if (depth_ == 0) throw WorkloadError("PlainAccess: close without an open wrap");
    --depth_;
  }
  void abort() { depth_ = 0; }

  template <class T>
  T load(const T* p) {
    static_assert(kWordType<T>);
    return *p;
  }
  template <class T>
  void store(T* p, T v) {
    static_assert(kWordType<T>);
    *p = v;
  }
  void read(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
  void write(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
  template <class T>
  T* modify(T* p, size_t = 1) {
    return p;
  }
  void* alloc(size_t n) {
    void* p = std::aligned_alloc(16, n == 0 ? 16 : (n + 15) & ~size_t{15});
    if (p == nullptr) throw WorkloadError("PlainAccess: out of memory allocating " + std::to_string(n) + " bytes");
    logs_->allocated.add(p);
    return p;
  }
  void free(void* p) {
    if (p == nullptr) return;
    logs_->freed.add(p);
    std::free(p);
  }
  void* root(size_t n) { return heap_->root(n); }
  uint64_t off(const void* p) const { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }
  template <class T = void>
  T* ptr(uint64_t o) const {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(o));
  }

 private:
  friend class PlainHeap;
  PlainAccess(PlainHeap* heap, PlainHeap::Logs* logs) : heap_(heap), logs_(logs) {}

  PlainHeap* heap_;
  PlainHeap::Logs* logs_;
  int depth_ = 0;
};

inline PlainAccess PlainHeap::access() {
  std::lock_guard<std::mutex> g(mu_);
  logs_.push_back(std::make_unique<Logs>());
  return PlainAccess(this, logs_.back().get());
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_PLAIN_ACCESS_H_
