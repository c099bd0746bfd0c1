// runner.cc — threads, timing, pool sizing and the store histogram.
#include "runner.h"

#include <time.h>

#include <chrono>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace softwrap::workloads {

namespace {

using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Runs body(tid) on `threads` threads started together; returns the
// seconds from the start to the last end.
template <class F>
double parallel(uint32_t threads, F&& body) {
  std::latch ready(threads + 1);
  std::vector<std::string> errors(threads);
  std::vector<std::thread> ts;
  Clock::time_point start;
  for (uint32_t t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      ready.arrive_and_wait();
      try {
        body(t, start);
      } catch (const WorkloadError& e) {
        errors[t] = e.what();
      }
    });
  }
  start = Clock::now();
  ready.arrive_and_wait();
  for (std::thread& t : ts) t.join();
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  for (uint32_t t = 0; t < threads; ++t) {
    if (!errors[t].empty()) throw WorkloadError("thread " + std::to_string(t) + ": " + errors[t]);
  }
  return secs;
}

}  // namespace

size_t pool_bytes(const Info& info, const Params& p) {
  const uint64_t heap = info.heap_bytes(p);
  const uint64_t bytes = 2 * heap + (16ull << 20);
  return static_cast<size_t>((bytes + (1 << 20) - 1) & ~uint64_t{(1 << 20) - 1});
}

sw_config workload_config(sw_engine_kind engine, sw_medium_kind medium) {
  sw_config c{};
  c.engine = engine;
  c.medium = medium;
  c.lanes = 8;
  if (engine == SW_ENGINE_UNDO_THEMIS) c.flags |= SW_CONFIG_THEMIS_IDEAL;
  return c;
}

double run_threads(Workload& w, uint64_t per_thread) {
  return parallel(w.params().threads, [&](uint32_t t, Clock::time_point) { w.run(t, per_thread); });
}

Timed run_for(Workload& w, double seconds, uint64_t batch) {
  std::vector<uint64_t> done(w.params().threads);
  std::vector<double> cpu(w.params().threads);
  Timed r;
  r.seconds = parallel(w.params().threads, [&](uint32_t t, Clock::time_point start) {
    const auto end = start + std::chrono::duration<double>(seconds);
    const double cpu0 = thread_cpu_seconds();
    do {
      w.run(t, batch);
      done[t] += batch;
    } while (Clock::now() < end);
    cpu[t] = thread_cpu_seconds() - cpu0;
  });
  for (uint64_t d : done) r.transactions += d;
  for (double c : cpu) r.cpu_seconds += c;
  return r;
}

Timed run_count(Workload& w, uint64_t per_thread) {
  std::vector<double> cpu(w.params().threads);
  Timed r;
  r.seconds = parallel(w.params().threads, [&](uint32_t t, Clock::time_point) {
    const double cpu0 = thread_cpu_seconds();
    w.run(t, per_thread);
    cpu[t] = thread_cpu_seconds() - cpu0;
  });
  r.transactions = per_thread * w.params().threads;
  for (double c : cpu) r.cpu_seconds += c;
  return r;
}

void StoreHistogram::on_tx(const TxRecord& r) {
  std::lock_guard<std::mutex> g(mu_);
  if (r.aborted) {
    ++aborted_;
    return;
  }
  ++counts_[r.stores];
  totals_.stores += r.stores;
  totals_.words += r.words;
  totals_.unmodified += r.unmodified;
  totals_.half += r.half;
  totals_.other += r.other;
}

std::map<uint64_t, uint64_t> StoreHistogram::counts() const {
  std::lock_guard<std::mutex> g(mu_);
  return counts_;
}

uint64_t StoreHistogram::transactions() const {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t n = 0;
  for (const auto& [s, c] : counts_) n += c;
  return n;
}

uint64_t StoreHistogram::aborted() const {
  std::lock_guard<std::mutex> g(mu_);
  return aborted_;
}

TxRecord StoreHistogram::totals() const {
  std::lock_guard<std::mutex> g(mu_);
  return totals_;
}

double StoreHistogram::mean() const {
  const uint64_t n = transactions();
  return n ? static_cast<double>(totals().stores) / static_cast<double>(n) : 0.0;
}

uint64_t StoreHistogram::percentile(double q) const {
  const uint64_t n = transactions();
  std::lock_guard<std::mutex> g(mu_);
  uint64_t seen = 0;
  for (const auto& [s, c] : counts_) {
    seen += c;
    if (static_cast<double>(seen) >= q * static_cast<double>(n)) return s;
  }
  return counts_.empty() ? 0 : counts_.rbegin()->first;
}

}  // namespace softwrap::workloads
