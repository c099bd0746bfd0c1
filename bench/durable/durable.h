// durable.h — what sw_bench_durable's contenders share: a cell (threads,
// batch, commits), the keys every contender inserts, one run's result, the
// contender interface and the timed start of the insert threads.
//
// A contender's run() starts from an empty store in a fresh directory it is
// given, inserts every thread's keys in batches of cell.batch, one durable
// commit (wrap / write transaction) per batch, checks the store afterwards
// and deletes nothing itself (the caller removes the directory).  Only the
// inserting threads are timed: opening, creating and checking are not.
#ifndef SOFTWRAP_BENCH_DURABLE_DURABLE_H_
#define SOFTWRAP_BENCH_DURABLE_DURABLE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <latch>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace softwrap::bench::durable {

struct Cell {
  unsigned threads = 1;
  uint64_t batch = 1;               // inserts per commit
  uint64_t commits_per_thread = 1;  // each thread's commits
};

// Every thread's keys, in insert order, and how many distinct keys there
// are per thread and over all threads (the expected sizes of the stores).
struct Keys {
  std::vector<std::vector<uint64_t>> per_thread;
  std::vector<uint64_t> distinct_per_thread;
  uint64_t distinct_all = 0;
};

// The value stored with key k (a function of the key, so a duplicate key
// — inserted only once, the stores keep the first — still has one value).
inline uint64_t value_of(uint64_t k) { return k * 0x9E3779B97F4A7C15ull + 1; }

// softwrap's counters over a run (sw_stats after the run minus before).
struct FlushCounters {
  uint64_t wraps = 0, fences = 0, fences_commit = 0, fences_data = 0, fences_retire = 0;
  bool has_device_syncs = false;
  uint64_t device_syncs = 0, device_syncs_commit = 0, fences_shared = 0;
};

struct RunResult {
  double seconds = 0;  // the inserting threads, first start to last finish
  uint64_t inserts = 0;
  uint64_t commits = 0;
  std::optional<FlushCounters> counters;  // softwrap only
  std::string detail;                     // what ran, e.g. "engine softwrap, medium msync"
};

// A failed check of a store's contents after a run.
struct check_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Contender {
 public:
  virtual ~Contender() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Inserts keys.per_thread[t][0 .. cell.batch * cell.commits_per_thread)
  // from thread t, all threads concurrently, into a new store in dir (an
  // existing empty directory).  Throws check_failure if the store does not
  // hold exactly the distinct keys with their values afterwards, and
  // std::runtime_error for any other error.
  virtual RunResult run(const std::string& dir, const Cell& cell, const Keys& keys) = 0;
};

std::unique_ptr<Contender> make_softwrap(size_t pool_bytes);
std::unique_ptr<Contender> make_sqlite(bool wal);  // journal_mode=WAL or DELETE
std::unique_ptr<Contender> make_lmdb();            // only in builds with LMDB

// Runs body(t) on `threads` threads, all released together once each has
// been started, and returns the seconds from that release to the end of the
// last one.  The first exception a body throws is rethrown here.
inline double timed_threads(unsigned threads, const std::function<void(unsigned)>& body) {
  std::latch ready(threads), go(1);
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> ts;
  ts.reserve(threads);
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      ready.count_down();
      go.wait();
      try {
        body(t);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  ready.wait();
  const auto t0 = std::chrono::steady_clock::now();
  go.count_down();
  for (auto& th : ts) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return s;
}

}  // namespace softwrap::bench::durable

#endif  // SOFTWRAP_BENCH_DURABLE_DURABLE_H_
