// engine_test.cc — every engine through the C API: visibility, durability
// across reopen, abort, nesting, sub-word stores, shadow pages mixed with
// word stores, alias-table switches and outsized wraps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_params.h"
#include "softwrap/softwrap.h"

namespace {

std::string temp_pool(const char* tag) {
  return "/dev/shm/sw_engine_test_" + std::to_string(getpid()) + "_" + tag;
}

using Param = softwrap::testing::EngineParam;

class EngineTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    path_ = temp_pool(GetParam().name);
    unlink(path_.c_str());
  }
  void TearDown() override {
    if (pool_) sw_pool_close(pool_);
    unlink(path_.c_str());
  }
  sw_config cfg(uint32_t alias_entries = 0, uint64_t lane_size = 0) {
    sw_config c{};
    c.engine = GetParam().engine;
    c.medium = SW_MEDIUM_X86;
    c.alias_entries = alias_entries;
    c.lane_size = lane_size;
    return c;
  }
  void create(uint32_t alias_entries = 0, uint64_t lane_size = 0, size_t size = 64 << 20) {
    sw_config c = cfg(alias_entries, lane_size);
    pool_ = sw_pool_create(path_.c_str(), size, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
  }
  void reopen(uint32_t alias_entries = 0) {
    ASSERT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    sw_config c = cfg(alias_entries);
    pool_ = sw_pool_open(path_.c_str(), &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
  }
  uint64_t* array(size_t words) {
    auto* a = static_cast<uint64_t*>(sw_pool_root(pool_, words * 8));
    EXPECT_NE(a, nullptr) << sw_errormsg();
    return a;
  }
  bool atomic_engine() const { return GetParam().engine != SW_ENGINE_NONATOMIC; }

  std::string path_;
  sw_pool* pool_ = nullptr;
};

TEST_P(EngineTest, StoresVisibleInsideAndAfterWrapAndDurableAcrossReopen) {
  create();
  uint64_t* a = array(1024);
  EXPECT_STREQ(sw_pool_engine_name(pool_), GetParam().name);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  for (int i = 0; i < 1024; ++i) sw_store64(pool_, &a[i], i * 3 + 1);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), uint64_t(i * 3 + 1));
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), uint64_t(i * 3 + 1));
  reopen();
  a = array(1024);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), uint64_t(i * 3 + 1));
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(a[i], uint64_t(i * 3 + 1)) << "plain read after reopen";
}

TEST_P(EngineTest, AbortDiscardsEverythingOfTheOutermostWrap) {
  create();
  uint64_t* a = array(64);
  for (int i = 0; i < 64; ++i) sw_store64(pool_, &a[i], 7);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store64(pool_, &a[0], 100);
  ASSERT_EQ(sw_wrap_open(pool_), 0);  // nested: flattened
  sw_store64(pool_, &a[1], 101);
  char buf[40];
  std::memset(buf, 0xAB, sizeof buf);
  ASSERT_EQ(sw_write(pool_, &a[10], buf, sizeof buf), 0);
  ASSERT_EQ(sw_wrap_close(pool_), 0);  // inner close: nothing committed yet
  EXPECT_EQ(sw_wrap_depth(pool_), 1);
  int rc = sw_wrap_abort(pool_);
  EXPECT_EQ(sw_wrap_depth(pool_), 0);
  if (!atomic_engine()) {
    EXPECT_EQ(rc, SW_ENOTSUP);
    EXPECT_EQ(sw_load64(pool_, &a[0]), 100u);
    return;
  }
  EXPECT_EQ(rc, 0) << sw_errormsg();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(sw_load64(pool_, &a[i]), 7u) << i;
  reopen();
  a = array(64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(sw_load64(pool_, &a[i]), 7u) << i;
}

TEST_P(EngineTest, SubWordStoresMergeWithTheirWord) {
  create();
  auto* a = reinterpret_cast<unsigned char*>(array(8));
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store64(pool_, a, 0x1122334455667788ull);
  sw_store8(pool_, a + 1, 0xEE);
  sw_store16(pool_, a + 4, 0xBEEF);
  sw_store32(pool_, a + 8, 0xCAFEF00D);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  EXPECT_EQ(sw_load64(pool_, a), 0x1122BEEF5566EE88ull);
  EXPECT_EQ(sw_load8(pool_, a + 1), 0xEE);
  EXPECT_EQ(sw_load16(pool_, a + 4), 0xBEEF);
  EXPECT_EQ(sw_load32(pool_, a + 8), 0xCAFEF00Du);
  reopen();
  a = reinterpret_cast<unsigned char*>(array(8));
  EXPECT_EQ(sw_load64(pool_, a), 0x1122BEEF5566EE88ull);
}

TEST_P(EngineTest, ShadowPagesAndWordStoresAgreeAtEveryOffset) {
  create(256);  // small tables: switches happen during the test
  constexpr size_t kBytes = 8192;
  auto* base = static_cast<unsigned char*>(sw_pool_root(pool_, kBytes));
  ASSERT_NE(base, nullptr);
  std::vector<unsigned char> oracle(kBytes, 0);
  std::mt19937_64 rng(42);
  for (int wrap = 0; wrap < 300; ++wrap) {
    std::vector<unsigned char> before = oracle;
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    const int ops = 1 + rng() % 6;
    for (int k = 0; k < ops; ++k) {
      if (rng() % 2) {
        const size_t off = rng() % (kBytes - 2100), n = 1 + rng() % 2100;
        std::vector<unsigned char> data(n);
        for (auto& b : data) b = static_cast<unsigned char>(rng());
        ASSERT_EQ(sw_write(pool_, base + off, data.data(), n), 0) << sw_errormsg();
        std::memcpy(&oracle[off], data.data(), n);
      } else {
        const size_t w = (rng() % (kBytes / 8)) * 8;
        const uint64_t v = rng();
        sw_store64(pool_, base + w, v);
        std::memcpy(&oracle[w], &v, 8);
      }
      const size_t ro = rng() % kBytes, rn = 1 + rng() % (kBytes - ro);
      std::vector<unsigned char> got(rn);
      ASSERT_EQ(sw_read(pool_, got.data(), base + ro, rn), 0);
      ASSERT_EQ(0, std::memcmp(got.data(), &oracle[ro], rn)) << "wrap " << wrap << " read " << ro << "+" << rn;
      const size_t lw = (rng() % (kBytes / 8)) * 8;
      uint64_t want;
      std::memcpy(&want, &oracle[lw], 8);
      ASSERT_EQ(sw_load64(pool_, base + lw), want);
    }
    if (atomic_engine() && rng() % 4 == 0) {
      ASSERT_EQ(sw_wrap_abort(pool_), 0);
      oracle = before;
    } else {
      ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    }
  }
  std::vector<unsigned char> got(kBytes);
  ASSERT_EQ(sw_read(pool_, got.data(), base, kBytes), 0);
  EXPECT_EQ(got, oracle);
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  EXPECT_EQ(0, std::memcmp(base, oracle.data(), kBytes)) << "home after quiesce";
  reopen(256);
  base = static_cast<unsigned char*>(sw_pool_root(pool_, 0));
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(0, std::memcmp(base, oracle.data(), kBytes)) << "home after reopen";
}

TEST_P(EngineTest, ManyWrapsThroughSmallAliasTablesSwitchAndRetire) {
  create(256);
  uint64_t* a = array(4096);
  std::map<size_t, uint64_t> oracle;
  std::mt19937_64 rng(7);
  for (int wrap = 0; wrap < 3000; ++wrap) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (int k = 0; k < 10; ++k) {
      const size_t i = rng() % 4096;
      const uint64_t v = rng();
      sw_store64(pool_, &a[i], v);
      oracle[i] = v;
    }
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  }
  for (const auto& [i, v] : oracle) ASSERT_EQ(sw_load64(pool_, &a[i]), v) << i;
  sw_stats st{};
  ASSERT_EQ(sw_pool_stats(pool_, &st), 0);
  EXPECT_EQ(st.wraps, 3000u + 1);  // + the root allocation
  if (GetParam().engine == SW_ENGINE_SOFTWRAP) {
    EXPECT_GT(st.table_switches, 10u);
    EXPECT_GT(st.retired_entries, 0u);
  }
  reopen(256);
  a = array(4096);
  for (const auto& [i, v] : oracle) ASSERT_EQ(a[i], v) << i;
}

TEST_P(EngineTest, WrapLargerThanAnAliasTableCommits) {
  create(256);
  uint64_t* a = array(20000);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  for (int i = 0; i < 20000; ++i) sw_store64(pool_, &a[i], i + 5);
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  for (int i = 0; i < 20000; i += 37) ASSERT_EQ(sw_load64(pool_, &a[i]), uint64_t(i + 5));
  reopen(256);
  a = array(20000);
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(a[i], uint64_t(i + 5));
}

TEST_P(EngineTest, WrapLargerThanItsLogLaneCommitsThroughLogExtents) {
  // 64 KiB lanes; one wrap writes 3 MiB in ranges and 50,000 word stores:
  // its log continues in extents taken from the heap, and they go back.
  create(0, 64 << 10);
  auto* root = static_cast<uint64_t*>(sw_pool_root(pool_, 64));
  ASSERT_NE(root, nullptr);
  auto* base = static_cast<unsigned char*>(sw_pmalloc_slot(pool_, root, 4 << 20));  // not zeroed: no log
  ASSERT_NE(base, nullptr) << sw_errormsg();
  std::mt19937_64 rng(17);
  std::vector<unsigned char> data(3 << 20);
  for (auto& c : data) c = static_cast<unsigned char>(rng());
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  for (size_t off = 0; off < data.size(); off += 256 << 10) {
    ASSERT_EQ(sw_write(pool_, base + off, data.data() + off, 256 << 10), 0) << sw_errormsg();
  }
  auto* words = reinterpret_cast<uint64_t*>(base + (3 << 20));
  for (uint64_t i = 0; i < 50000; ++i) sw_store64(pool_, &words[i * 2 % 131072], i);
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  std::vector<unsigned char> got(data.size());
  ASSERT_EQ(sw_read(pool_, got.data(), base, got.size()), 0);
  EXPECT_TRUE(got == data);
  EXPECT_EQ(sw_load64(pool_, &words[2 * 49999 % 131072]), 49999u);
  reopen();
  root = static_cast<uint64_t*>(sw_pool_root(pool_, 0));
  base = static_cast<unsigned char*>(sw_pool_ptr(pool_, sw_load64(pool_, root)));
  ASSERT_EQ(sw_read(pool_, got.data(), base, got.size()), 0);
  EXPECT_TRUE(got == data);
  words = reinterpret_cast<uint64_t*>(base + (3 << 20));
  EXPECT_EQ(sw_load64(pool_, &words[2 * 49999 % 131072]), 49999u);
  // The log's extents went back to the heap: almost all of it allocates.
  ASSERT_EQ(sw_pfree_slot(pool_, root), 0);
  EXPECT_NE(sw_pmalloc_slot(pool_, root, 48 << 20), nullptr) << sw_errormsg();
}

TEST_P(EngineTest, WrapLargerThanTheFreePoolFailsCleanlyAndLosesNothing) {
  if (!atomic_engine()) GTEST_SKIP() << "nonatomic keeps no log";
  create(0, 64 << 10, 16 << 20);
  auto* root = static_cast<uint64_t*>(sw_pool_root(pool_, 64));
  ASSERT_NE(root, nullptr);
  auto* base = static_cast<unsigned char*>(sw_pmalloc_slot(pool_, root, 8 << 20));
  ASSERT_NE(base, nullptr) << sw_errormsg();
  std::vector<unsigned char> committed(256 << 10, 0x11);
  ASSERT_EQ(sw_write(pool_, base, committed.data(), committed.size()), 0);
  // 8 MiB of new values need 8 MiB of log; the rest of the heap is smaller.
  std::vector<unsigned char> big(1 << 20, 0x22);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  int rc = 0;
  for (size_t off = 0; off < (8u << 20) && rc == 0; off += big.size()) rc = sw_write(pool_, base + off, big.data(), big.size());
  EXPECT_EQ(rc, SW_ETOOBIG);
  EXPECT_NE(std::string(sw_errormsg()).find("no free space"), std::string::npos) << sw_errormsg();
  sw_store64(pool_, base, 5);  // ignored: the wrap has failed
  EXPECT_EQ(sw_wrap_close(pool_), SW_EABORTED);
  EXPECT_NE(std::string(sw_errormsg()).find("rolled back"), std::string::npos) << sw_errormsg();
  std::vector<unsigned char> got(committed.size());
  ASSERT_EQ(sw_read(pool_, got.data(), base, got.size()), 0);
  EXPECT_TRUE(got == committed);
  // The pool keeps working, and the failed wrap's log space is free again.
  sw_store64(pool_, base, 99);
  EXPECT_EQ(sw_load64(pool_, base), 99u);
  void* more = sw_pmalloc(pool_, 2 << 20);
  EXPECT_NE(more, nullptr) << sw_errormsg();
  reopen();
  root = static_cast<uint64_t*>(sw_pool_root(pool_, 0));
  base = static_cast<unsigned char*>(sw_pool_ptr(pool_, sw_load64(pool_, root)));
  EXPECT_EQ(sw_load64(pool_, base), 99u);
  EXPECT_EQ(base[8], 0x11);
}

TEST_P(EngineTest, AllocationsOfAnAbortedWrapNeverHappened) {
  create();
  auto* root = static_cast<uint64_t*>(sw_pool_root(pool_, 64));
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  void* p = sw_pmalloc(pool_, 100);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_store64(pool_, root, sw_pool_offset(pool_, p));
  if (!atomic_engine()) {
    EXPECT_EQ(sw_wrap_abort(pool_), SW_ENOTSUP);
    return;
  }
  ASSERT_EQ(sw_wrap_abort(pool_), 0);
  EXPECT_EQ(sw_load64(pool_, root), 0u);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  void* q = sw_pmalloc(pool_, 100);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  EXPECT_EQ(q, p) << "the aborted block is free again";
}

TEST_P(EngineTest, WrapLeftOpenByAnExitingThreadIsRolledBack) {
  create();
  uint64_t* a = array(8);
  sw_store64(pool_, &a[0], 1);
  std::thread([&] {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    sw_store64(pool_, &a[0], 2);
    sw_store64(pool_, &a[1], 2);
  }).join();  // exits with the wrap open
  if (atomic_engine()) {
    EXPECT_EQ(sw_load64(pool_, &a[0]), 1u);
    EXPECT_EQ(sw_load64(pool_, &a[1]), 0u);
  }
  EXPECT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
  pool_ = nullptr;
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineTest, softwrap::testing::all_engines(),
                         softwrap::testing::EngineParamName());

}  // namespace
