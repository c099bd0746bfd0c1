// vfs_share_test.cc — SQLite's locks when the process is alone on its pool
// (docs/sqlite.md, "Locking"): the VFS elides its lock bytes while the
// core holds write access with no other process open, takes them for real
// before another process's open completes, and starts eliding only after
// catching up with what others wrote.  The second process is this test
// binary again (VfsShareChild.Sql: SQL from standard input, run as the
// sqlite3 shell with -bail would), so the sanitizer stages run it too
// (labels sqlite and concurrency).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "run_program.h"
#include "test_sql.h"
#include "softwrap/softwrap.h"
#include "softwrap/sqlite.h"

namespace {

namespace fs = std::filesystem;
using softwrap::sqlite_test::exec;
using softwrap::sqlite_test::one;
using softwrap::sqlite_test::run_program;
using softwrap::sqlite_test::series;

// The child: opens $SW_VFS_CHILD_URI and runs its standard input's SQL,
// printing rows as "a|b"; the first error is printed ("Error: ...") and
// ends it with status 1.  No busy timeout, as the shell's default.
TEST(VfsShareChild, Sql) {
  const char* uri = std::getenv("SW_VFS_CHILD_URI");
  if (uri == nullptr) GTEST_SKIP() << "the second process of the VfsShare tests";
  if (sw_sqlite_register(0) != SQLITE_OK) std::_Exit(3);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    std::printf("Error: %s\n", db ? sqlite3_errmsg(db) : "no memory");
    std::_Exit(1);
  }
  const std::string sql(std::istreambuf_iterator<char>(std::cin), {});
  auto row = [](void*, int n, char** v, char**) {
    for (int i = 0; i < n; ++i) std::printf("%s%s", i ? "|" : "", v[i] ? v[i] : "");
    std::printf("\n");
    return 0;
  };
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), row, nullptr, &err);
  if (rc != SQLITE_OK) std::printf("Error: %s\n", err ? err : sqlite3_errstr(rc));
  sqlite3_free(err);
  sqlite3_close(db);
  std::fflush(stdout);
  std::_Exit(rc == SQLITE_OK ? 0 : 1);
}

// Lock bytes of SQLite's held on the pool file by any process, from
// /proc/locks (the stored files' ranges start at SW_APP_LOCK_BASE): as
// "R start" / "W start", one per lock.
std::vector<std::string> sqlite_lock_bytes(const std::string& pool) {
  struct stat st {};
  std::vector<std::string> out;
  if (stat(pool.c_str(), &st) != 0) return out;
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string id, kind, mode, rw, pid, dev, start, end;
    ls >> id >> kind;
    if (kind == "->") ls >> kind;  // a waiter
    ls >> mode >> rw >> pid >> dev >> start >> end;
    const size_t colon = dev.rfind(':');
    if (kind != "OFDLCK" || colon == std::string::npos) continue;
    if (std::stoull(dev.substr(colon + 1)) != static_cast<unsigned long long>(st.st_ino)) continue;
    if (std::stoull(start) < static_cast<unsigned long long>(SW_APP_LOCK_BASE)) continue;
    out.push_back(std::string(rw == "READ" ? "R " : "W ") + start);
  }
  return out;
}

class VfsShare : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    unsetenv("SOFTWRAP_ENGINE");
    unsetenv("SOFTWRAP_SQLITE_POOL");
    unsetenv("SOFTWRAP_SHARED");
    ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = "/dev/shm/swsqlite_share_" + std::to_string(getpid()) + "_" + name;
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
  // Another process runs `sql` on `u`: its exit status; *out what it printed.
  static int other_process(const std::string& u, const std::string& sql, std::string* out) {
    out->clear();
    setenv("SW_VFS_CHILD_URI", u.c_str(), 1);
    const int rc = run_program({"/proc/self/exe", "--gtest_filter=VfsShareChild.Sql"}, sql, out);
    unsetenv("SW_VFS_CHILD_URI");
    return rc;
  }

  std::string dir_;
};

// A process alone on its pool, holding write access, takes none of
// SQLite's lock bytes; when another process opens the pool they are taken
// before its open completes: it finds this one's SHARED lock (a read
// transaction: it may read, not write) and RESERVED lock (a write
// transaction: likewise).  Fails if the core does not run the VFS's hook
// before giving write access up, or the hook does not take the locks.
TEST_P(VfsShare, ElidedLocksAreTakenBeforeASecondProcessGetsIn) {
  const std::string pool = dir_ + "/el.db";
  sqlite3* db = open(uri("el.db"));
  ASSERT_EQ(exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES('first'); CREATE TABLE c(n); INSERT INTO c VALUES(0)"),
            SQLITE_OK) << sqlite3_errmsg(db);
  int rows = 1;
  for (const char* begin : {"BEGIN; SELECT count(*) FROM t;", "BEGIN IMMEDIATE;"}) {
    SCOPED_TRACE(begin);
    // A commit (write access taken, and kept: alone), then the
    // transaction at once; the 100 ms of idling after which write access
    // goes (and the locks with it) may pass on a loaded machine: again.
    bool elided = false;
    for (int attempt = 0; attempt < 20 && !elided; ++attempt) {
      ASSERT_EQ(exec(db, "UPDATE c SET n = n + 1"), SQLITE_OK) << sqlite3_errmsg(db);
      ASSERT_EQ(exec(db, begin), SQLITE_OK) << sqlite3_errmsg(db);
      elided = sqlite_lock_bytes(pool).empty();
      if (!elided) {
        ASSERT_EQ(exec(db, "ROLLBACK"), SQLITE_OK);
      }
    }
    ASSERT_TRUE(elided) << "never alone with write access";
    std::string out;
    const bool reserved = std::string(begin) == "BEGIN IMMEDIATE;";
    // Another process reads (allowed under both), then may not write.
    EXPECT_EQ(other_process(uri("el.db"), "SELECT 'rows', count(*) FROM t;", &out), 0) << out;
    EXPECT_NE(out.find("rows|" + std::to_string(rows)), std::string::npos) << out;
    EXPECT_FALSE(sqlite_lock_bytes(pool).empty());
    EXPECT_NE(other_process(uri("el.db"), "INSERT INTO t VALUES('other');", &out), 0) << out;
    EXPECT_NE(out.find("database is locked"), std::string::npos) << out;
    if (reserved) {
      ASSERT_EQ(exec(db, "INSERT INTO t VALUES('ours')"), SQLITE_OK) << sqlite3_errmsg(db);
    }
    ASSERT_EQ(exec(db, "COMMIT"), SQLITE_OK) << sqlite3_errmsg(db);
    EXPECT_EQ(other_process(uri("el.db"), "INSERT INTO t VALUES('other');", &out), 0) << out;
    rows += reserved ? 2 : 1;
  }
  EXPECT_EQ(one(db, "SELECT group_concat(x, ',') FROM t"), "first,other,ours,other");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

// A process that finds itself alone again after another one wrote elides
// its locks only after catching up: here it reads one database while the
// other process grows another one in the same pool, then takes write
// access back (alone) while releasing its read lock, and must see the
// other's rows in the second database (its block table reloaded), not its
// old map.  Fails if the first SHARED lock of an elision skips catching up.
TEST_P(VfsShare, ElisionStartsOnlyAfterCatchingUpWithOthers) {
  const std::string pool = dir_ + "/two.pool";
  sqlite3* a = open(uri("one.db", "&pool=" + pool));
  sqlite3* b = open(uri("two.db", "&pool=" + pool));
  ASSERT_EQ(exec(a, "CREATE TABLE t(x); INSERT INTO t VALUES('one')"), SQLITE_OK) << sqlite3_errmsg(a);
  ASSERT_EQ(exec(b, "CREATE TABLE t(x); INSERT INTO t VALUES('two')"), SQLITE_OK) << sqlite3_errmsg(b);
  EXPECT_EQ(one(b, "SELECT count(*) FROM t"), "1");
  ASSERT_EQ(exec(a, "BEGIN; SELECT count(*) FROM t;"), SQLITE_OK) << sqlite3_errmsg(a);
  std::string out;
  ASSERT_EQ(other_process(uri("two.db", "&pool=" + pool),
                          "INSERT INTO t SELECT hex(randomblob(500)) FROM " + series(2000) +
                              "; SELECT 'rows', count(*) FROM t;",
                          &out),
            0) << out;
  EXPECT_NE(out.find("rows|2001"), std::string::npos) << out;
  ASSERT_EQ(exec(a, "COMMIT"), SQLITE_OK) << sqlite3_errmsg(a);
  EXPECT_EQ(one(b, "SELECT count(*) FROM t"), "2001");
  EXPECT_EQ(one(b, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(one(a, "SELECT x FROM t"), "one");
  sqlite3_close(a);
  sqlite3_close(b);
}

INSTANTIATE_TEST_SUITE_P(Vfs, VfsShare, ::testing::Values("softwrap", "scm"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
