// concurrency_test.cc — 8 threads on one pool, for every engine: private
// regions, a shared bank under striped locks ("close before you unlock"),
// neighbours sharing shadow pages, and concurrent allocation.  Run under
// TSan and ASan+UBSan in CI (label `concurrency`).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_params.h"
#include "softwrap/softwrap.h"

namespace {

constexpr int kThreads = 8;

#ifdef SOFTWRAP_SANITIZED
constexpr int kScale = 1;
#else
constexpr int kScale = 4;
#endif

using Param = softwrap::testing::EngineParam;

class ConcurrencyTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_conc_test_" + std::to_string(getpid()) + "_" + GetParam().name;
    unlink(path_.c_str());
    sw_config c = cfg();
    pool_ = sw_pool_create(path_.c_str(), 64 << 20, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
  }
  void TearDown() override {
    if (pool_) {
      EXPECT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    }
    unlink(path_.c_str());
  }
  sw_config cfg() {
    sw_config c{};
    c.engine = GetParam().engine;
    c.flags = softwrap::testing::engine_flags(c.engine);
    c.medium = SW_MEDIUM_X86;
    c.alias_entries = 1024;  // switches and retirement happen often
    return c;
  }
  void reopen() {
    ASSERT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    sw_config c = cfg();
    pool_ = sw_pool_open(path_.c_str(), &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
  }
  template <class F>
  void run_threads(F&& f) {
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t) ts.emplace_back([&, t] { f(t); });
    for (auto& t : ts) t.join();
  }

  std::string path_;
  sw_pool* pool_ = nullptr;
};

TEST_P(ConcurrencyTest, PrivateRegionsEndAsEachThreadLeftThem) {
  constexpr size_t kWords = 512;
  auto* a = static_cast<uint64_t*>(sw_pool_root(pool_, kThreads * kWords * 8));
  ASSERT_NE(a, nullptr);
  std::vector<std::vector<uint64_t>> oracle(kThreads, std::vector<uint64_t>(kWords, 0));
  std::atomic<int> errors{0};
  run_threads([&](int t) {
    std::mt19937_64 rng(t + 1);
    uint64_t* mine = a + t * kWords;
    for (int w = 0; w < 400 * kScale; ++w) {
      if (sw_wrap_open(pool_) != 0) ++errors;
      std::vector<uint64_t> before = oracle[t];
      for (int k = 0; k < 10; ++k) {
        const size_t i = rng() % kWords;
        const uint64_t v = rng();
        sw_store64(pool_, &mine[i], v);
        oracle[t][i] = v;
        if (sw_load64(pool_, &mine[i]) != v) ++errors;
      }
      if (GetParam().engine != SW_ENGINE_NONATOMIC && w % 7 == 0) {
        if (sw_wrap_abort(pool_) != 0) ++errors;
        oracle[t] = before;
      } else if (sw_wrap_close(pool_) != 0) {
        ++errors;
      }
    }
  });
  ASSERT_EQ(errors.load(), 0);
  for (int t = 0; t < kThreads; ++t)
    for (size_t i = 0; i < kWords; ++i) ASSERT_EQ(sw_load64(pool_, &a[t * kWords + i]), oracle[t][i]);
  reopen();
  a = static_cast<uint64_t*>(sw_pool_root(pool_, 0));
  for (int t = 0; t < kThreads; ++t)
    for (size_t i = 0; i < kWords; ++i) ASSERT_EQ(a[t * kWords + i], oracle[t][i]);
}

TEST_P(ConcurrencyTest, BankTransfersUnderStripedLocksKeepTheSum) {
  constexpr int kAccounts = 256, kStripes = 16;
  auto* acct = static_cast<uint64_t*>(sw_pool_root(pool_, (kAccounts + 1) * 8));
  ASSERT_NE(acct, nullptr);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  for (int i = 0; i < kAccounts; ++i) sw_store64(pool_, &acct[i], 1000);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  std::mutex stripes[kStripes];
  std::mutex counter_mu;
  run_threads([&](int t) {
    std::mt19937_64 rng(100 + t);
    for (int n = 0; n < 500 * kScale; ++n) {
      int a = rng() % kAccounts, b = rng() % kAccounts;
      if (a == b) continue;
      int sa = a % kStripes, sb = b % kStripes;
      std::unique_lock<std::mutex> l1(stripes[std::min(sa, sb)]);
      std::unique_lock<std::mutex> l2;
      if (sa != sb) l2 = std::unique_lock<std::mutex>(stripes[std::max(sa, sb)]);
      std::lock_guard<std::mutex> lc(counter_mu);
      sw_wrap_open(pool_);
      const uint64_t amt = rng() % 50;
      const uint64_t va = sw_load64(pool_, &acct[a]);
      if (va >= amt) {
        sw_store64(pool_, &acct[a], va - amt);
        sw_store64(pool_, &acct[b], sw_load64(pool_, &acct[b]) + amt);
        sw_store64(pool_, &acct[kAccounts], sw_load64(pool_, &acct[kAccounts]) + 1);
      }
      sw_wrap_close(pool_);  // close before unlock
    }
  });
  uint64_t sum = 0;
  for (int i = 0; i < kAccounts; ++i) sum += sw_load64(pool_, &acct[i]);
  EXPECT_EQ(sum, uint64_t{kAccounts} * 1000);
  EXPECT_GT(sw_load64(pool_, &acct[kAccounts]), 0u);
  reopen();
  acct = static_cast<uint64_t*>(sw_pool_root(pool_, 0));
  sum = 0;
  for (int i = 0; i < kAccounts; ++i) sum += acct[i];
  EXPECT_EQ(sum, uint64_t{kAccounts} * 1000);
}

TEST_P(ConcurrencyTest, NeighboursSharingShadowPagesDoNotDisturbEachOther) {
  // 8 threads x 64-byte objects packed into the same 1 KiB pages; each
  // thread writes only its own objects, with sw_write, sw_store and aborts.
  constexpr size_t kObj = 64, kPerThread = 32;
  auto* base = static_cast<unsigned char*>(sw_pool_root(pool_, kThreads * kPerThread * kObj));
  ASSERT_NE(base, nullptr);
  std::vector<std::vector<unsigned char>> oracle(kThreads, std::vector<unsigned char>(kPerThread * kObj, 0));
  std::atomic<int> errors{0};
  run_threads([&](int t) {
    std::mt19937_64 rng(500 + t);
    for (int w = 0; w < 200 * kScale; ++w) {
      std::vector<unsigned char> before = oracle[t];
      sw_wrap_open(pool_);
      for (int k = 0; k < 4; ++k) {
        const size_t obj = rng() % kPerThread;
        unsigned char* o = base + (obj * kThreads + t) * kObj;  // interleaved with the others
        if (rng() % 2) {
          unsigned char data[kObj];
          for (auto& c : data) c = static_cast<unsigned char>(rng());
          if (sw_write(pool_, o, data, kObj) != 0) ++errors;
          std::memcpy(&oracle[t][obj * kObj], data, kObj);
        } else {
          const size_t wi = rng() % (kObj / 8);
          const uint64_t v = rng();
          sw_store64(pool_, o + wi * 8, v);
          std::memcpy(&oracle[t][obj * kObj + wi * 8], &v, 8);
        }
        unsigned char got[kObj];
        sw_read(pool_, got, o, kObj);
        if (std::memcmp(got, &oracle[t][obj * kObj], kObj) != 0) ++errors;
      }
      if (GetParam().engine != SW_ENGINE_NONATOMIC && w % 5 == 0) {
        sw_wrap_abort(pool_);
        oracle[t] = before;
      } else {
        sw_wrap_close(pool_);
      }
    }
  });
  ASSERT_EQ(errors.load(), 0);
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  for (int t = 0; t < kThreads; ++t)
    for (size_t obj = 0; obj < kPerThread; ++obj)
      ASSERT_EQ(0, std::memcmp(base + (obj * kThreads + t) * kObj, &oracle[t][obj * kObj], kObj)) << t << " " << obj;
}

// A word one thread rewrites whole, wrap after wrap, is read whole by
// another: sw_load64 returns one of the values stored, never bytes of two
// (as an aligned 8-byte load does on x86).  Two patterns with no byte in
// common make any mix visible.  Under softwrap the words live in a shadow
// page (sw_write, and a store to a word of a page the table shadows), whose
// bytes a reader once took one at a time.
TEST_P(ConcurrencyTest, AWordRewrittenWholeIsNeverReadTorn) {
  constexpr uint64_t kA = 0x0123456789abcdefull, kB = ~kA;
  auto* w = static_cast<uint64_t*>(sw_pool_root(pool_, 1024));
  ASSERT_NE(w, nullptr);
  std::atomic<bool> writing{true};
  std::atomic<int> errors{0};
  std::atomic<uint64_t> torn{0};
  std::thread writer([&] {
    for (int n = 0; n < 5000 * kScale; ++n) {
      const uint64_t v = n % 2 ? kA : kB;
      if (sw_wrap_open(pool_) != 0) ++errors;
      if (sw_write(pool_, &w[0], &v, 8) != 0) ++errors;  // w[0] by range: the page's bytes
      sw_store64(pool_, &w[1], v);                         // w[1] by store, into the same page
      if (sw_wrap_close(pool_) != 0) ++errors;
    }
    writing.store(false);
  });
  uint64_t loads = 0;
  while (writing.load()) {
    for (int i = 0; i < 2; ++i) {
      const uint64_t v = sw_load64(pool_, &w[i]);
      if (v != 0 && v != kA && v != kB) torn.store(v);
    }
    ++loads;
  }
  writer.join();
  ASSERT_EQ(errors.load(), 0) << sw_errormsg();
  EXPECT_EQ(torn.load(), 0u) << std::hex << "a load returned 0x" << torn.load() << ", bytes of two stores, in "
                             << std::dec << loads << " pairs of loads";
  EXPECT_GT(loads, 0u);
}

TEST_P(ConcurrencyTest, ConcurrentAllocationsNeverOverlap) {
  auto* root = static_cast<uint64_t*>(sw_pool_root(pool_, kThreads * 8));
  ASSERT_NE(root, nullptr);
  std::vector<std::vector<std::pair<uintptr_t, size_t>>> live(kThreads);
  std::atomic<int> errors{0};
  run_threads([&](int t) {
    std::mt19937_64 rng(900 + t);
    for (int n = 0; n < 150 * kScale; ++n) {
      sw_wrap_open(pool_);
      if (!live[t].empty() && rng() % 3 == 0) {
        const size_t k = rng() % live[t].size();
        if (sw_pfree(pool_, reinterpret_cast<void*>(live[t][k].first)) != 0) ++errors;
        live[t].erase(live[t].begin() + k);
      } else {
        const size_t sz = 8 + rng() % 3000;
        void* p = sw_pmalloc(pool_, sz);
        if (!p) {
          ++errors;
        } else {
          live[t].emplace_back(reinterpret_cast<uintptr_t>(p), sz);
          sw_store64(pool_, p, t);
        }
      }
      sw_wrap_close(pool_);
    }
  });
  ASSERT_EQ(errors.load(), 0) << sw_errormsg();
  std::vector<std::pair<uintptr_t, size_t>> all;
  for (int t = 0; t < kThreads; ++t) {
    for (auto& [p, sz] : live[t]) {
      all.emplace_back(p, sz);
      EXPECT_EQ(sw_load64(pool_, reinterpret_cast<void*>(p)), uint64_t(t));
    }
  }
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i) ASSERT_LE(all[i - 1].first + all[i - 1].second, all[i].first);
}

INSTANTIATE_TEST_SUITE_P(AllEngines, ConcurrencyTest, softwrap::testing::all_engines(),
                         softwrap::testing::EngineParamName());

}  // namespace
