// mp_write.cc — sw_sqlite_mp_write: one process of a multi-process write
// benchmark (sqlite/mp_bench.sh).  Runs write transactions on a database
// for a number of seconds: each one BEGIN IMMEDIATE, `rows` INSERTs of a
// row with a 100-byte payload, an UPDATE of this process's counter row,
// COMMIT, with a busy timeout (SQLITE_BUSY that escapes it is retried and
// counted).  Prints "commits N", "seconds S", "tps T", "busy B".  With
// --init it creates the schema and exits.
//
// The window.  With --start-ms T (milliseconds since the epoch, the same
// for every process of a run) a process opens and prepares first, then
// waits for T, and counts the commits made from T to T + seconds: every
// process measures the same wall-clock window, so their rates add up to
// the run's throughput.  (Each process timing its own seconds would not:
// a process kept out by another's writing starts late and still reports a
// full-speed rate over a window of its own.)  Without it, T is now.  Any VFS: the softwrap ones are
// registered, so "file:PATH?vfs=softwrap" and plain paths both work.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "softwrap/sqlite.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: sw_sqlite_mp_write --db URI (--init | --proc N [--seconds S] [--rows R] [--start-ms T])\n");
  return 2;
}

bool exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) == SQLITE_OK) return true;
  std::fprintf(stderr, "sw_sqlite_mp_write: %s: %s\n", sql, err ? err : sqlite3_errmsg(db));
  sqlite3_free(err);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string uri;
  bool init = false;
  int proc = -1, rows = 10;
  double seconds = 5;
  long long start_ms = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--init") {
      init = true;
    } else if (v == nullptr) {
      return usage();
    } else if (a == "--db") {
      uri = argv[++i];
    } else if (a == "--proc") {
      proc = std::atoi(argv[++i]);
    } else if (a == "--seconds") {
      seconds = std::atof(argv[++i]);
    } else if (a == "--rows") {
      rows = std::atoi(argv[++i]);
    } else if (a == "--start-ms") {
      start_ms = std::atoll(argv[++i]);
    } else {
      return usage();
    }
  }
  if (uri.empty() || (!init && (proc < 0 || rows < 1))) return usage();
  if (sw_sqlite_register(0) != SQLITE_OK) {
    std::fprintf(stderr, "sw_sqlite_mp_write: cannot register the softwrap VFSes\n");
    return 1;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    std::fprintf(stderr, "sw_sqlite_mp_write: open %s: %s\n", uri.c_str(), db ? sqlite3_errmsg(db) : "no memory");
    return 1;
  }
  sqlite3_busy_timeout(db, 10000);
  if (init) {
    const bool ok = exec(db, "CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, proc INTEGER, payload BLOB);"
                             "CREATE INDEX IF NOT EXISTS item_proc ON item(proc);"
                             "CREATE TABLE IF NOT EXISTS counter(proc INTEGER PRIMARY KEY, n INTEGER);");
    return sqlite3_close(db) == SQLITE_OK && ok ? 0 : 1;
  }
  const std::string seed = "INSERT OR IGNORE INTO counter VALUES(" + std::to_string(proc) + ", 0)";
  if (!exec(db, seed.c_str())) return 1;
  sqlite3_stmt* ins = nullptr;
  sqlite3_stmt* upd = nullptr;
  if (sqlite3_prepare_v2(db, "INSERT INTO item(proc, payload) VALUES(?1, ?2)", -1, &ins, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "UPDATE counter SET n = n + 1 WHERE proc = ?1", -1, &upd, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "sw_sqlite_mp_write: prepare: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  std::mt19937_64 rng(static_cast<uint64_t>(proc) * 7919 + 1);
  unsigned char payload[100];
  uint64_t commits = 0, busy = 0;
  using Clock = std::chrono::system_clock;
  const Clock::time_point t0 =
      start_ms < 0 ? Clock::now() : Clock::time_point(std::chrono::milliseconds(start_ms));
  const Clock::time_point end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::this_thread::sleep_until(t0);
  while (Clock::now() < end) {
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    for (int r = 0; r < rows && rc == SQLITE_OK; ++r) {
      for (unsigned char& b : payload) b = static_cast<unsigned char>(rng());
      sqlite3_bind_int(ins, 1, proc);
      sqlite3_bind_blob(ins, 2, payload, sizeof payload, SQLITE_STATIC);
      rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
      sqlite3_reset(ins);
    }
    if (rc == SQLITE_OK) {
      sqlite3_bind_int(upd, 1, proc);
      rc = sqlite3_step(upd) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
      sqlite3_reset(upd);
    }
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) {
      ++commits;
      continue;
    }
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
      std::fprintf(stderr, "sw_sqlite_mp_write: process %d: %s\n", proc, sqlite3_errmsg(db));
      return 1;
    }
    ++busy;
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  const double s = seconds;
  sqlite3_finalize(ins);
  sqlite3_finalize(upd);
  // The counter must equal this process's committed transactions.
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "SELECT n FROM counter WHERE proc = ?1", -1, &q, nullptr);
  sqlite3_bind_int(q, 1, proc);
  const int64_t n = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int64(q, 0) : -1;
  sqlite3_finalize(q);
  std::printf("commits %llu\nseconds %.3f\ntps %.1f\nbusy %llu\ncounter %lld\n",
              static_cast<unsigned long long>(commits), s, static_cast<double>(commits) / s,
              static_cast<unsigned long long>(busy), static_cast<long long>(n));
  sqlite3_close(db);
  return n >= static_cast<int64_t>(commits) ? 0 : 1;
}
