// share_test.cc — SW_CONFIG_SHARED on every engine: two handles (in this
// process, and in forked processes) on one pool; write access passes
// between them with every commit home before it does; a handle that takes
// it sees the other's growth and allocations (never hands out a block the
// other allocated); a process that dies holding it is recovered by the
// next one, which reads no half-applied wrap; exclusive and shared opens
// refuse each other; a forked child cannot use its parent's handle; locks
// a program elides while alone are taken before another handle gets in.
// Labels api, recovery and concurrency: the sanitizer stages run it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.h"

namespace {

constexpr int kWords = 256;

struct Root {
  uint64_t words[kWords];
  uint64_t blocks[64];  // offsets of blocks each handle allocated
};

int write_root(sw_pool* p, Root* r, uint64_t v) {
  if (int rc = sw_wrap_open(p)) return rc;
  for (int i = 0; i < kWords; ++i) sw_store64(p, &r->words[i], v + i);
  return sw_wrap_close(p);
}

// The children's parts run in a fresh image of this program (a forked
// child of a process with threads may not start threads of its own under
// the thread sanitizer): the ShareChild.Role test below runs the role the
// environment names and exits.
[[noreturn]] void exec_role(const char* role, const std::string& path, sw_engine_kind engine, int up, int down) {
  setenv("SW_SHARE_ROLE", role, 1);
  setenv("SW_SHARE_POOL", path.c_str(), 1);
  setenv("SW_SHARE_ENGINE", std::to_string(engine).c_str(), 1);
  setenv("SW_SHARE_UP", std::to_string(up).c_str(), 1);
  setenv("SW_SHARE_DOWN", std::to_string(down).c_str(), 1);
  char filter[] = "--gtest_filter=ShareChild.Role";
  char self[] = "/proc/self/exe";
  char* argv[] = {self, filter, nullptr};
  execv(self, argv);
  _exit(99);
}

// "died": opens the pool, says so on `up`, waits for `down`, then holds
// write access while another thread commits wrap after wrap (each
// reported on `up`) and leaves the 50th's successor half done (0 on
// `up`) for the parent to kill.  Its commits stay in its log and DRAM
// (inline retirement, tables switched seldom).
[[noreturn]] void died_role(const char* path, sw_engine_kind engine, int up, int down) {
  sw_config c{};
  c.engine = engine;
  c.medium = SW_MEDIUM_X86;
  c.flags = SW_CONFIG_SHARED | SW_CONFIG_NO_RETIRE_THREAD;
  c.retire_divisor = 2;  // 256-word wraps: tables go home only every 32 wraps
  sw_pool* p = sw_pool_open(path, &c);
  if (p == nullptr) {
    std::fprintf(stderr, "child: %s\n", sw_errormsg());
    _exit(2);
  }
  auto* r = static_cast<Root*>(sw_pool_root(p, 0));
  // A session of its own first, given up (the parent has the pool open).
  if (write_root(p, r, 1) != 0) _exit(9);
  uint64_t go = 1;
  if (write(up, &go, sizeof go) != sizeof go || read(down, &go, sizeof go) != sizeof go) _exit(7);
  if (sw_pool_write_begin(p, -1) != 0) _exit(3);
  // Another thread writes: its context takes the next lane, so its frames
  // do not overwrite the parent's in lane 0.
  std::thread([&] {
    for (uint64_t v = 1;; ++v) {
      if (write_root(p, r, v * 1000) != 0) _exit(4);
      const uint64_t done = v;
      if (write(up, &done, sizeof done) != sizeof done) _exit(5);
      if (v == 50) {
        // Half of a wrap in flight when the kill comes.
        sw_wrap_open(p);
        for (int i = 0; i < kWords / 2; ++i) sw_store64(p, &r->words[i], 7);
        const uint64_t half = 0;
        if (write(up, &half, sizeof half) != sizeof half) _exit(6);
        pause();
      }
    }
  }).join();
  _exit(8);
}

// "alloc": opens the pool, takes write access and keeps it, allocates
// kAllocBlocks extents in one wrap (their offsets in the root's blocks,
// committed), reports each offset on `up`, then waits to be killed: it
// dies holding write access, so it never gives write access up (the
// clean give-up is what raises heap_epoch for the heap changes it made).
constexpr int kAllocBlocks = 4;
constexpr size_t kAllocBytes = 256u << 10;  // one chunk each
[[noreturn]] void alloc_role(const char* path, sw_engine_kind engine, int up) {
  sw_config c{};
  c.engine = engine;
  c.medium = SW_MEDIUM_X86;
  c.flags = SW_CONFIG_SHARED;
  sw_pool* p = sw_pool_open(path, &c);
  if (p == nullptr) _exit(2);
  auto* r = static_cast<Root*>(sw_pool_root(p, 0));
  if (sw_pool_write_begin(p, -1) != 0) _exit(3);
  if (sw_wrap_open(p) != 0) _exit(4);
  uint64_t offs[kAllocBlocks];
  for (int i = 0; i < kAllocBlocks; ++i) {
    void* b = sw_pmalloc(p, kAllocBytes);
    if (b == nullptr) _exit(5);
    offs[i] = sw_pool_offset(p, b);
    sw_store64(p, &r->blocks[i], offs[i]);
  }
  if (sw_wrap_close(p) != 0) _exit(6);
  for (uint64_t o : offs) {
    if (write(up, &o, sizeof o) != sizeof o) _exit(7);
  }
  for (;;) pause();
}

// "own": a handle of its own writes 77 + i and closes.
[[noreturn]] void own_role(const char* path, sw_engine_kind engine) {
  sw_config c{};
  c.engine = engine;
  c.medium = SW_MEDIUM_X86;
  c.flags = SW_CONFIG_SHARED;
  sw_pool* p = sw_pool_open(path, &c);
  if (p == nullptr) _exit(32);
  if (write_root(p, static_cast<Root*>(sw_pool_root(p, 0)), 77) != 0) _exit(64);
  _exit(sw_pool_close(p) != 0 ? 128 : 0);
}

TEST(ShareChild, Role) {
  const char* role = std::getenv("SW_SHARE_ROLE");
  if (role == nullptr) GTEST_SKIP() << "the part of a child process of the Shared tests";
  const char* path = std::getenv("SW_SHARE_POOL");
  const auto engine = static_cast<sw_engine_kind>(std::atoi(std::getenv("SW_SHARE_ENGINE")));
  if (std::strcmp(role, "died") == 0) {
    died_role(path, engine, std::atoi(std::getenv("SW_SHARE_UP")), std::atoi(std::getenv("SW_SHARE_DOWN")));
  }
  if (std::strcmp(role, "alloc") == 0) alloc_role(path, engine, std::atoi(std::getenv("SW_SHARE_UP")));
  own_role(path, engine);
}

class Shared : public ::testing::TestWithParam<sw_engine_kind> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_share_" + std::to_string(getpid()) + "_" + std::to_string(GetParam()) + ".pool";
    unlink(path_.c_str());
  }
  void TearDown() override { unlink(path_.c_str()); }
  sw_config cfg(uint32_t flags = SW_CONFIG_SHARED) const {
    sw_config c{};
    c.engine = GetParam();
    c.medium = SW_MEDIUM_X86;
    c.flags = flags;
    c.max_size = SW_POOL_SIZE_UNLIMITED;
    return c;
  }
  sw_pool* create() {
    sw_config c = cfg();
    sw_pool* p = sw_pool_create(path_.c_str(), 16u << 20, &c);
    EXPECT_NE(p, nullptr) << sw_errormsg();
    return p;
  }
  sw_pool* open(uint32_t flags = SW_CONFIG_SHARED) {
    sw_config c = cfg(flags);
    return sw_pool_open(path_.c_str(), &c);
  }
  // Every word of the root reads v + i.
  static void expect_words(sw_pool* p, Root* r, uint64_t v) {
    for (int i = 0; i < kWords; ++i) ASSERT_EQ(sw_load64(p, &r->words[i]), v + i) << "word " << i;
  }
  static int write_words(sw_pool* p, Root* r, uint64_t v) { return write_root(p, r, v); }
  // The parent opens, a forked child opens too and runs died_role; the
  // parent writes 100 wraps meanwhile (parent_writes) or only catches up
  // with the child's first session; the child is killed holding write
  // access with 50 commits only in its log, and the parent's refresh
  // recovers them.
  void died_writer(bool parent_writes) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  auto* ra = static_cast<Root*>(sw_pool_root(a, sizeof(Root)));
  ASSERT_EQ(write_words(a, ra, 0), 0);
  int up[2], down[2];
  ASSERT_EQ(pipe(up), 0);
  ASSERT_EQ(pipe(down), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(up[0]);
    close(down[1]);
    sw_pool_close(a);  // the parent's handle: forgotten, not touched
    exec_role("died", path_, GetParam(), up[1], down[0]);
  }
  close(up[1]);
  close(down[0]);
  uint64_t v = 0;
  ASSERT_EQ(read(up[0], &v, sizeof v), static_cast<ssize_t>(sizeof v));
  if (parent_writes) {
    for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(write_words(a, ra, 100 + i), 0) << sw_errormsg();
  } else {
    ASSERT_EQ(sw_pool_refresh(a), 1) << sw_errormsg();  // the child's first session: the parent is current
    expect_words(a, ra, 1);
  }
  ASSERT_EQ(write(down[1], &v, sizeof v), static_cast<ssize_t>(sizeof v));
  uint64_t last = 0;
  while (read(up[0], &v, sizeof v) == sizeof v && v != 0) last = v;
  ASSERT_EQ(last, 50u);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(up[0]);
  close(down[1]);
  ASSERT_EQ(sw_pool_refresh(a), 1) << sw_errormsg();
  expect_words(a, ra, 50000);
  ASSERT_EQ(write_words(a, ra, 90000), 0) << sw_errormsg();
  expect_words(a, ra, 90000);
  ASSERT_EQ(sw_pool_close(a), 0);
  sw_pool* x = open(0);
  ASSERT_NE(x, nullptr) << sw_errormsg();
  expect_words(x, static_cast<Root*>(sw_pool_root(x, 0)), 90000);
  ASSERT_EQ(sw_pool_close(x), 0);
}

  // ADeadHoldersAllocations...: below.
  void dead_holders_allocations(bool recover_by_open);
  std::string path_;
};

TEST_P(Shared, WriteAccessPassesWithEveryCommitHome) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  auto* ra = static_cast<Root*>(sw_pool_root(a, sizeof(Root)));
  ASSERT_NE(ra, nullptr) << sw_errormsg();
  {
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(write_words(a, ra, 1000), 0) << sw_errormsg();
    // Alone: it keeps write access (for 100 ms without a wrap: then it
    // gives it up, idle — a slow sanitizer run may get there first).
    if (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) {
      EXPECT_EQ(sw_pool_write_held(a), 1);
    }
  }

  // The second handle's open waits for the first to give write access up
  // (its watcher sees company), which makes every commit home first.
  sw_pool* b = open();
  ASSERT_NE(b, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_write_held(a), 0);
  EXPECT_EQ(sw_pool_write_held(b), 0);
  auto* rb = static_cast<Root*>(sw_pool_root(b, 0));
  ASSERT_NE(rb, nullptr) << sw_errormsg();
  expect_words(b, rb, 1000);

  for (uint64_t round = 0; round < 20; ++round) {
    sw_pool* w = round % 2 ? a : b;
    sw_pool* r = round % 2 ? b : a;
    Root* rw = round % 2 ? ra : rb;
    Root* rr = round % 2 ? rb : ra;
    ASSERT_GE(sw_pool_refresh(w), 0) << sw_errormsg();
    ASSERT_EQ(write_words(w, rw, 2000 + round * 1000), 0) << sw_errormsg();
    // Not alone: the wrap's end gave write access up, its values home.
    EXPECT_EQ(sw_pool_write_held(w), 0);
    EXPECT_EQ(sw_pool_refresh(r), 1) << sw_errormsg();
    expect_words(r, rr, 2000 + round * 1000);
    EXPECT_EQ(sw_pool_refresh(r), 0);  // nothing new since
  }

  // The same writer twice in a row: the reader learns of each write.
  for (uint64_t v : {30000, 40000}) {
    ASSERT_EQ(write_words(a, ra, v), 0) << sw_errormsg();
    EXPECT_EQ(sw_pool_refresh(b), 1) << "the reader did not learn of the write of " << v;
    expect_words(b, rb, v);
  }

  // An explicit session holds write access across wraps; the other
  // handle's reads see the state before the session until it ends.
  ASSERT_EQ(sw_pool_write_begin(a, 0), 0) << sw_errormsg();
  ASSERT_EQ(write_words(a, ra, 50000), 0);
  ASSERT_EQ(write_words(a, ra, 60000), 0);
  EXPECT_EQ(sw_pool_write_held(a), 1);
  EXPECT_EQ(sw_pool_write_begin(b, 0), SW_EBUSY);
  ASSERT_EQ(sw_pool_write_end(a), 0) << sw_errormsg();
  EXPECT_EQ(sw_pool_write_held(a), 0);
  ASSERT_GE(sw_pool_refresh(b), 0) << sw_errormsg();
  expect_words(b, rb, 60000);
  EXPECT_EQ(sw_pool_write_end(a), SW_EINVAL);  // no session open

  ASSERT_EQ(sw_pool_close(b), 0) << sw_errormsg();
  // Alone again: the next wrap keeps write access, until it is idle.
  {
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(write_words(a, ra, 70000), 0);
    if (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) {
      EXPECT_EQ(sw_pool_write_held(a), 1);
    }
  }
  // Idle for a while: given up (an idle handle polls nothing).
  for (int i = 0; i < 200 && sw_pool_write_held(a) == 1; ++i) usleep(5000);
  EXPECT_EQ(sw_pool_write_held(a), 0);
  expect_words(a, ra, 70000);
  ASSERT_EQ(sw_pool_close(a), 0) << sw_errormsg();

  sw_config c = cfg(0);
  sw_pool* x = sw_pool_open(path_.c_str(), &c);  // exclusive, after both closed
  ASSERT_NE(x, nullptr) << sw_errormsg();
  auto* rx = static_cast<Root*>(sw_pool_root(x, 0));
  expect_words(x, rx, 70000);
  EXPECT_EQ(sw_pool_write_held(x), 1);
  ASSERT_EQ(sw_pool_close(x), 0);
}

TEST_P(Shared, AllocationsAndGrowthOfTheOtherHandleAreSeen) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  auto* ra = static_cast<Root*>(sw_pool_root(a, sizeof(Root)));
  ASSERT_NE(ra, nullptr);
  sw_pool* b = open();
  ASSERT_NE(b, nullptr) << sw_errormsg();
  auto* rb = static_cast<Root*>(sw_pool_root(b, 0));
  const size_t size0 = sw_pool_size(a);
  // Each handle in turn allocates blocks and fills them with its mark;
  // the pool grows (16 MiB pool, 32 x 1 MiB blocks).  No block is handed
  // out twice, and every block keeps its mark.
  std::set<uint64_t> seen;
  for (int i = 0; i < 32; ++i) {
    sw_pool* p = i % 2 ? b : a;
    Root* r = i % 2 ? rb : ra;
    ASSERT_GE(sw_pool_refresh(p), 0) << sw_errormsg();
    ASSERT_EQ(sw_wrap_open(p), 0) << sw_errormsg();
    void* blk = sw_pmalloc(p, 1u << 20);
    ASSERT_NE(blk, nullptr) << sw_errormsg();
    const uint64_t off = sw_pool_offset(p, blk);
    EXPECT_TRUE(seen.insert(off).second) << "block at " << off << " handed out twice";
    sw_memset(p, blk, 'a' + i % 26, 1u << 20);
    sw_store64(p, &r->blocks[i], off);
    ASSERT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
  }
  EXPECT_GT(sw_pool_size(a), size0);
  for (sw_pool* p : {a, b}) {
    ASSERT_GE(sw_pool_refresh(p), 0) << sw_errormsg();
    EXPECT_EQ(sw_pool_size(p), sw_pool_size(a));
    Root* r = p == a ? ra : rb;
    for (int i = 0; i < 32; ++i) {
      const uint64_t off = sw_load64(p, &r->blocks[i]);
      auto* blk = static_cast<const unsigned char*>(sw_pool_ptr(p, off));
      ASSERT_NE(blk, nullptr);
      unsigned char buf[4096];
      for (size_t o = 0; o < (1u << 20); o += sizeof buf) {
        ASSERT_EQ(sw_read(p, buf, blk + o, sizeof buf), 0);
        for (unsigned char ch : buf) ASSERT_EQ(ch, 'a' + i % 26) << "block " << i << " offset " << o;
      }
    }
  }
  ASSERT_EQ(sw_pool_close(a), 0);
  ASSERT_EQ(sw_pool_close(b), 0);
  sw_pool* x = open(0);  // exclusive: the allocator's scan at open validates the heap
  ASSERT_NE(x, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_pool_close(x), 0);
}

TEST_P(Shared, ExclusiveAndSharedOpensRefuseEachOther) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(open(0), nullptr);
  EXPECT_EQ(sw_errno(), SW_EBUSY);
  EXPECT_NE(std::strstr(sw_errormsg(), "open in another process"), nullptr) << sw_errormsg();
  ASSERT_EQ(sw_pool_close(a), 0);
  sw_pool* x = open(0);
  ASSERT_NE(x, nullptr) << sw_errormsg();
  EXPECT_EQ(open(), nullptr);
  EXPECT_EQ(sw_errno(), SW_EBUSY);
  EXPECT_NE(std::strstr(sw_errormsg(), "without SW_CONFIG_SHARED"), nullptr) << sw_errormsg();
  // Exclusive handles: the write-access calls are no-ops.
  EXPECT_EQ(sw_pool_write_begin(x, 0), 0);
  EXPECT_EQ(sw_pool_write_end(x), 0);
  EXPECT_EQ(sw_pool_refresh(x), 0);
  ASSERT_EQ(sw_pool_close(x), 0);
}

// A process killed while it holds write access, with commits only in its
// log and DRAM: the survivor's refresh recovers them (all wraps the child
// reported committed, none half), and the pool stays usable by both.  The
// child opened the pool before the parent's last 100 commits, so its
// commits are numbered above theirs only if taking write access brought
// its commit order up to the pool (Engine::resync): recovery replays only
// frames above the durable watermark.
TEST_P(Shared, AWriterThatDiedIsRecoveredByTheNextHandle) { died_writer(true); }

// The child's last session followed its own first one with nobody writing
// in between (so taking write access did not raise the epoch): the reader
// still learns that recovering it changed the pool.
TEST_P(Shared, AReaderLearnsOfADeadWritersCommitsAfterItsOwnSession) { died_writer(false); }

// A holder that dies after committing allocations never raises heap_epoch
// (a clean give-up does), and the handle that recovers it (here a reader's
// refresh, in the VFS also an open, or a reader's read in WAL mode)
// rebuilds only its own allocator.  Another handle whose allocator state
// predates the dead holder's allocations, and whose heap_epoch still
// matches, must rebuild its state too when it next takes write access:
// else it hands out the chunks the dead holder allocated again (found by
// sw_sqlite_mp_kill --journal wal: a -wal file whose second block was its
// first, and a checkpoint that copied torn frames into the database).
void Shared::dead_holders_allocations(bool recover_by_open) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  auto* ra = static_cast<Root*>(sw_pool_root(a, sizeof(Root)));
  ASSERT_NE(ra, nullptr);
  sw_pool* b = open();
  ASSERT_NE(b, nullptr) << sw_errormsg();
  auto* rb = static_cast<Root*>(sw_pool_root(b, 0));
  // a allocates and frees (its heap change raises heap_epoch; its own
  // state then matches it), so both handles are current.
  ASSERT_EQ(sw_wrap_open(a), 0) << sw_errormsg();
  void* tmp = sw_pmalloc(a, kAllocBytes);
  ASSERT_NE(tmp, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_wrap_close(a), 0) << sw_errormsg();
  ASSERT_EQ(sw_wrap_open(a), 0) << sw_errormsg();
  ASSERT_EQ(sw_pfree(a, tmp), 0) << sw_errormsg();
  ASSERT_EQ(sw_wrap_close(a), 0) << sw_errormsg();
  ASSERT_GE(sw_pool_refresh(b), 0) << sw_errormsg();
  int up[2];
  ASSERT_EQ(pipe(up), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(up[0]);
    sw_pool_close(a);  // the parent's handles: forgotten, not touched
    sw_pool_close(b);
    exec_role("alloc", path_, GetParam(), up[1], -1);
  }
  close(up[1]);
  std::set<uint64_t> dead_blocks;
  for (int i = 0; i < kAllocBlocks; ++i) {
    uint64_t o = 0;
    ASSERT_EQ(read(up[0], &o, sizeof o), static_cast<ssize_t>(sizeof o)) << "the child failed";
    dead_blocks.insert(o);
  }
  close(up[0]);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // b recovers the dead holder (its commit: the blocks are allocated), or
  // a new handle's open does.
  sw_pool* c = nullptr;
  if (recover_by_open) {
    c = open();
    ASSERT_NE(c, nullptr) << sw_errormsg();
    auto* rc = static_cast<Root*>(sw_pool_root(c, 0));
    for (int i = 0; i < kAllocBlocks; ++i) EXPECT_EQ(dead_blocks.count(sw_load64(c, &rc->blocks[i])), 1u) << i;
  }
  ASSERT_EQ(sw_pool_refresh(b), 1) << sw_errormsg();
  for (int i = 0; i < kAllocBlocks; ++i) EXPECT_EQ(dead_blocks.count(sw_load64(b, &rb->blocks[i])), 1u) << i;
  // a allocates as much again: none of it may be the dead holder's.
  ASSERT_EQ(sw_wrap_open(a), 0) << sw_errormsg();
  for (int i = 0; i < kAllocBlocks; ++i) {
    void* blk = sw_pmalloc(a, kAllocBytes);
    ASSERT_NE(blk, nullptr) << sw_errormsg();
    const uint64_t off = sw_pool_offset(a, blk);
    EXPECT_EQ(dead_blocks.count(off), 0u) << "block at " << off << " of the dead holder handed out again";
    sw_store64(a, &ra->blocks[kAllocBlocks + i], off);
  }
  ASSERT_EQ(sw_wrap_close(a), 0) << sw_errormsg();
  ASSERT_EQ(sw_pool_close(a), 0);
  ASSERT_EQ(sw_pool_close(b), 0);
  if (c != nullptr) {
    ASSERT_EQ(sw_pool_close(c), 0);
  }
}

TEST_P(Shared, ADeadHoldersAllocationsAreNeverHandedOutAgain) { dead_holders_allocations(false); }
TEST_P(Shared, ADeadHoldersAllocationsRecoveredByAnOpenAreNeverHandedOutAgain) { dead_holders_allocations(true); }

TEST_P(Shared, AForkedChildCannotUseItsParentsHandle) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  auto* ra = static_cast<Root*>(sw_pool_root(a, sizeof(Root)));
  ASSERT_EQ(write_words(a, ra, 5), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int bad = 0;
    if (sw_wrap_open(a) != SW_EINVAL) bad |= 1;
    if (std::strstr(sw_errormsg(), "forked") == nullptr) bad |= 2;
    if (sw_pool_write_begin(a, 0) != SW_EINVAL) bad |= 4;
    if (sw_pool_write_held(a) != 0) bad |= 8;
    if (sw_pool_close(a) != 0) bad |= 16;
    if (bad != 0) _exit(bad);
    // Its own handle works (the parent is alone and gives write access up).
    exec_role("own", path_, GetParam(), -1, -1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_EQ(sw_pool_refresh(a), 1);
  expect_words(a, ra, 77);
  ASSERT_EQ(sw_pool_close(a), 0);
}

// Threads of two handles write and read in turns under a lock of the
// test's (the exclusion the header asks of readers and writers).
TEST_P(Shared, ThreadsOfTwoHandlesTakeTurns) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  auto* ra = static_cast<Root*>(sw_pool_root(a, sizeof(Root)));
  ASSERT_EQ(write_words(a, ra, 0), 0);
  sw_pool* b = open();
  ASSERT_NE(b, nullptr) << sw_errormsg();
  auto* rb = static_cast<Root*>(sw_pool_root(b, 0));
  std::mutex mu;
  uint64_t latest = 0;
  std::atomic<bool> failed{false};
  auto worker = [&](sw_pool* p, Root* r, int id) {
    for (int i = 0; i < 100 && !failed; ++i) {
      std::lock_guard<std::mutex> g(mu);
      if (sw_pool_refresh(p) < 0) failed = true;
      for (int w = 0; w < kWords; ++w) {
        if (sw_load64(p, &r->words[w]) != latest + w) failed = true;
      }
      const uint64_t v = (static_cast<uint64_t>(id) << 32) + static_cast<uint64_t>(i) * 1000;
      if (write_words(p, r, v) != 0) failed = true;
      latest = v;
    }
  };
  std::thread t1(worker, a, ra, 1), t2(worker, b, rb, 2), t3(worker, a, ra, 3);
  t1.join();
  t2.join();
  t3.join();
  EXPECT_FALSE(failed);
  ASSERT_EQ(sw_pool_close(a), 0);
  ASSERT_EQ(sw_pool_close(b), 0);
}

// Locks of the program's own, elided while alone (sw_pool_if_alone): the
// hook takes them for real before another handle gets in (its open waits
// for write access), after idling, and at close; a handle with company is
// never told it is alone; a hook that fails keeps write access.
struct AloneLocks {
  int fd = -1;                  // the program's lock descriptor
  std::atomic<bool> elided{false};
  std::atomic<int> hooks{0};
  std::atomic<bool> fail{false};
};
void alone_elide(void* arg) { static_cast<AloneLocks*>(arg)->elided = true; }
int alone_take(void* arg) {
  auto* l = static_cast<AloneLocks*>(arg);
  l->hooks++;
  if (l->fail) return -1;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = SW_APP_LOCK_BASE;
  fl.l_len = 1;
  if (fcntl(l->fd, F_OFD_SETLK, &fl) != 0) return -1;
  l->elided = false;
  return 0;
}
// Whether a descriptor other than the program's sees its lock byte taken.
bool app_byte_locked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = SW_APP_LOCK_BASE;
  fl.l_len = 1;
  const bool locked = fd >= 0 && fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  if (fd >= 0) close(fd);
  return locked;
}

TEST_P(Shared, ElidedLocksAreTakenBeforeWriteAccessGoes) {
  sw_pool* a = create();
  ASSERT_NE(a, nullptr);
  auto* ra = static_cast<Root*>(sw_pool_root(a, sizeof(Root)));
  AloneLocks l;
  l.fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(l.fd, 0);
  ASSERT_EQ(sw_pool_set_alone_hook(a, alone_take, &l), 0);
  EXPECT_EQ(sw_pool_if_alone(a, nullptr, &l), SW_EINVAL);

  // Alone, holding write access (the wrap just committed kept it): the
  // program is told so, and skips its lock.
  ASSERT_EQ(write_words(a, ra, 0), 0);
  ASSERT_EQ(sw_pool_if_alone(a, alone_elide, &l), 1);
  EXPECT_TRUE(l.elided);
  EXPECT_FALSE(app_byte_locked(path_));
  // Another handle opens (this process, its own descriptor: to the locks,
  // another process): by the time its open returns, the hook has run.
  sw_pool* b = open();
  ASSERT_NE(b, nullptr) << sw_errormsg();
  EXPECT_EQ(l.hooks, 1);
  EXPECT_FALSE(l.elided);
  EXPECT_TRUE(app_byte_locked(path_));
  // With company, nobody is alone (nor takes write access to find out).
  EXPECT_EQ(sw_pool_if_alone(a, alone_elide, &l), 0);
  EXPECT_EQ(sw_pool_if_alone(b, alone_elide, &l), 0);
  EXPECT_EQ(sw_pool_write_held(a), 0);
  EXPECT_EQ(sw_pool_write_held(b), 0);
  ASSERT_EQ(sw_pool_write_begin(a, -1), 0);  // holding write access is not enough
  EXPECT_EQ(sw_pool_if_alone(a, alone_elide, &l), 0);
  ASSERT_EQ(write_words(a, ra, 100), 0);
  ASSERT_EQ(sw_pool_write_end(a), 0);
  EXPECT_FALSE(l.elided);
  EXPECT_EQ(l.hooks, 1);
  ASSERT_EQ(sw_pool_close(b), 0);

  // Alone again once it takes write access anew; the program's lock
  // released meanwhile.  Idle for 100 ms, the handle gives write access
  // up, the hook first.
  struct flock fl {};
  fl.l_type = F_UNLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = SW_APP_LOCK_BASE;
  fl.l_len = 1;
  ASSERT_EQ(fcntl(l.fd, F_OFD_SETLK, &fl), 0);
  ASSERT_EQ(write_words(a, ra, 200), 0);
  ASSERT_EQ(sw_pool_if_alone(a, alone_elide, &l), 1);
  for (int i = 0; i < 2000 && sw_pool_write_held(a); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(sw_pool_write_held(a), 0);
  EXPECT_EQ(l.hooks, 2);
  EXPECT_TRUE(app_byte_locked(path_));
  // A handle alone without write access (a reader) takes it, never
  // waiting, and elides too.
  ASSERT_EQ(fcntl(l.fd, F_OFD_SETLK, &fl), 0);
  EXPECT_EQ(sw_pool_if_alone(a, alone_elide, &l), 1);
  EXPECT_EQ(sw_pool_write_held(a), 1);
  EXPECT_TRUE(l.elided);

  // A hook that fails keeps write access: the newcomer is refused.
  ASSERT_EQ(write_words(a, ra, 300), 0);
  ASSERT_EQ(sw_pool_if_alone(a, alone_elide, &l), 1);
  l.fail = true;
  setenv("SOFTWRAP_SHARE_WAIT_MS", "150", 1);
  sw_pool* c = open();
  unsetenv("SOFTWRAP_SHARE_WAIT_MS");
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(sw_errno(), SW_EBUSY) << sw_errormsg();
  if (c != nullptr) sw_pool_close(c);
  EXPECT_GE(l.hooks, 3);
  EXPECT_TRUE(l.elided);
  EXPECT_EQ(sw_pool_write_held(a), 1);
  // At close it is run too, and write access goes even if it fails.
  l.fail = false;
  const int before = l.hooks;
  ASSERT_EQ(sw_pool_close(a), 0);
  EXPECT_GT(l.hooks, before);
  EXPECT_FALSE(l.elided);
  close(l.fd);
  sw_pool* x = open();
  ASSERT_NE(x, nullptr) << sw_errormsg();
  expect_words(x, static_cast<Root*>(sw_pool_root(x, 0)), 300);
  ASSERT_EQ(sw_pool_close(x), 0);

  // Not shared: no company to fear, nothing to elide.
  sw_pool* e = open(0);
  ASSERT_NE(e, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_if_alone(e, alone_elide, &l), 0);
  EXPECT_EQ(sw_pool_set_alone_hook(e, alone_take, &l), SW_EINVAL);
  ASSERT_EQ(sw_pool_close(e), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, Shared,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                         [](const ::testing::TestParamInfo<sw_engine_kind>& i) {
                           return std::string(i.param == SW_ENGINE_SOFTWRAP         ? "softwrap"
                                              : i.param == SW_ENGINE_SOFTWRAP_LOCAL ? "softwrap_local"
                                                                                    : "undo");
                         });

}  // namespace
