// paper_workloads.h — the shared workloads (workloads/, docs/workloads.md)
// under the crash simulator.
//
// DriverAccess is the workloads' access type over a Driver: every load,
// store, read, write, allocation and free goes through the Driver, which
// mirrors the owned bytes for the golden states and checks every load
// against them.  During setup (untraced) it opens and closes wraps through
// the C API directly, so that no marker is recorded, and declares the root
// as owned; objects allocated then are owned by Driver::alloc.
//
// registry_workloads() turns every entry of SOFTWRAP_WORKLOAD_LIST into a
// crash-simulator Workload: small scale (Info::small_scale), transactions
// of at most 3 units where the workload has a size parameter, one owner;
// the WCL paper's workloads with SW_CONFIG_WCL.
// Its run() adopts the structure (attach), runs `size` transactions and
// fails the run if verify() does; its check_image hook runs attach() and
// verify() on every recovered image through the C API, so a structure a
// crash left broken fails even where the golden-state bytes would not
// tell.  They are not in workloads() (the suite's default set) but
// `softwrap crashtest --workload NAME` and `--workload themis` run them.
#ifndef SOFTWRAP_CRASHSIM_PAPER_WORKLOADS_H_
#define SOFTWRAP_CRASHSIM_PAPER_WORKLOADS_H_

#include <string>
#include <vector>

#include "crashsim/driver.h"
#include "workloads/access.h"

namespace softwrap::crashsim {

class DriverAccess {
 public:
  DriverAccess(Driver* d, bool setup) : d_(d), setup_(setup), base_(static_cast<char*>(sw_pool_base(d->pool()))) {}

  void open();
  void close();
  void abort();

  template <class T>
  T load(const T* p) {
    static_assert(workloads::kWordType<T>);
    sync_views();
    return static_cast<T>(d_->load(p, sizeof(T)));
  }
  template <class T>
  void store(T* p, T v) {
    static_assert(workloads::kWordType<T>);
    sync_views();
    d_->store(p, static_cast<uint64_t>(v), sizeof(T));
  }
  void read(void* dst, const void* src, size_t n) {
    sync_views();
    d_->read(dst, src, n);
  }
  void write(void* dst, const void* src, size_t n) {
    sync_views();
    d_->write(dst, src, n);
  }
  // The workload writes a view with plain stores: its bytes reach the
  // mirror (Driver::wrote) before every other call of the wrap, so that
  // the driver's checks see them.
  template <class T>
  T* modify(T* p, size_t n = 1) {
    return static_cast<T*>(modify_bytes(p, n * sizeof(T)));
  }
  void* alloc(size_t n);
  void free(void* p) {
    sync_views();
    d_->free(p);
  }
  void* root(size_t n);
  uint64_t off(const void* p) const { return p ? static_cast<uint64_t>(static_cast<const char*>(p) - base_) : 0; }
  template <class T = void>
  T* ptr(uint64_t o) const {
    return o ? reinterpret_cast<T*>(base_ + o) : nullptr;
  }

 private:
  struct View {
    void* addr;
    void* view;
    size_t n;
  };
  void* modify_bytes(void* p, size_t n);
  void sync_views() {
    for (const View& v : views_) d_->wrote(v.addr, v.view, v.n);
  }

  Driver* d_;
  bool setup_;
  char* base_;
  int depth_ = 0;
  std::vector<View> views_;  // of the open wrap
};

// One crash-simulator Workload per registry entry, in registry order.
const std::vector<Workload>& registry_workloads();
// Those from the Themis paper's Table II (`--workload themis`).
std::vector<const Workload*> themis_workloads();

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_PAPER_WORKLOADS_H_
