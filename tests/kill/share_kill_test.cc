// share_kill_test.cc — processes sharing one pool (SW_CONFIG_SHARED)
// killed at random, the survivors going on.
//
// Approach: the parent creates a pool whose root holds an array of 64
// words, all equal, and a log of who wrote.  It then runs two writer and
// two reader processes, each of which opens the pool itself.  A writer
// repeatedly takes write access (sw_pool_write_begin), adds one to every
// word in a wrap (sometimes in two wraps of one session, sometimes aborting
// one), gives write access up, and reports the value it committed through
// a pipe.  A reader repeatedly catches up (sw_pool_refresh) and checks
// that every word is equal — no half-applied wrap — and never smaller than
// what it saw before.  Readers and writers exclude each other with an
// fcntl lock on a side file, as the header asks of programs that share a
// pool (the SQLite VFS uses SQLite's locks).  The parent SIGKILLs a random
// one of the four every few milliseconds and starts a new one in its
// place, so writers die holding write access, inside wraps, while giving
// write access up and while recovering another's commits; readers die
// inside refresh.  At the end: every child that exited by itself exited
// 0, and the pool, opened alone, holds equal words at least as large as
// every value a writer acknowledged and at most the largest it attempted.
//
// Knobs: SOFTWRAP_KILLS (kills per engine, default 40), SOFTWRAP_KILL_SEED.
// Label kill only: the sanitizer stages do not run it (a forked child
// starts threads), the share_test cases cover the same code under them.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.h"

namespace {

constexpr int kWords = 64;
struct Root {
  uint64_t words[kWords];
};

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : dflt;
}

// Readers and writers exclude each other: an fcntl lock on a side file
// (process-associated, dropped by the kernel when the process dies).
bool side_lock(int fd, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 1;
  while (fcntl(fd, F_SETLKW, &fl) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

class ShareKill : public ::testing::TestWithParam<sw_engine_kind> {
 protected:
  void SetUp() override {
    const std::string base = "/dev/shm/sw_share_kill_" + std::to_string(getpid()) + "_" + std::to_string(GetParam());
    path_ = base + ".pool";
    lock_path_ = base + ".lock";
    unlink(path_.c_str());
    unlink(lock_path_.c_str());
  }
  void TearDown() override {
    unlink(path_.c_str());
    unlink(lock_path_.c_str());
  }
  sw_config cfg(uint32_t flags) const {
    sw_config c{};
    c.engine = GetParam();
    c.medium = SW_MEDIUM_X86;
    c.flags = flags;
    c.retire_divisor = 2;  // tables go home seldom: commits stay in the log and DRAM
    return c;
  }

  // A writer: reports each committed value (8 bytes) on `out`.
  [[noreturn]] void writer(int out, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int lock = open(lock_path_.c_str(), O_RDWR);
    sw_config c = cfg(SW_CONFIG_SHARED);
    sw_pool* p = sw_pool_open(path_.c_str(), &c);
    if (p == nullptr || lock < 0) {
      std::fprintf(stderr, "writer: open: %s\n", sw_errormsg());
      _exit(2);
    }
    auto* r = static_cast<Root*>(sw_pool_root(p, 0));
    for (;;) {
      if (!side_lock(lock, F_WRLCK)) _exit(3);
      if (sw_pool_write_begin(p, -1) != 0) {
        std::fprintf(stderr, "writer: write_begin: %s\n", sw_errormsg());
        _exit(4);
      }
      const int wraps = 1 + static_cast<int>(rng() % 2);
      uint64_t v = 0;
      for (int w = 0; w < wraps; ++w) {
        if (sw_wrap_open(p) != 0) _exit(5);
        v = sw_load64(p, &r->words[0]) + 1;
        for (int i = 0; i < kWords; ++i) {
          if (sw_load64(p, &r->words[i]) + 1 != v) {
            std::fprintf(stderr, "writer: word %d is %llu, word 0 %llu\n", i,
                         static_cast<unsigned long long>(sw_load64(p, &r->words[i])),
                         static_cast<unsigned long long>(v - 1));
            _exit(6);
          }
          sw_store64(p, &r->words[i], v);
        }
        if (rng() % 8 == 0) {
          sw_wrap_abort(p);
          --v;
          continue;
        }
        if (sw_wrap_close(p) != 0) _exit(7);
      }
      if (sw_pool_write_end(p) != 0) _exit(8);
      if (!side_lock(lock, F_UNLCK)) _exit(9);
      if (write(out, &v, sizeof v) != sizeof v) _exit(10);
    }
  }

  // A reader: exits 1 on a torn or backward view.
  [[noreturn]] void reader(uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int lock = open(lock_path_.c_str(), O_RDWR);
    sw_config c = cfg(SW_CONFIG_SHARED);
    sw_pool* p = sw_pool_open(path_.c_str(), &c);
    if (p == nullptr || lock < 0) {
      std::fprintf(stderr, "reader: open: %s\n", sw_errormsg());
      _exit(2);
    }
    auto* r = static_cast<Root*>(sw_pool_root(p, 0));
    uint64_t seen = 0;
    for (;;) {
      if (!side_lock(lock, F_RDLCK)) _exit(3);
      if (sw_pool_refresh(p) < 0) {
        std::fprintf(stderr, "reader: refresh: %s\n", sw_errormsg());
        _exit(4);
      }
      const uint64_t v = sw_load64(p, &r->words[0]);
      for (int i = 1; i < kWords; ++i) {
        if (sw_load64(p, &r->words[i]) != v) {
          std::fprintf(stderr, "reader: torn: word %d is %llu, word 0 %llu\n", i,
                       static_cast<unsigned long long>(sw_load64(p, &r->words[i])),
                       static_cast<unsigned long long>(v));
          _exit(1);
        }
      }
      if (v < seen) {
        std::fprintf(stderr, "reader: went back from %llu to %llu\n", static_cast<unsigned long long>(seen),
                     static_cast<unsigned long long>(v));
        _exit(1);
      }
      seen = v;
      if (!side_lock(lock, F_UNLCK)) _exit(3);
      if (rng() % 4 == 0) usleep(200);
    }
  }

  std::string path_, lock_path_;
};

TEST_P(ShareKill, TwoWritersTwoReadersKilledAtRandom) {
  const int kills = env_int("SOFTWRAP_KILLS", 40);
  const uint64_t seed = static_cast<uint64_t>(env_int("SOFTWRAP_KILL_SEED", 1)) * 1000 + GetParam();
  SCOPED_TRACE("SOFTWRAP_KILL_SEED base " + std::to_string(seed));
  {
    sw_config c = cfg(SW_CONFIG_SHARED);
    sw_pool* p = sw_pool_create(path_.c_str(), 16u << 20, &c);
    ASSERT_NE(p, nullptr) << sw_errormsg();
    ASSERT_NE(sw_pool_root(p, sizeof(Root)), nullptr) << sw_errormsg();
    ASSERT_EQ(sw_pool_close(p), 0);
    const int fd = open(lock_path_.c_str(), O_RDWR | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  int acks[2];
  ASSERT_EQ(pipe(acks), 0);
  ASSERT_EQ(fcntl(acks[0], F_SETFL, O_NONBLOCK), 0);
  std::mt19937_64 rng(seed);
  std::vector<pid_t> kids(4, -1);  // 0, 1 writers; 2, 3 readers
  struct Reaper {  // a failed assertion returns early: no child outlives the test
    std::vector<pid_t>& kids;
    ~Reaper() {
      for (pid_t& pid : kids) {
        if (pid > 0) {
          kill(pid, SIGKILL);
          waitpid(pid, nullptr, 0);
          pid = -1;
        }
      }
    }
  } reaper{kids};
  auto start = [&](int i) {
    const uint64_t s = rng();
    const pid_t pid = fork();
    if (pid == 0) {
      close(acks[0]);
      if (i < 2) writer(acks[1], s);
      reader(s);
    }
    kids[i] = pid;
  };
  for (int i = 0; i < 4; ++i) start(i);
  uint64_t acked = 0;
  auto drain = [&] {
    uint64_t v;
    while (read(acks[0], &v, sizeof v) == sizeof v) acked = std::max(acked, v);
  };
  int writer_kills = 0;
  for (int k = 0; k < kills; ++k) {
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 20000));
    drain();
    const int i = static_cast<int>(rng() % 4);
    kill(kids[i], SIGKILL);
    int status = 0;
    waitpid(kids[i], &status, 0);
    kids[i] = -1;
    ASSERT_TRUE(WIFSIGNALED(status)) << "child " << i << " exited by itself with status "
                                     << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << " before kill " << k;
    writer_kills += i < 2;
    start(i);
    // Every child still running: none has found a torn view.
    for (int j = 0; j < 4; ++j) {
      if (waitpid(kids[j], &status, WNOHANG) == kids[j]) {
        FAIL() << "child " << j << " exited with status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1)
               << " after kill " << k;
      }
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (pid_t& pid : kids) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  drain();
  close(acks[0]);
  close(acks[1]);
  EXPECT_GT(writer_kills, 0);
  EXPECT_GT(acked, 0u) << "no writer got anything done";
  // Alone now (exclusive): recovery of whoever died last.
  sw_config c = cfg(0);
  sw_pool* p = sw_pool_open(path_.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  auto* r = static_cast<Root*>(sw_pool_root(p, 0));
  const uint64_t v = sw_load64(p, &r->words[0]);
  for (int i = 1; i < kWords; ++i) ASSERT_EQ(sw_load64(p, &r->words[i]), v) << "word " << i;
  EXPECT_GE(v, acked) << "an acknowledged commit was lost";
  // At most the wraps of one session per writer can have committed
  // unacknowledged (each writer acknowledges after its session).
  EXPECT_LE(v, acked + 4 * static_cast<uint64_t>(kills + 2));
  ASSERT_EQ(sw_pool_close(p), 0);
  std::printf("%d kills (%d of writers), value %llu, acknowledged %llu\n", kills, writer_kills,
              static_cast<unsigned long long>(v), static_cast<unsigned long long>(acked));
}

INSTANTIATE_TEST_SUITE_P(Engines, ShareKill,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                         [](const ::testing::TestParamInfo<sw_engine_kind>& i) {
                           return std::string(i.param == SW_ENGINE_SOFTWRAP         ? "softwrap"
                                              : i.param == SW_ENGINE_SOFTWRAP_LOCAL ? "softwrap_local"
                                                                                    : "undo");
                         });

}  // namespace
