// sqlite_contender.cc — sw_bench_durable's SQLite contenders (the system
// libsqlite3): one database file, `CREATE TABLE t(k INTEGER PRIMARY KEY,
// v INTEGER)`, journal_mode WAL or DELETE (the rollback journal), each
// connection at synchronous=FULL.  Each thread has its own connection, a
// prepared INSERT OR IGNORE (insert if absent, as btree_map::insert and
// LMDB's MDB_NOOVERWRITE), and runs BEGIN IMMEDIATE .. COMMIT per batch;
// SQLite lets one writer in at a time, the others wait in the busy handler
// (10 s) and retry on SQLITE_BUSY.
#include <sqlite3.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "durable.h"

namespace softwrap::bench::durable {
namespace {

class Db {
 public:
  explicit Db(const std::string& path) {
    const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                   nullptr);
    if (rc != SQLITE_OK) fail("open " + path, rc);
    sqlite3_busy_timeout(db_, 10000);
  }
  ~Db() {
    for (sqlite3_stmt* s : stmts_) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const std::string& sql) {
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) fail(sql, rc);
  }
  // Runs sql; retries while another connection holds the lock longer than
  // the busy timeout (SQLITE_BUSY), which no run here should need.
  void exec_retrying_busy(const char* sql) {
    for (int tries = 0;; ++tries) {
      const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) return;
      if (rc != SQLITE_BUSY || tries == 100) fail(sql, rc);
      std::this_thread::yield();
    }
  }
  sqlite3_stmt* prepare(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
    if (rc != SQLITE_OK) fail(sql, rc);
    stmts_.push_back(s);
    return s;
  }
  // Steps s once (bound already) and resets it; returns the first column
  // of the row it returned, if it returned one.
  std::optional<int64_t> step(sqlite3_stmt* s) {
    const int rc = sqlite3_step(s);
    std::optional<int64_t> v;
    if (rc == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    else if (rc != SQLITE_DONE) fail(sqlite3_sql(s), rc);
    sqlite3_reset(s);
    return v;
  }
  std::string pragma(const std::string& p) {
    sqlite3_stmt* s = prepare("PRAGMA " + p);
    std::string v;
    if (sqlite3_step(s) == SQLITE_ROW) v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what, int rc) {
    throw std::runtime_error("sqlite: " + what + ": " + sqlite3_errstr(rc) + " (" + sqlite3_errmsg(db_) + ")");
  }
  sqlite3* db_ = nullptr;
  std::vector<sqlite3_stmt*> stmts_;
};

class SqliteContender final : public Contender {
 public:
  explicit SqliteContender(bool wal) : wal_(wal) {}
  std::string name() const override { return wal_ ? "sqlite-wal" : "sqlite-delete"; }

  RunResult run(const std::string& dir, const Cell& cell, const Keys& keys) override {
    const std::string path = dir + "/durable.db";
    const std::string mode = wal_ ? "wal" : "delete";
    std::vector<std::unique_ptr<Db>> dbs;
    std::vector<sqlite3_stmt*> inserts;
    for (unsigned t = 0; t < cell.threads; ++t) {
      dbs.push_back(std::make_unique<Db>(path));
      Db& db = *dbs.back();
      if (t == 0) {
        if (db.pragma("journal_mode=" + mode) != mode) throw std::runtime_error("sqlite: journal_mode " + mode + " refused");
        db.exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER)");
      }
      db.exec("PRAGMA synchronous=FULL");
      inserts.push_back(db.prepare("INSERT OR IGNORE INTO t(k, v) VALUES(?1, ?2)"));
    }

    RunResult r;
    r.detail = std::string("SQLite ") + sqlite3_libversion() + ", journal_mode=" + mode + ", synchronous=FULL";
    r.seconds = timed_threads(cell.threads, [&](unsigned t) {
      Db& db = *dbs[t];
      sqlite3_stmt* ins = inserts[t];
      const std::vector<uint64_t>& k = keys.per_thread[t];
      uint64_t at = 0;
      for (uint64_t c = 0; c < cell.commits_per_thread; ++c) {
        db.exec_retrying_busy("BEGIN IMMEDIATE");
        for (uint64_t i = 0; i < cell.batch; ++i, ++at) {
          sqlite3_bind_int64(ins, 1, static_cast<sqlite3_int64>(k[at]));
          sqlite3_bind_int64(ins, 2, static_cast<sqlite3_int64>(value_of(k[at])));
          db.step(ins);
        }
        db.exec_retrying_busy("COMMIT");
      }
    });
    r.commits = uint64_t{cell.threads} * cell.commits_per_thread;
    r.inserts = r.commits * cell.batch;

    Db& db = *dbs[0];
    const int64_t n = db.step(db.prepare("SELECT count(*) FROM t")).value_or(-1);
    if (n < 0 || static_cast<uint64_t>(n) != keys.distinct_all)
      throw check_failure(name() + ": count(*) is " + std::to_string(n) + ", expected " +
                          std::to_string(keys.distinct_all));
    sqlite3_stmt* get = db.prepare("SELECT v FROM t WHERE k = ?1");
    for (unsigned t = 0; t < cell.threads; ++t)
      for (uint64_t i = 0; i < r.inserts / cell.threads; ++i) {
        const uint64_t key = keys.per_thread[t][i];
        sqlite3_bind_int64(get, 1, static_cast<sqlite3_int64>(key));
        const std::optional<int64_t> v = db.step(get);
        if (!v || static_cast<uint64_t>(*v) != value_of(key))
          throw check_failure(name() + ": key " + std::to_string(key) + " missing or with a wrong value");
      }
    return r;
  }

 private:
  bool wal_;
};

}  // namespace

std::unique_ptr<Contender> make_sqlite(bool wal) { return std::make_unique<SqliteContender>(wal); }

}  // namespace softwrap::bench::durable
