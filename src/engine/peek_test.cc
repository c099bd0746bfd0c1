// peek_test.cc — sw_peek against the overlay rules of every engine: it
// must return exactly the bytes sw_read returns, from home (the address
// itself) when nothing overlays the range and from scratch otherwise.
//
// Approach: each test sets up one situation (quiesced home, the caller's
// own uncommitted stores, committed but unretired stores, a partial
// overlap, another thread's commit, an abort) and checks both the bytes
// (against sw_read) and where they came from, per engine: softwrap overlays
// every unretired table, softwrap-local only the caller's open wrap, undo
// and nonatomic nothing.  A softwrap table idle for 10 ms is retired, so
// the tests that expect a copy hold a wrap open on another thread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_params.h"
#include "softwrap/softwrap.h"

namespace {

using Param = softwrap::testing::EngineParam;
constexpr size_t kBytes = 4096;

class PeekTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_peek_test_" + std::to_string(getpid()) + "_" + GetParam().name;
    unlink(path_.c_str());
    sw_config c{};
    c.engine = GetParam().engine;
    c.flags = softwrap::testing::engine_flags(c.engine);
    c.medium = SW_MEDIUM_X86;
    pool_ = sw_pool_create(path_.c_str(), 32 << 20, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    buf_ = static_cast<unsigned char*>(sw_pool_root(pool_, kBytes));
    ASSERT_NE(buf_, nullptr);
    std::vector<unsigned char> init(kBytes);
    for (size_t i = 0; i < kBytes; ++i) init[i] = static_cast<unsigned char>(i * 7 + 1);
    ASSERT_EQ(sw_write(pool_, buf_, init.data(), kBytes), 0);
    ASSERT_EQ(sw_pool_quiesce(pool_), 0) << sw_errormsg();
  }
  void TearDown() override {
    if (pool_) sw_pool_close(pool_);
    unlink(path_.c_str());
  }
  sw_engine_kind engine() const { return GetParam().engine; }
  bool in_place() const {
    return engine() == SW_ENGINE_UNDO || engine() == SW_ENGINE_UNDO_THEMIS || engine() == SW_ENGINE_NONATOMIC;
  }

  // Peeks [at, at + n), checks the bytes against sw_read and returns
  // whether they came from home.
  bool peek_home(size_t at, size_t n) {
    std::vector<unsigned char> scratch(n, 0xEE), want(n);
    const void* got = sw_peek(pool_, buf_ + at, n, scratch.data());
    EXPECT_NE(got, nullptr) << sw_errormsg();
    if (!got) return false;
    EXPECT_EQ(sw_read(pool_, want.data(), buf_ + at, n), 0);
    EXPECT_EQ(std::memcmp(got, want.data(), n), 0) << "bytes differ from sw_read at " << at << "+" << n;
    EXPECT_TRUE(got == buf_ + at || got == scratch.data());
    return got == buf_ + at;
  }

  std::string path_;
  sw_pool* pool_ = nullptr;
  unsigned char* buf_ = nullptr;
};

TEST_P(PeekTest, QuiescedRangeIsReadInPlace) {
  EXPECT_TRUE(peek_home(0, kBytes));
  EXPECT_TRUE(peek_home(13, 100));
  sw_wrap_open(pool_);
  EXPECT_TRUE(peek_home(200, 64));  // inside a wrap that wrote nothing
  sw_wrap_close(pool_);
}

TEST_P(PeekTest, OwnUncommittedStoresAreSeen) {
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  const unsigned char x[5] = {9, 8, 7, 6, 5};
  ASSERT_EQ(sw_write(pool_, buf_ + 1000, x, sizeof x), 0);
  sw_store64(pool_, buf_ + 2048, 0x1122334455667788ull);
  // Softwrap engines overlay their tables: the range must be copied.
  EXPECT_EQ(peek_home(990, 40), in_place());
  EXPECT_EQ(peek_home(2040, 24), in_place());
  EXPECT_EQ(peek_home(1000, 5), in_place());
  ASSERT_EQ(sw_wrap_close(pool_), 0);
}

TEST_P(PeekTest, CommittedUnretiredStoresAreSeen) {
  // Another thread's open wrap keeps softwrap's table from being retired
  // (it could still write into it), however long the test takes.
  std::atomic<int> step{0};
  std::thread holder([&] {
    sw_wrap_open(pool_);
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
    sw_wrap_close(pool_);
  });
  while (step.load() != 1) std::this_thread::yield();
  const uint64_t v = 0xA5A5A5A5DEADBEEFull;
  sw_store64(pool_, buf_ + 512, v);  // a wrap of its own
  // Softwrap keeps the value in its active table until retirement;
  // softwrap-local has sent it home at commit.
  EXPECT_EQ(peek_home(500, 32), engine() != SW_ENGINE_SOFTWRAP);
  uint64_t seen;
  std::memcpy(&seen, static_cast<const unsigned char*>(sw_peek(pool_, buf_ + 512, 8, &seen)), 8);
  EXPECT_EQ(seen, v);
  step = 2;
  holder.join();
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  EXPECT_TRUE(peek_home(500, 32));
}

TEST_P(PeekTest, IdleTablesAreRetiredSoReadsGoHome) {
  sw_store64(pool_, buf_ + 512, 42);
  // No commit for a while: the retirer switches the table out and retires
  // it (softwrap), after which the bytes are read in place.
  bool home = false;
  for (int i = 0; i < 400 && !home; ++i) {
    home = peek_home(500, 32);
    if (!home) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(home);
}

TEST_P(PeekTest, PartialOverlapAcrossPagesIsCopiedWhole) {
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store8(pool_, buf_ + 3000, 0x42);
  // A range from an untouched region into the stored byte's page.
  EXPECT_EQ(peek_home(100, 3000), in_place());
  ASSERT_EQ(sw_wrap_close(pool_), 0);
}

TEST_P(PeekTest, OtherThreadsCommitIsSeen) {
  std::thread([&] {
    sw_wrap_open(pool_);
    sw_store32(pool_, buf_ + 64, 0xCAFEF00Du);
    sw_wrap_close(pool_);
  }).join();
  peek_home(60, 16);  // bytes checked against sw_read; softwrap copies, others read home
  uint32_t got;
  uint32_t scratch;
  std::memcpy(&got, sw_peek(pool_, buf_ + 64, 4, &scratch), 4);
  EXPECT_EQ(got, 0xCAFEF00Du);
}

TEST_P(PeekTest, AbortedStoresAreGone) {
  if (engine() == SW_ENGINE_NONATOMIC) GTEST_SKIP() << "nonatomic cannot abort";
  const unsigned char before = buf_[700];
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store8(pool_, buf_ + 700, static_cast<uint8_t>(before + 1));
  sw_wrap_abort(pool_);
  peek_home(690, 20);
  unsigned char s;
  EXPECT_EQ(*static_cast<const unsigned char*>(sw_peek(pool_, buf_ + 700, 1, &s)), before);
}

TEST_P(PeekTest, BadArgumentsAreClearErrors) {
  unsigned char s[8];
  EXPECT_EQ(sw_peek(nullptr, buf_, 8, s), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  EXPECT_EQ(sw_peek(pool_, buf_, 8, nullptr), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  const auto* end = static_cast<unsigned char*>(sw_pool_base(pool_)) + sw_pool_size(pool_);
  EXPECT_EQ(sw_peek(pool_, end - 4, 8, s), nullptr);
  EXPECT_EQ(sw_errno(), SW_ERANGE);
  EXPECT_NE(std::string(sw_errormsg()).find("outside"), std::string::npos) << sw_errormsg();
  EXPECT_EQ(sw_peek(pool_, sw_pool_base(pool_), 8, s), nullptr);  // the pool's metadata
  EXPECT_EQ(sw_errno(), SW_ERANGE);
  EXPECT_EQ(sw_peek(pool_, buf_, 0, nullptr), buf_);
}

INSTANTIATE_TEST_SUITE_P(Engines, PeekTest, softwrap::testing::all_engines(), softwrap::testing::EngineParamName());

}  // namespace
