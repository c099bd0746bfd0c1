// lmdb_contender.cc — sw_bench_durable's LMDB contender (Debian's
// liblmdb): one environment in the run's directory at default flags, so
// every commit is durable (no MDB_NOSYNC, MDB_NOMETASYNC, MDB_WRITEMAP),
// plain 8-byte keys, mdb_put with MDB_NOOVERWRITE (insert if absent, as
// btree_map::insert), one write transaction per batch.  All threads share
// the environment; LMDB runs one write transaction at a time, the others
// wait in mdb_txn_begin — the serialised writer is what this compares.
// Compiled only when CMake finds LMDB.
#include <lmdb.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "durable.h"

namespace softwrap::bench::durable {
namespace {

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS) throw std::runtime_error(std::string("lmdb: ") + what + ": " + mdb_strerror(rc));
}

// The environment and its one database, closed at scope exit.
class Env {
 public:
  explicit Env(const std::string& dir, size_t map_bytes) {
    check(mdb_env_create(&env_), "mdb_env_create");
    int rc = mdb_env_set_mapsize(env_, map_bytes);
    if (rc == MDB_SUCCESS) rc = mdb_env_open(env_, dir.c_str(), 0, 0644);
    if (rc != MDB_SUCCESS) {
      mdb_env_close(env_);
      check(rc, "mdb_env_open");
    }
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin");
    rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (rc != MDB_SUCCESS) mdb_txn_abort(txn);
    else rc = mdb_txn_commit(txn);
    if (rc != MDB_SUCCESS) {
      mdb_env_close(env_);
      check(rc, "mdb_dbi_open");
    }
  }
  ~Env() { mdb_env_close(env_); }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  MDB_env* env() const { return env_; }
  MDB_dbi dbi() const { return dbi_; }

 private:
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

// A transaction aborted at scope exit unless committed.
class Txn {
 public:
  Txn(MDB_env* env, unsigned flags) { check(mdb_txn_begin(env, nullptr, flags, &txn_), "mdb_txn_begin"); }
  ~Txn() {
    if (txn_) mdb_txn_abort(txn_);
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
  MDB_txn* get() const { return txn_; }
  void commit() { check(mdb_txn_commit(std::exchange(txn_, nullptr)), "mdb_txn_commit"); }

 private:
  MDB_txn* txn_ = nullptr;
};

class LmdbContender final : public Contender {
 public:
  std::string name() const override { return "lmdb"; }

  RunResult run(const std::string& dir, const Cell& cell, const Keys& keys) override {
    // Generous: a B+tree of 16-byte entries takes well under 100 bytes each.
    const size_t map_bytes = (size_t{1} << 30) + keys.distinct_all * 256;
    Env env(dir, map_bytes);

    RunResult r;
    r.detail = std::string(mdb_version(nullptr, nullptr, nullptr)) + ", default flags (durable commits)";
    r.seconds = timed_threads(cell.threads, [&](unsigned t) {
      const std::vector<uint64_t>& k = keys.per_thread[t];
      uint64_t at = 0;
      for (uint64_t c = 0; c < cell.commits_per_thread; ++c) {
        Txn txn(env.env(), 0);
        for (uint64_t i = 0; i < cell.batch; ++i, ++at) {
          uint64_t key = k[at], value = value_of(k[at]);
          MDB_val kv{sizeof key, &key}, vv{sizeof value, &value};
          const int rc = mdb_put(txn.get(), env.dbi(), &kv, &vv, MDB_NOOVERWRITE);
          if (rc != MDB_KEYEXIST) check(rc, "mdb_put");
        }
        txn.commit();  // durable when it returns (default flags)
      }
    });
    r.commits = uint64_t{cell.threads} * cell.commits_per_thread;
    r.inserts = r.commits * cell.batch;

    Txn txn(env.env(), MDB_RDONLY);
    MDB_stat st{};
    check(mdb_stat(txn.get(), env.dbi(), &st), "mdb_stat");
    if (st.ms_entries != keys.distinct_all)
      throw check_failure("lmdb: mdb_stat counts " + std::to_string(st.ms_entries) + " entries, expected " +
                          std::to_string(keys.distinct_all));
    for (unsigned t = 0; t < cell.threads; ++t)
      for (uint64_t i = 0; i < r.inserts / cell.threads; ++i) {
        uint64_t key = keys.per_thread[t][i], value = 0;
        MDB_val kv{sizeof key, &key}, vv{};
        const int rc = mdb_get(txn.get(), env.dbi(), &kv, &vv);
        if (rc == MDB_SUCCESS && vv.mv_size == sizeof value) std::memcpy(&value, vv.mv_data, sizeof value);
        if (rc != MDB_SUCCESS || vv.mv_size != sizeof value || value != value_of(key))
          throw check_failure("lmdb: key " + std::to_string(key) + " missing or with a wrong value");
      }
    return r;
  }
};

}  // namespace

std::unique_ptr<Contender> make_lmdb() { return std::make_unique<LmdbContender>(); }

}  // namespace softwrap::bench::durable
