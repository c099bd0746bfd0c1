// vfs_shm_test.cc — the wal-index layer (vfs_shm.h) on its own: regions,
// SQLite's eight locks within a process (connections, threads) and across
// processes, the dead-man switch, deletion, private memory and fork.  The
// second process is this test binary again (ShmChild.Commands, driven
// line by line through pipes), so the sanitizer stages run it too (labels
// sqlite and concurrency).
#include "vfs_shm.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_program.h"

namespace {

namespace fs = std::filesystem;
using softwrap::sqlite_test::Child;
using softwrap::sqlite_vfs::shm_forget_after_fork;
using softwrap::sqlite_vfs::shm_open;
using softwrap::sqlite_vfs::shm_sweep_unused;
using softwrap::sqlite_vfs::ShmConn;
using softwrap::sqlite_vfs::ShmSpec;

constexpr int kRegion = 32768;  // SQLite's region size
constexpr int kShared = SQLITE_SHM_LOCK | SQLITE_SHM_SHARED;
constexpr int kExcl = SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE;
constexpr int kUnlockShared = SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED;
constexpr int kUnlockExcl = SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE;

std::unique_ptr<ShmConn> open_or_die(const ShmSpec& spec) {
  std::unique_ptr<ShmConn> c;
  std::string err;
  const int rc = shm_open(spec, &c, &err);
  EXPECT_EQ(rc, SQLITE_OK) << err;
  return c;
}

volatile char* region(ShmConn* c, int i, bool extend, int size = kRegion) {
  void volatile* p = nullptr;
  EXPECT_EQ(c->map(i, size, extend, &p), SQLITE_OK) << c->error();
  return static_cast<volatile char*>(p);
}

off_t file_size(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// The child: opens the wal-index $SW_SHM_CHILD_PATH, says "open <rc>",
// then answers one line per command on its standard input:
//   lock OFF N s|x -> rc      unlock OFF N -> rc       map R EXTEND -> rc null|mapped
//   write R OFF V -> rc       read R OFF -> value|null  unmap DELETE -> rc
//   pid -> its process id     mark 1|0 -> rc            marked -> 1|0 (marked_elsewhere)
// and ends at the end of its input.
TEST(ShmChild, Commands) {
  const char* path = std::getenv("SW_SHM_CHILD_PATH");
  if (path == nullptr) GTEST_SKIP() << "the second process of the Shm tests";
  ShmSpec spec;
  spec.path = path;
  std::unique_ptr<ShmConn> c;
  std::string err;
  const int rc = shm_open(spec, &c, &err);
  std::cout << "open " << rc << std::endl;
  if (rc != SQLITE_OK) std::_Exit(1);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string op;
    in >> op;
    if (op == "lock") {
      int off = 0, n = 0;
      std::string kind;
      in >> off >> n >> kind;
      std::cout << c->lock(off, n, kind == "s" ? kShared : kExcl) << std::endl;
    } else if (op == "unlock") {
      int off = 0, n = 0;
      in >> off >> n;
      std::cout << c->lock(off, n, n == 1 ? kUnlockShared : kUnlockExcl) << std::endl;
    } else if (op == "map") {
      int r = 0, extend = 0;
      in >> r >> extend;
      void volatile* p = nullptr;
      const int mrc = c->map(r, kRegion, extend != 0, &p);
      std::cout << mrc << (p ? " mapped" : " null") << std::endl;
    } else if (op == "write" || op == "read") {
      int r = 0, off = 0, v = 0;
      in >> r >> off >> v;
      void volatile* p = nullptr;
      const int mrc = c->map(r, kRegion, false, &p);
      auto* at = static_cast<volatile int32_t*>(p) + off / 4;
      if (op == "write") {
        if (p) *at = v;
        std::cout << (p ? mrc : -1) << std::endl;
      } else if (p) {
        std::cout << *at << std::endl;
      } else {
        std::cout << "null" << std::endl;
      }
    } else if (op == "pid") {
      std::cout << getpid() << std::endl;
    } else if (op == "mark") {
      int on = 0;
      in >> on;
      std::cout << c->mark(on != 0) << std::endl;
    } else if (op == "marked") {
      std::cout << (c->marked_elsewhere() ? 1 : 0) << std::endl;
    } else if (op == "unmap") {
      int del = 0;
      in >> del;
      std::cout << c->unmap(del != 0) << std::endl;
    }
  }
  c.reset();
  std::_Exit(0);
}

class Shm : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/dev/shm/sw_shm_test_" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    spec_.path = dir_ + "/index";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Another process with the index open (or failing to, with `expect_open`'s code).
  std::unique_ptr<Child> peer(int expect_open = SQLITE_OK) {
    setenv("SW_SHM_CHILD_PATH", spec_.path.c_str(), 1);
    auto c = std::make_unique<Child>(std::vector<std::string>{"/proc/self/exe", "--gtest_filter=ShmChild.Commands"});
    unsetenv("SW_SHM_CHILD_PATH");
    EXPECT_TRUE(c->started());
    std::string line;  // past gtest's banner
    do {
      line = c->line();
    } while (!line.empty() && line.rfind("open ", 0) != 0);
    EXPECT_EQ(line, "open " + std::to_string(expect_open));
    return c;
  }
  static std::string ask(Child* c, const std::string& cmd) {
    EXPECT_TRUE(c->send(cmd));
    return c->line();
  }
  // What a separate open file description finds on the lock bytes 120..128
  // (held by anyone but itself): 'R', 'W' or '-' per byte.
  std::string os_locks() {
    const int fd = open(spec_.path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return "no file";
    std::string out;
    for (int b = 120; b <= 128; ++b) {
      struct flock fl {};
      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      fl.l_start = b;
      fl.l_len = 1;
      if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return "getlk failed";
      out += fl.l_type == F_UNLCK ? '-' : fl.l_type == F_RDLCK ? 'R' : 'W';
    }
    close(fd);
    return out;
  }

  std::string dir_;
  ShmSpec spec_;
};

// ------------------------------------------------------------ regions

TEST_F(Shm, MapExtendAndNoExtend) {
  auto a = open_or_die(spec_);
  ASSERT_TRUE(a);
  EXPECT_EQ(file_size(spec_.path), 0);
  EXPECT_EQ(region(a.get(), 0, false), nullptr);  // nobody made it
  volatile char* r0 = region(a.get(), 0, true);
  ASSERT_NE(r0, nullptr);
  EXPECT_EQ(file_size(spec_.path), kRegion);
  for (int i = 0; i < kRegion; i += 512) EXPECT_EQ(r0[i], 0);
  EXPECT_EQ(region(a.get(), 1, false), nullptr);
  volatile char* r2 = region(a.get(), 2, true);
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(file_size(spec_.path), 3 * kRegion);
  EXPECT_NE(region(a.get(), 1, false), nullptr);  // made on the way to region 2
  EXPECT_EQ(region(a.get(), 0, false), r0);       // addresses stay
  // Region 2 is bytes [2*sz, 3*sz) of the file.
  r2[5] = 42;
  const int fd = open(spec_.path.c_str(), O_RDONLY);
  char b = 0;
  ASSERT_EQ(pread(fd, &b, 1, 2 * kRegion + 5), 1);
  close(fd);
  EXPECT_EQ(b, 42);
}

TEST_F(Shm, ConnectionsShareAddressesAndData) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  volatile char* ra = region(a.get(), 1, true);
  volatile char* rb = region(b.get(), 1, false);
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra, rb);
  ra[100] = 7;
  EXPECT_EQ(rb[100], 7);
  // Another name of the same file joins the same node.
  const std::string other = dir_ + "/other";
  ASSERT_EQ(link(spec_.path.c_str(), other.c_str()), 0);
  ShmSpec s2 = spec_;
  s2.path = other;
  auto c = open_or_die(s2);
  EXPECT_EQ(region(c.get(), 1, false), ra);
  EXPECT_EQ(file_size(spec_.path), 2 * kRegion);  // not truncated by the second name
  // And shares its locks.
  ASSERT_EQ(a->lock(2, 1, kShared), SQLITE_OK);
  EXPECT_EQ(c->lock(2, 1, kExcl), SQLITE_BUSY);
}

TEST_F(Shm, SmallRegionsShareAPage) {
  const int page = static_cast<int>(sysconf(_SC_PAGESIZE));
  const int sz = 1024;
  ASSERT_EQ(page % sz, 0);
  auto a = open_or_die(spec_);
  volatile char* r0 = region(a.get(), 0, true, sz);
  ASSERT_NE(r0, nullptr);
  EXPECT_EQ(file_size(spec_.path), page);  // a whole page of regions
  const int per = page / sz;
  for (int i = 1; i < per; ++i) EXPECT_EQ(region(a.get(), i, false, sz), r0 + i * sz);
  EXPECT_EQ(region(a.get(), per, false, sz), nullptr);
  volatile char* r = region(a.get(), per + 1, true, sz);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(file_size(spec_.path), 2 * page);
  r[3] = 9;
  const int fd = open(spec_.path.c_str(), O_RDONLY);
  char b = 0;
  ASSERT_EQ(pread(fd, &b, 1, (per + 1) * sz + 3), 1);
  close(fd);
  EXPECT_EQ(b, 9);
}

// ------------------------------------------------------------ locks in one process

TEST_F(Shm, SharedWithShared) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  EXPECT_EQ(a->lock(3, 1, kShared), SQLITE_OK);
  EXPECT_EQ(b->lock(3, 1, kShared), SQLITE_OK);
  EXPECT_TRUE(a->holds_shared(3));
  EXPECT_TRUE(b->holds_shared(3));
  EXPECT_FALSE(a->holds_exclusive(3));
  EXPECT_EQ(os_locks(), "---R----R");  // one OS read lock for the process, and the dead-man switch
}

TEST_F(Shm, SharedAndExclusiveExcludeEachOther) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  ASSERT_EQ(a->lock(3, 1, kShared), SQLITE_OK);
  EXPECT_EQ(b->lock(3, 1, kExcl), SQLITE_BUSY);
  EXPECT_FALSE(b->holds_exclusive(3));
  ASSERT_EQ(a->lock(3, 1, kUnlockShared), SQLITE_OK);
  EXPECT_FALSE(a->holds_shared(3));
  ASSERT_EQ(b->lock(3, 1, kExcl), SQLITE_OK);
  EXPECT_TRUE(b->holds_exclusive(3));
  EXPECT_EQ(os_locks(), "---W----R");
  EXPECT_EQ(a->lock(3, 1, kShared), SQLITE_BUSY);
  EXPECT_EQ(a->lock(3, 1, kExcl), SQLITE_BUSY);
  EXPECT_FALSE(a->holds_shared(3));
  EXPECT_EQ(b->lock(3, 1, kUnlockExcl), SQLITE_OK);
  EXPECT_EQ(os_locks(), "--------R");
  EXPECT_EQ(a->lock(3, 1, kShared), SQLITE_OK);
}

TEST_F(Shm, ExclusiveRangeIsAllOrNothing) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  auto c = open_or_die(spec_);
  ASSERT_EQ(b->lock(5, 1, kShared), SQLITE_OK);
  EXPECT_EQ(a->lock(3, 5, kExcl), SQLITE_BUSY);  // 3..7, 5 taken
  for (int i = 0; i < SQLITE_SHM_NLOCK; ++i) EXPECT_FALSE(a->holds_exclusive(i)) << i;
  EXPECT_EQ(c->lock(3, 2, kExcl), SQLITE_OK);  // nothing of 3..4 was kept by the failure
  EXPECT_EQ(c->lock(6, 2, kExcl), SQLITE_OK);
  ASSERT_EQ(c->lock(3, 2, kUnlockExcl), SQLITE_OK);
  ASSERT_EQ(c->lock(6, 2, kUnlockExcl), SQLITE_OK);
  ASSERT_EQ(b->lock(5, 1, kUnlockShared), SQLITE_OK);
  ASSERT_EQ(a->lock(3, 5, kExcl), SQLITE_OK);
  for (int i = 3; i < 8; ++i) EXPECT_TRUE(a->holds_exclusive(i)) << i;
  EXPECT_EQ(os_locks(), "---WWWWWR");
  EXPECT_EQ(b->lock(7, 1, kShared), SQLITE_BUSY);
  // Partial unlock of a range taken at once.
  ASSERT_EQ(a->lock(4, 1, kUnlockExcl), SQLITE_OK);
  EXPECT_EQ(os_locks(), "---W-WWWR");
  EXPECT_EQ(b->lock(4, 1, kShared), SQLITE_OK);
}

TEST_F(Shm, UnlockOfWhatIsNotHeldIsOk) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  EXPECT_EQ(a->lock(0, 1, kUnlockShared), SQLITE_OK);
  EXPECT_EQ(a->lock(0, 8, kUnlockExcl), SQLITE_OK);
  ASSERT_EQ(b->lock(1, 1, kShared), SQLITE_OK);
  EXPECT_EQ(a->lock(1, 1, kUnlockShared), SQLITE_OK);  // b's stays
  EXPECT_TRUE(b->holds_shared(1));
  EXPECT_EQ(a->lock(1, 1, kExcl), SQLITE_BUSY);
  // An unlock over a range releases the part held.
  ASSERT_EQ(a->lock(2, 1, kExcl), SQLITE_OK);
  EXPECT_EQ(a->lock(0, 8, kUnlockExcl), SQLITE_OK);
  EXPECT_FALSE(a->holds_exclusive(2));
  EXPECT_EQ(b->lock(2, 1, kExcl), SQLITE_OK);
}

TEST_F(Shm, RelockAfterUnlock) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(a->lock(0, 1, kShared), SQLITE_OK);
    ASSERT_EQ(a->lock(0, 1, kUnlockShared), SQLITE_OK);
    ASSERT_EQ(a->lock(0, 1, kExcl), SQLITE_OK);
    ASSERT_EQ(a->lock(0, 1, kUnlockExcl), SQLITE_OK);
  }
  // Taking a shared lock twice is holding it once.
  ASSERT_EQ(a->lock(1, 1, kShared), SQLITE_OK);
  ASSERT_EQ(a->lock(1, 1, kShared), SQLITE_OK);
  ASSERT_EQ(a->lock(1, 1, kUnlockShared), SQLITE_OK);
  EXPECT_EQ(b->lock(1, 1, kExcl), SQLITE_OK);
  EXPECT_EQ(os_locks(), "-W------R");
}

TEST_F(Shm, LocksAcrossThreads) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  std::thread([&] { EXPECT_EQ(a->lock(4, 1, kExcl), SQLITE_OK); }).join();
  EXPECT_EQ(b->lock(4, 1, kShared), SQLITE_BUSY);
  std::thread([&] { EXPECT_EQ(a->lock(4, 1, kUnlockExcl), SQLITE_OK); }).join();
  EXPECT_EQ(b->lock(4, 1, kShared), SQLITE_OK);
  std::thread([&] { EXPECT_EQ(a->lock(4, 1, kExcl), SQLITE_BUSY); }).join();
}

TEST_F(Shm, UnmapDropsLocksAndEndsTheConnection) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  ASSERT_EQ(a->lock(0, 2, kExcl), SQLITE_OK);
  ASSERT_EQ(a->lock(3, 1, kShared), SQLITE_OK);
  ASSERT_EQ(a->unmap(false), SQLITE_OK);
  EXPECT_FALSE(a->holds_exclusive(0));
  EXPECT_EQ(a->unmap(false), SQLITE_OK);  // again: nothing to do
  EXPECT_EQ(a->lock(5, 1, kShared), SQLITE_IOERR_SHMLOCK);
  void volatile* p = nullptr;
  EXPECT_EQ(a->map(0, kRegion, true, &p), SQLITE_IOERR_SHMMAP);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(b->lock(0, 8, kExcl), SQLITE_OK);
  ASSERT_EQ(b->lock(0, 8, kUnlockExcl), SQLITE_OK);
  EXPECT_EQ(os_locks(), "--------R");
  b.reset();  // the destructor unmaps: the last one closes the file
  EXPECT_EQ(os_locks(), "---------");
  EXPECT_EQ(file_size(spec_.path), 0);  // kept (no delete)
}

// Many threads, each with its own connections, taking and dropping locks
// at random; a model of who holds what checks that no two holders ever
// conflict, and at the end nothing is left locked.
TEST_F(Shm, ThreadsHammerLocks) {
  constexpr int kThreads = 6;
  constexpr int kOps = 3000;
  std::atomic<int> excl[SQLITE_SHM_NLOCK] = {};
  std::atomic<int> shared[SQLITE_SHM_NLOCK] = {};
  std::atomic<int> violations{0}, granted{0}, busy{0};
  std::vector<std::unique_ptr<ShmConn>> conns;
  for (int i = 0; i < 2 * kThreads; ++i) conns.push_back(open_or_die(spec_));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      ShmConn* mine[2] = {conns[2 * t].get(), conns[2 * t + 1].get()};
      unsigned held_s[2] = {0, 0}, held_x[2] = {0, 0};
      for (int op = 0; op < kOps; ++op) {
        const int k = rng() % 2;
        ShmConn* c = mine[k];
        const int off = rng() % SQLITE_SHM_NLOCK;
        const int n = rng() % 3 == 0 ? 1 + rng() % (SQLITE_SHM_NLOCK - off) : 1;
        const unsigned mask = ((1u << n) - 1) << off;
        if ((held_s[k] | held_x[k]) & mask) {  // release what is held there
          for (int i = off; i < off + n; ++i) {
            if (held_x[k] & (1u << i)) excl[i].fetch_sub(1);
            if (held_s[k] & (1u << i)) shared[i].fetch_sub(1);
          }
          const int how = n == 1 && rng() % 2 ? kUnlockShared : kUnlockExcl;  // either kind drops either
          if (c->lock(off, n, how) != SQLITE_OK) violations.fetch_add(1);
          held_s[k] &= ~mask;
          held_x[k] &= ~mask;
          for (int i = off; i < off + n; ++i) {
            if (c->holds_shared(i) || c->holds_exclusive(i)) violations.fetch_add(1);
          }
          continue;
        }
        const bool want_x = n > 1 || rng() % 3 == 0;
        const int rc = c->lock(off, n, want_x ? kExcl : kShared);
        if (rc == SQLITE_BUSY) {
          busy.fetch_add(1);
          continue;
        }
        if (rc != SQLITE_OK) {
          violations.fetch_add(1);
          continue;
        }
        granted.fetch_add(1);
        for (int i = off; i < off + n; ++i) {
          if (want_x) {
            if (excl[i].fetch_add(1) != 0 || shared[i].load() != 0) violations.fetch_add(1);
          } else {
            shared[i].fetch_add(1);
            if (excl[i].load() != 0) violations.fetch_add(1);
          }
        }
        (want_x ? held_x[k] : held_s[k]) |= mask;
      }
      for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < SQLITE_SHM_NLOCK; ++i) {
          if (held_x[k] & (1u << i)) excl[i].fetch_sub(1);
          if (held_s[k] & (1u << i)) shared[i].fetch_sub(1);
        }
        mine[k]->lock(0, SQLITE_SHM_NLOCK, kUnlockExcl);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GT(granted.load(), kThreads * kOps / 10);
  EXPECT_GT(busy.load(), 0);
  EXPECT_EQ(os_locks(), "--------R");
  EXPECT_EQ(conns[0]->lock(0, SQLITE_SHM_NLOCK, kExcl), SQLITE_OK);
}

// ------------------------------------------------------------ across processes

TEST_F(Shm, LocksConflictAcrossProcesses) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  auto p = peer();
  EXPECT_EQ(ask(p.get(), "lock 3 1 s"), "0");
  EXPECT_EQ(a->lock(3, 1, kExcl), SQLITE_BUSY);
  EXPECT_EQ(a->lock(3, 1, kShared), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "lock 0 1 x"), "0");
  EXPECT_EQ(b->lock(0, 1, kShared), SQLITE_BUSY);
  EXPECT_EQ(b->lock(0, 3, kExcl), SQLITE_BUSY);
  EXPECT_FALSE(b->holds_exclusive(1));
  EXPECT_EQ(ask(p.get(), "unlock 0 1"), "0");
  EXPECT_EQ(b->lock(0, 3, kExcl), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "lock 1 1 s"), std::to_string(SQLITE_BUSY));
  EXPECT_EQ(ask(p.get(), "lock 1 2 x"), std::to_string(SQLITE_BUSY));
  // The process's OS lock follows its aggregate: held while any of its
  // connections holds the lock.
  EXPECT_EQ(b->lock(0, 3, kUnlockExcl), SQLITE_OK);
  EXPECT_EQ(b->lock(3, 1, kShared), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "unlock 3 1"), "0");
  EXPECT_EQ(ask(p.get(), "lock 3 1 x"), std::to_string(SQLITE_BUSY));
  EXPECT_EQ(a->lock(3, 1, kUnlockShared), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "lock 3 1 x"), std::to_string(SQLITE_BUSY));  // b still has it
  EXPECT_EQ(b->lock(3, 1, kUnlockShared), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "lock 3 1 x"), "0");
  EXPECT_EQ(a->lock(3, 1, kShared), SQLITE_BUSY);
  std::string rest;
  EXPECT_EQ(p->finish(&rest), 0) << rest;
  EXPECT_EQ(a->lock(3, 1, kShared), SQLITE_OK);  // its end released it
}

// The checkpoint mark: seen by other processes only, held while any
// connection of the process has it set, cleared by mark(false), by unmap
// and by the process's end; it is no lock of SQLite's.
TEST_F(Shm, CheckpointMarkIsSeenByOtherProcessesOnly) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  auto p = peer();
  EXPECT_EQ(ask(p.get(), "marked"), "0");
  ASSERT_EQ(a->mark(true), SQLITE_OK);
  EXPECT_EQ(a->mark(true), SQLITE_OK);  // idempotent
  EXPECT_FALSE(b->marked_elsewhere()) << "the process's own mark";
  EXPECT_EQ(ask(p.get(), "marked"), "1");
  EXPECT_EQ(ask(p.get(), "lock 0 8 x"), "0") << "the mark holds none of SQLite's locks";
  EXPECT_EQ(ask(p.get(), "unlock 0 8"), "0");
  ASSERT_EQ(b->mark(true), SQLITE_OK);
  ASSERT_EQ(a->mark(false), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "marked"), "1") << "b still has it";
  ASSERT_EQ(b->unmap(false), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "marked"), "0") << "unmap clears it";
  EXPECT_EQ(ask(p.get(), "mark 1"), "0");
  EXPECT_TRUE(a->marked_elsewhere());
  EXPECT_EQ(ask(p.get(), "mark 0"), "0");
  EXPECT_FALSE(a->marked_elsewhere());
  EXPECT_EQ(ask(p.get(), "mark 1"), "0");
  std::string rest;
  EXPECT_EQ(p->finish(&rest), 0) << rest;
  EXPECT_FALSE(a->marked_elsewhere()) << "the process's end clears it";
  ShmSpec priv = spec_;
  priv.private_mem = true;
  auto m = open_or_die(priv);
  EXPECT_EQ(m->mark(true), SQLITE_OK);
  EXPECT_FALSE(m->marked_elsewhere());
  EXPECT_EQ(m->mark(false), SQLITE_OK);
}

TEST_F(Shm, RegionsAreSharedAcrossProcesses) {
  auto a = open_or_die(spec_);
  auto* r0 = reinterpret_cast<volatile int32_t*>(region(a.get(), 0, true));
  ASSERT_NE(r0, nullptr);
  r0[125] = 11;
  auto p = peer();
  EXPECT_EQ(ask(p.get(), "map 1 0"), "0 null");
  EXPECT_EQ(ask(p.get(), "read 0 500"), "11");
  EXPECT_EQ(ask(p.get(), "map 1 1"), "0 mapped");
  EXPECT_EQ(ask(p.get(), "write 1 8 22"), "0");
  auto* r1 = reinterpret_cast<volatile int32_t*>(region(a.get(), 1, false));
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1[2], 22);
  r1[3] = 33;
  EXPECT_EQ(ask(p.get(), "read 1 12"), "33");
  std::string rest;
  EXPECT_EQ(p->finish(&rest), 0) << rest;
  EXPECT_EQ(r1[2], 22);
}

TEST_F(Shm, KilledProcessReleasesItsLocks) {
  auto a = open_or_die(spec_);
  auto p = peer();
  ASSERT_EQ(ask(p.get(), "lock 0 8 x"), "0");
  EXPECT_EQ(a->lock(3, 1, kShared), SQLITE_BUSY);
  EXPECT_EQ(a->lock(0, 1, kExcl), SQLITE_BUSY);
  const pid_t pid = std::stoi(ask(p.get(), "pid"));
  ASSERT_EQ(kill(pid, SIGKILL), 0);  // while it holds them (its end of input would let it unlock)
  p.reset();                          // reaped
  EXPECT_EQ(a->lock(0, 8, kExcl), SQLITE_OK);
  EXPECT_EQ(os_locks(), "WWWWWWWWR");
}

TEST_F(Shm, FirstOpenerZeroesStaleContent) {
  {
    std::FILE* f = std::fopen(spec_.path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string junk(2 * kRegion, '\xab');
    ASSERT_EQ(std::fwrite(junk.data(), 1, junk.size(), f), junk.size());
    std::fclose(f);
  }
  auto a = open_or_die(spec_);
  EXPECT_EQ(file_size(spec_.path), 0);
  EXPECT_EQ(region(a.get(), 0, false), nullptr);
  volatile char* r = region(a.get(), 0, true);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[kRegion - 1], 0);
}

TEST_F(Shm, JoinerKeepsLiveContent) {
  auto p = peer();
  EXPECT_EQ(ask(p.get(), "map 0 1"), "0 mapped");
  EXPECT_EQ(ask(p.get(), "write 0 1000 42"), "0");
  {
    auto a = open_or_die(spec_);  // the peer has it open: not stale
    EXPECT_EQ(file_size(spec_.path), kRegion);
    auto* r = reinterpret_cast<volatile int32_t*>(region(a.get(), 0, false));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r[250], 42);
    std::string rest;
    EXPECT_EQ(p->finish(&rest), 0) << rest;
    auto b = open_or_die(spec_);  // joins this process's node: still live
    r = reinterpret_cast<volatile int32_t*>(region(b.get(), 0, false));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r[250], 42);
  }
  EXPECT_EQ(file_size(spec_.path), kRegion);  // closing leaves it
  auto c = open_or_die(spec_);                // alone again: stale
  EXPECT_EQ(file_size(spec_.path), 0);
  EXPECT_EQ(region(c.get(), 0, false), nullptr);
}

// A descriptor of `path` (created if need be) holding the dead-man
// switch's write lock, as an opener resetting the file or a sweeper does;
// -1 if that failed.
int hold_dms(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = 128;
  fl.l_len = 1;
  if (fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// shm_sweep_unused removes only index files nobody has open: one a
// connection left behind (closed without deleting) goes; one this process
// has open, one another process has open and a file of another name stay,
// and their connections keep working.
TEST_F(Shm, SweepRemovesOnlyIndexesNobodyHasOpen) {
  ShmSpec left = spec_, mine = spec_, theirs = spec_;
  left.path = dir_ + "/sw-left.idx";
  mine.path = dir_ + "/sw-mine.idx";
  theirs.path = dir_ + "/sw-theirs.idx";
  spec_ = theirs;  // the peer's
  open_or_die(left)->unmap(false);
  ASSERT_TRUE(fs::exists(left.path));
  auto m = open_or_die(mine);
  auto p = peer();
  const std::string other = dir_ + "/other.idx";
  { std::ofstream(other) << "x"; }
  EXPECT_EQ(shm_sweep_unused(dir_, "sw-", ".idx"), 1);
  EXPECT_FALSE(fs::exists(left.path));
  EXPECT_TRUE(fs::exists(mine.path));
  EXPECT_TRUE(fs::exists(theirs.path));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(m->lock(0, 1, kExcl), SQLITE_OK);
  EXPECT_EQ(ask(p.get(), "lock 0 1 x"), "0");
  auto t = open_or_die(theirs);  // joins the peer's live index
  EXPECT_EQ(t->lock(0, 1, kShared), SQLITE_BUSY);
  std::string rest;
  EXPECT_EQ(p->finish(&rest), 0) << rest;
  EXPECT_EQ(shm_sweep_unused(dir_, "sw-", ".idx"), 0) << "both still open here";
  m.reset();
  t.reset();
  EXPECT_EQ(shm_sweep_unused(dir_, "sw-", ".idx"), 2);
  EXPECT_EQ(shm_sweep_unused("/nonexistent-dir", "sw-", ".idx"), 0);
}

// An opener that waited on the dead-man switch of a file that was then
// swept away (the sweeper held the switch's write lock, unlinked the name
// and closed) does not keep the unlinked file: it opens the name again,
// so a process opening after it finds the same index.
TEST_F(Shm, OpenerOfASweptFileOpensTheNameAgain) {
  const int fd = hold_dms(spec_.path);  // "a sweeper"
  ASSERT_GE(fd, 0);
  std::thread sweeper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    unlink(spec_.path.c_str());
    close(fd);
  });
  std::unique_ptr<ShmConn> c;
  std::string err;
  ASSERT_EQ(shm_open(spec_, &c, &err), SQLITE_OK) << err;
  sweeper.join();
  ASSERT_TRUE(fs::exists(spec_.path));
  auto* r = reinterpret_cast<volatile int32_t*>(region(c.get(), 0, true));
  ASSERT_NE(r, nullptr);
  r[100] = 77;
  auto p = peer();
  EXPECT_EQ(ask(p.get(), "read 0 400"), "77") << "the opener kept an unlinked file";
  std::string rest;
  EXPECT_EQ(p->finish(&rest), 0) << rest;
}

TEST_F(Shm, OpenWaitsBrieflyForAnotherInitializer) {
  const int fd = hold_dms(spec_.path);  // "another opener, truncating"
  ASSERT_GE(fd, 0);
  std::unique_ptr<ShmConn> c;
  std::string err;
  EXPECT_EQ(shm_open(spec_, &c, &err), SQLITE_BUSY);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(err.find(spec_.path), std::string::npos) << err;
  // It finishes (or dies) while the next opener waits.
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    close(fd);
  });
  EXPECT_EQ(shm_open(spec_, &c, &err), SQLITE_OK) << err;
  release.join();
  EXPECT_NE(c, nullptr);
}

TEST_F(Shm, DeleteUnlinksAndTheNextOpenerStartsEmpty) {
  auto a = open_or_die(spec_);
  auto b = open_or_die(spec_);
  volatile char* r = region(a.get(), 0, true);
  ASSERT_NE(r, nullptr);
  r[0] = 5;
  ASSERT_EQ(a->unmap(true), SQLITE_OK);
  EXPECT_TRUE(fs::exists(spec_.path));  // b still has it open
  EXPECT_EQ(region(b.get(), 0, false), r);
  EXPECT_EQ(r[0], 5);
  ASSERT_EQ(b->unmap(true), SQLITE_OK);
  EXPECT_FALSE(fs::exists(spec_.path));
  auto c = open_or_die(spec_);
  EXPECT_EQ(file_size(spec_.path), 0);
  EXPECT_EQ(region(c.get(), 0, false), nullptr);
  volatile char* r2 = region(c.get(), 0, true);
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2[0], 0);
}

TEST_F(Shm, AfterForkTheChildForgetsTheParentsNodes) {
  auto a = open_or_die(spec_);
  ASSERT_EQ(a->lock(2, 1, kExcl), SQLITE_OK);
  volatile char* r = region(a.get(), 0, true);
  ASSERT_NE(r, nullptr);
  r[0] = 3;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Exit codes: which check failed.
    shm_forget_after_fork();
    if (a->lock(4, 1, kShared) != SQLITE_IOERR_SHMLOCK) _exit(10);  // inherited: dead
    std::unique_ptr<ShmConn> c;
    std::string err;
    if (shm_open(spec_, &c, &err) != SQLITE_OK) _exit(11);  // a new node of its own
    if (c->lock(2, 1, kShared) != SQLITE_BUSY) _exit(12);  // the parent's lock survived the forgetting
    if (c->lock(3, 1, kExcl) != SQLITE_OK) _exit(13);
    void volatile* p = nullptr;
    if (c->map(0, kRegion, false, &p) != SQLITE_OK || p == nullptr) _exit(14);  // not zeroed: the parent is there
    if (static_cast<volatile char*>(p)[0] != 3) _exit(15);
    c.reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(a->holds_exclusive(2));
  EXPECT_EQ(os_locks(), "--W-----R");  // the child's close took none of the parent's
  EXPECT_EQ(a->lock(3, 1, kExcl), SQLITE_OK);
  EXPECT_EQ(r[0], 3);
}

// ------------------------------------------------------------ private memory, errors

TEST_F(Shm, PrivateMemory) {
  ShmSpec spec = spec_;
  spec.private_mem = true;
  {
    auto a = open_or_die(spec);
    auto b = open_or_die(spec);
    EXPECT_FALSE(fs::exists(spec.path));
    EXPECT_EQ(region(a.get(), 0, false), nullptr);
    volatile char* r = region(a.get(), 1, true);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r) % static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), 0u);
    EXPECT_EQ(region(b.get(), 1, false), r);
    EXPECT_NE(region(b.get(), 0, false), nullptr);
    r[10] = 1;
    EXPECT_EQ(region(b.get(), 1, false)[10], 1);
    ASSERT_EQ(a->lock(0, 1, kShared), SQLITE_OK);
    EXPECT_EQ(b->lock(0, 1, kExcl), SQLITE_BUSY);
    EXPECT_EQ(b->lock(0, 1, kShared), SQLITE_OK);
    ASSERT_EQ(b->lock(1, 7, kExcl), SQLITE_OK);
    EXPECT_EQ(a->lock(7, 1, kShared), SQLITE_BUSY);
    // The same path as a file is another index.
    auto f = open_or_die(spec_);
    EXPECT_EQ(f->lock(1, 7, kExcl), SQLITE_OK);
    EXPECT_EQ(region(f.get(), 1, false), nullptr);
  }
  auto c = open_or_die(spec);  // a new node: empty
  EXPECT_EQ(region(c.get(), 1, false), nullptr);
  volatile char* r = region(c.get(), 1, true);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r[10], 0);
}

TEST_F(Shm, OpenErrorsNameThePathAndTheReason) {
  std::unique_ptr<ShmConn> c;
  std::string err;
  ShmSpec spec;
  spec.path = dir_ + "/no/such/dir/index";
  EXPECT_EQ(shm_open(spec, &c, &err), SQLITE_CANTOPEN);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(err.find(spec.path), std::string::npos) << err;
  EXPECT_NE(err.find(std::strerror(ENOENT)), std::string::npos) << err;
  // A symbolic link is not followed.
  spec.path = dir_ + "/link";
  ASSERT_EQ(symlink(spec_.path.c_str(), spec.path.c_str()), 0);
  EXPECT_EQ(shm_open(spec, &c, &err), SQLITE_CANTOPEN);
  EXPECT_NE(err.find(spec.path), std::string::npos) << err;
  // A file this user may only read (root may write anything).
  if (geteuid() != 0) {
    spec.path = dir_ + "/readonly";
    const int fd = open(spec.path.c_str(), O_CREAT | O_WRONLY, 0444);
    ASSERT_GE(fd, 0);
    close(fd);
    EXPECT_EQ(shm_open(spec, &c, &err), SQLITE_CANTOPEN);
    EXPECT_NE(err.find(std::strerror(EACCES)), std::string::npos) << err;
  }
}

TEST_F(Shm, NewFileGetsExactlyTheMode) {
  const mode_t old = umask(077);
  ShmSpec spec = spec_;
  spec.mode = 0664;
  auto a = open_or_die(spec);
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(spec.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0664u);
}

}  // namespace
