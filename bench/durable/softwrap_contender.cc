// softwrap_contender.cc — sw_bench_durable's softwrap contender: one pool
// file at default settings (engine softwrap, medium auto: msync on a file
// that is not on DAX), one softwrap::btree_map<uint64_t, uint64_t> per
// thread in it, one wrap per batch.  The trees are created before the
// timed part; each is used by its own thread only, so no lock is needed.
// The counters are sw_stats from just after the trees were created to
// after the run and the retirement left at its end (quiesce).
#include <string>
#include <vector>

#include "durable.h"
#include "softwrap/btree_map.hpp"
#include "softwrap/softwrap.hpp"

namespace softwrap::bench::durable {
namespace {

using tree = softwrap::btree_map<uint64_t, uint64_t>;

FlushCounters counters_of(const sw_stats& s) {
  FlushCounters c;
  c.wraps = s.wraps;
  c.fences = s.fences;
  c.fences_commit = s.fences_commit;
  c.fences_data = s.fences_data;
  c.fences_retire = s.fences_retire;
#if defined(SW_STATS_HAS_DEVICE_SYNCS)
  c.has_device_syncs = true;
  c.device_syncs = s.device_syncs;
  c.device_syncs_commit = s.device_syncs_commit;
  c.fences_shared = s.fences_shared;
#endif
  return c;
}

class SoftwrapContender final : public Contender {
 public:
  explicit SoftwrapContender(size_t pool_bytes) : pool_bytes_(pool_bytes) {}
  std::string name() const override { return "softwrap"; }

  RunResult run(const std::string& dir, const Cell& cell, const Keys& keys) override {
    auto pl = softwrap::pool::create(dir + "/durable.pool", pool_bytes_);  // default settings
    std::vector<tree> trees;
    trees.reserve(cell.threads);
    for (unsigned t = 0; t < cell.threads; ++t) trees.emplace_back(pl);
    pl.quiesce();
    pl.reset_stats();

    RunResult r;
    r.detail = "engine " + pl.engine_name() + ", medium " + pl.medium_name();
    r.seconds = timed_threads(cell.threads, [&](unsigned t) {
      const std::vector<uint64_t>& k = keys.per_thread[t];
      tree& tr = trees[t];
      uint64_t at = 0;
      for (uint64_t c = 0; c < cell.commits_per_thread; ++c) {
        softwrap::wrap w(pl);
        for (uint64_t i = 0; i < cell.batch; ++i, ++at) tr.insert(k[at], value_of(k[at]));
      }  // the wrap commits here: durable when the scope has closed
    });
    r.commits = uint64_t{cell.threads} * cell.commits_per_thread;
    r.inserts = r.commits * cell.batch;
    pl.quiesce();
    r.counters = counters_of(pl.stats());

    for (unsigned t = 0; t < cell.threads; ++t) {
      const tree& tr = trees[t];
      try {
        tr.verify();
      } catch (const softwrap::btree_verify_error& e) {
        throw check_failure(std::string("softwrap: ") + e.what());
      }
      if (tr.size() != keys.distinct_per_thread[t])
        throw check_failure("softwrap: thread " + std::to_string(t) + "'s tree holds " + std::to_string(tr.size()) +
                            " keys, expected " + std::to_string(keys.distinct_per_thread[t]));
      const std::vector<uint64_t>& k = keys.per_thread[t];
      for (uint64_t i = 0; i < r.inserts / cell.threads; ++i) {
        auto it = tr.find(k[i]);
        if (it == tr.end() || it->second != value_of(k[i]))
          throw check_failure("softwrap: key " + std::to_string(k[i]) + " missing or with a wrong value");
      }
    }
    pl.close();
    return r;
  }

 private:
  size_t pool_bytes_;
};

}  // namespace

std::unique_ptr<Contender> make_softwrap(size_t pool_bytes) {
  return std::make_unique<SoftwrapContender>(pool_bytes);
}

}  // namespace softwrap::bench::durable
