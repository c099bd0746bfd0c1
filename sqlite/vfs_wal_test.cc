// vfs_wal_test.cc — SQLite's WAL mode on the "softwrap" VFS against stock
// SQLite's "unix" VFS, condition by condition: every test runs once per VFS
// with the same expectation, taken from what stock does (docs/sqlite.md,
// "The softwrap VFS" and "Locking").  Journal mode persistence, snapshots
// (one thread, threads), SQLITE_BUSY_SNAPSHOT, the four checkpoint modes
// with and without readers, wal_autocheckpoint and journal_size_limit,
// synchronous, switching out of WAL and into it under a reader, read-only
// connections, locking_mode=EXCLUSIVE; and with a second process (this
// binary again: the WalChild tests, run only with their environment
// variables): a reader process holding a snapshot while a writer process
// commits (with stock's rollback journal as the control that must fail),
// a checkpoint under another process's snapshot, and commits of a process
// killed with SIGKILL at a random moment.
//
// The size of the -wal file is read through the connection
// (SQLITE_FCNTL_JOURNAL_POINTER, then xFileSize), which works for both
// VFSes (ours keeps the -wal file in the pool).  Databases live in a fresh
// directory under /dev/shm per test, with the x86 medium.  Labels sqlite
// and concurrency: the sanitizer stages run it, with smaller counts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "softwrap/softwrap.h"
#include "softwrap/sqlite.h"
#include "test_sql.h"

extern char** environ;

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(SOFTWRAP_SANITIZED) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || \
    __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SW_WAL_SANITIZED 1
#endif

namespace {

namespace fs = std::filesystem;
using softwrap::sqlite_test::exec;
using softwrap::sqlite_test::one;
using softwrap::sqlite_test::series;

#ifdef SW_WAL_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
// Counts scaled down under the sanitizers.
constexpr int scaled(int n) { return kSanitized ? std::max(1, n / 4) : n; }

long long now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // one clock for every process
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// All columns of the first row of `sql`, joined with '|' ("" if no row),
// or "ERR " and the message.
std::string row(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return std::string("ERR ") + sqlite3_errmsg(db);
  std::string out;
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(s); ++i) {
      const auto* t = sqlite3_column_text(s, i);
      if (i > 0) out += '|';
      out += t ? reinterpret_cast<const char*>(t) : "NULL";
    }
  } else if (rc != SQLITE_DONE) {
    out = std::string("ERR ") + sqlite3_errmsg(db);
  }
  sqlite3_finalize(s);
  return out;
}

// A checkpoint's result row.
struct Ckpt {
  int busy = -1, log = -1, done = -1;
};
Ckpt checkpoint(sqlite3* db, const char* mode) {
  Ckpt c;
  const std::string r = row(db, std::string("PRAGMA wal_checkpoint(") + mode + ")");
  if (std::sscanf(r.c_str(), "%d|%d|%d", &c.busy, &c.log, &c.done) != 3) c = Ckpt{};
  return c;
}
std::string show(const Ckpt& c) {
  return std::to_string(c.busy) + "|" + std::to_string(c.log) + "|" + std::to_string(c.done);
}

// The size of the connection's -wal file through its VFS (-1: none open).
long long wal_size(sqlite3* db) {
  sqlite3_file* f = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK || f == nullptr ||
      f->pMethods == nullptr) {
    return -1;
  }
  sqlite3_int64 n = -1;
  if (f->pMethods->xFileSize(f, &n) != SQLITE_OK) return -1;
  return n;
}
// Frames a -wal file of that size holds (32-byte header, 24-byte frame headers).
long long frames(sqlite3* db) {
  const long long n = wal_size(db);
  const long long page = std::atoll(one(db, "PRAGMA page_size").c_str());
  return n < 32 || page <= 0 ? 0 : (n - 32) / (page + 24);
}

// Bytes 18 and 19 of the database file (1: rollback journal, 2: WAL), read
// through the connection's VFS: "a|b".
std::string header_versions(sqlite3* db) {
  sqlite3_file* f = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK || f == nullptr ||
      f->pMethods == nullptr) {
    return "no file";
  }
  unsigned char h[100] = {};
  if (f->pMethods->xRead(f, h, sizeof h, 0) != SQLITE_OK) return "read failed";
  return std::to_string(h[18]) + "|" + std::to_string(h[19]);
}

// ---------------------------------------------------------------------------
// Another process: this binary with one WalChild test and its environment,
// its standard input and output pipes.  Lines of the protocol start with
// '@' (gtest prints its own lines too).  Killed and reaped if still running
// when it goes.
class Proc {
 public:
  Proc(const std::string& test, const std::vector<std::pair<std::string, std::string>>& env) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return;
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      close(in[1]);
      return;
    }
    std::vector<std::string> envs;
    for (char** e = environ; *e != nullptr; ++e) {
      bool replaced = false;
      for (const auto& [k, v] : env) replaced |= std::strncmp(*e, (k + "=").c_str(), k.size() + 1) == 0;
      if (!replaced) envs.emplace_back(*e);
    }
    for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string exe = "/proc/self/exe", filter = "--gtest_filter=" + test;
    char* argv[] = {exe.data(), filter.data(), nullptr};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv, envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Proc() {
    kill9();
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
  }
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;

  bool started() const { return pid_ > 0; }
  bool send(const std::string& line) {
    const std::string l = line + "\n";
    return to_ >= 0 && write(to_, l.data(), l.size()) == static_cast<ssize_t>(l.size());
  }
  // The next protocol line without its '@'; false at its end or after
  // `timeout_ms` without one.
  bool next(std::string* line, int timeout_ms = kSanitized ? 60000 : 20000) {
    const long long deadline = now_ns() + timeout_ms * 1000000LL;
    for (;;) {
      size_t nl;
      while ((nl = buf_.find('\n')) != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        if (!l.empty() && l[0] == '@') {
          *line = l.substr(1);
          return true;
        }
      }
      const long long left = (deadline - now_ns()) / 1000000;
      if (from_ < 0 || left <= 0) return false;
      pollfd p{from_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char b[4096];
      const ssize_t n = read(from_, b, sizeof b);
      if (n <= 0) {
        close(from_);
        from_ = -1;
      } else {
        buf_.append(b, n);
      }
    }
  }
  void kill9() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // Closes its input and waits: its exit status, -1 if killed by a signal.
  int wait() {
    if (to_ >= 0) close(to_);
    to_ = -1;
    int status = 0;
    if (pid_ <= 0 || waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buf_;
};

// What a WalChild.Sql command returned.
struct Reply {
  std::vector<std::string> rows;
  int rc = -1, ext = -1;
  std::string msg;
};
Reply ask(Proc& p, const std::string& cmd) {
  Reply r;
  std::string l;
  if (!p.send(cmd)) {
    r.msg = "could not send";
    return r;
  }
  while (p.next(&l)) {
    if (l.rfind("row ", 0) == 0) {
      r.rows.push_back(l.substr(4));
    } else if (l == "ok") {
      r.rc = r.ext = SQLITE_OK;
      return r;
    } else if (l.rfind("err ", 0) == 0) {
      char msg[1024] = {};
      std::sscanf(l.c_str(), "err %d %d %1023[^\n]", &r.rc, &r.ext, msg);
      r.msg = msg;
      return r;
    }
  }
  r.msg = "no answer from the child";
  return r;
}
std::string first(const Reply& r) { return r.rc == SQLITE_OK && !r.rows.empty() ? r.rows[0] : "ERR " + r.msg; }

// Reads lines of fd 0 (the children's commands) without stdio buffering,
// so that poll() sees what is pending.
class Stdin {
 public:
  bool pending() {
    if (buf_.find('\n') != std::string::npos) return true;
    pollfd p{0, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }
  bool line(std::string* l) {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      char b[4096];
      const ssize_t n = read(0, b, sizeof b);
      if (n <= 0) return false;
      buf_.append(b, n);
    }
  }

 private:
  std::string buf_;
};

void say(const std::string& l) {
  const std::string s = "@" + l + "\n";
  if (write(1, s.data(), s.size()) < 0) std::_Exit(4);
}

sqlite3* child_open(const char* uri) {
  if (sw_sqlite_register(0) != SQLITE_OK) std::_Exit(3);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    say(std::string("err ") + std::to_string(sqlite3_errcode(db)) + " " + std::to_string(sqlite3_extended_errcode(db)) +
        " open: " + (db ? sqlite3_errmsg(db) : "no memory"));
    std::_Exit(1);
  }
  return db;
}

// This process's connection when it is the child of role ROLE
// (SW_WAL_CHILD_<ROLE> and SW_WAL_CHILD_URI set by Wal::child), else
// nullptr.
sqlite3* child_role(const char* role) {
  const char* uri = std::getenv("SW_WAL_CHILD_URI");
  if (uri == nullptr || std::getenv((std::string("SW_WAL_CHILD_") + role).c_str()) == nullptr) return nullptr;
  return child_open(uri);
}

// The second process, interactive: opens $SW_WAL_CHILD_URI and runs one
// command per line of its input: "busy MS" (busy timeout), "sleep MS", or
// SQL, answering "@row a|b" per row, then "@ok" or "@err RC EXT MESSAGE".
TEST(WalChild, Sql) {
  sqlite3* db = child_role("SQL");
  if (db == nullptr) GTEST_SKIP() << "a second process of the Wal tests";
  say("ok");
  Stdin in;
  std::string l;
  while (in.line(&l)) {
    if (l.rfind("busy ", 0) == 0) {
      sqlite3_busy_timeout(db, std::atoi(l.c_str() + 5));
      say("ok");
      continue;
    }
    if (l.rfind("sleep ", 0) == 0) {
      usleep(std::atoi(l.c_str() + 6) * 1000);
      say("ok");
      continue;
    }
    auto cb = [](void*, int n, char** v, char**) {
      std::string r = "row ";
      for (int i = 0; i < n; ++i) {
        if (i > 0) r += '|';
        r += v[i] ? v[i] : "NULL";
      }
      say(r);
      return 0;
    };
    const int rc = sqlite3_exec(db, l.c_str(), cb, nullptr, nullptr);
    if (rc == SQLITE_OK) {
      say("ok");
    } else {
      say("err " + std::to_string(rc) + " " + std::to_string(sqlite3_extended_errcode(db)) + " " + sqlite3_errmsg(db));
    }
  }
  sqlite3_close(db);
  std::_Exit(0);
}

// The writer process of the reader-holds-a-snapshot scenario: busy timeout
// 1 s; says "@ready", waits for "go", then commits one-row transactions
// until its next input line, "window BEGIN_NS END_NS" (the reader's hold):
// "@result IN_WINDOW ERRORS TOTAL FIRST_ERROR".
TEST(WalChild, Writer) {
  sqlite3* db = child_role("WRITER");
  if (db == nullptr) GTEST_SKIP() << "a second process of the Wal tests";
  sqlite3_busy_timeout(db, 1000);
  say("ready");
  Stdin in;
  std::string l;
  if (!in.line(&l) || l != "go") std::_Exit(2);
  std::vector<long long> done;
  int errors = 0;
  std::string first_error;
  const long long end = now_ns() + 30 * 1000000000LL;
  for (int i = 0; i < 2000000 && now_ns() < end && !in.pending(); ++i) {
    if (exec(db, "INSERT INTO t(v) VALUES('w')") == SQLITE_OK) {
      done.push_back(now_ns());
    } else {
      if (errors++ == 0) first_error = sqlite3_errmsg(db);
    }
  }
  long long b = 0, e = 0;
  if (!in.line(&l) || std::sscanf(l.c_str(), "window %lld %lld", &b, &e) != 2) std::_Exit(2);
  const auto n = std::count_if(done.begin(), done.end(), [&](long long t) { return t >= b && t <= e; });
  say("result " + std::to_string(n) + " " + std::to_string(errors) + " " + std::to_string(done.size()) + " " +
      (first_error.empty() ? "-" : first_error));
  sqlite3_close(db);
  std::_Exit(0);
}

// The process that is killed: commits rows id = max(id)+1, +2, ... one per
// transaction and says "@ack ID" after each COMMIT returned.
TEST(WalChild, Committer) {
  sqlite3* db = child_role("COMMITTER");
  if (db == nullptr) GTEST_SKIP() << "a second process of the Wal tests";
  sqlite3_busy_timeout(db, 5000);
  long long id = std::atoll(one(db, "SELECT coalesce(max(id), 0) FROM t").c_str());
  say("started " + std::to_string(id));
  for (int i = 0; i < 200000; ++i) {
    ++id;
    if (exec(db, "INSERT INTO t VALUES(" + std::to_string(id) + ", randomblob(200))") != SQLITE_OK) {
      say(std::string("err ") + sqlite3_errmsg(db));
      std::_Exit(1);
    }
    say("ack " + std::to_string(id));
  }
  sqlite3_close(db);
  std::_Exit(0);
}

// ---------------------------------------------------------------------------
class Wal : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    for (const char* v : {"SOFTWRAP_ENGINE", "SOFTWRAP_SQLITE_POOL", "SOFTWRAP_SHARED", "SOFTWRAP_WCL"}) unsetenv(v);
    ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = "/dev/shm/swsqlite_wal_" + std::to_string(getpid()) + "_" + name;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = dir_ + "/w.db";
  }
  void TearDown() override {
    for (sqlite3* db : open_) sqlite3_close_v2(db);
    open_.clear();
    fs::remove_all(dir_);
  }

  bool stock() const { return std::string(GetParam()) == "unix"; }
  std::string uri(const std::string& extra = "") const {
    return "file:" + path_ + "?vfs=" + GetParam() + (stock() ? "" : "&poolsize=64M") + extra;
  }
  // A connection (closed by TearDown unless closed with close()).
  sqlite3* open(int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, const std::string& extra = "") {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(uri(extra).c_str(), &db, flags | SQLITE_OPEN_URI, nullptr);
    EXPECT_EQ(rc, SQLITE_OK) << (db ? sqlite3_errmsg(db) : "");
    open_.push_back(db);
    return db;
  }
  void close(sqlite3* db) {
    open_.erase(std::remove(open_.begin(), open_.end(), db), open_.end());
    EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
  }
  Proc* child(const char* role, std::vector<std::pair<std::string, std::string>> env = {}) {
    env.emplace_back("SW_WAL_CHILD_URI", uri());
    env.emplace_back(std::string("SW_WAL_CHILD_") + role, "1");
    const std::string test = std::string("WalChild.") + (std::string(role) == "SQL" ? "Sql"
                                                         : std::string(role) == "WRITER" ? "Writer"
                                                                                         : "Committer");
    return new Proc(test, env);
  }

  std::string dir_, path_;
  std::vector<sqlite3*> open_;
};

#define ASSERT_WAL(db) ASSERT_EQ(one(db, "PRAGMA journal_mode=WAL"), "wal") << GetParam()
#define ASSERT_OK(db, sql) ASSERT_EQ(exec(db, sql), SQLITE_OK) << (sql) << ": " << sqlite3_errmsg(db)

// 1. journal_mode=WAL answers "wal", and the mode is the database's: a
// second connection and a connection after all were closed answer "wal",
// and bytes 18/19 of the header are 2.
TEST_P(Wal, JournalModeWalIsPersistent) {
  sqlite3* a = open();
  ASSERT_OK(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)");
  ASSERT_WAL(a);
  EXPECT_EQ(one(a, "PRAGMA journal_mode"), "wal");
  ASSERT_OK(a, "INSERT INTO t VALUES(2)");
  sqlite3* b = open();
  EXPECT_EQ(one(b, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(one(b, "SELECT count(*) FROM t"), "2");
  close(b);
  close(a);
  sqlite3* c = open();
  EXPECT_EQ(one(c, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(one(c, "SELECT count(*) FROM t"), "2");
  EXPECT_EQ(header_versions(c), "2|2");
  EXPECT_EQ(one(c, "PRAGMA integrity_check"), "ok");
}

// 2a. Snapshots, connections on one thread: a reader's transaction sees
// the same rows while another connection (busy timeout 0) commits N
// transactions, each SQLITE_OK; after COMMIT it sees them all.  A writer
// with an open write transaction does not block a new reader (busy
// timeout 0), and that reader does not block the COMMIT.
TEST_P(Wal, ReaderSnapshotHoldsWhileWriterCommitsOneThread) {
  sqlite3* w = open();
  ASSERT_WAL(w);
  ASSERT_OK(w, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t(v) SELECT value FROM " + series(10));
  sqlite3* r = open();
  sqlite3_busy_timeout(w, 0);
  sqlite3_busy_timeout(r, 0);
  ASSERT_OK(r, "BEGIN");
  ASSERT_EQ(row(r, "SELECT count(*), sum(v) FROM t"), "10|55");
  const int n = scaled(50);
  for (int i = 1; i <= n; ++i) {
    ASSERT_EQ(exec(w, "INSERT INTO t(v) VALUES(" + std::to_string(i) + ")"), SQLITE_OK)
        << "commit " << i << " while a reader holds its snapshot: " << sqlite3_errmsg(w);
    ASSERT_EQ(row(r, "SELECT count(*), sum(v) FROM t"), "10|55") << "after commit " << i;
  }
  ASSERT_OK(r, "COMMIT");
  EXPECT_EQ(one(r, "SELECT count(*) FROM t"), std::to_string(10 + n));

  // A write transaction open, uncommitted: a new reader reads the last
  // committed state at once, and keeps it while the writer commits.
  ASSERT_OK(w, "BEGIN IMMEDIATE; INSERT INTO t(v) VALUES(-1)");
  sqlite3* r2 = open();
  sqlite3_busy_timeout(r2, 0);
  ASSERT_OK(r2, "BEGIN");
  EXPECT_EQ(one(r2, "SELECT count(*) FROM t"), std::to_string(10 + n));
  EXPECT_EQ(exec(w, "COMMIT"), SQLITE_OK) << sqlite3_errmsg(w);
  EXPECT_EQ(one(r2, "SELECT count(*) FROM t"), std::to_string(10 + n));
  ASSERT_OK(r2, "COMMIT");
  EXPECT_EQ(one(r2, "SELECT count(*) FROM t"), std::to_string(11 + n));
  EXPECT_EQ(one(r, "SELECT count(*) FROM t"), std::to_string(11 + n));
}

// 2b. Snapshots with threads: one writer thread commits one-row
// transactions that also keep a counter row equal to the row count, while
// two reader threads (busy timeout 0) run read transactions reading twice:
// every statement succeeds, both reads agree and match the counter, no read
// goes back in time, and the readers ran during the writes.  The writer
// never waits for a reader's transaction: its busy handler (which counts
// and retries) runs only for wal.c's own short lock windows.  A reader that
// finds the two copies of the WAL-index header torn by a concurrent writer
// takes WAL_WRITE for a moment to re-read them (walIndexReadHdr), so stock
// SQLite with a busy timeout of 0 fails this writer now and then too (1 run
// in 400 here); a reader's transaction of 500 us blocking the writer would
// call the handler at nearly every one of the writer's commits.
TEST_P(Wal, ReaderSnapshotsHoldWhileWriterCommitsThreads) {
  sqlite3* setup = open();
  ASSERT_WAL(setup);
  ASSERT_OK(setup, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); CREATE TABLE c(n); INSERT INTO c VALUES(0)");
  const int n = scaled(400);
  std::atomic<bool> writing{true};
  std::atomic<int> write_fail{0}, read_fail{0}, disagree{0}, backwards{0}, reads_during{0};
  std::atomic<int> writer_waits{0}, commits{0};
  std::string first_write_error, first_read_error;
  std::thread writer([&] {
    sqlite3* w = nullptr;
    if (sqlite3_open_v2(uri().c_str(), &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
      ++write_fail;
    } else {
      sqlite3_busy_handler(
          w,
          [](void* waits, int tries) -> int {
            ++*static_cast<std::atomic<int>*>(waits);
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            return tries < 2000 ? 1 : 0;  // 100 ms at most, then SQLITE_BUSY
          },
          &writer_waits);
      // n commits, and more until a reader has finished a read transaction
      // while the writer was writing: threads started on a loaded machine
      // (or under ASan) may first run after n quick commits, and "the
      // readers ran during the writes" must not depend on that.  Bounded:
      // readers that never get a transaction through fail the test below.
      for (int i = 0; i < n || (reads_during.load() == 0 && i < 50 * n); ++i) {
        if (exec(w, "BEGIN; INSERT INTO t(v) VALUES(" + std::to_string(i) + "); UPDATE c SET n = n + 1; COMMIT") !=
            SQLITE_OK) {
          if (write_fail++ == 0) first_write_error = sqlite3_errmsg(w);
          exec(w, "ROLLBACK");
        } else {
          ++commits;
        }
      }
    }
    sqlite3_close(w);
    writing = false;
  });
  std::vector<std::thread> readers;
  std::vector<std::string> read_errors(2);
  for (int k = 0; k < 2; ++k) {
    readers.emplace_back([&, k] {
      sqlite3* r = nullptr;
      if (sqlite3_open_v2(uri().c_str(), &r, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
        ++read_fail;
        sqlite3_close(r);
        return;
      }
      sqlite3_busy_timeout(r, 0);
      long long last = -1;
      for (int it = 0; it < 100000 && writing; ++it) {
        if (exec(r, "BEGIN") != SQLITE_OK) {
          if (read_fail++ == 0) read_errors[k] = sqlite3_errmsg(r);
          continue;
        }
        const std::string a = row(r, "SELECT count(*), (SELECT n FROM c) FROM t");
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        const std::string b = row(r, "SELECT count(*), (SELECT n FROM c) FROM t");
        if (exec(r, "COMMIT") != SQLITE_OK || a.rfind("ERR", 0) == 0 || b.rfind("ERR", 0) == 0) {
          if (read_fail++ == 0) read_errors[k] = a + " / " + b + " / " + sqlite3_errmsg(r);
          exec(r, "ROLLBACK");
          continue;
        }
        long long cnt = -1, ctr = -2;
        std::sscanf(a.c_str(), "%lld|%lld", &cnt, &ctr);
        if (a != b || cnt != ctr) ++disagree;
        if (cnt < last) ++backwards;
        last = cnt;
        if (writing) ++reads_during;
      }
      sqlite3_close(r);
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(write_fail.load(), 0) << first_write_error;
  EXPECT_GE(commits.load(), n);
  EXPECT_LE(writer_waits.load(), commits.load() / 20) << "the writer waited for readers";
  EXPECT_EQ(read_fail.load(), 0) << read_errors[0] << " " << read_errors[1];
  EXPECT_EQ(disagree.load(), 0) << "a read transaction saw two states or half a transaction";
  EXPECT_EQ(backwards.load(), 0);
  EXPECT_GT(reads_during.load(), 0);
  EXPECT_EQ(row(setup, "SELECT count(*), (SELECT n FROM c) FROM t"),
            std::to_string(commits.load()) + "|" + std::to_string(commits.load()));
  EXPECT_EQ(one(setup, "PRAGMA integrity_check"), "ok");
}

// 3. A read transaction whose snapshot is no longer the latest cannot
// become a write transaction: SQLITE_BUSY, extended SQLITE_BUSY_SNAPSHOT
// (busy timeout or not); after ROLLBACK the write succeeds.
TEST_P(Wal, WriteInAnOutdatedReadTransactionIsBusySnapshot) {
  sqlite3* a = open();
  ASSERT_WAL(a);
  ASSERT_OK(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)");
  sqlite3* b = open();
  sqlite3_busy_timeout(b, 200);
  ASSERT_OK(b, "BEGIN");
  ASSERT_EQ(one(b, "SELECT count(*) FROM t"), "1");
  ASSERT_OK(a, "INSERT INTO t VALUES(2)");
  EXPECT_EQ(exec(b, "INSERT INTO t VALUES(3)"), SQLITE_BUSY);
  EXPECT_EQ(sqlite3_extended_errcode(b), SQLITE_BUSY_SNAPSHOT) << sqlite3_errmsg(b);
  EXPECT_EQ(one(b, "SELECT count(*) FROM t"), "1") << "the transaction keeps its snapshot";
  ASSERT_OK(b, "ROLLBACK");
  EXPECT_EQ(exec(b, "INSERT INTO t VALUES(3)"), SQLITE_OK) << sqlite3_errmsg(b);
  EXPECT_EQ(one(a, "SELECT group_concat(x) FROM t"), "1,2,3");
}

// The file behind a connection's WAL index: stock's "-shm" beside the
// database; ours is in /dev/shm (or beside the pool), named with the pool's
// UUID, and found among this process's mappings.
void close_fd(int fd) { ::close(fd); }  // the fixture's close() closes a connection

std::string wal_index_file(sqlite3* db, bool stock, const std::string& path) {
  if (stock) return path + "-shm";
  uint8_t uuid[16] = {};
  sw_pool* p = sw_sqlite_pool(db, "main");
  if (p == nullptr || sw_pool_uuid(p, uuid) != 0) return "";
  char hex[33] = {};
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return "";
  std::string found;
  char line[4096];
  while (found.empty() && std::fgets(line, sizeof line, maps) != nullptr) {
    const std::string l(line);
    if (l.find(hex) != std::string::npos && l.find(".wal-index") != std::string::npos) {
      found = l.substr(l.find('/'));
      found.erase(found.find_last_not_of("\n") + 1);
    }
  }
  std::fclose(maps);
  return found;
}

// 3b. SQLITE_BUSY_RECOVERY: a reader that finds the WAL-index header bad
// while another process holds WAL_WRITE and WAL_RECOVER (that process is
// rebuilding the index) answers SQLITE_BUSY, extended SQLITE_BUSY_RECOVERY,
// with busy timeout 0.  The other process here is a forked child that takes
// the two byte locks of the index file (120 and 122, SQLite's lock bytes,
// with POSIX record locks, which conflict with both VFSes' locks) and clears
// both header copies' isInit.  Once it lets go, the same reader rebuilds the
// index from the -wal file and finds every commit.
TEST_P(Wal, ReaderBesideARecoveringProcessIsBusyRecovery) {
  sqlite3* a = open();
  ASSERT_WAL(a);
  ASSERT_EQ(one(a, "PRAGMA wal_autocheckpoint=0"), "0");
  ASSERT_OK(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1); INSERT INTO t VALUES(2); INSERT INTO t VALUES(3)");
  const std::string shm = wal_index_file(a, stock(), path_);
  ASSERT_FALSE(shm.empty()) << "no WAL-index file found";
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // system calls only from here
    char c = 'x';
    const int fd = ::open(shm.c_str(), O_RDWR);
    struct flock lk {};
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    lk.l_len = 1;
    bool ok = fd >= 0;
    for (off_t byte : {120, 122}) {
      lk.l_start = byte;
      ok = ok && fcntl(fd, F_SETLK, &lk) == 0;
    }
    unsigned char zero = 0;
    ok = ok && pwrite(fd, &zero, 1, 12) == 1 && pwrite(fd, &zero, 1, 48 + 12) == 1;  // isInit of both copies
    if (!ok) c = 'e';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    if (read(go[0], &c, 1) != 1) _exit(3);
    _exit(ok ? 0 : 1);  // the locks go with the process
  }
  close_fd(ready[1]);
  close_fd(go[0]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'x') << "the child could not lock " << shm;
  sqlite3* b = open();
  sqlite3_busy_timeout(b, 0);
  EXPECT_EQ(exec(b, "SELECT count(*) FROM t"), SQLITE_BUSY);
  EXPECT_EQ(sqlite3_extended_errcode(b), SQLITE_BUSY_RECOVERY) << sqlite3_errmsg(b);
  ASSERT_EQ(write(go[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close_fd(ready[0]);
  close_fd(go[1]);
  EXPECT_EQ(one(b, "SELECT group_concat(x) FROM t"), "1,2,3") << "the reader rebuilt the index";
  EXPECT_EQ(one(b, "PRAGMA integrity_check"), "ok");
  ASSERT_OK(a, "INSERT INTO t VALUES(4)");
  EXPECT_EQ(one(b, "SELECT group_concat(x) FROM t"), "1,2,3,4");
}

// 4a. The four checkpoint modes' result rows (busy, log, checkpointed).
// No reader: each checkpoints the whole log (log = frames in the -wal file);
// after RESTART the next commit writes from the log's start; TRUNCATE leaves
// 0|0|0 and an empty -wal file.  A reader on an older snapshot: PASSIVE
// checkpoints up to it; FULL, RESTART and TRUNCATE (busy timeout 20 ms)
// answer busy=1 with the same counts and the -wal file keeps its size.  A
// reader on the latest snapshot: FULL completes, RESTART and TRUNCATE
// answer busy=1 with everything checkpointed.
TEST_P(Wal, CheckpointModesWithAndWithoutReaders) {
  sqlite3* a = open();
  ASSERT_WAL(a);
  ASSERT_EQ(one(a, "PRAGMA wal_autocheckpoint=0"), "0");
  sqlite3_busy_timeout(a, 20);
  ASSERT_OK(a, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
  auto commits = [&](int k) {
    for (int i = 0; i < k; ++i) ASSERT_OK(a, "INSERT INTO t(v) VALUES(randomblob(100))");
  };
  commits(5);
  // No reader.
  {
    const long long f = frames(a);
    ASSERT_GT(f, 0);
    Ckpt c = checkpoint(a, "PASSIVE");
    EXPECT_EQ(c.busy, 0) << show(c);
    EXPECT_EQ(c.log, f) << show(c);
    EXPECT_EQ(c.done, c.log) << show(c);
    // Everything checkpointed and no reader: the next commit writes the
    // log from its first frame again, over the old ones (the file keeps
    // its size: no journal_size_limit).
    const int before = c.log;
    const long long size = wal_size(a);
    commits(2);
    c = checkpoint(a, "FULL");
    EXPECT_EQ(c.busy, 0) << show(c);
    EXPECT_GT(c.log, 0) << show(c);
    EXPECT_LT(c.log, before) << "the log did not start again: " << show(c);
    EXPECT_EQ(c.done, c.log) << show(c);
    EXPECT_EQ(wal_size(a), size) << "a restarted log overwrites the file";
    commits(2);
    c = checkpoint(a, "RESTART");
    EXPECT_EQ(c.busy, 0) << show(c);
    EXPECT_LT(c.log, before) << show(c);
    EXPECT_EQ(c.done, c.log) << show(c);
    commits(1);
    c = checkpoint(a, "PASSIVE");
    EXPECT_EQ(c.busy, 0) << show(c);
    EXPECT_LT(c.log, before) << show(c);
    EXPECT_GT(c.log, 0) << show(c);
    EXPECT_EQ(wal_size(a), size);
    c = checkpoint(a, "TRUNCATE");
    EXPECT_EQ(show(c), "0|0|0");
    EXPECT_EQ(wal_size(a), 0);
    if (stock()) {
      EXPECT_EQ(fs::file_size(path_ + "-wal"), 0u);
    }
  }
  // A reader on an older snapshot.
  sqlite3* r = open();
  commits(4);
  ASSERT_OK(r, "BEGIN");
  ASSERT_EQ(one(r, "SELECT count(*) FROM t"), "14");
  const long long at_reader = frames(a);
  commits(4);
  {
    const long long f = frames(a);
    ASSERT_GT(f, at_reader);
    Ckpt c = checkpoint(a, "PASSIVE");
    EXPECT_EQ(c.busy, 0) << show(c);
    EXPECT_EQ(c.log, f) << show(c);
    EXPECT_EQ(c.done, at_reader) << show(c);
    for (const char* mode : {"FULL", "RESTART", "TRUNCATE"}) {
      c = checkpoint(a, mode);
      EXPECT_EQ(c.busy, 1) << mode << " " << show(c);
      EXPECT_EQ(c.log, f) << mode << " " << show(c);
      EXPECT_EQ(c.done, at_reader) << mode << " " << show(c);
    }
    EXPECT_EQ(frames(a), f);
    EXPECT_EQ(one(r, "SELECT count(*) FROM t"), "14");
    ASSERT_OK(r, "COMMIT");
  }
  // A reader on the latest snapshot.
  ASSERT_OK(r, "BEGIN");
  ASSERT_EQ(one(r, "SELECT count(*) FROM t"), "18");
  {
    const long long f = frames(a);
    Ckpt c = checkpoint(a, "FULL");
    EXPECT_EQ(c.busy, 0) << show(c);
    EXPECT_EQ(c.log, f) << show(c);
    EXPECT_EQ(c.done, f) << show(c);
    for (const char* mode : {"RESTART", "TRUNCATE"}) {
      c = checkpoint(a, mode);
      EXPECT_EQ(c.busy, 1) << mode << " " << show(c);
      EXPECT_EQ(c.log, f) << mode << " " << show(c);
      EXPECT_EQ(c.done, f) << mode << " " << show(c);
    }
    EXPECT_GT(wal_size(a), 0);
    ASSERT_OK(r, "COMMIT");
  }
  Ckpt c = checkpoint(a, "TRUNCATE");
  EXPECT_EQ(show(c), "0|0|0");
  EXPECT_EQ(wal_size(a), 0);
  if (stock()) {
    EXPECT_EQ(fs::file_size(path_ + "-wal"), 0u);
  }
  EXPECT_EQ(one(r, "SELECT count(*) FROM t"), "18");
  EXPECT_EQ(one(r, "PRAGMA integrity_check"), "ok");
}

// 4b. wal_autocheckpoint=10: under a stream of small commits with no reader
// the log stays near 10 frames; wal_autocheckpoint=0: it grows by at least
// a frame per commit.
TEST_P(Wal, AutocheckpointBoundsTheLog) {
  sqlite3* a = open();
  ASSERT_WAL(a);
  ASSERT_OK(a, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
  ASSERT_EQ(one(a, "PRAGMA wal_autocheckpoint=10"), "10");
  const int n = scaled(200);
  long long most = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_OK(a, "INSERT INTO t(v) VALUES(randomblob(50))");
    most = std::max(most, frames(a));
  }
  EXPECT_GT(most, 0);
  EXPECT_LE(most, 20) << "the log grew past the autocheckpoint";
  ASSERT_EQ(show(checkpoint(a, "TRUNCATE")), "0|0|0");
  ASSERT_EQ(one(a, "PRAGMA wal_autocheckpoint=0"), "0");
  for (int i = 0; i < n; ++i) ASSERT_OK(a, "INSERT INTO t(v) VALUES(randomblob(50))");
  EXPECT_GE(frames(a), n);
  EXPECT_EQ(one(a, "SELECT count(*) FROM t"), std::to_string(2 * n));
}

// 4c. journal_size_limit: a log of many frames is truncated to at most the
// limit by the first commit after a RESTART checkpoint (not before).
TEST_P(Wal, JournalSizeLimitTruncatesTheLogAfterARestart) {
  sqlite3* a = open();
  ASSERT_WAL(a);
  ASSERT_EQ(one(a, "PRAGMA wal_autocheckpoint=0"), "0");
  ASSERT_EQ(one(a, "PRAGMA journal_size_limit=16384"), "16384");
  ASSERT_OK(a, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
  for (int i = 0; i < 60; ++i) ASSERT_OK(a, "INSERT INTO t(v) VALUES(randomblob(100))");
  const long long big = wal_size(a);
  ASSERT_GT(big, 16384);
  const Ckpt c = checkpoint(a, "RESTART");
  EXPECT_EQ(c.busy, 0) << show(c);
  EXPECT_EQ(wal_size(a), big) << "RESTART itself does not truncate";
  ASSERT_OK(a, "INSERT INTO t(v) VALUES(1)");
  EXPECT_GT(wal_size(a), 0);
  EXPECT_LE(wal_size(a), 16384);
  EXPECT_EQ(one(a, "SELECT count(*) FROM t"), "61");
  EXPECT_EQ(one(a, "PRAGMA integrity_check"), "ok");
}

// 5. synchronous=NORMAL and FULL: accepted, commits visible to a new
// connection at once and after everything was closed.
TEST_P(Wal, SynchronousNormalAndFull) {
  for (const auto& [mode, value] : {std::pair{"NORMAL", "1"}, std::pair{"FULL", "2"}}) {
    SCOPED_TRACE(mode);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    sqlite3* a = open();
    ASSERT_WAL(a);
    ASSERT_OK(a, std::string("PRAGMA synchronous=") + mode);
    EXPECT_EQ(one(a, "PRAGMA synchronous"), value);
    ASSERT_OK(a, "CREATE TABLE t(x)");
    for (int i = 0; i < 20; ++i) ASSERT_OK(a, "INSERT INTO t VALUES(" + std::to_string(i) + ")");
    sqlite3* b = open();
    EXPECT_EQ(row(b, "SELECT count(*), sum(x) FROM t"), "20|190");
    close(b);
    close(a);
    sqlite3* c = open();
    EXPECT_EQ(one(c, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(row(c, "SELECT count(*), sum(x) FROM t"), "20|190");
    EXPECT_EQ(one(c, "PRAGMA integrity_check"), "ok");
    close(c);
  }
}

// 6a. Out of WAL: journal_mode=DELETE answers "delete", MEMORY answers
// "memory"; the data stay, the header's bytes 18/19 go back to 1, and a new
// connection no longer says "wal".
TEST_P(Wal, SwitchingOutOfWalKeepsTheData) {
  for (const char* to : {"delete", "memory"}) {
    SCOPED_TRACE(to);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    sqlite3* a = open();
    ASSERT_WAL(a);
    ASSERT_OK(a, "CREATE TABLE t(x); INSERT INTO t SELECT value FROM " + series(100));
    EXPECT_EQ(header_versions(a), "2|2");
    EXPECT_EQ(one(a, std::string("PRAGMA journal_mode=") + to), to);
    EXPECT_EQ(one(a, "PRAGMA journal_mode"), to);
    EXPECT_EQ(row(a, "SELECT count(*), sum(x) FROM t"), "100|5050");
    EXPECT_EQ(header_versions(a), "1|1");
    ASSERT_OK(a, "INSERT INTO t VALUES(0)");
    sqlite3* b = open();
    EXPECT_NE(one(b, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(one(b, "SELECT count(*) FROM t"), "101");
    close(b);
    close(a);
    sqlite3* c = open();
    EXPECT_NE(one(c, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(header_versions(c), "1|1");
    EXPECT_EQ(one(c, "SELECT count(*) FROM t"), "101");
    EXPECT_EQ(one(c, "PRAGMA integrity_check"), "ok");
    close(c);
  }
}

// 6b. Mode changes that stock refuses: into WAL while another connection
// has a read transaction open (SQLITE_BUSY, the mode stays), and out of WAL
// while another connection is open (SQLITE_BUSY, stays "wal") or from
// inside a transaction (SQLITE_ERROR); each works once the other is gone.
TEST_P(Wal, ModeChangesRefusedUnderOtherConnections) {
  sqlite3* a = open();
  ASSERT_EQ(one(a, "PRAGMA journal_mode=DELETE"), "delete");
  ASSERT_OK(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)");
  sqlite3* r = open();
  sqlite3_busy_timeout(a, 0);
  ASSERT_OK(r, "BEGIN");
  ASSERT_EQ(one(r, "SELECT count(*) FROM t"), "1");
  const int rc = exec(a, "PRAGMA journal_mode=WAL");
  EXPECT_EQ(rc, SQLITE_BUSY) << sqlite3_errmsg(a);
  EXPECT_EQ(sqlite3_extended_errcode(a), SQLITE_BUSY) << sqlite3_errmsg(a);
  EXPECT_STREQ(sqlite3_errmsg(a), "database is locked");
  EXPECT_NE(one(a, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(one(r, "SELECT count(*) FROM t"), "1");
  ASSERT_OK(r, "COMMIT");
  ASSERT_WAL(a);

  // Out of WAL: another connection open (r, no transaction).
  EXPECT_EQ(one(r, "SELECT count(*) FROM t"), "1");
  EXPECT_EQ(exec(a, "PRAGMA journal_mode=DELETE"), SQLITE_BUSY) << sqlite3_errmsg(a);
  EXPECT_EQ(sqlite3_extended_errcode(a), SQLITE_BUSY) << sqlite3_errmsg(a);
  EXPECT_EQ(one(a, "PRAGMA journal_mode"), "wal");
  // From inside a transaction.
  ASSERT_OK(a, "BEGIN");
  EXPECT_EQ(exec(a, "PRAGMA journal_mode=DELETE"), SQLITE_ERROR);
  EXPECT_STREQ(sqlite3_errmsg(a), "cannot change out of wal mode from within a transaction");
  ASSERT_OK(a, "COMMIT");
  close(r);
  EXPECT_EQ(one(a, "PRAGMA journal_mode=DELETE"), "delete");
  EXPECT_EQ(one(a, "SELECT count(*) FROM t"), "1");
}

// 7. Read-only connections (SQLITE_OPEN_READONLY, URI mode=ro) on a WAL
// database a writer has open: they read what is committed, see later
// commits in their next transaction, and their writes fail with
// SQLITE_READONLY; with the writer closed they still read.
TEST_P(Wal, ReadOnlyConnections) {
  sqlite3* w = open();
  ASSERT_WAL(w);
  ASSERT_OK(w, "CREATE TABLE t(x); INSERT INTO t VALUES(1), (2)");
  for (int how = 0; how < 2; ++how) {
    SCOPED_TRACE(how == 0 ? "SQLITE_OPEN_READONLY" : "mode=ro");
    sqlite3* ro = how == 0 ? open(SQLITE_OPEN_READONLY) : open(SQLITE_OPEN_READWRITE, "&mode=ro");
    EXPECT_EQ(sqlite3_db_readonly(ro, "main"), 1);
    EXPECT_EQ(one(ro, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(one(ro, "SELECT count(*) FROM t"), std::to_string(2 + how));
    ASSERT_OK(w, "INSERT INTO t VALUES(3)");
    EXPECT_EQ(one(ro, "SELECT count(*) FROM t"), std::to_string(3 + how));
    EXPECT_EQ(exec(ro, "INSERT INTO t VALUES(9)"), SQLITE_READONLY);
    EXPECT_EQ(sqlite3_extended_errcode(ro), SQLITE_READONLY) << sqlite3_errmsg(ro);
    EXPECT_STREQ(sqlite3_errmsg(ro), "attempt to write a readonly database");
    // Stock cannot checkpoint from a read-only connection: SQLITE_IOERR_WRITE
    // (writing the database file); the log and the data are unharmed.
    EXPECT_NE(exec(ro, "PRAGMA wal_checkpoint(PASSIVE)"), SQLITE_OK);
    std::printf("%s, checkpoint from a read-only connection: %d \"%s\"\n", GetParam(), sqlite3_extended_errcode(ro),
                sqlite3_errmsg(ro));
    EXPECT_EQ(one(ro, "SELECT count(*) FROM t"), std::to_string(3 + how));
    close(ro);
  }
  EXPECT_EQ(one(w, "SELECT count(*) FROM t"), "4");
  close(w);
  sqlite3* ro = open(SQLITE_OPEN_READONLY);
  EXPECT_EQ(one(ro, "SELECT count(*) FROM t"), "4");
  EXPECT_EQ(exec(ro, "INSERT INTO t VALUES(9)"), SQLITE_READONLY);
}

// 8. locking_mode=EXCLUSIVE before journal_mode=WAL (SQLite then keeps the
// index in heap memory): reads and writes work, another connection is
// locked out (SQLITE_BUSY), the data survive a reopen in normal locking.
TEST_P(Wal, ExclusiveLockingModeWal) {
  sqlite3* a = open();
  ASSERT_EQ(one(a, "PRAGMA locking_mode=EXCLUSIVE"), "exclusive");
  ASSERT_WAL(a);
  ASSERT_OK(a, "CREATE TABLE t(x); INSERT INTO t SELECT value FROM " + series(50));
  ASSERT_OK(a, "BEGIN; UPDATE t SET x = x * 2; COMMIT");
  EXPECT_EQ(row(a, "SELECT count(*), sum(x) FROM t"), "50|2550");
  if (stock()) {
    EXPECT_FALSE(fs::exists(path_ + "-shm")) << "no shared memory in exclusive mode";
  }
  sqlite3* b = open();
  sqlite3_busy_timeout(b, 0);
  EXPECT_EQ(exec(b, "SELECT count(*) FROM t"), SQLITE_BUSY) << sqlite3_errmsg(b);
  close(b);
  close(a);
  sqlite3* c = open();
  EXPECT_EQ(one(c, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(row(c, "SELECT count(*), sum(x) FROM t"), "50|2550");
  EXPECT_EQ(one(c, "PRAGMA integrity_check"), "ok");
}

// The softwrap VFS's own promises in WAL mode (no stock counterpart):
// one WAL commit is one wrap, frames and commit frame together; a
// checkpoint writes the database in wraps of at most 1,024 pages.
uint64_t wraps_of(sqlite3* db) {
  sw_stats st{};
  sw_pool* p = sw_sqlite_pool(db, "main");
  EXPECT_NE(p, nullptr);
  if (p != nullptr) {
    EXPECT_EQ(sw_pool_stats(p, &st), 0);
  }
  return st.wraps;
}

TEST_P(Wal, OneWalCommitIsOneWrap) {
  if (stock()) GTEST_SKIP() << "a wrap is the softwrap VFS's";
  sqlite3* a = open();
  ASSERT_WAL(a);
  ASSERT_OK(a, "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(x, y)");
  for (int pages : {1, 40}) {
    const uint64_t before = wraps_of(a);
    ASSERT_OK(a, "INSERT INTO t SELECT value, randomblob(" + std::to_string(pages * 3000) + ") FROM " + series(1));
    EXPECT_EQ(wraps_of(a) - before, 1u) << "a commit of about " << pages << " pages";
  }
  EXPECT_EQ(one(a, "PRAGMA integrity_check"), "ok");
}

TEST_P(Wal, CheckpointWritesTheDatabaseInBoundedWraps) {
  if (stock()) GTEST_SKIP() << "a wrap is the softwrap VFS's";
  sqlite3* a = open();
  ASSERT_WAL(a);
  // About 3,000 pages in the log, none of them in the database yet.
  ASSERT_OK(a, "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(x, y); BEGIN; INSERT INTO t SELECT value, "
               "randomblob(3900) FROM " + series(3000) + "; COMMIT");
  const std::string sum = one(a, "SELECT sum(length(y)) + sum(x) FROM t");
  const uint64_t before = wraps_of(a);
  ASSERT_EQ(row(a, "PRAGMA wal_checkpoint(TRUNCATE)").substr(0, 2), "0|");
  const uint64_t wraps = wraps_of(a) - before;
  std::printf("checkpoint of about 3,000 pages: %llu wraps\n", static_cast<unsigned long long>(wraps));
  // Three page wraps (two of 1,024 pages and the rest, committed at
  // SQLITE_FCNTL_CKPT_DONE), the database's truncation and the -wal
  // file's: 5.  One wrap for all the pages would make it 3.
  EXPECT_GE(wraps, 5u) << "about 3,000 pages in wraps of at most 1,024";
  EXPECT_LE(wraps, 8u);
  close(a);
  sqlite3* b = open();
  EXPECT_EQ(one(b, "SELECT sum(length(y)) + sum(x) FROM t"), sum);
  EXPECT_EQ(one(b, "PRAGMA integrity_check"), "ok");
}

// 9. The issue's scenario, two processes: a reader process holds a read
// transaction for ~1.5 s, reading a count at its start and end, while a
// writer process (busy timeout 1 s), started once the reader holds its
// snapshot, commits one-row transactions.  It passes if the writer
// committed at least 100 transactions inside the reader's hold, without an
// error, and the reader's two reads agree.  In WAL mode it must pass; the
// control, the same programs with the rollback journal, must fail (the
// writer's COMMIT waits for the reader: "database is locked").
struct HoldResult {
  std::string c1, c2;
  long long in_window = -1, errors = -1, total = -1;
  std::string first_error;
  bool passes() const { return in_window >= 100 && errors == 0 && c1 == c2 && !c1.empty(); }
  std::string show() const {
    return "reads " + c1 + "/" + c2 + ", writer commits in the hold " + std::to_string(in_window) + ", errors " +
           std::to_string(errors) + " (" + first_error + "), commits " + std::to_string(total);
  }
};

class WalProcesses : public Wal {
 protected:
  void hold_scenario(const char* journal, HoldResult* out) {
    sqlite3* s = open();
    ASSERT_EQ(one(s, std::string("PRAGMA journal_mode=") + journal), journal);
    ASSERT_OK(s, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t(v) SELECT 'x' FROM " + series(10));
    close(s);
    std::unique_ptr<Proc> writer(child("WRITER"));
    std::unique_ptr<Proc> reader(child("SQL"));
    ASSERT_TRUE(writer->started() && reader->started());
    std::string l;
    ASSERT_TRUE(writer->next(&l)) << "writer did not start";
    ASSERT_EQ(l, "ready");
    ASSERT_TRUE(reader->next(&l) && l == "ok") << l;
    ASSERT_EQ(ask(*reader, "busy 1000").rc, SQLITE_OK);
    ASSERT_EQ(ask(*reader, "BEGIN").rc, SQLITE_OK);
    out->c1 = first(ask(*reader, "SELECT count(*) FROM t"));
    const long long b = now_ns();
    ASSERT_TRUE(writer->send("go"));
    ASSERT_EQ(ask(*reader, std::string("sleep ") + (kSanitized ? "3000" : "1500")).rc, SQLITE_OK);
    const long long e = now_ns();
    out->c2 = first(ask(*reader, "SELECT count(*) FROM t"));
    ASSERT_EQ(ask(*reader, "COMMIT").rc, SQLITE_OK);
    ASSERT_TRUE(writer->send("window " + std::to_string(b) + " " + std::to_string(e)));
    ASSERT_TRUE(writer->next(&l)) << "no result from the writer";
    char msg[512] = "-";
    ASSERT_GE(std::sscanf(l.c_str(), "result %lld %lld %lld %511[^\n]", &out->in_window, &out->errors, &out->total, msg),
              3)
        << l;
    out->first_error = msg;
    EXPECT_EQ(writer->wait(), 0);
    EXPECT_EQ(reader->wait(), 0);
    sqlite3* c = open();
    EXPECT_EQ(one(c, "SELECT count(*) FROM t"), std::to_string(10 + out->total));
    EXPECT_EQ(one(c, "PRAGMA integrity_check"), "ok");
    close(c);
  }
};

TEST_P(WalProcesses, WriterCommitsWhileAReaderProcessHoldsASnapshot) {
  HoldResult wal;
  ASSERT_NO_FATAL_FAILURE(hold_scenario("wal", &wal));
  std::printf("%s, WAL: %s\n", GetParam(), wal.show().c_str());
  EXPECT_TRUE(wal.passes()) << wal.show();
  EXPECT_EQ(wal.c1, "10");
}

TEST_P(WalProcesses, ControlRollbackJournalFailsTheSnapshotScenario) {
  HoldResult ctl;
  ASSERT_NO_FATAL_FAILURE(hold_scenario("delete", &ctl));
  std::printf("%s, rollback journal: %s\n", GetParam(), ctl.show().c_str());
  EXPECT_FALSE(ctl.passes()) << "the check cannot tell WAL from the rollback journal: " << ctl.show();
  EXPECT_LT(ctl.in_window, 100) << ctl.show();
  EXPECT_GE(ctl.errors, 1) << ctl.show();
  EXPECT_EQ(ctl.first_error, "database is locked") << ctl.show();
  EXPECT_EQ(ctl.c1, ctl.c2);
}

// 10. Two processes: this process commits and checkpoints while the other
// holds a snapshot (PASSIVE stops at its snapshot, FULL/RESTART/TRUNCATE
// answer busy=1), its snapshot holds; after its COMMIT it sees every row,
// and TRUNCATE then empties the log.  Then each process's next
// transaction sees the other's commits.
TEST_P(WalProcesses, CheckpointUnderAnotherProcessesSnapshot) {
  sqlite3* a = open();
  ASSERT_WAL(a);
  ASSERT_EQ(one(a, "PRAGMA wal_autocheckpoint=0"), "0");
  sqlite3_busy_timeout(a, 20);
  ASSERT_OK(a, "CREATE TABLE t(id INTEGER PRIMARY KEY, v); INSERT INTO t(v) SELECT 'a' FROM " + series(10));
  std::unique_ptr<Proc> b(child("SQL"));
  ASSERT_TRUE(b->started());
  std::string l;
  ASSERT_TRUE(b->next(&l) && l == "ok") << l;
  ASSERT_EQ(ask(*b, "BEGIN").rc, SQLITE_OK);
  ASSERT_EQ(first(ask(*b, "SELECT count(*), sum(length(v)) FROM t")), "10|10");
  const long long at_reader = frames(a);
  for (int i = 0; i < 20; ++i) ASSERT_OK(a, "INSERT INTO t(v) VALUES('aa')");
  const long long f = frames(a);
  Ckpt c = checkpoint(a, "PASSIVE");
  EXPECT_EQ(c.busy, 0) << show(c);
  EXPECT_EQ(c.log, f) << show(c);
  EXPECT_EQ(c.done, at_reader) << show(c);
  for (const char* mode : {"FULL", "RESTART", "TRUNCATE"}) {
    c = checkpoint(a, mode);
    EXPECT_EQ(c.busy, 1) << mode << " " << show(c);
    EXPECT_EQ(c.done, at_reader) << mode << " " << show(c);
  }
  EXPECT_EQ(first(ask(*b, "SELECT count(*), sum(length(v)) FROM t")), "10|10") << "the other process's snapshot";
  ASSERT_EQ(ask(*b, "COMMIT").rc, SQLITE_OK);
  EXPECT_EQ(first(ask(*b, "SELECT count(*), sum(length(v)) FROM t")), "30|50");
  c = checkpoint(a, "TRUNCATE");
  EXPECT_EQ(show(c), "0|0|0");
  EXPECT_EQ(wal_size(a), 0);

  // Commits each way, seen by the other's next transaction.
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(ask(*b, "BEGIN").rc, SQLITE_OK);
    const std::string before = first(ask(*b, "SELECT count(*) FROM t"));
    ASSERT_OK(a, "INSERT INTO t(v) VALUES('a')");
    EXPECT_EQ(first(ask(*b, "SELECT count(*) FROM t")), before);
    ASSERT_EQ(ask(*b, "COMMIT").rc, SQLITE_OK);
    EXPECT_EQ(first(ask(*b, "SELECT count(*) FROM t")), std::to_string(std::atoi(before.c_str()) + 1));
    ASSERT_OK(a, "BEGIN");
    const std::string mine = one(a, "SELECT count(*) FROM t");
    const Reply ins = ask(*b, "INSERT INTO t(v) VALUES('b')");
    EXPECT_EQ(ins.rc, SQLITE_OK) << ins.msg;
    EXPECT_EQ(one(a, "SELECT count(*) FROM t"), mine);
    ASSERT_OK(a, "COMMIT");
    EXPECT_EQ(one(a, "SELECT count(*) FROM t"), std::to_string(std::atoi(mine.c_str()) + 1));
  }
  EXPECT_EQ(one(a, "SELECT count(*) FROM t"), "36");
  EXPECT_EQ(b->wait(), 0);
  EXPECT_EQ(one(a, "PRAGMA integrity_check"), "ok");
}

// 11. A process committing one row per transaction in WAL mode, each
// acknowledged after COMMIT returned, killed with SIGKILL at a random
// moment, ten times: after each kill this process reopens the database,
// finds every acknowledged row (ids contiguous, at most one committed but
// unacknowledged), the journal mode still WAL and integrity_check "ok".
TEST_P(WalProcesses, KilledWriterKeepsEveryAcknowledgedCommit) {
  {
    sqlite3* s = open();
    ASSERT_WAL(s);
    ASSERT_OK(s, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)");
    close(s);
  }
  std::mt19937 rng(static_cast<unsigned>(now_ns()));
  const int kills = kSanitized ? 4 : 10;
  long long acked = 0;
  for (int k = 0; k < kills; ++k) {
    SCOPED_TRACE("kill " + std::to_string(k + 1));
    std::unique_ptr<Proc> p(child("COMMITTER"));
    ASSERT_TRUE(p->started());
    std::string l;
    ASSERT_TRUE(p->next(&l)) << "the committer did not start";
    ASSERT_EQ(l, "started " + std::to_string(acked)) << l;
    ASSERT_TRUE(p->next(&l) && l.rfind("ack ", 0) == 0) << l;
    usleep(std::uniform_int_distribution<int>(0, 40000)(rng));
    p->kill9();
    long long last = std::atoll(l.c_str() + 4);
    while (p->next(&l, 2000)) {
      ASSERT_EQ(l.rfind("ack ", 0), 0u) << l;
      last = std::atoll(l.c_str() + 4);
    }
    ASSERT_GT(last, acked);
    acked = last;
    sqlite3* c = open();
    EXPECT_EQ(one(c, "PRAGMA journal_mode"), "wal");
    const std::string r = row(c, "SELECT count(*), coalesce(max(id), 0) FROM t");
    long long cnt = -1, mx = -1;
    ASSERT_EQ(std::sscanf(r.c_str(), "%lld|%lld", &cnt, &mx), 2) << r;
    EXPECT_EQ(cnt, mx) << "ids not contiguous: " << r;
    EXPECT_GE(mx, acked) << "an acknowledged commit is lost: " << r;
    EXPECT_LE(mx, acked + 1) << "more than one commit unacknowledged: " << r;
    EXPECT_EQ(one(c, "PRAGMA integrity_check"), "ok");
    acked = mx;
    close(c);
    if (HasFatalFailure()) return;
  }
  std::printf("%s: %d kills, %lld rows committed\n", GetParam(), kills, acked);
}

auto name = [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); };
INSTANTIATE_TEST_SUITE_P(Vfs, Wal, ::testing::Values("unix", "softwrap"), name);
INSTANTIATE_TEST_SUITE_P(Vfs, WalProcesses, ::testing::Values("unix", "softwrap"), name);

}  // namespace
