// readonly_test.cc — SW_CONFIG_READONLY on every engine: a pool opened for
// reading serves what was committed, also what only the log held (its
// recovery runs in this process's copy-on-write view), refuses wraps,
// implicit wraps and allocations with SW_EINVAL, never grows, and leaves
// the file byte for byte as it was; sw_pool_create refuses the flag; a
// file the process may not write opens only this way.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"

namespace {

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class ReadOnly : public ::testing::TestWithParam<sw_engine_kind> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_readonly_" + std::to_string(getpid()) + "_" + std::to_string(GetParam()) + ".pool";
    unlink(path_.c_str());
  }
  void TearDown() override { unlink(path_.c_str()); }
  sw_config cfg(uint32_t flags = 0) const {
    sw_config c{};
    c.engine = GetParam();
    c.medium = SW_MEDIUM_X86;
    c.flags = flags;
    return c;
  }
  // Opens the pool SW_CONFIG_READONLY and checks its root's words read
  // base + i; *p and *a for what the test does next.
  void open_and_check(int words, uint64_t base, sw_pool** p, uint64_t** a) const {
    sw_config c = cfg(SW_CONFIG_READONLY);
    *p = sw_pool_open(path_.c_str(), &c);
    ASSERT_NE(*p, nullptr) << sw_errormsg();
    *a = static_cast<uint64_t*>(sw_pool_root(*p, words * 8));
    ASSERT_NE(*a, nullptr) << sw_errormsg();
    for (int i = 0; i < words; ++i) ASSERT_EQ(sw_load64(*p, &(*a)[i]), base + i) << i;
  }
  std::string path_;
};

TEST_P(ReadOnly, ServesCommittedDataAndWritesNothing) {
  constexpr int kWords = 512;
  {
    sw_config c = cfg(SW_CONFIG_NO_RETIRE_THREAD);
    sw_pool* p = sw_pool_create(path_.c_str(), 16u << 20, &c);
    ASSERT_NE(p, nullptr) << sw_errormsg();
    auto* a = static_cast<uint64_t*>(sw_pool_root(p, kWords * 8));
    ASSERT_NE(a, nullptr) << sw_errormsg();
    for (int w = 0; w < 4; ++w) {
      ASSERT_EQ(sw_wrap_open(p), 0);
      for (int i = 0; i < kWords; ++i) sw_store64(p, &a[i], uint64_t(w) * 1000 + i);
      ASSERT_EQ(sw_wrap_close(p), 0);
    }
    ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
  }
  const std::vector<char> before = file_bytes(path_);
  sw_pool* p = nullptr;
  uint64_t* a = nullptr;
  ASSERT_NO_FATAL_FAILURE(open_and_check(kWords, 3000, &p, &a));
  // Every way to write is refused, with the reason.
  EXPECT_EQ(sw_wrap_open(p), SW_EINVAL);
  EXPECT_NE(std::string(sw_errormsg()).find("opened read-only"), std::string::npos) << sw_errormsg();
  sw_store64(p, &a[0], 42);  // an implicit wrap
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  EXPECT_EQ(sw_load64(p, &a[0]), 3000u);
  EXPECT_EQ(sw_pmalloc(p, 64), nullptr);
  EXPECT_EQ(sw_load64(p, &a[1]), 3001u);
  ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
  EXPECT_EQ(file_bytes(path_), before) << "a read-only open changed the file";
}

TEST_P(ReadOnly, RecoversInItsOwnViewOnly) {
  // Wraps committed to the log but not yet home when the process ends.
  constexpr int kWords = 64;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    sw_config c = cfg(SW_CONFIG_NO_RETIRE_THREAD);
    sw_pool* p = sw_pool_create(path_.c_str(), 16u << 20, &c);
    if (p == nullptr) _exit(2);
    auto* a = static_cast<uint64_t*>(sw_pool_root(p, kWords * 8));
    if (a == nullptr) _exit(3);
    for (int w = 1; w <= 3; ++w) {
      if (sw_wrap_open(p) != 0) _exit(4);
      for (int i = 0; i < kWords; ++i) sw_store64(p, &a[i], uint64_t(w) * 100 + i);
      if (sw_wrap_close(p) != 0) _exit(5);
    }
    _exit(0);  // no close: recovery's work is left to the next open
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::vector<char> before = file_bytes(path_);
  for (int round = 0; round < 2; ++round) {  // the second open recovers again: nothing was written
    sw_pool* p = nullptr;
    uint64_t* a = nullptr;
    ASSERT_NO_FATAL_FAILURE(open_and_check(kWords, 300, &p, &a));
    ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
    EXPECT_EQ(file_bytes(path_), before) << "round " << round;
  }
  // A read-write open recovers for good.
  sw_config c = cfg();
  sw_pool* p = sw_pool_open(path_.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, kWords * 8));
  EXPECT_EQ(sw_load64(p, &a[5]), 305u);
  ASSERT_EQ(sw_pool_close(p), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, ReadOnly,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO,
                                           SW_ENGINE_NONATOMIC),
                         [](const auto& info) {
                           switch (info.param) {
                             case SW_ENGINE_SOFTWRAP: return std::string("softwrap");
                             case SW_ENGINE_SOFTWRAP_LOCAL: return std::string("softwrap_local");
                             case SW_ENGINE_UNDO: return std::string("undo");
                             default: return std::string("nonatomic");
                           }
                         });

TEST(ReadOnlyPool, CreateRefusesTheFlagAndAnUnwritableFileOpensOnlyReadOnly) {
  const std::string path = "/dev/shm/sw_readonly_create_" + std::to_string(getpid()) + ".pool";
  unlink(path.c_str());
  sw_config c{};
  c.medium = SW_MEDIUM_X86;
  c.flags = SW_CONFIG_READONLY;
  EXPECT_EQ(sw_pool_create(path.c_str(), 16u << 20, &c), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "nothing is left behind";
  c.flags = 0;
  sw_pool* p = sw_pool_create(path.c_str(), 16u << 20, &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_pool_close(p), 0);
  // A file without write permission (as root, only the flag keeps writes
  // out; as anyone else, opening it for writing fails).
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  if (geteuid() != 0) {
    EXPECT_EQ(sw_pool_open(path.c_str(), &c), nullptr);
    EXPECT_EQ(sw_errno(), SW_EIO);
  }
  c.flags = SW_CONFIG_READONLY;
  p = sw_pool_open(path.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_wrap_open(p), SW_EINVAL);
  ASSERT_EQ(sw_pool_close(p), 0);
  unlink(path.c_str());
}

}  // namespace
