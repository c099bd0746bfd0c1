// multiprocess_test.cc — one database on the softwrap VFS at its defaults
// (pools shared between processes, docs/sqlite.md "Locking") used by
// several unmodified programs at once: Debian's /usr/bin/python3 with the
// extension as the default VFS (SOFTWRAP_SQLITE_DEFAULT=1 and a
// sitecustomize.py that loads it, as a user would set it up) writing many
// small transactions while /usr/bin/sqlite3 (".load" of the extension,
// ".timeout") reads and inserts rows of its own, several times; and the
// cases where processes meet that once went wrong: a reader process seeing
// every commit of a writer process, opens racing with another process's
// commits, several processes opening while one commits.
//
// Pools live in a per-test directory under /dev/shm with the x86 medium.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_program.h"
#include "test_sql.h"
#include "softwrap/sqlite.h"

namespace {

namespace fs = std::filesystem;
using softwrap::sqlite_test::Child;
using softwrap::sqlite_test::exec;
using softwrap::sqlite_test::one;
using softwrap::sqlite_test::run_program;
using softwrap::sqlite_test::series;

class MultiProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/bin/python3") || !fs::exists("/usr/bin/sqlite3")) GTEST_SKIP() << "no python3 or sqlite3";
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    for (const char* v : {"SOFTWRAP_ENGINE", "SOFTWRAP_SQLITE_POOL", "SOFTWRAP_SHARED", "SOFTWRAP_WCL"}) unsetenv(v);
    ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
    dir_ = "/dev/shm/swsqlite_mp_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/site");
    // Python and the shell open plain file names with softwrap as the
    // default VFS: the extension loaded at Python's start, and
    // SOFTWRAP_SQLITE_DEFAULT=1 for both.
    module_ = fs::path(SW_SQLITE_MODULE).replace_extension("").string();
    std::ofstream(dir_ + "/site/sitecustomize.py")
        << "import sqlite3\nc = sqlite3.connect(':memory:')\nc.enable_load_extension(True)\n"
        << "c.load_extension('" << module_ << "')\nc.close()\n";
    setenv("PYTHONPATH", (dir_ + "/site").c_str(), 1);
    setenv("SOFTWRAP_SQLITE_DEFAULT", "1", 1);
    db_ = dir_ + "/shared.db";
  }
  void TearDown() override {
    unsetenv("PYTHONPATH");
    unsetenv("SOFTWRAP_SQLITE_DEFAULT");
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // A Python program in the test's directory.
  std::string script(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // This process's own connection (the VFS linked in, by URI).
  sqlite3* open_here() {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(("file:" + db_ + "?vfs=softwrap").c_str(), &db,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
    EXPECT_EQ(rc, SQLITE_OK) << (db != nullptr ? sqlite3_errmsg(db) : "");
    sqlite3_busy_timeout(db, 10000);
    return db;
  }

  std::string dir_, module_, db_;
};

// Python commits small transactions continuously (each one inserts a row,
// counts it, and moves money between two accounts); meanwhile the shell,
// five times, reads (one statement = one read transaction) and inserts its
// own rows.  Every read must show a state between two Python transactions
// (rows = count, money constant) no older than the previous read, the
// shell's own rows so far, and Python must have written between the first
// and the last; at the end every transaction Python committed and every
// shell row is there, and integrity_check is ok.  Python pauses 1 ms between
// transactions: SQLite's busy handler polls (sleeps, then tries again), so
// a writer that commits back to back can keep another writer out past any
// timeout — stock SQLite too (a tight Python loop on the unix VFS in
// /dev/shm: 4 of 20 shell INSERTs with .timeout 10000 failed).
TEST_F(MultiProcess, PythonWritesWhileTheShellReadsAndInserts) {
  const std::string writer = script("writer.py", R"PY(
import os, sqlite3, sys, time
db, ready, stop = sys.argv[1:4]
con = sqlite3.connect(db, timeout=30)  # a plain file name: the default VFS
with con:
    con.execute('CREATE TABLE py(id INTEGER PRIMARY KEY, v INTEGER)')
    con.execute('CREATE TABLE counter(n INTEGER)')
    con.execute('CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INTEGER)')
    con.execute('CREATE TABLE shell(round INTEGER, i INTEGER)')
    con.execute('INSERT INTO counter VALUES (0)')
    con.execute('INSERT INTO acct VALUES (1, 1000000), (2, 0)')
n = 0
end = time.time() + 120
while not os.path.exists(stop) and time.time() < end:
    x = n % 7 + 1
    with con:  # one transaction, committed when the block ends
        con.execute('INSERT INTO py(v) VALUES (?)', (n,))
        con.execute('UPDATE counter SET n = n + 1')
        con.execute('UPDATE acct SET bal = bal - ? WHERE id = 1', (x,))
        con.execute('UPDATE acct SET bal = bal + ? WHERE id = 2', (x,))
    n += 1
    if n == 20:
        open(ready, 'w').close()
    time.sleep(0.001)  # a writer that never pauses starves others (SQLite's busy handler polls)
print('python committed', n, 'vfs', con.execute('PRAGMA journal_mode').fetchone()[0])
)PY");
  const std::string ready = dir_ + "/ready", stop = dir_ + "/stop";
  Child py({"/usr/bin/python3", writer, db_, ready, stop});
  ASSERT_TRUE(py.started());
  for (int i = 0; i < 3000 && !fs::exists(ready); ++i) usleep(10000);
  ASSERT_TRUE(fs::exists(ready)) << "Python did not commit 20 transactions in 30 s";

  const char* kRead =
      "SELECT 'R', (SELECT count(*) FROM py), (SELECT n FROM counter), (SELECT sum(bal) FROM acct), "
      "(SELECT count(*) FROM shell);\n";
  constexpr int kRounds = 5, kInserts = 3;
  long long last_rows = -1, first_rows = -1;
  int shell_rows = 0;
  for (int round = 1; round <= kRounds; ++round) {
    std::string in = ".load " + module_ + "\n.open " + db_ + "\n.timeout 10000\n";
    for (int i = 1; i <= kInserts; ++i) {
      in += kRead;
      in += "INSERT INTO shell VALUES(" + std::to_string(round) + ", " + std::to_string(i) + ");\n";
    }
    in += kRead;
    std::string out;
    ASSERT_EQ(run_program({"/usr/bin/sqlite3", "-bail"}, in, &out), 0) << out;
    std::istringstream lines(out);
    std::string l;
    int reads = 0;
    while (std::getline(lines, l)) {
      if (l.rfind("R|", 0) != 0) continue;
      long long rows = -1, n = -1, money = -1, shell = -1;
      ASSERT_EQ(std::sscanf(l.c_str(), "R|%lld|%lld|%lld|%lld", &rows, &n, &money, &shell), 4) << l;
      EXPECT_EQ(rows, n) << "the shell saw part of a Python transaction: " << l;
      EXPECT_EQ(money, 1000000) << "the shell saw part of a Python transaction: " << l;
      EXPECT_GE(rows, last_rows) << "the shell saw an older state than before: " << l;
      EXPECT_EQ(shell, shell_rows + std::min(reads, kInserts)) << "the shell's own rows: " << l;
      if (first_rows < 0) first_rows = rows;
      last_rows = rows;
      ++reads;
    }
    EXPECT_EQ(reads, kInserts + 1) << out;
    shell_rows += kInserts;
    usleep(100000);
  }
  EXPECT_GT(last_rows, first_rows) << "Python wrote nothing while the shell ran";
  std::ofstream(stop).close();
  std::string rest;
  ASSERT_EQ(py.finish(&rest), 0) << rest;
  long long committed = -1;
  ASSERT_EQ(std::sscanf(rest.c_str(), "python committed %lld", &committed), 1) << rest;
  EXPECT_NE(rest.find("vfs memory"), std::string::npos) << "not the softwrap VFS's journal: " << rest;

  // A fresh connection (this process, the VFS linked in) sees it all.
  sqlite3* db = open_here();
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(one(db, "SELECT count(*) FROM py"), std::to_string(committed));
  EXPECT_EQ(one(db, "SELECT n FROM counter"), std::to_string(committed));
  EXPECT_EQ(one(db, "SELECT sum(bal) FROM acct"), "1000000");
  EXPECT_EQ(one(db, "SELECT group_concat(round || '.' || i, ' ') FROM (SELECT * FROM shell ORDER BY round, i)"),
            "1.1 1.2 1.3 2.1 2.2 2.3 3.1 3.2 3.3 4.1 4.2 4.3 5.1 5.2 5.3");
  sqlite3_close(db);
  std::printf("python committed %lld transactions while the shell read %d times and inserted %d rows\n", committed,
              kRounds * (kInserts + 1), shell_rows);
}

// A reader process keeps the database open while this process commits
// transactions that grow the file: after each, the reader's next read
// transaction sees it (a writer that kept write access between two of its
// sessions once left readers with stale file maps: "malformed").
TEST_F(MultiProcess, ReaderProcessSeesEveryCommit) {
  sqlite3* db = open_here();
  ASSERT_EQ(exec(db, "CREATE TABLE t(x)"), SQLITE_OK) << sqlite3_errmsg(db);
  const std::string reader = script("reader.py", R"PY(
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], timeout=30)
print('open', flush=True)
for line in sys.stdin:
    try:
        print(con.execute("SELECT count(*) || ' ' || sum(length(x)) FROM t").fetchone()[0], flush=True)
    except sqlite3.Error as e:
        print('error:', e, flush=True)
)PY");
  Child py({"/usr/bin/python3", reader, db_});
  ASSERT_TRUE(py.started());
  ASSERT_EQ(py.line(), "open");
  for (int i = 1; i <= 6; ++i) {
    // About 500 KB per transaction: new blocks for the file each time.
    ASSERT_EQ(exec(db, "BEGIN IMMEDIATE; INSERT INTO t SELECT randomblob(1000) FROM " + series(500) + "; COMMIT"),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    ASSERT_TRUE(py.send("read"));
    EXPECT_EQ(py.line(), std::to_string(500 * i) + " " + std::to_string(500000 * i)) << "after commit " << i;
  }
  std::string rest;
  EXPECT_EQ(py.finish(&rest), 0) << rest;
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

// Another process opens, reads and closes the database again and again
// while this one commits: no open fails (they once did, about 1 in 50,
// with "changed while it was being opened").
TEST_F(MultiProcess, OpensWhileAnotherProcessCommits) {
  sqlite3* db = open_here();
  ASSERT_EQ(exec(db, "CREATE TABLE t(x)"), SQLITE_OK) << sqlite3_errmsg(db);
  const std::string opener = script("opener.py", R"PY(
import sqlite3, sys
opens = failed = 0
first = ''
for line in sys.stdin:
    if line.strip() == 'stop':
        break
    opens += 1
    try:
        con = sqlite3.connect(sys.argv[1], timeout=30)
        con.execute('SELECT count(*) FROM t').fetchone()
        con.close()
    except sqlite3.Error as e:
        failed += 1
        first = first or str(e)
    print('next', flush=True)
print('opens', opens, 'failed', failed, first)
)PY");
  Child py({"/usr/bin/python3", opener, db_});
  ASSERT_TRUE(py.started());
  std::atomic<bool> done{false};
  std::atomic<int> commits{0};
  std::thread writer([&] {
    while (!done) {
      if (exec(db, "INSERT INTO t VALUES(1)") == SQLITE_OK) commits++;
    }
  });
  for (int i = 0; i < 150; ++i) {
    ASSERT_TRUE(py.send("open"));
    if (py.line() != "next") break;
  }
  done = true;
  writer.join();
  py.send("stop");
  std::string rest;
  EXPECT_EQ(py.finish(&rest), 0) << rest;
  EXPECT_NE(rest.find("opens 150 failed 0"), std::string::npos) << rest;
  EXPECT_GT(commits.load(), 0);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), std::to_string(commits.load()));
  sqlite3_close(db);
}

// Three processes open the database while this one holds it EXCLUSIVE:
// each waits for write access (an open recovers with it), and all three
// get it soon after the commit (two waiters that let each other go first
// once waited for each other for 10 s, and one open failed).
TEST_F(MultiProcess, SeveralProcessesOpenWhileOneCommits) {
  sqlite3* db = open_here();
  ASSERT_EQ(exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"), SQLITE_OK) << sqlite3_errmsg(db);
  ASSERT_EQ(exec(db, "BEGIN EXCLUSIVE; INSERT INTO t VALUES(2)"), SQLITE_OK) << sqlite3_errmsg(db);
  const std::string opener = script("open_once.py", R"PY(
import sqlite3, sys, time
t = time.time()
try:
    con = sqlite3.connect(sys.argv[1], timeout=30)
    print('count', con.execute('SELECT count(*) FROM t').fetchone()[0], 'after %.2f s' % (time.time() - t))
except sqlite3.Error as e:
    print('error:', e, 'after %.2f s' % (time.time() - t))
)PY");
  std::vector<std::unique_ptr<Child>> openers;
  for (int i = 0; i < 3; ++i) {
    openers.push_back(std::make_unique<Child>(std::vector<std::string>{"/usr/bin/python3", opener, db_}));
    ASSERT_TRUE(openers.back()->started());
  }
  usleep(500000);  // they start and wait
  const auto commit = std::chrono::steady_clock::now();
  ASSERT_EQ(exec(db, "COMMIT"), SQLITE_OK) << sqlite3_errmsg(db);
  for (auto& o : openers) {
    std::string out;
    EXPECT_EQ(o->finish(&out), 0) << out;
    EXPECT_EQ(out.rfind("count 2 after", 0), 0u) << out;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - commit).count();
  EXPECT_LT(s, 5.0) << "the openers took " << s << " s after the commit";
  sqlite3_close(db);
}

}  // namespace
