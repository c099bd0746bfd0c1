// vfs_growth_test.cc — a database on the softwrap VFS grows like a file:
// from a 16 MiB pool to 1 GiB at the VFS's defaults, with kill -9 landing
// while it grows.
//
// Approach: a child process opens the database (poolsize=16M, no poolmax:
// the VFS lets the pool grow as far as the file system goes) and commits
// transactions of 2 MiB of blobs until the pool file reaches 1 GiB,
// publishing after each COMMIT how many rows it knows are committed in a
// MAP_SHARED page.  The parent SIGKILLs it at seeded random moments; after
// every kill it opens the database itself (recovery), checks
// PRAGMA integrity_check, that the rows are exactly those of whole
// transactions and at least as many as the child acknowledged (at most one
// transaction more), and that every row still holds the text its key
// says; then it starts the next child, which goes on from there.  Every
// transaction grows the pool or lands close to a growth (each growth
// doubles the pool, at most 1 GiB at a time), so kills land in and around
// growths; the parent counts kills after which the file was longer than the
// pool's durable size (an extension the pool had not yet taken into use).
// SOFTWRAP_GROWTH_KILLS sets the number of kills (default 6).
#include <signal.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "softwrap/sqlite.h"

namespace fs = std::filesystem;

namespace {

constexpr int kRowsPerTx = 32;
constexpr int kBlobBytes = 64 << 10;  // 2 MiB per transaction
constexpr uint64_t kTarget = 1ull << 30;

struct Shared {
  std::atomic<int64_t> acked_rows;
  std::atomic<int> done;
  // Set by the parent once it has made all its kills: until then the child
  // keeps committing past kTarget, so the kill after the last growth always
  // finds it running (it used to race the child's last transaction and
  // lose now and then: 5 kills in 6 rounds).
  std::atomic<int> may_finish;
};

uint64_t file_size(const std::string& p) {
  struct stat sb;
  return stat(p.c_str(), &sb) == 0 ? static_cast<uint64_t>(sb.st_size) : 0;
}

int exec(sqlite3* db, const std::string& sql) { return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); }

std::string one(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  std::string out = "<error>";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(st, 0);
    out = t ? reinterpret_cast<const char*>(t) : "NULL";
  }
  sqlite3_finalize(st);
  return out;
}

// The child: commits 2-MiB transactions until the pool file has reached
// kTarget and the parent has made its kills (Shared::may_finish).  Row k holds kBlobBytes of text: k % 251 in two hex digits,
// repeated (made in SQL alone: the hex of a zeroblob, its "00"s replaced).
[[noreturn]] void child(const std::string& uri, const std::string& file, Shared* sh) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    fprintf(stderr, "child: open: %s\n", sqlite3_errmsg(db));
    _exit(2);
  }
  if (exec(db, "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB)") != SQLITE_OK) _exit(3);
  int64_t rows = std::stoll(one(db, "SELECT count(*) FROM t"));
  sh->acked_rows.store(rows);
  while (file_size(file) < kTarget || sh->may_finish.load() == 0) {
    const std::string sql = "WITH RECURSIVE s(k) AS (SELECT " + std::to_string(rows + 1) +
                            " UNION ALL SELECT k + 1 FROM s WHERE k < " + std::to_string(rows + kRowsPerTx) +
                            ") INSERT INTO t SELECT k, replace(hex(zeroblob(" + std::to_string(kBlobBytes / 2) +
                            ")), '00', printf('%02X', k % 251)) FROM s";
    if (exec(db, "BEGIN") != SQLITE_OK || exec(db, sql) != SQLITE_OK || exec(db, "COMMIT") != SQLITE_OK) {
      fprintf(stderr, "child: row %lld: %s\n", static_cast<long long>(rows), sqlite3_errmsg(db));
      _exit(4);
    }
    rows += kRowsPerTx;
    sh->acked_rows.store(rows);
  }
  sqlite3_close(db);
  sh->done.store(1);
  _exit(0);
}

}  // namespace

TEST(VfsGrowth, SixteenMiBPoolGrowsToOneGiBThroughKills) {
  ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
  const std::string dir = "/dev/shm/swsqlite_growth_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = dir + "/g.db";
  const std::string uri = "file:" + file + "?vfs=softwrap&poolsize=16M";
  auto* sh = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(sh, MAP_FAILED);
  const char* kenv = std::getenv("SOFTWRAP_GROWTH_KILLS");
  const int kills = kenv ? std::atoi(kenv) : 6;
  const uint64_t seed = 20261124;
  std::mt19937_64 rng(seed);
  int killed = 0, rounds = 0;
  uint64_t last_size = 0;
  bool finished = false;
  while (!finished) {
    ASSERT_LT(++rounds, kills + 20) << "the child keeps failing";
    sh->acked_rows.store(-1);
    sh->done.store(0);
    sh->may_finish.store(killed >= kills ? 1 : 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) child(uri, file, sh);
    bool was_killed = false;
    if (killed < kills) {
      // Kill once the pool has grown past the last size seen, after a
      // random further delay: the next growths are then near.
      const auto t0 = std::chrono::steady_clock::now();
      // (Once the pool has reached kTarget there is no growth to wait for.)
      while (file_size(file) <= last_size && last_size < kTarget && sh->done.load() == 0 &&
             std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 100));
      if (kill(pid, SIGKILL) == 0) was_killed = true;
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (was_killed && WIFSIGNALED(status)) {
      ++killed;
    } else {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
      finished = sh->done.load() == 1;
    }
    const int64_t acked = sh->acked_rows.load();
    const uint64_t raw_size = file_size(file);
    // Recovery by the parent's open, then the checks.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                              nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    // A kill before the child's first statement leaves no table yet.
    ASSERT_EQ(exec(db, "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB)"), SQLITE_OK) << sqlite3_errmsg(db);
    ASSERT_EQ(one(db, "PRAGMA integrity_check"), "ok") << "round " << rounds << " (seed " << seed << ")";
    const int64_t rows = std::stoll(one(db, "SELECT count(*) FROM t"));
    EXPECT_EQ(rows % kRowsPerTx, 0) << "a transaction was half committed (round " << rounds << ")";
    EXPECT_GE(rows, acked) << "acknowledged commits lost (round " << rounds << ")";
    EXPECT_LE(rows, std::max<int64_t>(acked, 0) + kRowsPerTx) << "round " << rounds;
    const std::string n = std::to_string(kBlobBytes);
    EXPECT_EQ(one(db, "SELECT count(*) FROM t WHERE length(v) != " + n + " OR substr(v, 1 + 2 * (abs(random()) % (" +
                          n + " / 2)), 2) != printf('%02X', k % 251) OR substr(v, " + n +
                          " - 1, 2) != printf('%02X', k % 251)"),
              "0")
        << "a row lost its bytes (round " << rounds << ")";
    EXPECT_EQ(one(db, "SELECT max(k) FROM t"), rows == 0 ? "NULL" : std::to_string(rows));
    sqlite3_close(db);
    const uint64_t size = file_size(file);
    EXPECT_GE(size, last_size) << "the pool shrank";
    if (raw_size > size) {
      printf("round %d: the kill left %llu bytes past the durable size (trimmed at open)\n", rounds,
             static_cast<unsigned long long>(raw_size - size));
    }
    last_size = size;
  }
  EXPECT_EQ(killed, kills);
  EXPECT_GE(last_size, kTarget);
  printf("pool grew from 16 MiB to %.0f MiB through %d kills in %d rounds\n", static_cast<double>(last_size) / (1 << 20),
         killed, rounds);
  munmap(sh, sizeof(Shared));
  fs::remove_all(dir);
}
