// runner.h — running a workload on a pool: pool sizing and configuration,
// threads, timing, and the stores-per-transaction histogram.
//
// Approach.  Benchmarks and tests size a workload's pool from its Info
// (pool_bytes) and open it with workload_config (few lanes; undo-themis
// opted in as the paper's Ideal on real media, since a benchmark measures
// it there on purpose).  run_threads and run_for start the threads
// together (a latch), join them and rethrow the first WorkloadError any of
// them hit.  StoreHistogram is the TxObserver behind the Fig. 8
// distributions.
#ifndef SOFTWRAP_WORKLOADS_RUNNER_H_
#define SOFTWRAP_WORKLOADS_RUNNER_H_

#include <cstdint>
#include <map>
#include <mutex>

#include "access.h"
#include "workload.h"

namespace softwrap::workloads {

// Pool bytes for `info` at p (resolved): room for the structure twice over
// (allocator slack, the churn of insert/delete workloads) plus the log.
size_t pool_bytes(const Info& info, const Params& p);

// sw_config for workload pools: 8 log lanes (at most 2 workload threads
// plus the setup/verify thread hold one at a time), the engine and medium,
// and SW_CONFIG_THEMIS_IDEAL for undo-themis.
sw_config workload_config(sw_engine_kind engine, sw_medium_kind medium);

// Each of w.params().threads threads runs `per_thread` transactions, all
// started at once.  Returns wall seconds; rethrows a thread's
// WorkloadError.
double run_threads(Workload& w, uint64_t per_thread);

struct Timed {
  uint64_t transactions = 0;
  double seconds = 0;      // from the start to the last thread's end
  double cpu_seconds = 0;  // CPU time of the running threads, summed: unlike
                           // wall time, it leaves out the time other jobs
                           // took the CPU (but also time spent blocked)
};
// Each thread runs batches of `batch` transactions until `seconds` have
// passed since the common start.
Timed run_for(Workload& w, double seconds, uint64_t batch);
// Each thread runs exactly `per_thread` transactions, timed as run_for:
// two copies of a workload run this way go through the same transactions.
Timed run_count(Workload& w, uint64_t per_thread);

// Stores per committed transaction (thread-safe).
class StoreHistogram final : public TxObserver {
 public:
  void on_tx(const TxRecord& r) override;
  std::map<uint64_t, uint64_t> counts() const;  // stores -> committed transactions
  uint64_t transactions() const;                // committed
  uint64_t aborted() const;
  TxRecord totals() const;  // over committed transactions
  double mean() const;
  uint64_t percentile(double q) const;  // q in [0, 1]

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, uint64_t> counts_;
  uint64_t aborted_ = 0;
  TxRecord totals_;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_RUNNER_H_
