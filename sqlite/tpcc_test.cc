// tpcc_test.cc — a small TPC-C on every VFS, and kill -9 during TPC-C.
//
// The small run loads 1 warehouse with 500 items and 30 customers per
// district, runs the mix for a fixed number of transactions and checks
// PRAGMA integrity_check and consistency conditions 1-4.  The crash test
// loads the same database in this process, then runs the sw_tpcc binary on
// it with a commit log, kills it with SIGKILL at a random moment after it
// has committed something, reopens the database here and checks integrity,
// conditions 1-4 and that every New-Order whose COMMIT returned (the log) is
// present with all its order lines.  Each engine that promises atomicity is
// tested under the softwrap VFS (nonatomic is the negative control and is
// not: it is killed where sw_tpcc stops itself inside a commit), and the scm
// VFS (SQLite's rollback journal in the pool) as well.
// The readers test runs sw_tpcc with reader threads and reader processes
// beside the writer (--readers, --reader-procs) for a second each, in WAL
// mode (stock SQLite; the softwrap VFS with the same pragma), and checks
// that both sides committed and the database stays consistent.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "run_program.h"
#include "softwrap/sqlite.h"
#include "tpcc.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

swtpcc::Config small_config() {
  swtpcc::Config c;
  c.items = 500;
  c.customers_per_district = 30;
  c.seconds = 30;
  c.max_transactions = 400;
  c.load_batch_rows = 300;
  return c;
}

struct Case {
  const char* name;
  const char* vfs;     // nullptr: stock unix VFS
  const char* engine;  // URI engine= (and further parameters: "softwrap&wcl=0")
};

class Tpcc : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    unsetenv("SOFTWRAP_ENGINE");
    unsetenv("SOFTWRAP_SQLITE_POOL");
    ASSERT_EQ(sw_sqlite_register(0), 0);
    dir_ = "/dev/shm/swtpcc_test_" + std::to_string(getpid()) + "_" + GetParam().name;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string uri() const {
    const Case& c = GetParam();
    if (c.vfs == nullptr) return "file:" + dir_ + "/t.db";
    return "file:" + dir_ + "/t.db?vfs=" + c.vfs + "&poolsize=64M&engine=" + c.engine;
  }
  std::string dir_;
};

TEST_P(Tpcc, SmallRunKeepsConsistency) {
  std::string err;
  sqlite3* db = swtpcc::open_db(uri(), &err);
  ASSERT_NE(db, nullptr) << err;
  const swtpcc::Config cfg = small_config();
  ASSERT_TRUE(swtpcc::load(db, cfg, &err)) << err;
  ASSERT_TRUE(swtpcc::check(db, &err)) << err;
  swtpcc::Result r;
  ASSERT_TRUE(swtpcc::run(db, cfg, &r, &err)) << err;
  uint64_t total = r.rolled_back;
  for (uint64_t v : r.committed) total += v;
  EXPECT_EQ(total, cfg.max_transactions);
  EXPECT_GT(r.committed[swtpcc::kNewOrder], 100u);
  EXPECT_GT(r.committed[swtpcc::kPayment], 100u);
  EXPECT_GT(r.committed[swtpcc::kDelivery], 0u);
  EXPECT_GT(r.tpmC, 0);
  EXPECT_TRUE(swtpcc::integrity_ok(db, &err)) << err;
  EXPECT_TRUE(swtpcc::check(db, &err)) << err;
  ASSERT_EQ(sqlite3_close(db), SQLITE_OK);
  // And after reopening.
  db = swtpcc::open_db(uri(), &err);
  ASSERT_NE(db, nullptr) << err;
  EXPECT_TRUE(swtpcc::integrity_ok(db, &err)) << err;
  EXPECT_TRUE(swtpcc::check(db, &err)) << err;
  sqlite3_close(db);
}

INSTANTIATE_TEST_SUITE_P(Vfs, Tpcc,
                         ::testing::Values(Case{"softwrap", "softwrap", "softwrap"},
                                           Case{"softwrap_whole_pages", "softwrap", "softwrap&wcl=0"},
                                           Case{"softwrap_local", "softwrap", "softwrap-local"},
                                           Case{"undo", "softwrap", "undo"},
                                           Case{"nonatomic", "softwrap", "nonatomic"},
                                           Case{"scm", "scm", "nonatomic"}, Case{"unix", nullptr, ""}),
                         [](const auto& info) { return std::string(info.param.name); });

class TpccCrash : public Tpcc {
 protected:
  struct Outcome {
    bool killed = false;
    bool stopped = false;     // stopped itself inside the commit asked for
    bool intact = false;      // integrity_check ok
    bool consistent = false;  // conditions 1-4
    uint64_t logged = 0;      // New-Orders whose COMMIT returned, all rounds
    uint64_t missing = 0;     // ... of which not in the database
    std::string err;
  };

  void load() {
    std::string err;
    sqlite3* db = swtpcc::open_db(uri(), &err);
    ASSERT_NE(db, nullptr) << err;
    ASSERT_TRUE(swtpcc::load(db, small_config(), &err)) << err;
    ASSERT_EQ(sqlite3_close(db), SQLITE_OK);
  }

  // Runs sw_tpcc on a slow emulated medium (so that the kill often lands in
  // a commit), kills it, reopens and checks.  stop_in_commit > 0: sw_tpcc
  // stops itself inside that New-Order's COMMIT (--stop-in-commit) and is
  // killed there, not at a random moment.
  Outcome crash_round(int round, std::mt19937& rng, uint64_t stop_in_commit = 0) {
    Outcome out;
    const std::string log = dir_ + "/commits.log";
    std::vector<std::string> args = {SW_TPCC_BIN, "--db", uri(), "--run", "--seconds", "60", "--items", "500",
                                     "--customers", "30", "--seed", std::to_string(round + 1),
                                     "--commit-log", log};
    if (stop_in_commit > 0) {
      args.push_back("--stop-in-commit");
      args.push_back(std::to_string(stop_in_commit));
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = {"SOFTWRAP_MEDIUM=scm-emu", "SOFTWRAP_SCM_WRITE_NS=2000"};
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "SOFTWRAP_", 9) != 0) env.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    struct stat sb {};
    const off_t before = stat(log.c_str(), &sb) == 0 ? sb.st_size : 0;
    pid_t pid;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()) != 0) return out;
    int status = 0;
    if (stop_in_commit > 0) {
      // Wait for the stop (or the end, if it never stops); no clock involved.
      waitpid(pid, &status, WUNTRACED);
      out.stopped = WIFSTOPPED(status);
    } else {
      // Wait until it has committed something new, then kill it at a random moment.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (std::chrono::steady_clock::now() < deadline && (stat(log.c_str(), &sb) != 0 || sb.st_size <= before)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(10, 200)(rng)));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    out.killed = WIFSIGNALED(status);

    sqlite3* db = swtpcc::open_db(uri(), &out.err);
    if (db == nullptr) return out;
    out.intact = swtpcc::integrity_ok(db, &out.err);
    out.consistent = swtpcc::check(db, &out.err);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT o_ol_cnt, (SELECT count(*) FROM order_line WHERE ol_w_id=?1 AND ol_d_id=?2 "
                       "AND ol_o_id=?3) FROM orders WHERE o_w_id=?1 AND o_d_id=?2 AND o_id=?3",
                       -1, &s, nullptr);
    std::ifstream in(log);
    long long w, d, o, n;
    while (in >> w >> d >> o >> n) {
      ++out.logged;
      sqlite3_reset(s);
      sqlite3_bind_int64(s, 1, w);
      sqlite3_bind_int64(s, 2, d);
      sqlite3_bind_int64(s, 3, o);
      if (sqlite3_step(s) != SQLITE_ROW || sqlite3_column_int64(s, 0) != n || sqlite3_column_int64(s, 1) != n) {
        ++out.missing;
      }
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    return out;
  }
};

TEST_P(TpccCrash, KillDuringTpccLosesNoCommittedTransaction) {
  ASSERT_NO_FATAL_FAILURE(load());
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  uint64_t logged = 0;
  for (int round = 0; round < 5; ++round) {
    const Outcome o = crash_round(round, rng);
    ASSERT_TRUE(o.killed) << "round " << round << ": sw_tpcc ended before the kill";
    EXPECT_TRUE(o.intact && o.consistent) << "round " << round << ": " << o.err;
    EXPECT_GT(o.logged, logged) << "round " << round;
    EXPECT_EQ(o.missing, 0u) << "round " << round << ": committed New-Orders lost";
    logged = o.logged;
    if (HasFailure()) break;
  }
}

// The negative control: the same VFS under the nonatomic engine tears
// commits, and the checks above notice.  A kill at a random moment that
// lands outside a commit harms nothing (and on a loaded machine twelve of
// them sometimes all did), so sw_tpcc stops itself inside a New-Order's
// COMMIT, its new D_NEXT_O_ID written and its order not, and is killed
// there: every time a torn commit, which condition 2 sees (or, when the
// commit grows the database, integrity_check: page 1, written first, counts
// a page the file does not have yet, and SQLite calls it malformed).
class TpccNegativeControl : public TpccCrash {};

TEST_P(TpccNegativeControl, NonatomicEngineTearsCommitsAndTheChecksNotice) {
  ASSERT_NO_FATAL_FAILURE(load());
  std::mt19937 rng(static_cast<unsigned>(getpid()));
  const uint64_t new_order = std::uniform_int_distribution<uint64_t>(1, 30)(rng);
  SCOPED_TRACE("stopped in New-Order " + std::to_string(new_order));
  const Outcome o = crash_round(0, rng, new_order);
  ASSERT_TRUE(o.stopped) << "sw_tpcc did not stop inside the COMMIT";
  ASSERT_TRUE(o.killed);
  EXPECT_EQ(o.logged, new_order - 1) << "the New-Orders before it committed";
  EXPECT_TRUE(!o.intact || !o.consistent || o.missing != 0)
      << "a kill inside a nonatomic commit left no visible damage";
}

INSTANTIATE_TEST_SUITE_P(Vfs, TpccNegativeControl, ::testing::Values(Case{"nonatomic", "softwrap", "nonatomic"}),
                         [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(Vfs, TpccCrash,
                         ::testing::Values(Case{"softwrap", "softwrap", "softwrap"},
                                           Case{"softwrap_whole_pages", "softwrap", "softwrap&wcl=0"},
                                           Case{"softwrap_local", "softwrap", "softwrap-local"},
                                           Case{"undo", "softwrap", "undo"}, Case{"scm", "scm", "nonatomic"}),
                         [](const auto& info) { return std::string(info.param.name); });

// sw_tpcc's "key value" line for `key` ("" if none).
std::string value_of(const std::string& out, const std::string& key) {
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(pos, end - pos);
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
    pos = end + 1;
  }
  return "";
}

class TpccReaders : public Tpcc {};

TEST_P(TpccReaders, WriterAndReadersBothCommitInWalMode) {
  using softwrap::sqlite_test::run_program;
  const std::vector<std::string> base = {SW_TPCC_BIN, "--db", uri(), "--items", "500", "--customers", "30",
                                         "--pragma", "PRAGMA journal_mode=WAL"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  std::string out;
  ASSERT_EQ(run_program(with({"--load"}), "", &out), 0) << out;
  for (const bool procs : {false, true}) {
    std::vector<std::string> extra = {"--run", "--seconds", "1", "--readers", "2"};
    if (procs) extra.push_back("--reader-procs");
    out.clear();
    ASSERT_EQ(run_program(with(extra), "", &out), 0) << out;
    SCOPED_TRACE(std::string(procs ? "reader processes" : "reader threads") + ":\n" + out);
    if (GetParam().vfs == nullptr) {
      EXPECT_EQ(value_of(out, "journal_mode"), "wal");
    }
    EXPECT_EQ(value_of(out, "readers"), "2");
    EXPECT_GT(std::atof(value_of(out, "writer_tps").c_str()), 0);
    EXPECT_GT(std::atof(value_of(out, "read_tps").c_str()), 0);
    EXPECT_GT(std::strtoull(value_of(out, "read_tx").c_str(), nullptr, 10), 0u);
    EXPECT_NE(value_of(out, "reader_busy"), "");
  }
  out.clear();
  EXPECT_EQ(run_program(with({"--check"}), "", &out), 0) << out;
  EXPECT_EQ(value_of(out, "consistency"), "ok") << out;
}

INSTANTIATE_TEST_SUITE_P(Vfs, TpccReaders,
                         ::testing::Values(Case{"unix", nullptr, ""}, Case{"softwrap", "softwrap", "softwrap"}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
