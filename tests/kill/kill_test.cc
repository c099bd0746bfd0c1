// kill_test.cc — process-kill recovery tests for every engine.
//
// Approach: the parent creates a pool holding a bank (256 accounts of 1,000
// each, one commit counter per worker, a few allocation slots per worker)
// and then, again and again, forks a child that opens the pool and runs
// random wraps on it — transfers, sw_write-based multi-account shuffles,
// nested wraps, aborted wraps, allocations and frees — with one worker or
// with four threads that lock striped mutexes in a fixed order and close
// before they unlock.  After each committed wrap a worker publishes its
// counter in a MAP_SHARED anonymous page.  The parent SIGKILLs the child at
// a seeded random moment, reopens the pool (recovery) and checks the
// invariants: the sum of balances is constant; each worker's counter is at
// least the last value it acknowledged, and at most one more (only the wrap
// being closed may have committed unacknowledged); every live slot holds
// its allocation and the allocator's heap walk (Allocator::check on the
// closed file) counts exactly the live allocations — nothing leaked,
// nothing appeared; a second open replays nothing and leaves the file
// byte-identical.  Some kills also interrupt recovery itself (a child that
// reopens and is killed), and the result must equal recovering a saved copy
// of the crashed image directly.
//
// The targeted tests kill a child between the debits and the credits of one
// wrap: atomic engines must show the state before the wrap, while the
// nonatomic engine must be caught breaking atomicity — a checker that never
// fails proves nothing.
//
// Pools live in /dev/shm on the x86 medium.  A few cases run the msync
// medium instead (SW_MEDIUM_MSYNC: msync at each fence, the medium of an
// ordinary file without DAX) on a pool file on a real disk file system
// (disk_dir()).  A kill -9 does not lose the page cache, so these cases
// exercise the msync medium's code paths (per-thread dirty pages, msync
// at fences, drain at close, recovery through it) under kills, not lost
// writes: what a power failure does to unsynced pages is the crash
// simulator's page-cache model (docs/crash-simulator.md).
//
// Knobs: SOFTWRAP_KILLS (kills per test, default 25; the msync cases run a
// fifth of it, at least one), SOFTWRAP_KILL_SEED (base seed; printed with
// every failure).
#include <linux/magic.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pool/heap_check_test_util.h"
#include "pool/pool.h"
#include "pool/pool_format.h"
#include "softwrap/softwrap.h"

namespace {

constexpr uint64_t kAccounts = 256;
constexpr uint64_t kInitialBalance = 1000;
constexpr uint64_t kTotal = kAccounts * kInitialBalance;
constexpr int kMaxWorkers = 4;
constexpr int kSlots = 4;
constexpr uint64_t kMagic = 0x4b494c4c42414e4bull;  // "KILLBANK"
constexpr size_t kPoolSize = 32ull << 20;  // small: images are compared per kill
constexpr uint32_t kLanes = 8;              // wraps open at once: 4 workers + spare
constexpr int kStripes = 64;

// The root object.  Counters and slots are per worker, so workers share
// only accounts, which they lock.
struct Bank {
  uint64_t magic;
  uint64_t counters[kMaxWorkers];
  uint64_t slot_offset[kMaxWorkers][kSlots];  // 0 = empty
  uint64_t slot_size[kMaxWorkers][kSlots];
  uint64_t accounts[kAccounts];
};

// Parent <-> child page (MAP_SHARED | MAP_ANONYMOUS, survives the kill).
struct Shared {
  std::atomic<uint32_t> ready;
  std::atomic<uint32_t> midwrap;
  std::atomic<uint64_t> acked[kMaxWorkers];
  std::atomic<uint64_t> commits;
  char error[512];
};

// Child exit codes (anything but death by SIGKILL is a failure).
enum ChildExit { kExitOpenFailed = 20, kExitWrapFailed, kExitAbortLeaked, kExitNotKilled };

std::string engine_label(sw_engine_kind e) {
  switch (e) {
    case SW_ENGINE_SOFTWRAP: return "softwrap";
    case SW_ENGINE_SOFTWRAP_LOCAL: return "softwrap-local";
    case SW_ENGINE_UNDO: return "undo";
    case SW_ENGINE_NONATOMIC: return "nonatomic";
    default: return "default";
  }
}

sw_config config_for(sw_engine_kind engine, sw_medium_kind medium = SW_MEDIUM_X86) {
  sw_config cfg{};
  cfg.engine = engine;
  cfg.medium = medium;
  cfg.lanes = kLanes;
  return cfg;
}

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

std::string temp_dir() {
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

bool on_tmpfs(const std::string& dir) {
  struct statfs st {};
  return statfs(dir.c_str(), &st) != 0 || st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC;
}

// A writable directory on a disk file system, for the msync medium's
// pools: $TMPDIR or /var/tmp unless they are tmpfs, else the working
// directory (ctest runs tests in the build tree).
std::string disk_dir() {
  for (const char* d : {static_cast<const char*>(std::getenv("TMPDIR")), "/var/tmp"}) {
    if (d != nullptr && *d != '\0' && access(d, W_OK) == 0 && !on_tmpfs(d)) return d;
  }
  return std::filesystem::current_path().string();
}

// Reads a whole file into `data`, reusing its capacity (pools are tens of
// MiB and this runs twice per kill).
void read_file(const std::string& path, std::vector<char>* data) {
  data->resize(std::filesystem::file_size(path));
  std::ifstream in(path, std::ios::binary);
  in.read(data->data(), static_cast<std::streamsize>(data->size()));
  data->resize(static_cast<size_t>(in.gcount()));
}

// Names the region of the pool a byte offset falls in (for messages).
std::string region_of(const softwrap::PoolHeader& h, uint64_t off) {
  if (off < h.meta_offset) return "header";
  if (off < h.lane_table_offset) return "meta";
  if (off < h.log_offset) return "lane table";
  if (off < h.chunk_table_offset) return "log";
  if (off < h.heap_offset) return "chunk table";
  return "heap";
}

// First differing offset of two images, or -1.
int64_t first_difference(const std::vector<char>& a, const std::vector<char>& b) {
  if (a.size() != b.size()) return static_cast<int64_t>(std::min(a.size(), b.size()));
  if (std::memcmp(a.data(), b.data(), a.size()) == 0) return -1;
  auto m = std::mismatch(a.begin(), a.end(), b.begin());
  return m.first == a.end() ? -1 : m.first - a.begin();
}

// ------------------------------------------------------------------ child

// One worker's random wraps.  Runs in the forked child; never returns
// normally (the parent kills the child), reports misuse by _exit.
class Worker {
 public:
  Worker(sw_pool* pool, Bank* bank, Shared* shared, std::mutex* stripes, int id, int workers,
         uint64_t seed)
      : pool_(pool), bank_(bank), shared_(shared), stripes_(stripes), id_(id),
        workers_(workers), rng_(seed) {}

  void run() {
    for (;;) one_wrap();
  }

 private:
  [[noreturn]] void fail(int code, const char* what) {
    std::snprintf(shared_->error, sizeof shared_->error, "worker %d: %s: %s (%s)", id_, what,
                  sw_errormsg(), sw_strerror(sw_errno()));
    _exit(code);
  }

  uint64_t pick() { return std::uniform_int_distribution<uint64_t>(0, kAccounts - 1)(rng_); }
  bool chance(int percent) { return std::uniform_int_distribution<int>(0, 99)(rng_) < percent; }

  // Locks the stripes of `accts` in increasing order (no deadlock); the
  // caller closes or aborts its wrap before the returned locks go away.
  std::vector<std::unique_lock<std::mutex>> lock_accounts(const std::vector<uint64_t>& accts) {
    std::vector<int> s;
    for (uint64_t a : accts) s.push_back(static_cast<int>(a % kStripes));
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    if (workers_ == 1) return locks;
    for (int i : s) locks.emplace_back(stripes_[i]);
    return locks;
  }

  void transfer(uint64_t from, uint64_t to) {
    uint64_t fb = sw_load64(pool_, &bank_->accounts[from]);
    uint64_t amount = std::uniform_int_distribution<uint64_t>(0, std::min<uint64_t>(fb, 100))(rng_);
    sw_store64(pool_, &bank_->accounts[from], fb - amount);
    uint64_t tb = sw_load64(pool_, &bank_->accounts[to]);
    sw_store64(pool_, &bank_->accounts[to], tb + amount);
  }

  // Moves money around inside a run of adjacent accounts with sw_read and
  // one sw_write of the whole run.
  void shuffle_range(uint64_t first, uint64_t count) {
    uint64_t v[16];
    if (sw_read(pool_, v, &bank_->accounts[first], count * 8) != 0) fail(kExitWrapFailed, "sw_read");
    for (int k = 0; k < 4; k++) {
      uint64_t a = std::uniform_int_distribution<uint64_t>(0, count - 1)(rng_);
      uint64_t b = std::uniform_int_distribution<uint64_t>(0, count - 1)(rng_);
      uint64_t amount = std::uniform_int_distribution<uint64_t>(0, v[a] / 2)(rng_);
      v[a] -= amount;
      v[b] += amount;
    }
    if (sw_write(pool_, &bank_->accounts[first], v, count * 8) != 0) fail(kExitWrapFailed, "sw_write");
  }

  // Replaces one of this worker's allocation slots (frees the old block).
  void reallocate_slot() {
    int s = std::uniform_int_distribution<int>(0, kSlots - 1)(rng_);
    uint64_t old = sw_load64(pool_, &bank_->slot_offset[id_][s]);
    if (old != 0 && sw_pfree(pool_, sw_pool_ptr(pool_, old)) != 0) fail(kExitWrapFailed, "sw_pfree");
    // Mostly small blocks, sometimes a multi-chunk extent.
    size_t n = chance(10) ? (300u << 10) : std::uniform_int_distribution<size_t>(16, 2048)(rng_);
    void* p = sw_pmalloc(pool_, n);
    if (p == nullptr) fail(kExitWrapFailed, "sw_pmalloc");
    sw_store64(pool_, p, n ^ kMagic);  // tag checked after recovery
    sw_store64(pool_, &bank_->slot_offset[id_][s], sw_pool_offset(pool_, p));
    sw_store64(pool_, &bank_->slot_size[id_][s], n);
  }

  void bump_counter() {
    counter_ = sw_load64(pool_, &bank_->counters[id_]) + 1;
    sw_store64(pool_, &bank_->counters[id_], counter_);
  }

  void close_and_ack() {
    if (sw_wrap_close(pool_) != 0) fail(kExitWrapFailed, "sw_wrap_close");
    shared_->acked[id_].store(counter_, std::memory_order_release);
    shared_->commits.fetch_add(1, std::memory_order_relaxed);
  }

  void one_wrap() {
    int kind = std::uniform_int_distribution<int>(0, 99)(rng_);
    uint64_t a = pick(), b = pick(), c = pick(), d = pick();
    if (kind < 50) {  // plain transfer, sometimes with an allocation
      auto locks = lock_accounts({a, b});
      if (sw_wrap_open(pool_) != 0) fail(kExitWrapFailed, "sw_wrap_open");
      transfer(a, b);
      if (chance(10)) reallocate_slot();
      bump_counter();
      close_and_ack();
    } else if (kind < 70) {  // sw_write of a run of adjacent accounts
      uint64_t count = std::uniform_int_distribution<uint64_t>(2, 16)(rng_);
      uint64_t first = std::min(a, kAccounts - count);
      std::vector<uint64_t> run;
      for (uint64_t i = 0; i < count; i++) run.push_back(first + i);
      auto locks = lock_accounts(run);
      if (sw_wrap_open(pool_) != 0) fail(kExitWrapFailed, "sw_wrap_open");
      shuffle_range(first, count);
      bump_counter();
      close_and_ack();
    } else if (kind < 90) {  // nested wraps flatten into the outermost
      auto locks = lock_accounts({a, b, c, d});
      if (sw_wrap_open(pool_) != 0) fail(kExitWrapFailed, "sw_wrap_open");
      transfer(a, b);
      if (sw_wrap_open(pool_) != 0 || sw_wrap_depth(pool_) != 2) fail(kExitWrapFailed, "nested open");
      transfer(c, d);
      if (chance(20)) reallocate_slot();
      if (sw_wrap_close(pool_) != 0) fail(kExitWrapFailed, "nested close");
      bump_counter();
      close_and_ack();
    } else {  // aborted wrap: nothing of it may remain
      auto locks = lock_accounts({a, b});
      uint64_t before_a = sw_load64(pool_, &bank_->accounts[a]);
      uint64_t before_b = sw_load64(pool_, &bank_->accounts[b]);
      uint64_t before_counter = sw_load64(pool_, &bank_->counters[id_]);
      if (sw_wrap_open(pool_) != 0) fail(kExitWrapFailed, "sw_wrap_open");
      transfer(a, b);
      if (chance(30)) reallocate_slot();
      bump_counter();
      if (sw_wrap_open(pool_) != 0) fail(kExitWrapFailed, "nested open");
      if (sw_wrap_abort(pool_) != 0) fail(kExitWrapFailed, "sw_wrap_abort");
      if (sw_wrap_depth(pool_) != 0 || sw_load64(pool_, &bank_->accounts[a]) != before_a ||
          sw_load64(pool_, &bank_->accounts[b]) != before_b ||
          sw_load64(pool_, &bank_->counters[id_]) != before_counter) {
        fail(kExitAbortLeaked, "aborted wrap left effects");
      }
      counter_ = before_counter;
    }
  }

  sw_pool* pool_;
  Bank* bank_;
  Shared* shared_;
  std::mutex* stripes_;
  int id_;
  int workers_;
  std::mt19937_64 rng_;
  uint64_t counter_ = 0;
};

[[noreturn]] void child_workload(const std::string& path, sw_engine_kind engine, sw_medium_kind medium,
                                 int workers, uint64_t seed, Shared* shared) {
  sw_config cfg = config_for(engine, medium);
  sw_pool* pool = sw_pool_open(path.c_str(), &cfg);
  if (pool == nullptr) {
    std::snprintf(shared->error, sizeof shared->error, "child open: %s", sw_errormsg());
    _exit(kExitOpenFailed);
  }
  auto* bank = static_cast<Bank*>(sw_pool_root(pool, 0));
  static std::mutex stripes[kStripes];
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; w++) {
    threads.emplace_back([=] { Worker(pool, bank, shared, stripes, w, workers, seed + w).run(); });
  }
  shared->ready.store(1, std::memory_order_release);
  Worker(pool, bank, shared, stripes, 0, workers, seed).run();
  _exit(kExitNotKilled);  // unreachable: run() loops until the kill
}

// ----------------------------------------------------------------- parent

std::string describe_status(int status, const Shared* shared) {
  char buf[700];
  if (WIFSIGNALED(status)) {
    std::snprintf(buf, sizeof buf, "child died of signal %d %s", WTERMSIG(status), shared->error);
  } else {
    std::snprintf(buf, sizeof buf, "child exited with %d: %s", WEXITSTATUS(status), shared->error);
  }
  return buf;
}

class KillTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    // The engine and medium under test are chosen here, not by whoever
    // runs the suite.
    unsetenv("SOFTWRAP_ENGINE");
    unsetenv("SOFTWRAP_MEDIUM");
    static std::atomic<int> serial{0};
    path_ = temp_dir() + "/softwrap-kill-" + std::to_string(getpid()) + "-" +
            std::to_string(serial++);
    void* page = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    shared_ = new (page) Shared();
  }
  // Puts the pool in `dir` (before create_bank).
  void use_dir(const std::string& dir) {
    static std::atomic<int> serial{0};
    path_ = dir + "/softwrap-kill-" + std::to_string(getpid()) + "-d" + std::to_string(serial++);
  }

  void TearDown() override {
    for (const char* suffix : {"", ".crashed", ".direct"}) std::remove((path_ + suffix).c_str());
    if (shared_ != nullptr) munmap(shared_, sizeof(Shared));
  }

  void reset_shared(const uint64_t* acked) {
    shared_->ready.store(0);
    shared_->midwrap.store(0);
    shared_->commits.store(0);
    for (int w = 0; w < kMaxWorkers; w++) shared_->acked[w].store(acked[w]);
    std::memset(shared_->error, 0, sizeof shared_->error);
  }

  // Creates the pool with the bank and records the allocator's count of
  // live allocations (the root object, if it comes from the heap).
  void create_bank(sw_engine_kind engine) {
    sw_config cfg = config_for(engine, medium_);
    sw_pool* pool = sw_pool_create(path_.c_str(), kPoolSize, &cfg);
    ASSERT_NE(pool, nullptr) << sw_errormsg();
    ASSERT_EQ(engine_label(engine), sw_pool_engine_name(pool));
    ASSERT_STREQ(sw_pool_medium_name(pool), medium_ == SW_MEDIUM_MSYNC ? "msync" : "x86");
    auto* bank = static_cast<Bank*>(sw_pool_root(pool, sizeof(Bank)));
    ASSERT_NE(bank, nullptr) << sw_errormsg();
    ASSERT_EQ(sw_wrap_open(pool), 0);
    for (uint64_t i = 0; i < kAccounts; i++) sw_store64(pool, &bank->accounts[i], kInitialBalance);
    sw_store64(pool, &bank->magic, kMagic);
    ASSERT_EQ(sw_wrap_close(pool), 0) << sw_errormsg();
    ASSERT_EQ(sw_pool_close(pool), 0) << sw_errormsg();
    base_allocations_ = live_allocations();
  }

  // Allocator::check on the closed pool file; returns live allocations.
  uint64_t live_allocations() { return softwrap::testing::checked_live_allocations(path_); }

  // Waits for the child to die; returns its status.
  int reap(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  // Waits until the child reports ready (or dies); false if it died.
  bool wait_ready(pid_t pid, int* status) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (shared_->ready.load(std::memory_order_acquire) == 0) {
      if (waitpid(pid, status, WNOHANG) == pid) return false;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        *status = reap(pid);
        std::snprintf(shared_->error, sizeof shared_->error, "child not ready after 60 s");
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
  }

  // Starts a child that reopens the crashed pool (running recovery) and
  // kills it after `delay_us`, interrupting recovery or the open pool.
  void interrupt_recovery(sw_engine_kind engine, uint64_t delay_us) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      sw_config cfg = config_for(engine, medium_);
      sw_pool* pool = sw_pool_open(path_.c_str(), &cfg);
      (void)pool;
      pause();  // killed here at the latest, with the pool left open
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    kill(pid, SIGKILL);
    reap(pid);
  }

  std::string path_;
  sw_medium_kind medium_ = SW_MEDIUM_X86;
  Shared* shared_ = nullptr;
  uint64_t base_allocations_ = 0;
};

// What check_bank found in a recovered pool.
struct BankCheck {
  uint64_t sum = 0;
  uint64_t counters[kMaxWorkers] = {};
  uint64_t live_slots = 0;
  std::string problem;  // empty when consistent
};

// Reads the bank through the API, checks the root and every live slot, and
// that home locations agree with sw_load64 after sw_pool_quiesce.
BankCheck check_bank(sw_pool* pool) {
  BankCheck r;
  auto* bank = static_cast<Bank*>(sw_pool_root(pool, 0));
  if (bank == nullptr) {
    r.problem = std::string("no root: ") + sw_errormsg();
    return r;
  }
  if (sw_load64(pool, &bank->magic) != kMagic) r.problem = "bad magic in root";
  uint64_t loaded[kAccounts];
  for (uint64_t i = 0; i < kAccounts; i++) {
    loaded[i] = sw_load64(pool, &bank->accounts[i]);
    r.sum += loaded[i];
  }
  for (int w = 0; w < kMaxWorkers; w++) {
    r.counters[w] = sw_load64(pool, &bank->counters[w]);
    for (int s = 0; s < kSlots; s++) {
      uint64_t off = sw_load64(pool, &bank->slot_offset[w][s]);
      if (off == 0) continue;
      r.live_slots++;
      uint64_t n = sw_load64(pool, &bank->slot_size[w][s]);
      void* p = sw_pool_ptr(pool, off);
      if (sw_pusable_size(pool, p) < n || sw_load64(pool, p) != (n ^ kMagic)) {
        r.problem = "slot " + std::to_string(w) + "/" + std::to_string(s) +
                    " does not hold its allocation";
      }
    }
  }
  // After quiesce, plain loads must see what sw_load64 saw.
  if (sw_pool_quiesce(pool) != 0) {
    r.problem = std::string("quiesce: ") + sw_errormsg();
  } else if (std::memcmp(loaded, bank->accounts, sizeof loaded) != 0) {
    r.problem = "home locations differ from sw_load64 after sw_pool_quiesce";
  }
  return r;
}

// --------------------------------------------------------- random kills

struct RandomKillParam {
  sw_engine_kind engine;
  int workers;
  bool wcl = false;  // write-combined logging: SOFTWRAP_WCL=1 for the test and its children
  sw_medium_kind medium = SW_MEDIUM_X86;  // msync: a pool file on disk, fewer kills
};
void PrintTo(const RandomKillParam& p, std::ostream* os) {
  *os << engine_label(p.engine) << " with " << p.workers << " worker(s)" << (p.wcl ? ", WCL" : "")
      << (p.medium == SW_MEDIUM_MSYNC ? ", msync medium on disk" : "");
}

class RandomKillTest : public KillTestBase, public ::testing::WithParamInterface<RandomKillParam> {};

TEST_P(RandomKillTest, InvariantsHoldAfterEveryKill) {
  const sw_engine_kind engine = GetParam().engine;
  const int workers = GetParam().workers;
  // As a user switches any program: the environment overrides sw_config,
  // and the forked workers inherit it.
  struct WclEnv {
    explicit WclEnv(bool on) {
      if (on) setenv("SOFTWRAP_WCL", "1", 1);
    }
    ~WclEnv() { unsetenv("SOFTWRAP_WCL"); }
  } wcl_env(GetParam().wcl);
  medium_ = GetParam().medium;
  uint64_t kills = env_u64("SOFTWRAP_KILLS", 25);
  if (medium_ == SW_MEDIUM_MSYNC) {  // every fence is an msync to the disk: keep CI short
    use_dir(disk_dir());
    kills = std::max<uint64_t>(1, kills / 5);
  }
  // A wrap costs an msync or more there (milliseconds): kill later.
  const uint64_t max_delay_us = medium_ == SW_MEDIUM_MSYNC ? 250'000 : 50'000;
  const uint64_t base_seed = env_u64("SOFTWRAP_KILL_SEED", std::random_device{}());
  SCOPED_TRACE("reproduce with SOFTWRAP_KILL_SEED=" + std::to_string(base_seed) + " " +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  ASSERT_NO_FATAL_FAILURE(create_bank(engine));
  sw_config cfg = config_for(engine, medium_);
  std::mt19937_64 rng(base_seed);
  uint64_t acked[kMaxWorkers] = {};
  uint64_t total_commits = 0;
  std::vector<char> first, second, straight;  // pool images

  for (uint64_t kill_no = 0; kill_no < kills; kill_no++) {
    SCOPED_TRACE("kill " + std::to_string(kill_no));
    const uint64_t child_seed = rng();
    const uint64_t delay_us = std::uniform_int_distribution<uint64_t>(0, max_delay_us)(rng);
    const bool interrupt = kill_no % 4 == 3;
    const uint64_t recovery_delay_us = std::uniform_int_distribution<uint64_t>(0, 3'000)(rng);
    reset_shared(acked);

    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) child_workload(path_, engine, medium_, workers, child_seed, shared_);
    int status = 0;
    if (wait_ready(pid, &status)) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      kill(pid, SIGKILL);
      status = reap(pid);
    }
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << describe_status(status, shared_);
    total_commits += shared_->commits.load();

    // Optionally interrupt a recovery, keeping the crashed image to compare
    // with a recovery that ran straight through.
    if (interrupt) {
      std::filesystem::copy_file(path_, path_ + ".crashed",
                                 std::filesystem::copy_options::overwrite_existing);
      ASSERT_NO_FATAL_FAILURE(interrupt_recovery(engine, recovery_delay_us));
    }

    // Recovery, then the invariants.
    sw_pool* pool = sw_pool_open(path_.c_str(), &cfg);
    ASSERT_NE(pool, nullptr) << sw_errormsg();
    BankCheck c = check_bank(pool);
    ASSERT_EQ(sw_pool_close(pool), 0) << sw_errormsg();
    ASSERT_EQ(c.problem, "");
    ASSERT_EQ(c.sum, kTotal) << "balances do not add up after recovery";
    for (int w = 0; w < kMaxWorkers; w++) {
      uint64_t a = shared_->acked[w].load();
      ASSERT_GE(c.counters[w], a) << "worker " << w << " lost an acknowledged commit";
      ASSERT_LE(c.counters[w], a + 1) << "worker " << w << " has commits it never made";
      acked[w] = c.counters[w];
    }
    ASSERT_EQ(live_allocations(), base_allocations_ + c.live_slots)
        << "allocations leaked or appeared";

    // A second open has nothing to recover and changes nothing.
    read_file(path_, &first);
    pool = sw_pool_open(path_.c_str(), &cfg);
    ASSERT_NE(pool, nullptr) << sw_errormsg();
    sw_recovery_report report{};
    ASSERT_EQ(sw_pool_recovery_report(pool, &report), 0);
    EXPECT_EQ(report.redo_wraps_replayed, 0u) << "close left wraps to replay";
    EXPECT_EQ(report.undo_wraps_rolled_back, 0u) << "close left wraps to roll back";
    ASSERT_EQ(sw_pool_close(pool), 0) << sw_errormsg();
    read_file(path_, &second);
    int64_t diff = first_difference(first, second);
    ASSERT_EQ(diff, -1) << "reopening changed the file at offset " << diff << " ("
                        << region_of(*reinterpret_cast<const softwrap::PoolHeader*>(first.data()), diff)
                        << ")";

    // Recovering the crashed image straight through gives the same heap as
    // the interrupted-then-resumed recovery.
    if (interrupt) {
      const std::string direct = path_ + ".direct";
      std::filesystem::rename(path_ + ".crashed", direct);
      sw_pool* dp = sw_pool_open(direct.c_str(), &cfg);
      ASSERT_NE(dp, nullptr) << sw_errormsg();
      ASSERT_EQ(sw_pool_close(dp), 0) << sw_errormsg();
      read_file(direct, &straight);
      const auto& h = *reinterpret_cast<const softwrap::PoolHeader*>(second.data());
      ASSERT_EQ(straight.size(), second.size());
      auto meta = h.meta_offset, heap = h.chunk_table_offset;
      EXPECT_EQ(std::memcmp(&straight[meta], &second[meta], 2 * sizeof(uint64_t)), 0)
          << "root differs after interrupted recovery";
      EXPECT_EQ(std::memcmp(&straight[heap], &second[heap], straight.size() - heap), 0)
          << "chunk table or heap differs after interrupted recovery";
      std::remove(direct.c_str());
    }
  }
  // The kills must have landed among wraps, not only before the first.
  RecordProperty("commits", std::to_string(total_commits));
  if (kills > 0) {
    EXPECT_GT(total_commits, kills) << "children committed too few wraps to test anything";
  }
}

std::string random_kill_name(const ::testing::TestParamInfo<RandomKillParam>& info) {
  std::string e = engine_label(info.param.engine);
  std::replace(e.begin(), e.end(), '-', '_');
  return e + "_" + std::to_string(info.param.workers) + (info.param.workers == 1 ? "thread" : "threads") +
         (info.param.wcl ? "_wcl" : "") + (info.param.medium == SW_MEDIUM_MSYNC ? "_msync" : "");
}

INSTANTIATE_TEST_SUITE_P(Engines, RandomKillTest,
                         ::testing::Values(RandomKillParam{SW_ENGINE_SOFTWRAP, 1},
                                           RandomKillParam{SW_ENGINE_SOFTWRAP, 4},
                                           RandomKillParam{SW_ENGINE_SOFTWRAP_LOCAL, 1},
                                           RandomKillParam{SW_ENGINE_SOFTWRAP_LOCAL, 4},
                                           RandomKillParam{SW_ENGINE_UNDO, 1},
                                           RandomKillParam{SW_ENGINE_UNDO, 4},
                                           RandomKillParam{SW_ENGINE_SOFTWRAP, 4, true},
                                           RandomKillParam{SW_ENGINE_SOFTWRAP_LOCAL, 1, true},
                                           RandomKillParam{SW_ENGINE_UNDO, 1, true},
                                           RandomKillParam{SW_ENGINE_SOFTWRAP, 4, false, SW_MEDIUM_MSYNC},
                                           RandomKillParam{SW_ENGINE_UNDO, 1, false, SW_MEDIUM_MSYNC}),
                         random_kill_name);

// ---------------------------------------------------- targeted mid-wrap

constexpr uint64_t kDebited = 200;
constexpr uint64_t kDebit = 10;

class MidWrapKillTest : public KillTestBase, public ::testing::WithParamInterface<sw_engine_kind> {
 protected:
  // Kills a child between the debits and the credits of one wrap; returns
  // the recovered bank.
  BankCheck kill_mid_wrap(sw_recovery_report* report) {
    const sw_engine_kind engine = GetParam();
    BankCheck c;
    create_bank(engine);
    if (HasFatalFailure()) {
      c.problem = "could not create the bank";
      return c;
    }
    uint64_t zero[kMaxWorkers] = {};
    reset_shared(zero);
    pid_t pid = fork();
    if (pid == 0) {
      sw_config cfg = config_for(engine);
      sw_pool* pool = sw_pool_open(path_.c_str(), &cfg);
      if (pool == nullptr) _exit(kExitOpenFailed);
      auto* bank = static_cast<Bank*>(sw_pool_root(pool, 0));
      if (sw_wrap_open(pool) != 0) _exit(kExitWrapFailed);
      for (uint64_t i = 0; i < kDebited; i++) {
        sw_store64(pool, &bank->accounts[i], sw_load64(pool, &bank->accounts[i]) - kDebit);
      }
      shared_->midwrap.store(1);
      raise(SIGKILL);  // the credits below never happen
      for (uint64_t i = 0; i < kDebited; i++) {
        sw_store64(pool, &bank->accounts[kAccounts - 1 - i],
                   sw_load64(pool, &bank->accounts[kAccounts - 1 - i]) + kDebit);
      }
      sw_wrap_close(pool);
      _exit(kExitNotKilled);
    }
    if (pid < 0) {
      c.problem = "fork failed";
      return c;
    }
    int status = reap(pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) || shared_->midwrap.load() != 1) {
      c.problem = describe_status(status, shared_);
      return c;
    }
    sw_config cfg = config_for(engine);
    sw_pool* pool = sw_pool_open(path_.c_str(), &cfg);
    if (pool == nullptr) {
      c.problem = std::string("reopen: ") + sw_errormsg();
      return c;
    }
    sw_pool_recovery_report(pool, report);
    c = check_bank(pool);
    sw_pool_close(pool);
    return c;
  }
};

TEST_P(MidWrapKillTest, AtomicEngineShowsStateBeforeTheWrap) {
  sw_recovery_report report{};
  BankCheck c = kill_mid_wrap(&report);
  ASSERT_EQ(c.problem, "");
  EXPECT_EQ(c.sum, kTotal) << engine_label(GetParam()) << " let half a wrap survive";
  if (GetParam() == SW_ENGINE_UNDO) {
    EXPECT_EQ(report.undo_wraps_rolled_back, 1u);
  }
  EXPECT_EQ(report.redo_wraps_replayed, 0u) << "an uncommitted wrap was replayed";
  EXPECT_EQ(live_allocations(), base_allocations_);
}

INSTANTIATE_TEST_SUITE_P(Engines, MidWrapKillTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                         [](const auto& info) {
                           std::string e = engine_label(info.param);
                           std::replace(e.begin(), e.end(), '-', '_');
                           return e;
                         });

// The negative control: the same kill must break the nonatomic engine, or
// the checker above could be blind.
class NonatomicControlTest : public MidWrapKillTest {};

TEST_P(NonatomicControlTest, MidWrapKillBreaksAtomicity) {
  sw_recovery_report report{};
  BankCheck c = kill_mid_wrap(&report);
  ASSERT_EQ(c.problem, "");
  EXPECT_NE(c.sum, kTotal) << "the checker failed to catch a non-atomic engine";
  EXPECT_EQ(c.sum, kTotal - kDebited * kDebit) << "expected exactly the debits to have landed";
}

INSTANTIATE_TEST_SUITE_P(Nonatomic, NonatomicControlTest, ::testing::Values(SW_ENGINE_NONATOMIC),
                         [](const auto&) { return std::string("nonatomic"); });

}  // namespace
