// limit_pmdk.cc — PMDK's contender of sw_bench_limit (limit.h): the
// workload on PmdkAccess (workloads/pmdk_access.h) in a libpmemobj pool of
// its own.  Compiled only where pkg-config finds libpmemobj; the program
// runs with PMEM_IS_PMEM_FORCE=1 (limit_main.cc), so PMDK flushes with
// clwb/clflushopt + sfence as our x86 medium does.
#include <memory>
#include <string>
#include <vector>

#include "limit.h"
#include "workloads/pmdk_access.h"
#include "workloads/runner.h"

namespace softwrap::bench::limit {
namespace {

namespace wl = softwrap::workloads;

class PmdkContender final : public Contender {
 public:
  PmdkContender(const std::string& path, const wl::Info& info, const wl::Params& params)
      : Contender("pmdk"), what_(fmt("%s on PMDK", info.name)), bytes_(pool_size(info, params)) {
    try {
      pool_ = std::make_unique<wl::PmdkPool>(path, bytes_);
      acc_.emplace_back(pool_->pop());
      w_ = wl::make_workload(info.name, &acc_, params);
      w_->setup();
    } catch (const wl::WorkloadError& e) {
      fail(what_ + ": setup: " + e.what());
    }
    prefault(pool_->pop(), bytes_);
  }
  Rate run(uint64_t n) override { return run_timed(*w_, n, what_); }
  void verify_and_close() override {
    const std::string why = w_->verify();
    if (!why.empty()) fail(what_ + ": " + why);
    w_.reset();
    pool_.reset();
  }

 private:
  // libpmemobj pools do not grow: twice our pools' size (PMDK's
  // allocation classes and per-object headers take more than our
  // allocator), plus its lanes and heap metadata.
  static size_t pool_size(const wl::Info& info, const wl::Params& params) {
    return 2 * wl::pool_bytes(info, params) + (64u << 20);
  }

  std::string what_;
  size_t bytes_;
  std::unique_ptr<wl::PmdkPool> pool_;  // outlives the workload
  std::vector<wl::PmdkAccess> acc_;
  std::unique_ptr<wl::Workload> w_;
};

}  // namespace

std::unique_ptr<Contender> make_pmdk_contender(const std::string& path, const wl::Info& info,
                                               const wl::Params& params) {
  return std::make_unique<PmdkContender>(path, info, params);
}

bool have_pmdk() { return true; }
const char* pmdk_missing_reason() { return ""; }

}  // namespace softwrap::bench::limit
