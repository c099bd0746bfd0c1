// limit_no_pmdk.cc — sw_bench_limit built without libpmemobj (pkg-config
// did not find it): no PMDK contender; the experiment runs without the
// PMDK column and says so in limit_meta.csv.
#include "limit.h"

namespace softwrap::bench::limit {

std::unique_ptr<Contender> make_pmdk_contender(const std::string&, const workloads::Info&,
                                               const workloads::Params&) {
  return nullptr;
}

bool have_pmdk() { return false; }
const char* pmdk_missing_reason() { return "sw_bench_limit was built without libpmemobj, which pkg-config did not find"; }

}  // namespace softwrap::bench::limit
