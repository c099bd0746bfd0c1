// paper_workloads.cc — DriverAccess and the registry's workloads as
// crash-simulator workloads (paper_workloads.h).
#include "crashsim/paper_workloads.h"

#include <cstring>

#include "workloads/registry.h"

namespace softwrap::crashsim {

void DriverAccess::open() {
  ++depth_;
  if (!setup_) return d_->open();
  if (sw_wrap_open(d_->pool()) != 0) workloads::throw_api_error("sw_wrap_open");
}

void DriverAccess::close() {
  sync_views();
  if (--depth_ == 0) views_.clear();
  if (!setup_) return d_->close();
  if (sw_wrap_close(d_->pool()) != 0) workloads::throw_api_error("sw_wrap_close");
}

void* DriverAccess::modify_bytes(void* p, size_t n) {
  if (setup_) {
    void* v = sw_modify(d_->pool(), p, n);
    if (v == nullptr) workloads::throw_api_error("sw_modify");
    return v;
  }
  sync_views();
  void* v = d_->modify(p, n);
  if (v == nullptr) workloads::throw_api_error("sw_modify");
  views_.push_back({p, v, n});
  return v;
}

void DriverAccess::abort() {
  depth_ = 0;  // an abort ends the whole wrap
  views_.clear();
  if (!setup_) return d_->abort();
  const int rc = sw_wrap_abort(d_->pool());
  if (rc != 0 && rc != SW_ENOTSUP) workloads::throw_api_error("sw_wrap_abort");
}

void* DriverAccess::alloc(size_t n) {
  sync_views();
  void* p = d_->alloc(n);
  if (p == nullptr) workloads::throw_api_error("sw_pmalloc");
  return p;
}

void* DriverAccess::root(size_t n) {
  void* r = sw_pool_root(d_->pool(), n);
  if (r == nullptr) workloads::throw_api_error("sw_pool_root");
  if (setup_) d_->own(r, n);
  return r;
}

namespace {

workloads::Params crash_params(const workloads::Info& info, uint64_t seed) {
  workloads::Params p;
  p.threads = 1;
  p.seed = seed;
  p.scale = info.small_scale;
  if (info.tx_size_means) p.tx_size = info.default_tx_size < 3 ? info.default_tx_size : 3;
  return workloads::resolve(info, p);
}

// Each phase seeds the workload's own generators from the simulator's.
template <template <class> class W>
void setup_fn(std::vector<Driver*>& d, Rng& rng) {
  std::vector<DriverAccess> acc{DriverAccess(d[0], true)};
  try {
    W<DriverAccess> w(&acc, crash_params(W<DriverAccess>::info(), rng.next()));
    w.setup();
  } catch (const workloads::WorkloadError& e) {
    d[0]->fail(std::string("setup: ") + e.what());
  }
}

template <template <class> class W>
void run_fn(std::vector<Driver*>& d, Rng& rng, uint32_t size) {
  std::vector<DriverAccess> acc{DriverAccess(d[0], false)};
  try {
    W<DriverAccess> w(&acc, crash_params(W<DriverAccess>::info(), rng.next()));
    w.attach();
    w.run(0, size);
    const std::string why = w.verify();
    if (!why.empty()) d[0]->fail("verify: " + why);
  } catch (const workloads::WorkloadError& e) {
    d[0]->fail(e.what());
  }
}

template <template <class> class W>
std::string check_fn(sw_pool* p, const std::vector<ImageState>&) {
  std::vector<workloads::ApiAccess> acc{workloads::ApiAccess(p)};
  try {
    W<workloads::ApiAccess> w(&acc, crash_params(W<workloads::ApiAccess>::info(), 1));
    w.attach();
    return w.verify();
  } catch (const workloads::WorkloadError& e) {
    return e.what();
  }
}

template <template <class> class W>
Workload entry(const workloads::Info& info) {
  // The WCL paper's workloads run with write-combined logging on (their
  // write patterns are what its record kinds are for).
  const uint32_t flags = std::strncmp(info.paper, "WCL", 3) == 0 ? SW_CONFIG_WCL : 0;
  return Workload{info.name, info.what, 1024, 8, 1024, 8, 1, setup_fn<W>, run_fn<W>, check_fn<W>, -1, flags};
}

}  // namespace

const std::vector<Workload>& registry_workloads() {
  using namespace workloads;  // the templates SOFTWRAP_WORKLOAD_LIST names
#define SOFTWRAP_CRASH_ENTRY(W, INFO) entry<W>(INFO),
  static const std::vector<Workload> all = {SOFTWRAP_WORKLOAD_LIST(SOFTWRAP_CRASH_ENTRY)};
#undef SOFTWRAP_CRASH_ENTRY
  return all;
}

std::vector<const Workload*> themis_workloads() {
  std::vector<const Workload*> out;
  for (const Workload& w : registry_workloads()) {
    const workloads::Info* info = workloads::find_workload(w.name);
    if (info && std::strncmp(info->paper, "Themis", 6) == 0) out.push_back(&w);
  }
  return out;
}

}  // namespace softwrap::crashsim
