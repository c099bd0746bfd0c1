// plain_access_test.cc — PlainAccess, the limit of `softwrap bench limit`:
// workloads set up, run and verify on it with one and two threads; its
// heap hands out aligned blocks, keeps one zeroed root and frees what the
// workload left (ASan's leak check holds it to that).
#include "workloads/plain_access.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workloads/registry.h"
#include "workloads/runner.h"

namespace softwrap::workloads {
namespace {

Params small(const Info& info, uint32_t threads) {
  Params p;
  p.threads = threads;
  p.seed = 7;
  p.scale = info.small_scale;
  return resolve(info, p);
}

// Workloads that allocate and free in their transactions (cq, hashmap,
// ll), rewrite an array in place (sps), grow B+trees (vacation) and abort
// wraps (labyrinth, tpcc).
const char* const kWorkloads[] = {"cq", "hashmap", "ll", "sps", "tpcc", "vacation", "labyrinth"};

class PlainAccessWorkloadTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PlainAccessWorkloadTest, SetsUpRunsAndVerifiesWithOneAndTwoThreads) {
  const Info* info = find_workload(GetParam());
  ASSERT_NE(info, nullptr);
  for (uint32_t threads : {1u, 2u}) {
    SCOPED_TRACE(std::to_string(threads) + " thread(s)");
    PlainHeap heap;
    std::vector<PlainAccess> acc;
    for (uint32_t t = 0; t < threads; ++t) acc.push_back(heap.access());
    auto w = make_workload(info->name, &acc, small(*info, threads));
    ASSERT_NE(w, nullptr);
    ASSERT_NO_THROW(w->setup());
    EXPECT_EQ(w->verify(), "") << "after setup";
    try {
      run_threads(*w, 300);
    } catch (const WorkloadError& e) {
      FAIL() << e.what();
    }
    EXPECT_EQ(w->verify(), "") << "after 300 transactions per thread";
  }
}

INSTANTIATE_TEST_SUITE_P(Some, PlainAccessWorkloadTest, ::testing::ValuesIn(kWorkloads),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

TEST(PlainAccess, VerifyNoticesDamage) {
  PlainHeap heap;
  std::vector<PlainAccess> acc{heap.access()};
  auto w = make_workload("sps", &acc, small(kSpsInfo, 1));
  w->setup();
  run_threads(*w, 20);
  ASSERT_EQ(w->verify(), "");
  w->damage();
  EXPECT_NE(w->verify(), "");
}

TEST(PlainAccess, BlocksAreAlignedAndOffsetsRoundTrip) {
  PlainHeap heap;
  PlainAccess a = heap.access();
  EXPECT_EQ(a.off(nullptr), 0u);
  EXPECT_EQ(a.ptr<void>(0), nullptr);
  std::vector<void*> blocks;
  for (size_t n : {0, 1, 8, 17, 48, 4096, 100000}) {
    void* p = a.alloc(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << n << " bytes";
    EXPECT_NE(a.off(p), 0u);
    EXPECT_EQ(a.ptr<void>(a.off(p)), p);
    blocks.push_back(p);
  }
  // Freed by hand or left to the heap: both end freed exactly once.
  a.free(blocks[1]);
  a.free(blocks[3]);
  a.free(nullptr);
  void* again = a.alloc(1);  // the allocator may reuse a freed address
  a.store(static_cast<uint8_t*>(again), uint8_t{9});
  EXPECT_EQ(a.load(static_cast<uint8_t*>(again)), 9);
}

TEST(PlainAccess, RootIsZeroedAndTheSameEachTime) {
  PlainHeap heap;
  PlainAccess a = heap.access();
  auto* r = static_cast<uint64_t*>(a.root(64));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a.load(&r[i]), 0u);
  a.store(&r[3], uint64_t{42});
  EXPECT_EQ(heap.access().root(64), r);
  EXPECT_EQ(a.root(32), r);
  EXPECT_THROW(a.root(128), WorkloadError);
  EXPECT_EQ(r[3], 42u);
}

TEST(PlainAccess, WrapsKeepOnlyTheirDepth) {
  PlainHeap heap;
  PlainAccess a = heap.access();
  EXPECT_THROW(a.close(), WorkloadError);
  a.open();
  a.open();
  a.close();
  a.abort();  // ends every level
  EXPECT_THROW(a.close(), WorkloadError);
  uint64_t word = 0;
  {
    Wrap<PlainAccess> w(a);
    a.store(&word, uint64_t{5});
    uint64_t copy = 0;
    a.read(&copy, &word, 8);
    EXPECT_EQ(copy, 5u);
    w.commit();
  }
  EXPECT_EQ(word, 5u);
}

}  // namespace
}  // namespace softwrap::workloads
