// vfs_test.cc — the "softwrap" and "scm" VFSes: persistence across
// reopen, ROLLBACK (also after the page cache spilled into the open wrap),
// transactions too large for a wrap, SQLite locking among connections and
// threads of one process, a second process (the shell; kept out with
// shared=0), URI parameters and
// environment, the loadable extension from the sqlite3 shell and Python.
//
// Pools live in a per-test directory under /dev/shm with the x86 medium
// (set before any pool opens), so fences cost what they cost in memory.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.h"
#include "run_program.h"
#include "test_sql.h"
#include "softwrap/sqlite.h"

namespace {

namespace fs = std::filesystem;
using softwrap::sqlite_test::exec;
using softwrap::sqlite_test::one;
using softwrap::sqlite_test::run_program;
using softwrap::sqlite_test::series;

class VfsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    unsetenv("SOFTWRAP_ENGINE");
    unsetenv("SOFTWRAP_SQLITE_POOL");
    ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = "/dev/shm/swsqlite_test_" + std::to_string(getpid()) + "_" + name;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string uri(const std::string& name, const std::string& extra = "") {
    return "file:" + dir_ + "/" + name + "?vfs=" + GetParam() + "&poolsize=64M" + extra;
  }
  sqlite3* open(const std::string& u) {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(u.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                                   nullptr);
    EXPECT_EQ(rc, SQLITE_OK) << (db ? sqlite3_errmsg(db) : "");
    return db;
  }
  static std::string vfs_error() {
    char buf[512] = {};
    sqlite3_vfs* v = sqlite3_vfs_find("softwrap");
    v->xGetLastError(v, sizeof buf, buf);
    return buf;
  }
  bool is_softwrap() const { return std::string(GetParam()) == "softwrap"; }

  std::string dir_;
};

TEST_P(VfsTest, PersistsAcrossReopenAndUsesTheRightJournal) {
  sqlite3* db = open(uri("a.db"));
  EXPECT_EQ(one(db, "PRAGMA journal_mode"), is_softwrap() ? "memory" : "delete");
  // softwrap: 16 MiB of dirty pages (4 KiB plus SQLite's page header)
  // before a spill into the wrap; SQLite's default is its 2 MB cache.
  const int spill = std::stoi(one(db, "PRAGMA cache_spill"));
  if (is_softwrap()) {
    EXPECT_GT(spill, 3900);
    EXPECT_LE(spill, 4096);
  } else {
    EXPECT_LT(spill, 1000);
  }
  ASSERT_EQ(exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)"), SQLITE_OK);
  ASSERT_EQ(exec(db, "INSERT INTO t SELECT value, hex(randomblob(200)) FROM " + series(2000) + ""), SQLITE_OK)
      << sqlite3_errmsg(db) << " / " << vfs_error();
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  ASSERT_EQ(sqlite3_close(db), SQLITE_OK);
  // The pool file is the database path; it is not a plain SQLite file.
  EXPECT_TRUE(fs::exists(dir_ + "/a.db"));
  EXPECT_FALSE(fs::exists(dir_ + "/a.db-journal"));
  db = open(uri("a.db"));
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "2000");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
  // The unix VFS sees a softwrap pool, not a database.
  sqlite3* plain = nullptr;
  sqlite3_open_v2((dir_ + "/a.db").c_str(), &plain, SQLITE_OPEN_READONLY, nullptr);
  EXPECT_NE(exec(plain, "SELECT count(*) FROM t"), SQLITE_OK);
  sqlite3_close(plain);
}

TEST_P(VfsTest, RollbackWorksAlsoAfterTheCacheSpilled) {
  sqlite3* db = open(uri("r.db"));
  ASSERT_EQ(exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)"), SQLITE_OK);
  ASSERT_EQ(exec(db, "INSERT INTO t SELECT value, randomblob(100) FROM " + series(100) + ""), SQLITE_OK);
  const std::string sum = one(db, "SELECT sum(length(v)) || ':' || hex(md5) FROM t, (SELECT group_concat(hex(v)) AS md5 FROM t)");
  ASSERT_EQ(exec(db, "BEGIN; UPDATE t SET v = zeroblob(50); INSERT INTO t VALUES(1000, 'x'); ROLLBACK"), SQLITE_OK);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "100");
  // A transaction larger than the page cache writes pages before COMMIT
  // (the VFS's own spill threshold lowered too).
  ASSERT_EQ(exec(db, "PRAGMA cache_size=10; PRAGMA cache_spill=10"), SQLITE_OK);
  int spills = 0, hi = 0;
  ASSERT_EQ(exec(db, "BEGIN; INSERT INTO t SELECT value + 1000, randomblob(300) FROM " + series(3000) + "; "
                     "UPDATE t SET v = zeroblob(10) WHERE k <= 100"),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  ASSERT_EQ(sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_SPILL, &spills, &hi, 0), SQLITE_OK);
  EXPECT_GT(spills, 0) << "the transaction did not spill";
  ASSERT_EQ(exec(db, "ROLLBACK"), SQLITE_OK) << sqlite3_errmsg(db);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "100");
  EXPECT_EQ(one(db, "SELECT sum(length(v)) || ':' || hex(md5) FROM t, (SELECT group_concat(hex(v)) AS md5 FROM t)"), sum);
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
  db = open(uri("r.db"));
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "100");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

TEST_P(VfsTest, SynchronousOffStillCommits) {
  // Without xSync SQLite still sends SQLITE_FCNTL_SYNC, where the wrap closes;
  // otherwise the next unlock would abort the transaction's writes.
  sqlite3* db = open(uri("off.db"));
  ASSERT_EQ(exec(db, "PRAGMA synchronous=OFF; CREATE TABLE t(x)"), SQLITE_OK);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(exec(db, "INSERT INTO t VALUES(" + std::to_string(i) + ")"), SQLITE_OK);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "20");
  sqlite3* other = open(uri("off.db"));
  EXPECT_EQ(one(other, "SELECT count(*) FROM t"), "20");
  sqlite3_close(other);
  sqlite3_close(db);
  db = open(uri("off.db"));
  EXPECT_EQ(one(db, "SELECT sum(x) FROM t"), "190");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

// A pool file whose creation was interrupted before its header was written
// (a kill during the first open) is created again by an open that may
// create, and refused with a message by one that may not.
TEST_P(VfsTest, InterruptedPoolCreationIsCreatedAgain) {
  const std::string file = dir_ + "/cut.db";
  {
    std::ofstream out(file, std::ios::binary);
    const std::string zeros(1 << 20, '\0');
    for (int i = 0; i < 16; ++i) out.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  sqlite3* ro = nullptr;
  EXPECT_NE(sqlite3_open_v2(("file:" + file + "?vfs=" + GetParam()).c_str(), &ro, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
                            nullptr),
            SQLITE_OK);
  EXPECT_NE(std::string(sqlite3_errmsg(ro)).find("not a softwrap pool"), std::string::npos) << sqlite3_errmsg(ro);
  sqlite3_close(ro);
  sqlite3* db = open("file:" + file + "?vfs=" + GetParam());
  ASSERT_EQ(exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(7)"), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  db = open("file:" + file + "?vfs=" + std::string(GetParam()));
  EXPECT_EQ(one(db, "SELECT x FROM t"), "7");
  sqlite3_close(db);
}

// At the VFS's defaults (no poolsize, no poolmax: a 128 MiB pool that
// grows as far as the file system goes) a 100 MB transaction commits and
// the pool grows under it, like a file.
TEST_P(VfsTest, HundredMegabyteTransactionCommitsAtDefaults) {
  const std::string file = dir_ + "/load.db";
  sqlite3* db = open("file:" + file + "?vfs=" + GetParam());
  ASSERT_EQ(exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)"), SQLITE_OK);
  ASSERT_EQ(exec(db, "BEGIN"), SQLITE_OK);
  ASSERT_EQ(exec(db, "INSERT INTO t SELECT value, randomblob(4000) FROM " + series(25000)), SQLITE_OK)
      << sqlite3_errmsg(db);
  ASSERT_EQ(exec(db, "COMMIT"), SQLITE_OK) << sqlite3_errmsg(db);
  EXPECT_GT(fs::file_size(file), uint64_t{128} << 20) << "the pool did not grow";
  sqlite3_close(db);
  db = open("file:" + file + "?vfs=" + std::string(GetParam()));
  EXPECT_EQ(one(db, "SELECT count(*) FROM t WHERE length(v) = 4000"), "25000");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

TEST_P(VfsTest, TransactionLargerThanThePoolFailsCleanly) {
  if (!is_softwrap()) GTEST_SKIP() << "only the softwrap VFS bounds a transaction by its wrap";
  sqlite3* db = open(uri("big.db", "&poolmax=64M"));
  ASSERT_EQ(exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)"), SQLITE_OK);
  ASSERT_EQ(exec(db, "INSERT INTO t VALUES(1, 'keep')"), SQLITE_OK);
  // 80 MB of rows in one transaction, in a 64 MiB pool that may not grow.
  const int rc = exec(db, "INSERT INTO t SELECT value + 1, randomblob(4000) FROM " + series(20000) + "");
  EXPECT_EQ(rc, SQLITE_FULL) << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_get_autocommit(db), 1);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "1");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  // Smaller transactions still work afterwards.
  ASSERT_EQ(exec(db, "INSERT INTO t SELECT value + 1, randomblob(100) FROM " + series(100) + ""), SQLITE_OK)
      << sqlite3_errmsg(db);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "101");
  sqlite3_close(db);
}

TEST_P(VfsTest, LockingAmongConnectionsOfOneProcess) {
  sqlite3* a = open(uri("l.db"));
  sqlite3* b = open(uri("l.db"));
  ASSERT_EQ(exec(a, "CREATE TABLE t(x)"), SQLITE_OK);
  ASSERT_EQ(exec(a, "BEGIN IMMEDIATE; INSERT INTO t VALUES(1)"), SQLITE_OK);
  EXPECT_EQ(exec(b, "BEGIN IMMEDIATE"), SQLITE_BUSY);  // one writer
  EXPECT_EQ(one(b, "SELECT count(*) FROM t"), "0");     // readers go on, see the old state
  ASSERT_EQ(exec(b, "BEGIN; SELECT count(*) FROM t"), SQLITE_OK);  // b holds SHARED
  EXPECT_EQ(exec(a, "COMMIT"), SQLITE_BUSY);                      // a cannot get EXCLUSIVE
  ASSERT_EQ(exec(b, "COMMIT"), SQLITE_OK);
  ASSERT_EQ(exec(a, "COMMIT"), SQLITE_OK);
  EXPECT_EQ(one(b, "SELECT count(*) FROM t"), "1");
  sqlite3_close(a);
  sqlite3_close(b);
}

TEST_P(VfsTest, ThreadsWithTheirOwnConnections) {
  sqlite3* db = open(uri("th.db"));
  ASSERT_EQ(exec(db, "CREATE TABLE t(th, i)"), SQLITE_OK);
  std::atomic<int> failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      sqlite3* c = open(uri("th.db"));
      sqlite3_busy_timeout(c, 10000);
      for (int i = 0; i < 100; ++i) {
        if (exec(c, "INSERT INTO t VALUES(" + std::to_string(t) + "," + std::to_string(i) + ")") != SQLITE_OK) {
          failures++;
        }
      }
      sqlite3_close(c);
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "400");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

TEST_P(VfsTest, PoolFromUriParameterAndEnvironmentHoldsSeveralDatabases) {
  const std::string pool = dir_ + "/shared.pool";
  sqlite3* a = open(uri("one.db", "&pool=" + pool));
  setenv("SOFTWRAP_SQLITE_POOL", pool.c_str(), 1);
  sqlite3* b = open(uri("two.db"));
  unsetenv("SOFTWRAP_SQLITE_POOL");
  ASSERT_EQ(exec(a, "CREATE TABLE t(x); INSERT INTO t VALUES('one')"), SQLITE_OK);
  ASSERT_EQ(exec(b, "CREATE TABLE t(x); INSERT INTO t VALUES('two')"), SQLITE_OK);
  sqlite3_close(a);
  sqlite3_close(b);
  EXPECT_TRUE(fs::exists(pool));
  EXPECT_FALSE(fs::exists(dir_ + "/one.db"));
  a = open(uri("one.db", "&pool=" + pool));
  b = open(uri("two.db", "&pool=" + pool));
  EXPECT_EQ(one(a, "SELECT x FROM t"), "one");
  EXPECT_EQ(one(b, "SELECT x FROM t"), "two");
  sqlite3_close(a);
  sqlite3_close(b);
}

TEST_P(VfsTest, EachEngineByUri) {
  for (const char* e : {"softwrap", "softwrap-local", "undo", "nonatomic"}) {
    const std::string name = std::string("e_") + e + ".db";
    sqlite3* db = open(uri(name, std::string("&engine=") + e));
    ASSERT_EQ(exec(db, "CREATE TABLE t(x); INSERT INTO t SELECT value FROM " + series(1000) + ""), SQLITE_OK) << e;
    ASSERT_EQ(exec(db, "BEGIN; DELETE FROM t; ROLLBACK"), SQLITE_OK) << e;
    sqlite3_close(db);
    db = open(uri(name));
    EXPECT_EQ(one(db, "SELECT sum(x) FROM t"), "500500") << e;
    sqlite3_close(db);
  }
}

// Pages reach sw_write whole; with write-combined logging (wcl=1; pages
// also by default, wcl=auto) the engine logs only the words that changed,
// with wcl=0 whole pages.
// The same updates leave the same database either way, and every engine
// skips the unchanged words (undo: no record; nonatomic: no home write).
TEST_P(VfsTest, PageWritesAreComparedInTheEngineUnlessWclIsZero) {
  auto updates_log = [&](const std::string& name, const std::string& extra, sw_stats* st) {
    sqlite3* db = open(uri(name, extra));
    EXPECT_EQ(exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER, pad TEXT)"), SQLITE_OK);
    EXPECT_EQ(exec(db, "INSERT INTO t SELECT value, 0, hex(randomblob(100)) FROM " + series(4000)), SQLITE_OK);
    sw_pool* pool = sw_sqlite_pool(db, "main");
    EXPECT_NE(pool, nullptr);
    EXPECT_EQ(sw_sqlite_pool(db, "temp"), nullptr) << "the temp database is not in the pool";
    if (pool == nullptr) return std::string();
    // The load home before the reset: retirement runs in the background, so
    // the part of the load it had not yet written home (its pages that were
    // not fresh blocks, some 31,000 words) was counted with the updates or
    // not depending on when it ran, and a reset while the retirer counts
    // can lose the reset (its counters are plain per-thread increments).
    // With nothing left to retire the counters below are the updates' own.
    EXPECT_EQ(sw_pool_quiesce(pool), 0);
    EXPECT_EQ(sw_pool_stats_reset(pool), 0);
    // 200 one-row transactions: each changes a few bytes of one page.
    for (int i = 1; i <= 200; ++i) {
      EXPECT_EQ(exec(db, "UPDATE t SET v = v + 1 WHERE k = " + std::to_string(i * 19)), SQLITE_OK);
    }
    // Retirement's home writes counted too, whenever it ran.
    EXPECT_EQ(sw_pool_quiesce(pool), 0);
    EXPECT_EQ(sw_pool_stats(pool, st), 0);
    const std::string sum = one(db, "SELECT sum(v) || ':' || count(*) FROM t");
    EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
    sqlite3_close(db);
    return sum;
  };
  sw_stats on{}, off{};
  EXPECT_EQ(updates_log("on.db", "&wcl=1", &on), "200:4000");
  EXPECT_EQ(updates_log("off.db", "&wcl=0", &off), "200:4000");
  EXPECT_GT(on.wcl_words_eliminated, 200u * 400) << "most of each 4 KiB page is unchanged";
  EXPECT_EQ(off.wcl_words_eliminated, 0u);
  if (is_softwrap()) {
    EXPECT_GT(off.log_bytes, 8 * on.log_bytes) << "whole pages reach the log";
    // Home writes are the same either way (retirement writes what changed):
    // whole pages add their log words to the pool's writes, not much more
    // (writing the pages home whole adds some 200 pages of 512 words).
    const uint64_t extra_log_words = (off.log_bytes - on.log_bytes) / 8;
    EXPECT_LT(on.nvram_words + extra_log_words / 2, off.nvram_words);
    EXPECT_LT(off.nvram_words, on.nvram_words + extra_log_words + extra_log_words / 10);
  } else {
    EXPECT_GT(off.nvram_words, 4 * on.nvram_words) << "scm: whole pages written home";
  }
  // Each engine compares (the scm VFS's nonatomic one writes home only what changed).
  for (const char* e : {"softwrap-local", "undo", "nonatomic"}) {
    sw_stats st{};
    EXPECT_EQ(updates_log(std::string("e_") + e + ".db", std::string("&wcl=1&engine=") + e, &st), "200:4000") << e;
    EXPECT_GT(st.wcl_words_eliminated, 200u * 400) << e;
  }
}

// By default the medium decides (sw_pool_wcl): pages (ranges of 4 KiB or
// more) compared on x86 and msync (a database on a file system), and
// wcl=1 / wcl=0 override it either way.
TEST_P(VfsTest, WriteCombinedLoggingIsTheMediumsChoiceByDefault) {
  auto wcl_of = [&](const std::string& name, const std::string& extra, const char* medium) {
    setenv("SOFTWRAP_MEDIUM", medium, 1);
    sqlite3* db = open(uri(name, extra));
    EXPECT_EQ(exec(db, "CREATE TABLE t(x)"), SQLITE_OK);
    sw_pool* pool = sw_sqlite_pool(db, "main");
    EXPECT_NE(pool, nullptr);
    const char* why = "";
    const int on = pool ? sw_pool_wcl(pool, &why) : -1;
    EXPECT_STREQ(sw_pool_medium_name(pool), medium);
    const std::string what = why;
    sqlite3_close(db);
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    return std::to_string(on) + " " + what;
  };
  EXPECT_EQ(wcl_of("x.db", "", "x86").substr(0, 2), "2 ") << "x86: pages compared, word stores not";
  EXPECT_NE(wcl_of("x1.db", "", "x86").find("x86 medium's default (pages"), std::string::npos);
  EXPECT_EQ(wcl_of("m.db", "", "msync").substr(0, 2), "2 ") << "msync: pages compared, word stores not";
  EXPECT_EQ(wcl_of("x3.db", "&wcl=0", "x86"), "0 SW_CONFIG_NO_WCL");
  EXPECT_EQ(wcl_of("x2.db", "&wcl=1", "x86"), "1 SW_CONFIG_WCL");
  EXPECT_EQ(wcl_of("m2.db", "&wcl=0", "msync"), "0 SW_CONFIG_NO_WCL");
  EXPECT_EQ(wcl_of("m3.db", "&wcl=auto", "msync").substr(0, 2), "2 ");
}

// Issue 13: at default settings (no poolsize) a transaction larger than a
// log lane commits (log space on demand).
std::string default_uri(const std::string& dir, const std::string& name, const char* vfs) {
  return "file:" + dir + "/" + name + "?vfs=" + vfs;
}

TEST_P(VfsTest, ShellHundredThousandRowsInOneTransactionAtDefaults) {
  if (!fs::exists("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  const std::string module = fs::path(SW_SQLITE_MODULE).replace_extension("").string();
  // As a user types it: one INSERT statement per row between BEGIN and COMMIT.
  std::string script = ".load " + module + "\n.open " + default_uri(dir_, "shell.db", GetParam()) +
                       "\nCREATE TABLE t(id INTEGER, name TEXT);\nBEGIN;\n";
  for (int i = 0; i < 100000; ++i) script += "INSERT INTO t VALUES(" + std::to_string(i) + ",'row " + std::to_string(i) + "');\n";
  script += "COMMIT;\nSELECT count(*) FROM t;\n";
  std::string out;
  ASSERT_EQ(run_program({"/usr/bin/sqlite3", "-bail"}, script, &out), 0) << out.substr(0, 2000);
  EXPECT_NE(out.find("100000"), std::string::npos) << out.substr(0, 2000);
  sqlite3* db = open(default_uri(dir_, "shell.db", GetParam()));
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), "100000");
  sqlite3_close(db);
}

// The shell with the extension loaded; then a second process (the shell
// again) reads and writes the database while this one has it open, and
// this one sees its row (pools are shared between processes by default);
// with shared=0 the second process is kept out.
TEST_P(VfsTest, LoadableExtensionInTheShellAndASecondProcess) {
  if (!fs::exists("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  const std::string module = fs::path(SW_SQLITE_MODULE).replace_extension("").string();
  std::string out;
  const std::string script = ".load " + module + "\n.open " + uri("shell.db") +
                             "\nCREATE TABLE t(x);\nINSERT INTO t VALUES('row-only-in-the-pool');\nSELECT x FROM t;\n";
  ASSERT_EQ(run_program({"/usr/bin/sqlite3", "-bail"}, script, &out), 0) << out;
  EXPECT_NE(out.find("row-only-in-the-pool"), std::string::npos) << out;
  sqlite3* db = open(uri("shell.db"));
  EXPECT_EQ(one(db, "SELECT x FROM t"), "row-only-in-the-pool");
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO t VALUES('from-this-process')", nullptr, nullptr, nullptr), SQLITE_OK);
  out.clear();
  const std::string script2 = ".load " + module + "\n.open " + uri("shell.db") +
                              "\nSELECT x FROM t ORDER BY rowid;\nINSERT INTO t VALUES('from-the-shell');\n";
  ASSERT_EQ(run_program({"/usr/bin/sqlite3", "-bail"}, script2, &out), 0) << out;
  EXPECT_NE(out.find("from-this-process"), std::string::npos) << out;
  EXPECT_EQ(one(db, "SELECT group_concat(x, ',') FROM t"), "row-only-in-the-pool,from-this-process,from-the-shell");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);

  // shared=0: while this process holds the pool, another one cannot open
  // it (nor print the row: a value no path or process id can contain).
  db = open(uri("alone.db", "&shared=0"));
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES('row-only-in-the-pool')", nullptr, nullptr,
                         nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  EXPECT_EQ(one(db, "SELECT x FROM t"), "row-only-in-the-pool");
  out.clear();
  const std::string script3 = ".load " + module + "\n.open " + uri("alone.db") + "\nSELECT x FROM t;\n";
  EXPECT_NE(run_program({"/usr/bin/sqlite3", "-bail"}, script3, &out), 0) << out;
  EXPECT_TRUE(out.find("locked") != std::string::npos || out.find("unable to open") != std::string::npos) << out;
  EXPECT_EQ(out.find("row-only-in-the-pool"), std::string::npos) << out;
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

TEST_P(VfsTest, LoadableExtensionFromPython) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string module = fs::path(SW_SQLITE_MODULE).replace_extension("").string();
  const std::string py = "import sqlite3\n"
                         "c = sqlite3.connect(':memory:')\n"
                         "c.enable_load_extension(True)\n"
                         "c.load_extension('" + module + "')\n"
                         "d = sqlite3.connect('" + uri("py.db") + "', uri=True)\n"
                         "d.execute('CREATE TABLE t(x)')\n"
                         "d.execute('INSERT INTO t VALUES (7)')\n"
                         "d.commit()\n"
                         "print('mode', d.execute('PRAGMA journal_mode').fetchone()[0])\n"
                         "print('sum', d.execute('SELECT sum(x) FROM t').fetchone()[0])\n";
  std::string out;
  ASSERT_EQ(run_program({"/usr/bin/python3", "-"}, py, &out), 0) << out;
  EXPECT_NE(out.find("sum 7"), std::string::npos) << out;
  if (is_softwrap()) {
    EXPECT_NE(out.find("mode memory"), std::string::npos) << out;
  }
  sqlite3* db = open(uri("py.db"));
  EXPECT_EQ(one(db, "SELECT x FROM t"), "7");
  sqlite3_close(db);
}

// An open refused by the VFS: its code and message, as sqlite3_open_v2 and
// sqlite3_errmsg give them.
std::pair<int, std::string> refused_open(const std::string& u) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(u.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
  std::string msg = db != nullptr ? sqlite3_errmsg(db) : "";
  sqlite3_close(db);
  return {rc, msg};
}

TEST_P(VfsTest, BadUriParametersAreRefusedWithTheirMessage) {
  const struct {
    std::string extra;
    int code;
    const char* says;
  } cases[] = {
      {"&engine=UNDO", SQLITE_ERROR, "engine=UNDO is not an engine: engine names are lower case"},
      {"&engine=redo", SQLITE_ERROR, "engine=redo is not one of softwrap, softwrap-local, undo, undo-themis, nonatomic"},
      {"&poolsize=12x", SQLITE_ERROR, "URI parameter poolsize=12x is not a size"},
      {"&poolsize=1M", SQLITE_CANTOPEN, "is below the minimum"},
      {"&lanes=0", SQLITE_ERROR, "URI parameter lanes=0"},
      {"&lanesize=1000", SQLITE_CANTOPEN, "lane_size 1000 must be a multiple of 4096"},
      {"&shadowpage=3000", SQLITE_CANTOPEN, "shadow_page_size 3000 must be a power of two"},
  };
  for (const auto& c : cases) {
    const auto [rc, msg] = refused_open("file:" + dir_ + "/bad.db?vfs=" + GetParam() + c.extra);
    EXPECT_EQ(rc, c.code) << c.extra << ": " << msg;
    EXPECT_NE(msg.find(c.says), std::string::npos) << c.extra << ": " << msg;
    EXPECT_FALSE(fs::exists(dir_ + "/bad.db")) << c.extra << ": a refused open creates no pool";
  }
  // Without SQLITE_OPEN_CREATE a missing pool is what a missing file is to
  // stock SQLite (SQLite's own message); sw_sqlite_errmsg names the pool.
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(uri("none.db").c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr),
            SQLITE_CANTOPEN);
  EXPECT_STREQ(sqlite3_errmsg(db), "unable to open database file");
  EXPECT_NE(std::string(sw_sqlite_errmsg(db, nullptr)).find("no pool " + dir_ + "/none.db"), std::string::npos)
      << sw_sqlite_errmsg(db, nullptr);
  sqlite3_close(db);
  // ATTACH runs no auto-extension: a plain CANTOPEN, and the connection
  // goes on.
  db = open(uri("main.db"));
  EXPECT_EQ(exec(db, "ATTACH '" + uri("att.db", "&engine=UNDO") + "' AS a"), SQLITE_CANTOPEN) << sqlite3_errmsg(db);
  EXPECT_EQ(exec(db, "CREATE TABLE t(x)"), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_P(VfsTest, RefusalReachesTheShellItsLogAndPython) {
  if (!fs::exists("/usr/bin/sqlite3") || !fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no sqlite3 or python3";
  const std::string module = fs::path(SW_SQLITE_MODULE).replace_extension("").string();
  const std::string bad = uri("bad.db", "&engine=UNDO");
  std::string out;
  run_program({"/usr/bin/sqlite3", "-bail"}, ".log stdout\n.load " + module + "\n.open " + bad + "\n", &out);
  // The open's error line and SQLite's log line (".log") both carry it.
  EXPECT_NE(out.find("Error: unable to open database \"" + bad + "\": softwrap vfs: URI parameter engine=UNDO"),
            std::string::npos) << out;
  EXPECT_NE(out.find("(1) softwrap vfs: URI parameter engine=UNDO"), std::string::npos) << out;
  out.clear();
  const std::string py = "import sqlite3\n"
                         "c = sqlite3.connect(':memory:')\n"
                         "c.enable_load_extension(True)\n"
                         "c.load_extension('" + module + "')\n"
                         "try:\n"
                         "    sqlite3.connect('" + bad + "', uri=True)\n"
                         "except sqlite3.OperationalError as e:\n"
                         "    print('refused:', e)\n";
  ASSERT_EQ(run_program({"/usr/bin/python3", "-"}, py, &out), 0) << out;
  EXPECT_NE(out.find("refused: softwrap vfs: URI parameter engine=UNDO is not an engine"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir_ + "/bad.db"));
}

// True if the file at `path` is a softwrap pool (not an SQLite database).
bool is_pool_file(const std::string& path) {
  char head[16] = {};
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return n == sizeof head && std::string(head, 15) != "SQLite format 3";
}

TEST_P(VfsTest, DefaultVfsForUnmodifiedPrograms) {
  if (!is_softwrap()) GTEST_SKIP() << "the default VFS is \"softwrap\"";
  if (!fs::exists("/usr/bin/sqlite3") || !fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no sqlite3 or python3";
  const std::string module = fs::path(SW_SQLITE_MODULE).replace_extension("").string();
  // Python: an unmodified script (plain path, no vfs=) in a process whose
  // sitecustomize loads the extension; SOFTWRAP_SQLITE_DEFAULT=1 does the rest.
  fs::create_directories(dir_ + "/site");
  {
    FILE* f = std::fopen((dir_ + "/site/sitecustomize.py").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "import sqlite3\nc = sqlite3.connect(':memory:')\nc.enable_load_extension(True)\n"
                    "c.load_extension('%s')\nc.close()\n", module.c_str());
    std::fclose(f);
  }
  const std::string py_db = dir_ + "/py.db";
  setenv("PYTHONPATH", (dir_ + "/site").c_str(), 1);
  setenv("SOFTWRAP_SQLITE_DEFAULT", "1", 1);
  std::string out;
  const int rc = run_program({"/usr/bin/python3", "-"},
                             "import sqlite3\nd = sqlite3.connect('" + py_db + "')\n"
                             "d.execute('CREATE TABLE t(x)')\nd.execute('INSERT INTO t VALUES (11)')\nd.commit()\n",
                             &out);
  unsetenv("PYTHONPATH");
  // The shell: the extension loaded, then a plain ".open".
  const std::string sh_db = dir_ + "/sh.db";
  run_program({"/usr/bin/sqlite3", "-bail"},
              ".load " + module + "\n.open " + sh_db + "\nCREATE TABLE t(x);\nINSERT INTO t VALUES(12);\n", &out);
  // Explicitly by entry point, without the environment.
  unsetenv("SOFTWRAP_SQLITE_DEFAULT");
  const std::string ep_db = dir_ + "/ep.db";
  run_program({"/usr/bin/sqlite3", "-bail"},
              ".load " + module + " sqlite3_swsqlite_default_init\n.open " + ep_db +
                  "\nCREATE TABLE t(x);\nINSERT INTO t VALUES(13);\n",
              &out);
  ASSERT_EQ(rc, 0) << out;
  const std::pair<std::string, const char*> dbs[] = {{py_db, "11"}, {sh_db, "12"}, {ep_db, "13"}};
  for (const auto& [path, value] : dbs) {
    EXPECT_TRUE(is_pool_file(path)) << path << " should be a softwrap pool; output: " << out;
    sqlite3* db = open("file:" + path + "?vfs=softwrap");
    EXPECT_EQ(one(db, "SELECT x FROM t"), value) << path;
    sqlite3_close(db);
  }
  // The extension without either keeps the default VFS.
  const std::string plain_db = dir_ + "/plain.db";
  run_program({"/usr/bin/sqlite3", "-bail"},
              ".load " + module + "\n.open " + plain_db + "\nCREATE TABLE t(x);\n", &out);
  EXPECT_FALSE(is_pool_file(plain_db)) << out;
}

TEST(SqliteRegister, EnvironmentMakesSoftwrapTheDefault) {
  sqlite3_vfs* before = sqlite3_vfs_find(nullptr);
  setenv("SOFTWRAP_SQLITE_DEFAULT", "1", 1);
  EXPECT_EQ(sw_sqlite_register(0), SQLITE_OK);
  EXPECT_STREQ(sqlite3_vfs_find(nullptr)->zName, "softwrap");
  setenv("SOFTWRAP_SQLITE_DEFAULT", "yes", 1);
  EXPECT_EQ(sw_sqlite_register(0), SQLITE_ERROR);
  unsetenv("SOFTWRAP_SQLITE_DEFAULT");
  ASSERT_EQ(sqlite3_vfs_register(before, 1), SQLITE_OK);
  EXPECT_EQ(sqlite3_vfs_find(nullptr), before);
}

TEST(ScmVfs, JournalLivesInThePoolDuringATransaction) {
  setenv("SOFTWRAP_MEDIUM", "x86", 1);
  ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
  const std::string dir = "/dev/shm/swsqlite_scm_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(("file:" + dir + "/j.db?vfs=scm&poolsize=32M").c_str(), &db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=PERSIST; CREATE TABLE t(x); INSERT INTO t VALUES(1)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_vfs* v = sqlite3_vfs_find("scm");
  int exists = 0;
  v->xAccess(v, (dir + "/j.db-journal").c_str(), SQLITE_ACCESS_EXISTS, &exists);
  EXPECT_EQ(exists, 1);  // a pool file, not an OS file
  EXPECT_FALSE(fs::exists(dir + "/j.db-journal"));
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=DELETE; INSERT INTO t VALUES(2)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  v->xAccess(v, (dir + "/j.db-journal").c_str(), SQLITE_ACCESS_EXISTS, &exists);
  EXPECT_EQ(exists, 0);
  sqlite3_close(db);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Vfs, VfsTest, ::testing::Values("softwrap", "scm"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
