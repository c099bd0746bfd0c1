// pmdk_access.h — the peer: workloads on PMDK's libpmemobj transactions.
//
// Approach.  PmdkAccess satisfies the access concept (access.h) the way
// PMDK's documentation writes a transaction, with the plain functions (no
// TX_BEGIN macros, no longjmp):
//   open    pmemobj_tx_begin (inside a transaction: a nested one, which
//           PMDK flattens into the outermost, as softwrap does)
//   close   pmemobj_tx_commit + pmemobj_tx_end
//   abort   pmemobj_tx_abort + pmemobj_tx_end, for every level open (the
//           outermost transaction is rolled back, as sw_wrap_abort does)
//   store   pmemobj_tx_add_range_direct of its bytes (the undo snapshot),
//           then a plain store in place; write likewise for the range
//   load    a plain load; read a memcpy (PMDK reads in place)
//   alloc   pmemobj_tx_alloc / pmemobj_tx_free (pmemobj_direct and
//           pmemobj_oid convert)
//   root    pmemobj_root;  off/ptr  offsets from the pool's base, (char*)pop
// A store, write, alloc or free outside a transaction runs in a
// transaction of its own, as the C API makes it a wrap of its own.  A
// failure throws WorkloadError with pmemobj_errormsg(); PMDK has then
// aborted the transaction, and Wrap's abort() ends it.
//
// The transaction depth is the access object's: one PmdkAccess per
// thread (as PMDK's transactions are per thread).  Pools for it are
// PmdkPool objects.  Programs that link libpmemobj include this header;
// on a file system that is not persistent memory (/dev/shm) run them with
// PMEM_IS_PMEM_FORCE=1 so that PMDK persists with clwb/clflushopt + sfence,
// as our x86 medium does, instead of msync.
#ifndef SOFTWRAP_WORKLOADS_PMDK_ACCESS_H_
#define SOFTWRAP_WORKLOADS_PMDK_ACCESS_H_

#include <libpmemobj.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "access.h"

namespace softwrap::workloads {

[[noreturn]] inline void throw_pmdk_error(const char* what) {
  throw WorkloadError(std::string(what) + ": " + pmemobj_errormsg());
}

// A libpmemobj pool file, created (replacing any file at the path) or
// opened; closed and, if this object created it, removed on destruction.
class PmdkPool {
 public:
  static constexpr const char* kLayout = "softwrap-workloads";
  // Creates a pool of `bytes` (at least PMEMOBJ_MIN_POOL).
  PmdkPool(const std::string& path, size_t bytes) : path_(path), owned_(true) {
    std::remove(path.c_str());
    pop_ = pmemobj_create(path.c_str(), kLayout, bytes < PMEMOBJ_MIN_POOL ? PMEMOBJ_MIN_POOL : bytes, 0600);
    if (pop_ == nullptr) throw_pmdk_error(("pmemobj_create " + path).c_str());
  }
  // Opens an existing pool (kept on destruction).
  explicit PmdkPool(const std::string& path) : path_(path), owned_(false) {
    pop_ = pmemobj_open(path.c_str(), kLayout);
    if (pop_ == nullptr) throw_pmdk_error(("pmemobj_open " + path).c_str());
  }
  ~PmdkPool() {
    close();
    if (owned_) std::remove(path_.c_str());
  }
  PmdkPool(const PmdkPool&) = delete;
  PmdkPool& operator=(const PmdkPool&) = delete;

  PMEMobjpool* pop() const { return pop_; }
  const std::string& path() const { return path_; }
  // Closes the pool, keeping the file (for a test that reopens it).
  void close() {
    if (pop_ != nullptr) pmemobj_close(pop_);
    pop_ = nullptr;
  }
  void keep_file() { owned_ = false; }

 private:
  std::string path_;
  bool owned_;
  PMEMobjpool* pop_ = nullptr;
};

class PmdkAccess {
 public:
  explicit PmdkAccess(PMEMobjpool* pop) : pop_(pop), base_(reinterpret_cast<char*>(pop)) {}
  PMEMobjpool* pool() const { return pop_; }

  void open() {
    if (pmemobj_tx_begin(pop_, nullptr, TX_PARAM_NONE) != 0) throw_pmdk_error("pmemobj_tx_begin");
    ++depth_;
  }
  void close() {
    if (depth_ == 0) throw WorkloadError("PmdkAccess: close without an open transaction");
    --depth_;
    // A transaction PMDK aborted on a failure is past its work stage; its
    // end returns the error (and aborts the enclosing levels).
    if (pmemobj_tx_stage() == TX_STAGE_WORK) pmemobj_tx_commit();
    if (pmemobj_tx_end() != 0) throw_pmdk_error("pmemobj_tx_end (the transaction was aborted)");
  }
  void abort() {
    if (pmemobj_tx_stage() == TX_STAGE_WORK) pmemobj_tx_abort(ECANCELED);
    while (pmemobj_tx_stage() != TX_STAGE_NONE) pmemobj_tx_end();
    depth_ = 0;
  }

  // Loads and stores dereference what ptr() returned, which the compiler
  // sees may be null (ptr(0)); where a workload computes a field address
  // from an offset that is never 0 there (rbtree.h), GCC's -Warray-bounds
  // reports the path it cannot rule out.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
  template <class T>
  T load(const T* p) {
    static_assert(kWordType<T>);
    return *p;
  }
  template <class T>
  void store(T* p, T v) {
    static_assert(kWordType<T>);
    if (depth_ == 0) return own_tx([&] { store(p, v); });
    if (pmemobj_tx_add_range_direct(p, sizeof(T)) != 0) throw_pmdk_error("pmemobj_tx_add_range_direct");
    *p = v;
  }
#pragma GCC diagnostic pop
  void read(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
  void write(void* dst, const void* src, size_t n) {
    if (n == 0) return;
    if (depth_ == 0) return own_tx([&] { write(dst, src, n); });
    if (pmemobj_tx_add_range_direct(dst, n) != 0) throw_pmdk_error("pmemobj_tx_add_range_direct");
    std::memcpy(dst, src, n);
  }
  // PMDK's way: the range is added to the transaction (its old bytes
  // logged), then written in place.
  template <class T>
  T* modify(T* p, size_t n = 1) {
    if (depth_ == 0) throw WorkloadError("PmdkAccess: modify outside a transaction");
    if (pmemobj_tx_add_range_direct(p, n * sizeof(T)) != 0) throw_pmdk_error("pmemobj_tx_add_range_direct");
    return p;
  }
  void* alloc(size_t n) {
    if (depth_ == 0) {
      void* p = nullptr;
      own_tx([&] { p = alloc(n); });
      return p;
    }
    const PMEMoid o = pmemobj_tx_alloc(n, 0);
    if (OID_IS_NULL(o)) throw_pmdk_error("pmemobj_tx_alloc");
    return pmemobj_direct(o);
  }
  void free(void* p) {
    if (p == nullptr) return;
    if (depth_ == 0) return own_tx([&] { free(p); });
    if (pmemobj_tx_free(pmemobj_oid(p)) != 0) throw_pmdk_error("pmemobj_tx_free");
  }
  void* root(size_t n) {
    const PMEMoid r = pmemobj_root(pop_, n);
    if (OID_IS_NULL(r)) throw_pmdk_error("pmemobj_root");
    if (pmemobj_root_size(pop_) < n) throw WorkloadError("PmdkAccess: the root object is smaller than asked");
    return pmemobj_direct(r);
  }
  uint64_t off(const void* p) const { return p ? static_cast<uint64_t>(static_cast<const char*>(p) - base_) : 0; }
  template <class T = void>
  T* ptr(uint64_t o) const {
    return o ? reinterpret_cast<T*>(base_ + o) : nullptr;
  }

 private:
  // f() in a transaction of its own, aborted if f throws.
  template <class F>
  void own_tx(F&& f) {
    Wrap<PmdkAccess> w(*this);
    f();
    w.commit();
  }

  PMEMobjpool* pop_;
  char* base_;
  int depth_ = 0;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_PMDK_ACCESS_H_
