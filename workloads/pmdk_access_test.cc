// pmdk_access_test.cc — PmdkAccess, the peer of `softwrap bench limit`:
// workloads set up, run and verify on a libpmemobj pool, and again after
// the pool is closed and reopened (offsets are relative to the pool); an
// abort rolls back the outermost transaction, nested transactions commit
// with it, and a store outside a transaction is one of its own.  Built
// only where pkg-config finds libpmemobj.
#include "workloads/pmdk_access.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "workloads/registry.h"
#include "workloads/runner.h"

namespace softwrap::workloads {
namespace {

std::string pool_path(const std::string& tag) {
  return "/dev/shm/sw_pmdk_access_test_" + std::to_string(getpid()) + "_" + tag;
}

Params small(const Info& info) {
  Params p;
  p.threads = 1;
  p.seed = 7;
  p.scale = info.small_scale;
  return resolve(info, p);
}

// Allocating and freeing (cq, hashmap), array rewriting (sps), B+trees
// (vacation), aborted wraps (labyrinth, tpcc).
const char* const kWorkloads[] = {"cq", "hashmap", "sps", "tpcc", "vacation", "labyrinth"};

class PmdkAccessWorkloadTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PmdkAccessWorkloadTest, SetsUpRunsAndVerifiesAndAgainAfterReopen) {
  const Info* info = find_workload(GetParam());
  ASSERT_NE(info, nullptr);
  const Params p = small(*info);
  PmdkPool pool(pool_path(info->name), 2 * pool_bytes(*info, p) + (32u << 20));
  {
    std::vector<PmdkAccess> acc{PmdkAccess(pool.pop())};
    auto w = make_workload(info->name, &acc, p);
    ASSERT_NE(w, nullptr);
    ASSERT_NO_THROW(w->setup());
    EXPECT_EQ(w->verify(), "") << "after setup";
    try {
      run_threads(*w, 300);
    } catch (const WorkloadError& e) {
      FAIL() << e.what();
    }
    EXPECT_EQ(w->verify(), "") << "after 300 transactions";
    EXPECT_EQ(pmemobj_tx_stage(), TX_STAGE_NONE);
  }
  pool.close();
  PmdkPool reopened(pool.path());
  std::vector<PmdkAccess> acc{PmdkAccess(reopened.pop())};
  auto w = make_workload(info->name, &acc, p);
  ASSERT_NO_THROW(w->attach());
  EXPECT_EQ(w->verify(), "") << "after reopening";
  ASSERT_NO_THROW(run_threads(*w, 100));
  EXPECT_EQ(w->verify(), "") << "after running on the reopened pool";
}

INSTANTIATE_TEST_SUITE_P(Some, PmdkAccessWorkloadTest, ::testing::ValuesIn(kWorkloads),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

struct Root {
  uint64_t a, b;
};

TEST(PmdkAccess, AbortRollsBackTheOutermostTransaction) {
  PmdkPool pool(pool_path("abort"), 16u << 20);
  PmdkAccess acc(pool.pop());
  auto* r = static_cast<Root*>(acc.root(sizeof(Root)));
  EXPECT_EQ(acc.load(&r->a), 0u);  // zeroed
  acc.store(&r->a, uint64_t{1});   // a transaction of its own
  EXPECT_EQ(pmemobj_tx_stage(), TX_STAGE_NONE);
  {
    Wrap<PmdkAccess> outer(acc);
    acc.store(&r->a, uint64_t{2});
    {
      Wrap<PmdkAccess> inner(acc);
      acc.store(&r->b, uint64_t{3});
      inner.commit();
    }
    outer.abort();
  }
  EXPECT_EQ(pmemobj_tx_stage(), TX_STAGE_NONE);
  EXPECT_EQ(r->a, 1u);
  EXPECT_EQ(r->b, 0u);
  {
    Wrap<PmdkAccess> outer(acc);
    acc.store(&r->a, uint64_t{4});
    {
      Wrap<PmdkAccess> inner(acc);
      acc.store(&r->b, uint64_t{5});
      inner.commit();
    }
    outer.commit();
  }
  EXPECT_EQ(r->a, 4u);
  EXPECT_EQ(r->b, 5u);
}

TEST(PmdkAccess, BlocksAndOffsetsAreThePools) {
  PmdkPool pool(pool_path("alloc"), 16u << 20);
  PmdkAccess acc(pool.pop());
  EXPECT_EQ(acc.off(nullptr), 0u);
  EXPECT_EQ(acc.ptr<void>(0), nullptr);
  void* p = acc.alloc(100);  // outside a transaction: one of its own
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(acc.ptr<void>(acc.off(p)), p);
  EXPECT_EQ(acc.off(p), pmemobj_oid(p).off);
  const uint64_t v[2] = {7, 8};
  acc.write(p, v, sizeof v);
  uint64_t got[2] = {};
  acc.read(got, p, sizeof got);
  EXPECT_EQ(got[1], 8u);
  acc.free(p);
  // A failure throws and leaves no transaction open.
  EXPECT_THROW(acc.alloc(size_t{1} << 40), WorkloadError);
  EXPECT_EQ(pmemobj_tx_stage(), TX_STAGE_NONE);
  {
    Wrap<PmdkAccess> w(acc);
    EXPECT_THROW(acc.alloc(size_t{1} << 40), WorkloadError);
  }
  EXPECT_EQ(pmemobj_tx_stage(), TX_STAGE_NONE);
}

}  // namespace
}  // namespace softwrap::workloads
