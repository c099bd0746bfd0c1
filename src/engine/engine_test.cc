// engine_test.cc — every engine through the C API: visibility, durability
// across reopen, abort, nesting, sub-word stores, shadow pages mixed with
// word stores, alias-table switches and outsized wraps.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_params.h"
#include "engine/wcl_queue.h"
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
    c.flags = softwrap::testing::engine_flags(c.engine);
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
  // Creates a pool with write-combined logging and `words` words at its
  // root; *model gets their values.  nullptr if the pool was not created.
  uint64_t* wcl_array(size_t words, std::vector<uint64_t>* model) {
    sw_config c = cfg();
    c.flags |= SW_CONFIG_WCL;
    pool_ = sw_pool_create(path_.c_str(), 64 << 20, &c);
    if (pool_ == nullptr) return nullptr;
    uint64_t* a = array(words);
    model->resize(words);
    for (size_t i = 0; i < words; ++i) (*model)[i] = sw_load64(pool_, &a[i]);
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

// A wrap that writes nothing — empty, or only loads, or whose allocator
// use is none — issues no fence and leaves no frame; one store brings the
// commit back (a fence, and the value durable across a reopen); an
// allocation alone also commits (its metadata and block must persist).
TEST_P(EngineTest, AWrapThatWritesNothingIssuesNoFence) {
  create();
  uint64_t* a = array(64);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store64(pool_, &a[1], 41);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  sw_stats before{}, after{};
  ASSERT_EQ(sw_pool_stats(pool_, &before), 0);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    if (i % 2) EXPECT_EQ(sw_load64(pool_, &a[1]), 41u);
    ASSERT_EQ(sw_wrap_close(pool_), 0);
  }
  ASSERT_EQ(sw_pool_stats(pool_, &after), 0);
  EXPECT_EQ(after.wraps - before.wraps, 100u);
  EXPECT_EQ(after.fences_commit - before.fences_commit, 0u) << "empty and read-only wraps fenced";
  EXPECT_EQ(after.log_bytes - before.log_bytes, 0u) << "empty and read-only wraps logged";
  // One store: the commit is back.
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store64(pool_, &a[2], 42);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  ASSERT_EQ(sw_pool_stats(pool_, &before), 0);
  EXPECT_GE(before.fences - after.fences, 1u);
  // An allocation alone: its block and metadata are committed too.
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  void* block = sw_pmalloc(pool_, 100);
  ASSERT_NE(block, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  ASSERT_EQ(sw_pool_stats(pool_, &after), 0);
  EXPECT_GE(after.fences - before.fences, 1u) << "an allocating wrap must commit";
  const uint64_t block_off = static_cast<uint64_t>(static_cast<char*>(block) - static_cast<char*>(static_cast<void*>(a)));
  reopen();
  a = array(64);
  EXPECT_EQ(a[1], 41u);
  EXPECT_EQ(a[2], 42u);
  EXPECT_EQ(sw_pfree(pool_, reinterpret_cast<char*>(a) + block_off), 0) << "the block allocated alone survived: "
                                                                         << sw_errormsg();
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

// SOFTWRAP_SPILL_MIB=0: every wrap of the softwrap engines spills right
// after its first aliased store, so later stores to bytes no table holds
// go home at once, with undo records (engine/spill.h).  What a wrap reads,
// commits and aborts must not change.
TEST_P(EngineTest, SpilledWrapsReadCommitAndAbortLikeOthers) {
  setenv("SOFTWRAP_SPILL_MIB", "0", 1);
  create(0, 64 << 10);
  unsetenv("SOFTWRAP_SPILL_MIB");
  uint64_t* a = array(4096);
  std::mt19937_64 rng(23);
  std::vector<uint64_t> model(4096, 0);
  for (int round = 0; round < 60; ++round) {
    std::vector<uint64_t> m = model;
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (int k = 0; k < 40; ++k) {
      const size_t i = rng() % 4096;
      switch (rng() % 3) {
        case 0:
          sw_store64(pool_, &a[i], m[i] = rng());
          break;
        case 1: {  // a sub-word store merges with what the wrap sees
          const auto v = static_cast<uint16_t>(rng());
          sw_store16(pool_, reinterpret_cast<uint16_t*>(&a[i]) + 1, v);
          m[i] = (m[i] & ~uint64_t{0xFFFF0000}) | uint64_t{v} << 16;
          break;
        }
        default: {  // a range across words (and, at times, shadow pages)
          const size_t n = 1 + rng() % 40;
          const size_t first = rng() % (4096 - n);
          std::vector<uint64_t> vals(n);
          for (auto& v : vals) v = rng();
          ASSERT_EQ(sw_write(pool_, &a[first], vals.data(), n * 8), 0) << sw_errormsg();
          std::copy(vals.begin(), vals.end(), m.begin() + first);
        }
      }
      const size_t j = rng() % 4096;
      ASSERT_EQ(sw_load64(pool_, &a[j]), m[j]) << "read inside the wrap, round " << round;
    }
    if (atomic_engine() && rng() % 4 == 0) {
      ASSERT_EQ(sw_wrap_abort(pool_), 0);
    } else {
      ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
      model = m;
    }
    for (size_t i = 0; i < 4096; i += 61) ASSERT_EQ(sw_load64(pool_, &a[i]), model[i]) << "round " << round;
  }
  reopen();
  a = array(4096);
  for (size_t i = 0; i < 4096; ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), model[i]) << i;
}

// sw_write_whole under SW_CONFIG_WCL: the bytes are logged and written
// whole, where sw_write of the same unchanged bytes is compared and leaves
// nearly nothing to write; both commit, abort and survive a reopen alike.
// (Fails if an engine's write() ignores ThreadCtx::write_whole.)
TEST_P(EngineTest, WriteWholeIsNotCompared) {
  std::vector<uint64_t> model;
  uint64_t* a = wcl_array(512, &model);
  ASSERT_NE(a, nullptr) << sw_errormsg();
  std::mt19937_64 rng(7);
  for (auto& v : model) v = rng();
  ASSERT_EQ(sw_write(pool_, a, model.data(), 4096), 0) << sw_errormsg();
  auto nvram = [&] {
    sw_stats st{};
    EXPECT_EQ(sw_pool_stats(pool_, &st), 0);
    return st.nvram_words;
  };
  const uint64_t before = nvram();
  ASSERT_EQ(sw_write(pool_, a, model.data(), 4096), 0) << sw_errormsg();
  const uint64_t compared = nvram();
  EXPECT_LT(compared - before, 64u) << "sw_write of unchanged bytes under WCL";
  ASSERT_EQ(sw_write_whole(pool_, a, model.data(), 4096), 0) << sw_errormsg();
  const uint64_t whole = nvram();
  EXPECT_GE(whole - compared, 512u) << "sw_write_whole was compared";
  // Changed bytes: committed, and in an aborted wrap rolled back.
  for (size_t i = 0; i < model.size(); i += 3) model[i] = rng();
  ASSERT_EQ(sw_write_whole(pool_, a, model.data(), 4096), 0) << sw_errormsg();
  if (atomic_engine()) {
    std::vector<uint64_t> other(512, 0x5a5a5a5a5a5a5a5aull);
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    ASSERT_EQ(sw_write_whole(pool_, a, other.data(), 4096), 0) << sw_errormsg();
    EXPECT_EQ(sw_load64(pool_, &a[100]), other[100]) << "the wrap sees its own write";
    ASSERT_EQ(sw_wrap_abort(pool_), 0);
  }
  for (size_t i = 0; i < model.size(); ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), model[i]) << i;
  reopen();
  a = array(512);
  for (size_t i = 0; i < model.size(); ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), model[i]) << "after reopen, " << i;
  EXPECT_EQ(sw_write_whole(pool_, a, nullptr, 8), SW_EINVAL);
  EXPECT_EQ(sw_write_whole(pool_, a, model.data(), 0), 0);
}

// Write-combined logging (SW_CONFIG_WCL): stores of unchanged values,
// half-changed words (paired in the log), sub-word stores, ranges that
// are partly unchanged, aborts — what a wrap reads, commits and aborts is
// as without it, and the counters show each kind.
TEST_P(EngineTest, WriteCombinedLoggingKeepsEveryValue) {
  sw_config c = cfg();
  c.flags |= SW_CONFIG_WCL;
  pool_ = sw_pool_create(path_.c_str(), 64 << 20, &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  uint64_t* a = array(2048);
  std::mt19937_64 rng(41);
  std::vector<uint64_t> model(2048, 0);
  for (size_t i = 0; i < model.size(); ++i) model[i] = rng();
  ASSERT_EQ(sw_write(pool_, a, model.data(), model.size() * 8), 0);
  ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
  for (int round = 0; round < 80; ++round) {
    std::vector<uint64_t> m = model;
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (int k = 0; k < 30; ++k) {
      const size_t i = rng() % m.size();
      switch (rng() % 6) {
        case 0:  // unchanged
          sw_store64(pool_, &a[i], m[i]);
          break;
        case 1:  // low half changed
          sw_store64(pool_, &a[i], m[i] = (m[i] & ~uint64_t{0xFFFFFFFF}) | (rng() & 0xFFFFFFFF));
          break;
        case 2:  // high half changed
          sw_store64(pool_, &a[i], m[i] = (m[i] & 0xFFFFFFFF) | (rng() << 32));
          break;
        case 3: {  // a byte
          const auto b = static_cast<uint8_t>(rng());
          sw_store8(pool_, reinterpret_cast<uint8_t*>(&a[i]) + 5, b);
          m[i] = (m[i] & ~(uint64_t{0xFF} << 40)) | uint64_t{b} << 40;
          break;
        }
        case 4: {  // a range, most words unchanged, some halves, some whole
          const size_t n = 1 + rng() % 24, first = rng() % (m.size() - n);
          std::vector<uint64_t> vals(m.begin() + first, m.begin() + first + n);
          for (auto& v : vals) {
            const uint64_t r = rng() % 4;
            if (r == 1) v ^= rng() & 0xFFFF;
            if (r == 2) v = rng();
          }
          ASSERT_EQ(sw_write(pool_, &a[first], vals.data(), n * 8), 0) << sw_errormsg();
          std::copy(vals.begin(), vals.end(), m.begin() + first);
          break;
        }
        default:
          sw_store64(pool_, &a[i], m[i] = rng());
      }
      const size_t j = rng() % m.size();
      ASSERT_EQ(sw_load64(pool_, &a[j]), m[j]) << "inside the wrap, round " << round;
    }
    if (atomic_engine() && rng() % 5 == 0) {
      ASSERT_EQ(sw_wrap_abort(pool_), 0);
    } else {
      ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
      model = m;
    }
  }
  sw_stats st{};
  ASSERT_EQ(sw_pool_stats(pool_, &st), 0);
  if (GetParam().engine == SW_ENGINE_SOFTWRAP || GetParam().engine == SW_ENGINE_SOFTWRAP_LOCAL) {
    EXPECT_GT(st.wcl_words_eliminated, 200u);
    EXPECT_GT(st.wcl_words_half, 200u);
    EXPECT_GT(st.wcl_words_paired, 100u);
    EXPECT_GT(st.wcl_words_full, 100u);
    EXPECT_GT(st.log_words_saved, 400u);
  }
  EXPECT_GT(st.nvram_words, 0u);
  EXPECT_GT(st.nvram_lines, 0u);
  reopen();
  a = array(2048);
  for (size_t i = 0; i < model.size(); ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), model[i]) << i;
}

// A compared wrap's stores are compared with what the wrap sees: the
// values its loads found and its earlier stores (remembered, WclSeen in
// wcl_queue.h), whole words waiting in the queue, bytes a range or a
// narrower store changed since the word was loaded.  A word loaded, then
// changed by a range or a byte store, then stored back with the value the
// load found must be logged (a stale remembered value would call it
// unchanged); loads, narrower loads and reads straddling two words see the
// waiting stores; every value survives an abort and a reopen.
TEST_P(EngineTest, WriteCombinedLoggingComparesWithWhatTheWrapSees) {
  sw_config c = cfg();
  c.flags |= SW_CONFIG_WCL;
  pool_ = sw_pool_create(path_.c_str(), 64 << 20, &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  constexpr size_t kWords = 512;
  uint64_t* a = array(kWords);
  std::mt19937_64 rng(43);
  std::vector<uint64_t> model(kWords);
  for (auto& v : model) v = rng() & 0xFFFF;  // small values: stores of small ones change one half
  ASSERT_EQ(sw_write(pool_, a, model.data(), kWords * 8), 0);
  if (atomic_engine()) {
    // What an aborted wrap loaded and stored is not what the next one sees.
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    ASSERT_EQ(sw_load64(pool_, &a[0]), model[0]);
    sw_store64(pool_, &a[0], model[0] + 1);
    ASSERT_EQ(sw_load64(pool_, &a[1]), model[1]);  // the store is compared before this load
    ASSERT_EQ(sw_wrap_abort(pool_), 0);
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    sw_store64(pool_, &a[0], model[0] = model[0] + 1);
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    ASSERT_EQ(sw_load64(pool_, &a[0]), model[0]);
  }
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> m = model;
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (int k = 0; k < 40; ++k) {
      const size_t i = rng() % kWords;
      const uint64_t r = rng() % 3;
      m[i] = r == 0 ? m[i] : r == 1 ? rng() & 0xFFFF : rng();
      sw_store64(pool_, &a[i], m[i]);
      const size_t j = rng() % kWords;
      switch (rng() % 6) {
        case 0:
          ASSERT_EQ(sw_load64(pool_, &a[j]), m[j]) << "round " << round;
          break;
        case 4: {  // load, change with a range, store the loaded value back
          const uint64_t was = sw_load64(pool_, &a[j]);
          const size_t first = j >= 2 ? j - 2 : 0, n = std::min<size_t>(5, kWords - first);
          std::vector<uint64_t> vals(n);
          for (auto& v : vals) v = rng();
          ASSERT_EQ(sw_write(pool_, &a[first], vals.data(), n * 8), 0) << sw_errormsg();
          std::copy(vals.begin(), vals.end(), m.begin() + first);
          sw_store64(pool_, &a[j], m[j] = was);
          break;
        }
        case 5: {  // load, change a byte, store the loaded value back
          const uint64_t was = sw_load64(pool_, &a[j]);
          const auto b = static_cast<uint8_t>(was + 1);
          sw_store8(pool_, reinterpret_cast<uint8_t*>(&a[j]), b);
          ASSERT_EQ(sw_load64(pool_, &a[j]), (was & ~uint64_t{0xFF}) | b) << "round " << round;
          sw_store64(pool_, &a[j], m[j] = was);
          break;
        }
        case 1:  // the high half of a word
          ASSERT_EQ(sw_load32(pool_, reinterpret_cast<uint32_t*>(&a[j]) + 1), static_cast<uint32_t>(m[j] >> 32));
          break;
        case 2: {  // bytes straddling two words
          const size_t at = std::min(j, kWords - 2);
          unsigned char got[8], want[8];
          ASSERT_EQ(sw_read(pool_, got, reinterpret_cast<unsigned char*>(&a[at]) + 4, 8), 0);
          std::memcpy(want, reinterpret_cast<unsigned char*>(&m[at]) + 4, 4);
          std::memcpy(want + 4, &m[at + 1], 4);
          ASSERT_EQ(std::memcmp(got, want, 8), 0) << "round " << round;
          break;
        }
        default: {  // a run of words around the store just made
          const size_t first = i >= 3 ? i - 3 : 0, n = std::min<size_t>(7, kWords - first);
          std::vector<uint64_t> got(n);
          ASSERT_EQ(sw_read(pool_, got.data(), &a[first], n * 8), 0);
          for (size_t x = 0; x < n; ++x) ASSERT_EQ(got[x], m[first + x]) << "round " << round;
        }
      }
    }
    if (atomic_engine() && rng() % 4 == 0) {
      ASSERT_EQ(sw_wrap_abort(pool_), 0);
    } else {
      ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
      model = m;
    }
    for (size_t i = 0; i < kWords; i += 37) ASSERT_EQ(sw_load64(pool_, &a[i]), model[i]) << "round " << round;
  }
  reopen();
  a = array(kWords);
  for (size_t i = 0; i < kWords; ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), model[i]) << i;
}

// Stores that keep changing whole words pause the compare (it would only
// cost a read of each word): the thread's wraps run as without WCL, but
// every 256th, which compares its first two word stores; a half-changed
// or unchanged store found by a sampled wrap resumes it.  Every value survives a reopen (recovery replays the log in
// order).
TEST_P(EngineTest, WriteCombinedLoggingPausesWhereItSavesNothing) {
  if (GetParam().engine != SW_ENGINE_SOFTWRAP && GetParam().engine != SW_ENGINE_SOFTWRAP_LOCAL) GTEST_SKIP();
  std::vector<uint64_t> m;
  uint64_t* a = wcl_array(4096, &m);
  ASSERT_NE(a, nullptr) << sw_errormsg();
  std::mt19937_64 rng(7);
  auto stats = [&] {
    sw_stats st{};
    EXPECT_EQ(sw_pool_stats(pool_, &st), 0);
    return st;
  };
  // Random whole words: the compare stops after its credit.
  for (int round = 0; round < 40; ++round) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (int k = 0; k < 16; ++k) {
      const size_t i = rng() % m.size();
      sw_store64(pool_, &a[i], m[i] = rng());
    }
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  }
  const sw_stats paused = stats();
  EXPECT_GT(paused.wcl_words_uncompared, 400u) << "640 random stores: most go uncompared";
  EXPECT_GT(paused.wcl_words_full, 60u) << "the credit, then every 256th wrap, is compared";
  // Then mostly half-changed stores to a few words, interleaved with whole
  // ones to the same words: a sampled half brings the compare back, and
  // words met again after waiting as halves keep their order.
  for (int round = 0; round < 400; ++round) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (int k = 0; k < 16; ++k) {
      const size_t i = rng() % 8;
      if (rng() % 4 == 0) {
        sw_store64(pool_, &a[i], m[i] = rng());
      } else {
        sw_store64(pool_, &a[i], m[i] ^= rng() & 0xFFFF);
      }
      const size_t j = rng() % 8;
      ASSERT_EQ(sw_load64(pool_, &a[j]), m[j]);
    }
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  }
  const sw_stats resumed = stats();
  EXPECT_GT(resumed.wcl_words_half - paused.wcl_words_half, 200u) << "the compare resumed";
  EXPECT_LT(resumed.wcl_words_uncompared - paused.wcl_words_uncompared, 256u * 16) << "at most one sampling period";
  reopen();  // recovery reads WCL records whatever the opener's flags
  a = array(4096);
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), m[i]) << i;
}

// A paused thread's sampled wrap compares only its first
// WclPolicy::kSampleWords word stores (a cold word's compare is a home
// miss; Table II's array update paid ~0.8 % for comparing all ten); the
// rest of the wrap, a later store to a sampled word included, goes
// uncompared and in order.
TEST_P(EngineTest, WriteCombinedLoggingSamplesOnlyAPausedWrapsFirstStores) {
  if (GetParam().engine != SW_ENGINE_SOFTWRAP && GetParam().engine != SW_ENGINE_SOFTWRAP_LOCAL) {
    GTEST_SKIP() << "no compare to sample";
  }
  constexpr uint64_t kSampleWords = softwrap::WclPolicy::kSampleWords;
  std::vector<uint64_t> m;
  uint64_t* a = wcl_array(4096, &m);
  ASSERT_NE(a, nullptr) << sw_errormsg();
  std::mt19937_64 rng(11);
  auto random_wraps = [&](int wraps) {
    for (int round = 0; round < wraps; ++round) {
      ASSERT_EQ(sw_wrap_open(pool_), 0);
      size_t first = 0;
      for (int k = 0; k < 16; ++k) {
        const size_t i = k == 2 ? first : rng() % m.size();  // the third store rewrites the first's word
        if (k == 0) first = i;
        sw_store64(pool_, &a[i], m[i] = rng());
      }
      ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    }
  };
  auto stats = [&] {
    sw_stats st{};
    EXPECT_EQ(sw_pool_stats(pool_, &st), 0);
    return st;
  };
  random_wraps(40);  // spends the credit: paused
  const sw_stats paused = stats();
  random_wraps(600);  // two or three sampled wraps
  const sw_stats after = stats();
  const uint64_t compared = (after.wcl_words_full + after.wcl_words_half + after.wcl_words_eliminated) -
                            (paused.wcl_words_full + paused.wcl_words_half + paused.wcl_words_eliminated);
  EXPECT_EQ(compared + after.wcl_words_uncompared - paused.wcl_words_uncompared, 600u * 16);
  EXPECT_GE(compared, 2 * kSampleWords) << "every 256th wrap samples";
  EXPECT_LE(compared, 3 * kSampleWords) << "a sampled wrap compares only its first stores";
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), m[i]) << i;
  reopen();  // recovery reads WCL records whatever the opener's flags
  a = array(4096);
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), m[i]) << i;
}

// Issue 13's "lane history" case: right after commits that left their
// frames in the lane (not retired yet), a wrap larger than the lane's free
// space commits at once — it continues in log extents instead of waiting
// for retirement that only its own close could allow (which used to fail
// it with SW_ETOOBIG after a 2-second wait).
TEST_P(EngineTest, WrapAfterCommitsThatFilledTheLaneCommitsWithoutWaiting) {
  if (!atomic_engine()) GTEST_SKIP() << "nonatomic keeps no log";
  sw_config c = cfg(0, 64 << 10);
  c.lanes = 1;
  c.flags |= SW_CONFIG_NO_RETIRE_THREAD;  // nothing retires behind the test's back
  pool_ = sw_pool_create(path_.c_str(), 64 << 20, &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  auto* root = static_cast<uint64_t*>(sw_pool_root(pool_, 64));
  auto* data = static_cast<unsigned char*>(sw_pmalloc_slot(pool_, root, 1 << 20));
  ASSERT_NE(data, nullptr);
  std::vector<unsigned char> piece(8 << 10, 0x5A);
  for (int i = 0; i < 6; ++i) ASSERT_EQ(sw_write(pool_, data + i * piece.size(), piece.data(), piece.size()), 0);
  std::vector<unsigned char> big(100 << 10, 0xA5);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  ASSERT_EQ(sw_write(pool_, data + (200 << 10), big.data(), big.size()), 0) << sw_errormsg();
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 1.0) << "the wrap waited (it used to wait 2 s and fail)";
  std::vector<unsigned char> got(big.size());
  ASSERT_EQ(sw_read(pool_, got.data(), data + (200 << 10), got.size()), 0);
  EXPECT_TRUE(got == big);
}

// Back-to-back wraps that each need most of the free heap for log extents:
// a wrap whose extents the heap cannot give at once must wait for the
// frames before it to retire (they hold the extents until they are home),
// not fail with SW_ETOOBIG.  With and without the retirement thread, in a
// pool that cannot grow.
TEST_P(EngineTest, BackToBackLargeWrapsWaitForLogExtentsInsteadOfFailing) {
  if (!atomic_engine()) GTEST_SKIP() << "nonatomic keeps no log";
  for (const bool retire_thread : {true, false}) {
    SCOPED_TRACE(retire_thread ? "retirement thread" : "no retirement thread");
    sw_pool_close(pool_);
    pool_ = nullptr;
    ::unlink(path_.c_str());
    sw_config c = cfg(0, 64 << 10);
    c.lanes = 2;
    if (!retire_thread) c.flags |= SW_CONFIG_NO_RETIRE_THREAD;
    pool_ = sw_pool_create(path_.c_str(), 32 << 20, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    auto* root = static_cast<uint64_t*>(sw_pool_root(pool_, 64));
    ASSERT_NE(root, nullptr);
    constexpr size_t kData = 8 << 20;
    auto* data = static_cast<unsigned char*>(sw_pmalloc_slot(pool_, root, kData));
    ASSERT_NE(data, nullptr) << sw_errormsg();
    // Each wrap rewrites all of `data`: its log (in extents: the lanes are
    // small) needs more than kData bytes, and the heap left over holds one
    // such log but not two (the pool cannot grow: its size is its maximum).
    std::vector<unsigned char> v(kData);
    for (int round = 1; round <= 6; ++round) {
      std::fill(v.begin(), v.end(), static_cast<unsigned char>(round));
      ASSERT_EQ(sw_wrap_open(pool_), 0);
      ASSERT_EQ(sw_write(pool_, data, v.data(), v.size()), 0) << "round " << round << ": " << sw_errormsg();
      ASSERT_EQ(sw_wrap_close(pool_), 0) << "round " << round << ": " << sw_errormsg();
    }
    std::vector<unsigned char> got(kData);
    ASSERT_EQ(sw_read(pool_, got.data(), data, got.size()), 0);
    EXPECT_TRUE(got == v);
    // A log much larger than the wrap's alias entries: the same 512 words
    // stored over and over.  Such a wrap leaves its table far below a
    // switch, so the next wrap would share the table with the frame that
    // holds the extents (and could not wait for it) unless it opens in a
    // new table.
    auto* words = reinterpret_cast<uint64_t*>(data);
    constexpr uint64_t kStores = (kData + kData / 2) / 16;
    for (uint64_t round = 1; round <= 4; ++round) {
      ASSERT_EQ(sw_wrap_open(pool_), 0);
      for (uint64_t i = 0; i < kStores; ++i) sw_store64(pool_, &words[i % 512], round << 32 | i);
      ASSERT_EQ(sw_wrap_close(pool_), 0) << "repeated stores, round " << round << ": " << sw_errormsg();
    }
    for (uint64_t i = kStores - 512; i < kStores; ++i) ASSERT_EQ(sw_load64(pool_, &words[i % 512]), uint64_t{4} << 32 | i);
  }
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

// The same with write-combined logging, in word stores: the queued stores
// that run the pool out of space fail when a narrower store compares the
// queue, and nothing after them touches the rolled-back wrap.
TEST_P(EngineTest, WclStoresLargerThanTheFreePoolFailCleanly) {
  if (GetParam().engine != SW_ENGINE_SOFTWRAP && GetParam().engine != SW_ENGINE_SOFTWRAP_LOCAL) GTEST_SKIP();
  sw_config c = cfg(0, 64 << 10);
  c.flags |= SW_CONFIG_WCL;
  pool_ = sw_pool_create(path_.c_str(), 16 << 20, &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  auto* root = static_cast<uint64_t*>(sw_pool_root(pool_, 64));
  ASSERT_NE(root, nullptr);
  constexpr size_t kWords = 1 << 20;  // 8 MiB of words, 16 MiB of records changing both halves
  auto* a = static_cast<uint64_t*>(sw_pzalloc_slot(pool_, root, kWords * 8));
  ASSERT_NE(a, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  for (size_t i = 0; i < kWords; ++i) {
    sw_store64(pool_, &a[i], (i + 1) * 0x0001000100010001ull);
    if (i % 15 == 14) sw_store8(pool_, reinterpret_cast<uint8_t*>(&a[i - 7]) + 3, 0x5A);
  }
  EXPECT_EQ(sw_wrap_close(pool_), SW_EABORTED);
  for (size_t i = 0; i < kWords; ++i) ASSERT_EQ(sw_load64(pool_, &a[i]), 0u) << i;
  sw_store64(pool_, &a[0], 99);  // the pool keeps working
  reopen();
  a = static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, static_cast<uint64_t*>(sw_pool_root(pool_, 0)))));
  EXPECT_EQ(sw_load64(pool_, &a[0]), 99u);
  EXPECT_EQ(sw_load64(pool_, &a[1]), 0u);
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

// Wraps of `stores` sw_store64 to distinct words plus one sw_write of 8
// fresh words; the counters after them.
sw_stats run_counted_wraps(sw_pool* p, int wraps, int stores) {
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, 64 * 1024));
  EXPECT_NE(a, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_stats_reset(p), 0);
  uint64_t block[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int w = 0; w < wraps; ++w) {
    EXPECT_EQ(sw_wrap_open(p), 0);
    for (int k = 0; k < stores; ++k) sw_store64(p, &a[(w * 64 + k * 3) % 8192], w + k + 1);
    EXPECT_EQ(sw_write(p, &a[8192 + w * 8], block, sizeof block), 0);
    EXPECT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
  }
  EXPECT_EQ(sw_pool_quiesce(p), 0);
  sw_stats st{};
  EXPECT_EQ(sw_pool_stats(p, &st), 0);
  return st;
}

class FenceKindTest : public ::testing::TestWithParam<Param> {};

// Fences are counted by kind, and the kinds add up: undo fences each undo
// record (or run of records written by one sw_write) before its data
// store, then the data before the commit mark, then the mark; undo-themis
// issues none of the first kind and counts them as elided instead.
TEST_P(FenceKindTest, FencesAreCountedByWhatTheyOrder) {
  const std::string path = temp_pool((std::string("fk_") + GetParam().name).c_str());
  unlink(path.c_str());
  sw_config c{};
  c.engine = GetParam().engine;
  c.flags = softwrap::testing::engine_flags(c.engine);
  c.medium = SW_MEDIUM_X86;
  sw_pool* p = sw_pool_create(path.c_str(), 64 << 20, &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  constexpr int kWraps = 50, kStores = 6;
  const sw_stats st = run_counted_wraps(p, kWraps, kStores);
  EXPECT_EQ(st.fences, st.fences_commit + st.fences_log + st.fences_retire + st.fences_data + st.fences_other);
  EXPECT_EQ(st.fences_commit, uint64_t{kWraps});
  const uint64_t points = kWraps * (kStores + 1);  // one per sw_store64 record, one per sw_write
  uint64_t cycles = 0, events = 0;
  for (unsigned b = 0; b < SW_GAP_BUCKETS; ++b) {
    cycles += st.removable_gap_cycles[b];
    events += st.removable_gap_events[b];
  }
  EXPECT_EQ(cycles, st.removable_gaps);
  EXPECT_EQ(events, st.removable_gaps);
  switch (GetParam().engine) {
    case SW_ENGINE_UNDO:
      EXPECT_EQ(st.fences_log, points);
      EXPECT_EQ(st.fences_elided, 0u);
      EXPECT_EQ(st.fences_data, uint64_t{kWraps});
      EXPECT_EQ(st.removable_gaps, points - 1);
      EXPECT_EQ(st.removable_gap_events[0], 0u) << "a record, a fence and a store lie between two points";
      break;
    case SW_ENGINE_UNDO_THEMIS:
      EXPECT_EQ(st.fences_log, 0u) << "undo-themis issues no non-temporal -> temporal fence";
      EXPECT_EQ(st.fences_elided, points);
      EXPECT_EQ(st.fences_data, uint64_t{kWraps});
      EXPECT_EQ(st.removable_gaps, points - 1);
      break;
    default:
      EXPECT_EQ(st.fences_log + st.fences_elided + st.fences_data + st.removable_gaps, 0u);
      break;
  }
  EXPECT_STREQ(sw_pool_engine_name(p), GetParam().name);
  EXPECT_EQ(sw_pool_close(p), 0);
  unlink(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(AllEngines, FenceKindTest, softwrap::testing::all_engines(),
                         softwrap::testing::EngineParamName());

// undo-themis is refused on every real medium unless the caller opts in to
// the paper's Ideal, by flag or environment; a refused create leaves no
// file and a refused open leaves the file as it was.
TEST(UndoThemis, RefusedOnRealMediaUnlessOptedIn) {
  const std::string path = temp_pool("themis_guard");
  unlink(path.c_str());
  for (sw_medium_kind m : {SW_MEDIUM_X86, SW_MEDIUM_MSYNC, SW_MEDIUM_SCM_EMU}) {
    sw_config c{};
    c.engine = SW_ENGINE_UNDO_THEMIS;
    c.medium = m;
    EXPECT_EQ(sw_pool_create(path.c_str(), 16 << 20, &c), nullptr);
    EXPECT_EQ(sw_errno(), SW_ENOTSUP);
    EXPECT_NE(std::string(sw_errormsg()).find("Themis rule"), std::string::npos) << sw_errormsg();
    EXPECT_NE(std::string(sw_errormsg()).find("SW_CONFIG_THEMIS_IDEAL"), std::string::npos) << sw_errormsg();
    EXPECT_NE(access(path.c_str(), F_OK), 0) << "a refused create left its file";
  }
  // A pool made by undo, with a committed wrap, then opened as undo-themis.
  sw_config u{};
  u.engine = SW_ENGINE_UNDO;
  u.medium = SW_MEDIUM_X86;
  sw_pool* p = sw_pool_create(path.c_str(), 16 << 20, &u);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, 64));
  sw_store64(p, a, 42);
  ASSERT_EQ(sw_pool_close(p), 0);
  sw_config t{};
  t.engine = SW_ENGINE_UNDO_THEMIS;
  t.medium = SW_MEDIUM_X86;
  EXPECT_EQ(sw_pool_open(path.c_str(), &t), nullptr);
  EXPECT_EQ(sw_errno(), SW_ENOTSUP);
  EXPECT_NE(std::string(sw_errormsg()).find("x86"), std::string::npos) << sw_errormsg();
  setenv("SOFTWRAP_THEMIS_IDEAL", "1", 1);
  p = sw_pool_open(path.c_str(), &t);
  unsetenv("SOFTWRAP_THEMIS_IDEAL");
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_STREQ(sw_pool_engine_name(p), "undo-themis");
  EXPECT_EQ(sw_load64(p, sw_pool_root(p, 0)), 42u);
  ASSERT_EQ(sw_pool_close(p), 0);
  t.flags = SW_CONFIG_THEMIS_IDEAL;
  setenv("SOFTWRAP_THEMIS_IDEAL", "0", 1);  // the environment wins over the flag
  EXPECT_EQ(sw_pool_open(path.c_str(), &t), nullptr);
  EXPECT_EQ(sw_errno(), SW_ENOTSUP);
  setenv("SOFTWRAP_THEMIS_IDEAL", "yes", 1);
  EXPECT_EQ(sw_pool_open(path.c_str(), &t), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  unsetenv("SOFTWRAP_THEMIS_IDEAL");
  p = sw_pool_open(path.c_str(), &t);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_load64(p, sw_pool_root(p, 0)), 42u);
  ASSERT_EQ(sw_pool_close(p), 0);
  setenv("SOFTWRAP_ENGINE", "undo-themis", 1);
  sw_config x{};
  x.medium = SW_MEDIUM_X86;
  EXPECT_EQ(sw_pool_open(path.c_str(), &x), nullptr) << "SOFTWRAP_ENGINE=undo-themis is guarded too";
  EXPECT_EQ(sw_errno(), SW_ENOTSUP);
  unsetenv("SOFTWRAP_ENGINE");
  unlink(path.c_str());
}

}  // namespace
