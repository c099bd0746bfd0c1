// vfs_growth_test.cc — a SQLite database in a pool created at 16 MiB grows
// to 1 GiB, and survives kill -9 while it grows.
//
// Approach: a child process opens the database through the softwrap VFS
// (poolsize=16M; the maximum, 1 GiB, comes from SOFTWRAP_POOL_MAX in its
// environment, since a pool's maximum is sw_config.max_size) and inserts
// rows of 1 MiB text in transactions of a few rows, publishing the number
// of committed rows in a shared page after each COMMIT.  The parent kills
// it with SIGKILL at a seeded random moment, reopens the database, and
// checks that at least every acknowledged row is there, that the rows of
// the last transactions hold exactly the text their keys imply, and every
// 8th round that integrity_check says ok (the whole database is checked at
// the end: reading 1 GiB after every kill would take minutes); then
// a new child goes on where the last one stopped.  The rounds end when a
// child finds the pool full at its maximum (SQLITE_FULL, exit 0): then the
// pool file is 1 GiB and a last insert must fail cleanly with SQLITE_FULL
// while every row stays readable.  On /dev/shm this takes seconds.
//
// Knobs: SOFTWRAP_SQLITE_GROWTH_MAX (default 1G), SOFTWRAP_KILL_SEED.
#include <signal.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "softwrap/sqlite.h"

namespace {

constexpr int kRowBytes = 1 << 20;
constexpr int kRowsPerTx = 3;

std::string one(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return std::string("error: ") + sqlite3_errmsg(db);
  std::string out = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr
                        ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                        : "";
  sqlite3_finalize(st);
  return out;
}

// The row with key k: kRowBytes of one letter, which the key chooses.
std::string insert_rows(uint64_t first, int n) {
  return "WITH RECURSIVE s(value) AS (SELECT " + std::to_string(first) + " UNION ALL SELECT value + 1 FROM s "
         "WHERE value < " + std::to_string(first + n - 1) + ") INSERT INTO t SELECT value, replace(hex(zeroblob(" +
         std::to_string(kRowBytes / 2) + ")), '0', char(65 + value % 26)) FROM s";
}
// Rows with key above `from` that do not hold their text.
std::string bad_rows(uint64_t from) {
  return "SELECT count(*) FROM t WHERE k > " + std::to_string(from) +
         " AND (length(v) <> 1048576 OR v <> replace(hex(zeroblob(524288)), '0', char(65 + k % 26)))";
}

class VfsGrowthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    unsetenv("SOFTWRAP_ENGINE");
    unsetenv("SOFTWRAP_SQLITE_POOL");
    const char* m = std::getenv("SOFTWRAP_SQLITE_GROWTH_MAX");
    max_ = m != nullptr ? m : "1G";
    setenv("SOFTWRAP_POOL_MAX", max_.c_str(), 1);
    ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
    dir_ = "/dev/shm/sw_vfs_growth_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/grow.db";
    uri_ = "file:" + path_ + "?vfs=softwrap&poolsize=16M";
  }
  void TearDown() override {
    unsetenv("SOFTWRAP_POOL_MAX");
    std::filesystem::remove_all(dir_);
  }
  sqlite3* open() {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(uri_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                                   nullptr);
    EXPECT_EQ(rc, SQLITE_OK) << (db ? sqlite3_errmsg(db) : "");
    return db;
  }
  std::string max_, dir_, path_, uri_;
};

TEST_F(VfsGrowthTest, GrowsFrom16MiBToItsMaximumThroughKills) {
  const char* s = std::getenv("SOFTWRAP_KILL_SEED");
  std::mt19937_64 rng(s != nullptr ? std::strtoull(s, nullptr, 0) : 1124);
  {
    sqlite3* db = open();
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)", nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 16 << 20) << "the pool starts at poolsize";
  auto* acked = static_cast<volatile uint64_t*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(acked, MAP_FAILED);
  *acked = 0;
  int kills = 0;
  bool full = false;
  for (int round = 0; round < 200 && !full; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      sqlite3* db = nullptr;
      if (sqlite3_open_v2(uri_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) _exit(2);
      uint64_t next = std::stoull(one(db, "SELECT coalesce(max(k), 0) + 1 FROM t"));
      *acked = next - 1;
      for (;;) {
        const int rc = sqlite3_exec(db, insert_rows(next, kRowsPerTx).c_str(), nullptr, nullptr, nullptr);
        if (rc == SQLITE_FULL) _exit(0);
        if (rc != SQLITE_OK) _exit(3);
        next += kRowsPerTx;
        *acked = next - 1;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 400));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0) << "the child failed (2: open, 3: an insert other than SQLITE_FULL)";
      full = true;
    } else {
      ++kills;
    }
    sqlite3* db = open();
    ASSERT_NE(db, nullptr);
    if (round % 8 == 0) EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok") << "round " << round;
    const uint64_t rows = std::stoull(one(db, "SELECT count(*) FROM t"));
    EXPECT_GE(rows, *acked) << "round " << round << ": a committed row was lost";
    EXPECT_LE(rows, *acked + kRowsPerTx) << "round " << round;
    EXPECT_EQ(one(db, "SELECT coalesce(max(k), 0) FROM t"), std::to_string(rows)) << "rows come in order";
    // The rows the last transactions wrote (all of them at the end).
    const uint64_t from = rows > 4 * kRowsPerTx ? rows - 4 * kRowsPerTx : 0;
    EXPECT_EQ(one(db, bad_rows(from)), "0") << "round " << round;
    sqlite3_close(db);
  }
  ASSERT_TRUE(full) << "the pool never reached its maximum";
  EXPECT_GE(kills, 3) << "too few kills landed before the pool was full";
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  uint64_t max_bytes = 0;
  ASSERT_TRUE(max_ == "1G" || std::getenv("SOFTWRAP_SQLITE_GROWTH_MAX") != nullptr);
  max_bytes = max_ == "1G" ? uint64_t{1} << 30 : static_cast<uint64_t>(st.st_size);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), max_bytes) << "the pool grew to its maximum";
  sqlite3* db = open();
  const std::string before = one(db, "SELECT count(*) FROM t");
  EXPECT_EQ(sqlite3_exec(db, insert_rows(std::stoull(before) + 1, kRowsPerTx).c_str(), nullptr, nullptr, nullptr),
            SQLITE_FULL);
  EXPECT_EQ(one(db, "SELECT count(*) FROM t"), before);
  EXPECT_EQ(one(db, bad_rows(0)), "0");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  std::printf("vfs growth: 16 MiB -> %llu MiB, %s rows of 1 MiB, %d kills\n",
              static_cast<unsigned long long>(st.st_size >> 20), before.c_str(), kills);
  sqlite3_close(db);
  munmap(const_cast<uint64_t*>(acked), 4096);
}

}  // namespace
