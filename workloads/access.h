// access.h — how a workload touches persistent memory.
//
// Approach.  A workload is a class template over an *access type* A, and
// calls nothing but A's members to open, close and abort wraps, to load,
// store, read, write, allocate and free pool memory and to turn pointers
// into pool offsets and back.  The benchmark path uses ApiAccess, whose
// members are inline calls of the C API (no virtual call, no per-access
// bookkeeping), so the workload costs what hand-written C API code costs.
// The crash simulator's access (src/crashsim/paper_workloads.cc) routes the
// same calls through its Driver, which mirrors every owned byte for the
// golden states; ObservedAccess<A> wraps any access and reports each
// transaction's stores (Themis Fig. 8) and how many stored words changed
// and by how much (WCL Fig. 2) to a TxObserver.
//
// The access concept (what a workload may call on `A& a`):
//   a.open(); a.close(); a.abort();         wraps (nesting allowed)
//   T a.load(const T* p); a.store(T* p, T v) T: 1/2/4/8-byte integer,
//                                            naturally aligned
//   a.read(dst, src, n); a.write(dst, src, n) byte ranges, any alignment
//   T* a.modify(T* p, size_t n = 1)          inside a wrap: the n objects at
//                                            p are about to be rewritten;
//                                            returns where the wrap reads
//                                            and writes them with plain
//                                            loads and stores until it
//                                            ends (sw_modify)
//   void* a.alloc(n); a.free(p)              inside a wrap; the workload
//                                            writes every byte of a new
//                                            object that it will read back,
//                                            in the same wrap
//   void* a.root(n)                          the pool's root object (zeroed
//                                            the first time; in a wrap)
//   uint64_t a.off(p); T* a.ptr<T>(off)      persistent data refers to
//                                            persistent data by offset
// Failures (a full pool, a wrap the engine had to roll back) throw
// WorkloadError; Wrap (below) aborts a wrap that an exception leaves open.
#ifndef SOFTWRAP_WORKLOADS_ACCESS_H_
#define SOFTWRAP_WORKLOADS_ACCESS_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "softwrap/softwrap.h"

namespace softwrap::workloads {

struct WorkloadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws WorkloadError("<what>: <sw_errormsg()>").
[[noreturn]] void throw_api_error(const char* what);

template <class T>
inline constexpr bool kWordType = std::is_integral_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 ||
                                                            sizeof(T) == 8);

// The C API, inline.  One object per thread or shared: it holds no state
// besides the pool and its base address.
class ApiAccess {
 public:
  explicit ApiAccess(sw_pool* p) : p_(p), base_(static_cast<char*>(sw_pool_base(p))) {}
  sw_pool* pool() const { return p_; }

  void open() {
    if (sw_wrap_open(p_) != 0) throw_api_error("sw_wrap_open");
  }
  void close() {
    if (sw_wrap_close(p_) != 0) throw_api_error("sw_wrap_close");
  }
  // Under the nonatomic engine the stores stay (SW_ENOTSUP): workloads
  // abort only before their first store.
  void abort() {
    const int rc = sw_wrap_abort(p_);
    if (rc != 0 && rc != SW_ENOTSUP) throw_api_error("sw_wrap_abort");
  }

  template <class T>
  T load(const T* p) {
    static_assert(kWordType<T>);
    if constexpr (sizeof(T) == 8) return static_cast<T>(sw_load64(p_, p));
    if constexpr (sizeof(T) == 4) return static_cast<T>(sw_load32(p_, p));
    if constexpr (sizeof(T) == 2) return static_cast<T>(sw_load16(p_, p));
    if constexpr (sizeof(T) == 1) return static_cast<T>(sw_load8(p_, p));
  }
  template <class T>
  void store(T* p, T v) {
    static_assert(kWordType<T>);
    if constexpr (sizeof(T) == 8) sw_store64(p_, p, static_cast<uint64_t>(v));
    if constexpr (sizeof(T) == 4) sw_store32(p_, p, static_cast<uint32_t>(v));
    if constexpr (sizeof(T) == 2) sw_store16(p_, p, static_cast<uint16_t>(v));
    if constexpr (sizeof(T) == 1) sw_store8(p_, p, static_cast<uint8_t>(v));
  }
  void read(void* dst, const void* src, size_t n) {
    if (sw_read(p_, dst, src, n) != 0) throw_api_error("sw_read");
  }
  void write(void* dst, const void* src, size_t n) {
    if (sw_write(p_, dst, src, n) != 0) throw_api_error("sw_write");
  }
  template <class T>
  T* modify(T* p, size_t n = 1) {
    void* v = sw_modify(p_, p, n * sizeof(T));
    if (v == nullptr) throw_api_error("sw_modify");
    return static_cast<T*>(v);
  }
  void* alloc(size_t n) {
    void* p = sw_pmalloc(p_, n);
    if (p == nullptr) throw_api_error("sw_pmalloc");
    return p;
  }
  void free(void* p) {
    if (sw_pfree(p_, p) != 0) throw_api_error("sw_pfree");
  }
  void* root(size_t n) {
    void* r = sw_pool_root(p_, n);
    if (r == nullptr) throw_api_error("sw_pool_root");
    return r;
  }
  uint64_t off(const void* p) const { return p ? static_cast<uint64_t>(static_cast<const char*>(p) - base_) : 0; }
  template <class T = void>
  T* ptr(uint64_t o) const {
    return o ? reinterpret_cast<T*>(base_ + o) : nullptr;
  }

 private:
  sw_pool* p_;
  char* base_;
};

// Ends a wrap on every path: commit() closes it, an exception (or return)
// before that aborts it.  Declare it after the lock guards it runs under,
// so that it closes before they unlock ("close before you unlock").
template <class A>
class Wrap {
 public:
  explicit Wrap(A& a) : a_(a) { a_.open(); }
  ~Wrap() {
    if (!done_) {
      try {
        a_.abort();
      } catch (const WorkloadError&) {
        // Already unwinding from the failure that got us here.
      }
    }
  }
  Wrap(const Wrap&) = delete;
  Wrap& operator=(const Wrap&) = delete;
  void commit() {
    done_ = true;
    a_.close();
  }
  void abort() {
    done_ = true;
    a_.abort();
  }

 private:
  A& a_;
  bool done_ = false;
};

// What ObservedAccess learns about one outermost wrap.
struct TxRecord {
  uint64_t stores = 0;  // word stores: one per store(), one per aligned word a write() covers
  uint64_t words = 0;   // distinct 8-byte words stored to
  // The distinct words by how their final value differs from their value
  // before the wrap (WCL Fig. 2): not at all, in one 32-bit half only, or
  // in both halves.
  uint64_t unmodified = 0, half = 0, other = 0;
  bool aborted = false;
};

class TxObserver {
 public:
  virtual ~TxObserver() = default;
  // Called after each outermost close or abort, on the wrap's thread.
  virtual void on_tx(const TxRecord& r) = 0;
};

// A in a recording coat: counts each wrap's stores and the words they
// touch, remembers each word's value before its first store, and at the
// outermost close compares it with the final value.  The extra loads make
// it a profiling access, not a timing one.
template <class A>
class ObservedAccess {
 public:
  ObservedAccess(A inner, TxObserver* observer) : a_(std::move(inner)), obs_(observer) {}
  A& inner() { return a_; }

  void open() {
    a_.open();
    if (depth_++ == 0) {
      rec_ = TxRecord{};
      first_.clear();
    }
  }
  void close() {
    if (depth_ == 1) classify();
    a_.close();
    if (--depth_ == 0 && obs_) obs_->on_tx(rec_);
  }
  void abort() {
    a_.abort();
    depth_ = 0;
    rec_.aborted = true;
    if (obs_) obs_->on_tx(rec_);
  }

  template <class T>
  T load(const T* p) {
    return a_.load(p);
  }
  template <class T>
  void store(T* p, T v) {
    touch(p, sizeof(T));
    a_.store(p, v);
  }
  void read(void* dst, const void* src, size_t n) { a_.read(dst, src, n); }
  void write(void* dst, const void* src, size_t n) {
    touch(dst, n);
    a_.write(dst, src, n);
  }
  template <class T>
  T* modify(T* p, size_t n = 1) {
    touch(p, n * sizeof(T));  // each word counts as stored once
    return a_.modify(p, n);
  }
  void* alloc(size_t n) { return a_.alloc(n); }
  void free(void* p) { a_.free(p); }
  void* root(size_t n) { return a_.root(n); }
  uint64_t off(const void* p) const { return a_.off(p); }
  template <class T = void>
  T* ptr(uint64_t o) const {
    return a_.template ptr<T>(o);
  }

 private:
  void touch(const void* p, size_t n) {
    if (depth_ == 0 || n == 0) return;  // a store outside a wrap is its own wrap: not observed
    const uint64_t o = a_.off(p);
    for (uint64_t w = o & ~uint64_t{7}; w < o + n; w += 8) {
      ++rec_.stores;
      if (first_.find(w) == first_.end()) first_.emplace(w, a_.load(a_.template ptr<const uint64_t>(w)));
    }
  }
  void classify() {
    rec_.words = first_.size();
    for (const auto& [w, before] : first_) {
      const uint64_t d = before ^ a_.load(a_.template ptr<const uint64_t>(w));
      if (d == 0) {
        ++rec_.unmodified;
      } else if ((d >> 32) == 0 || (d & 0xFFFFFFFFull) == 0) {
        ++rec_.half;
      } else {
        ++rec_.other;
      }
    }
  }

  A a_;
  TxObserver* obs_;
  int depth_ = 0;
  TxRecord rec_;
  std::unordered_map<uint64_t, uint64_t> first_;  // word offset -> value before the wrap's first store
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_ACCESS_H_
