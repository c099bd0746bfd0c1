// large_wrap_test.cc — wraps limited only by free pool space (issue 13).
//
// One wrap writes 1 GiB (sw_write, 1 MiB at a time) into a pool with more
// than 4 GiB free, on every atomic engine: its log continues in heap
// extents, and the softwrap engines spill past their DRAM budget.  The
// wrap must commit, read back whole before and after a reopen, give its
// log space back, and hold little DRAM: the peak of the process's heap
// (mallinfo2, sampled after every write) above what it held before the
// wrap is printed and bounded by the spill budget plus 4% of the bytes
// written plus 32 MiB.  A second test writes 128 MiB with 8-byte stores.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/engine_test_params.h"
#include "softwrap/softwrap.h"

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

uint64_t heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

class LargeWrapTest : public ::testing::TestWithParam<softwrap::testing::EngineParam> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_large_wrap_test_" + std::to_string(getpid()) + "_" + GetParam().name;
    sw_config c{};
    c.engine = GetParam().engine;
    c.medium = SW_MEDIUM_X86;
    c.flags = SW_CONFIG_OVERWRITE;
    pool_ = sw_pool_create(path_.c_str(), 5 * 1024 * kMiB + 64 * kMiB, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    root_ = static_cast<uint64_t*>(sw_pool_root(pool_, 64));
    ASSERT_NE(root_, nullptr);
  }
  void TearDown() override {
    if (pool_) {
      EXPECT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    }
    unlink(path_.c_str());
  }
  void reopen() {
    ASSERT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    sw_config c{};
    c.engine = GetParam().engine;
    c.medium = SW_MEDIUM_X86;
    pool_ = sw_pool_open(path_.c_str(), &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    root_ = static_cast<uint64_t*>(sw_pool_root(pool_, 0));
  }
  // The byte pattern of piece i (1 MiB): differs from piece to piece.
  static void fill(std::vector<unsigned char>* b, uint64_t i) {
    for (size_t k = 0; k < b->size(); k += 8) {
      const uint64_t v = (i << 32 | k) * 0x9E3779B97F4A7C15ull;
      std::memcpy(b->data() + k, &v, 8);
    }
  }
  void expect_bounded(const char* what, uint64_t peak, uint64_t written) {
    const uint64_t bound = 64 * kMiB + written / 25 + 32 * kMiB;
    std::printf("[ DRAM     ] %s, engine %s: %.1f MiB written in one wrap, heap peak +%.1f MiB (%.3fx), bound %.1f MiB\n",
                what, GetParam().name, written / double(kMiB), peak / double(kMiB), peak / double(written),
                bound / double(kMiB));
    EXPECT_LE(peak, bound);
  }

  std::string path_;
  sw_pool* pool_ = nullptr;
  uint64_t* root_ = nullptr;
};

TEST_P(LargeWrapTest, OneGibibyteInOneWrapCommits) {
  constexpr uint64_t kBytes = 1024 * kMiB;
  auto* data = static_cast<unsigned char*>(sw_pmalloc_slot(pool_, &root_[0], kBytes));
  ASSERT_NE(data, nullptr) << sw_errormsg();
  std::vector<unsigned char> piece(kMiB), got(kMiB);
  const uint64_t before = heap_bytes();
  uint64_t peak = 0;
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  for (uint64_t i = 0; i < kBytes / kMiB; ++i) {
    fill(&piece, i);
    ASSERT_EQ(sw_write(pool_, data + i * kMiB, piece.data(), kMiB), 0) << "piece " << i << ": " << sw_errormsg();
    peak = std::max(peak, heap_bytes() - std::min(heap_bytes(), before));
  }
  // Read back inside the wrap (a sample), then commit.
  for (uint64_t i = 0; i < kBytes / kMiB; i += 97) {
    fill(&piece, i);
    ASSERT_EQ(sw_read(pool_, got.data(), data + i * kMiB, kMiB), 0);
    ASSERT_TRUE(got == piece) << "piece " << i << " inside the wrap";
  }
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  expect_bounded("1 GiB by sw_write", peak, kBytes);
  reopen();
  data = static_cast<unsigned char*>(sw_pool_ptr(pool_, sw_load64(pool_, &root_[0])));
  for (uint64_t i = 0; i < kBytes / kMiB; ++i) {
    fill(&piece, i);
    ASSERT_EQ(sw_read(pool_, got.data(), data + i * kMiB, kMiB), 0);
    ASSERT_TRUE(got == piece) << "piece " << i << " after reopen";
  }
  // The log space went back: 3 GiB more allocate.
  EXPECT_NE(sw_pmalloc_slot(pool_, &root_[1], 3 * 1024 * kMiB), nullptr) << sw_errormsg();
}

TEST_P(LargeWrapTest, OneHundredTwentyEightMebibytesOfWordStoresInOneWrapCommit) {
  constexpr uint64_t kBytes = 128 * kMiB;
  auto* words = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, &root_[0], kBytes));
  ASSERT_NE(words, nullptr) << sw_errormsg();
  const uint64_t before = heap_bytes();
  uint64_t peak = 0;
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  for (uint64_t i = 0; i < kBytes / 8; ++i) {
    sw_store64(pool_, &words[i], i * 3 + 1);
    if (i % 65536 == 0) peak = std::max(peak, heap_bytes() - std::min(heap_bytes(), before));
  }
  ASSERT_EQ(sw_errno() == SW_ETOOBIG, false) << sw_errormsg();
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  expect_bounded("128 MiB by 8-byte stores", peak, kBytes);
  reopen();
  words = static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, &root_[0])));
  for (uint64_t i = 0; i < kBytes / 8; i += 4099) ASSERT_EQ(sw_load64(pool_, &words[i]), i * 3 + 1) << i;
}

INSTANTIATE_TEST_SUITE_P(AtomicEngines, LargeWrapTest, softwrap::testing::atomic_engines(),
                         softwrap::testing::EngineParamName());

}  // namespace
