// limit.h — sw_bench_limit, the program behind `softwrap bench limit`: how
// far each workload is from the limit (plain volatile memory) and from the
// peer (PMDK's libpmemobj), and what a load through the API costs beside a
// plain load (docs/benchmarks.md, "limit/").
//
// Approach: two parts, each writing CSV files into the output directory
// and recording its bars as checks in limit_meta.csv.
//  * limit_workloads.cc: every registered workload, one thread, on seven
//    contenders — the limit (PlainAccess), PMDK (PmdkAccess) and each
//    engine on x86 through ApiAccess — the same transactions on all (same
//    seed, the same fixed count per slice), slices alternated round by
//    round in a rotated order; medians of the rounds' ratios.
//  * limit_loads.cc: random 8-byte loads from an 8 MiB and a 512 MiB array
//    in a pool, plain against sw_load64 outside wraps, in read-only wraps
//    and (softwrap) in wraps that also store; random stores, plain against
//    sw_store64 in wraps of 10.
// A program of its own because PMDK must never be linked into the
// softwrap tool (suite.cc); PMDK's contender lives in limit_pmdk.cc, which
// is compiled only where pkg-config finds libpmemobj (limit_no_pmdk.cc
// stands in for it elsewhere: the experiment then runs without PMDK).
#ifndef SOFTWRAP_BENCH_SUITE_LIMIT_H_
#define SOFTWRAP_BENCH_SUITE_LIMIT_H_

#include <memory>
#include <string>
#include <vector>

#include "harness.h"
#include "workload_cell.h"
#include "workloads/registry.h"

namespace softwrap::bench::limit {

// The engines both parts run, in the order of their tables.
struct EngineSpec {
  sw_engine_kind kind;
  const char* label;
};
inline constexpr EngineSpec kEngines[] = {{SW_ENGINE_SOFTWRAP, "softwrap"},
                                          {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local"},
                                          {SW_ENGINE_UNDO, "undo"},
                                          {SW_ENGINE_UNDO_THEMIS, "undo-themis"},
                                          {SW_ENGINE_NONATOMIC, "nonatomic"}};

// --cpu-cache (`softwrap bench limit --cpu-cache`): the run measures the
// x86 medium's cpu-cache form, as on an eADR or CXL platform (DRAM's caches
// behave like theirs here): SOFTWRAP_PERSISTENCE=cpu-cache for every
// engine, PMDK with PMEM_NO_FLUSH=1 (its own switch for such platforms),
// and three more contenders: softwrap and undo with non-temporal streams
// (SOFTWRAP_CPU_CACHE_STREAMS=non-temporal) and undo with its ordering
// fences kept (SOFTWRAP_CPU_CACHE_FENCES=keep).  Set by main before any
// pool is opened.
extern bool g_cpu_cache;

// One workload on one access, set up and ready to run.
class Contender {
 public:
  explicit Contender(std::string label) : label_(std::move(label)) {}
  virtual ~Contender() = default;
  Contender(const Contender&) = delete;
  Contender& operator=(const Contender&) = delete;
  const std::string& label() const { return label_; }
  // Exactly n transactions of the workload's thread 0 on the calling
  // thread, timed (what surrounds them untimed: quiesce, counter checks).
  virtual Rate run(uint64_t n) = 0;
  // Verifies the structure (fail() on a wrong one) and releases the pool.
  virtual void verify_and_close() = 0;
  // The transactions and counters of its recorded slices (an engine's),
  // or nullptr.
  virtual const WorkloadCell* cell() const { return nullptr; }

 private:
  std::string label_;
};

// n transactions of w's thread 0 on the calling thread (run_here), as a
// Rate; a WorkloadError fails the run, named by `what`.
Rate run_timed(workloads::Workload& w, uint64_t n, const std::string& what);

// PMDK's contender: the workload set up in a new libpmemobj pool at `path`
// (removed when the contender is destroyed).  nullptr when this program
// was built without libpmemobj.
std::unique_ptr<Contender> make_pmdk_contender(const std::string& path, const workloads::Info& info,
                                               const workloads::Params& params);
// Whether make_pmdk_contender can make one, and if not, why.
bool have_pmdk();
const char* pmdk_missing_reason();

// The two parts (the workloads: all of `which`), and the progress steps
// each takes (per workload, and for the loads).
void run_workloads(Context& ctx, const std::vector<const workloads::Info*>& which);
void run_loads(Context& ctx);
int workload_steps(const Context& ctx);
int loads_steps(const Context& ctx);

// Pool file names of this process under the pool directory.
std::string pool_path(const Context& ctx, const std::string& tag);

}  // namespace softwrap::bench::limit

#endif  // SOFTWRAP_BENCH_SUITE_LIMIT_H_
