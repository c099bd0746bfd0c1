// workloads_test.cc — every workload, small, on every engine with one and
// two threads: the structure verifies after setup, after the run, and
// after the pool is closed and reopened (attach); a deliberately broken
// structure fails verify(); the stores per transaction are what each
// workload's definition says.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/registry.h"
#include "workloads/runner.h"

namespace softwrap::workloads {
namespace {

struct EngineName {
  sw_engine_kind kind;
  const char* name;
};
const EngineName kEngines[] = {{SW_ENGINE_SOFTWRAP, "softwrap"},
                               {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap_local"},
                               {SW_ENGINE_UNDO, "undo"},
                               {SW_ENGINE_UNDO_THEMIS, "undo_themis"},
                               {SW_ENGINE_NONATOMIC, "nonatomic"}};

std::string pool_path(const std::string& tag) {
  return "/dev/shm/sw_workloads_test_" + std::to_string(getpid()) + "_" + tag;
}

Params small(const Info& info, uint32_t threads) {
  Params p;
  p.threads = threads;
  p.seed = 7;
  p.scale = info.small_scale;
  return resolve(info, p);
}

// A pool holding one workload, closed and reopened at will.
class Fixture {
 public:
  Fixture(const Info& info, sw_engine_kind engine, const Params& p, const std::string& tag)
      : info_(info), engine_(engine), p_(p), path_(pool_path(tag)) {
    unlink(path_.c_str());
    sw_config c = workload_config(engine, SW_MEDIUM_X86);
    pool_ = sw_pool_create(path_.c_str(), pool_bytes(info, p), &c);
    EXPECT_NE(pool_, nullptr) << sw_errormsg();
    make();
  }
  ~Fixture() {
    w_.reset();
    if (pool_) {
      EXPECT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    }
    unlink(path_.c_str());
  }
  void reopen() {
    w_.reset();
    ASSERT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    sw_config c = workload_config(engine_, SW_MEDIUM_X86);
    pool_ = sw_pool_open(path_.c_str(), &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    make();
  }
  Workload& w() { return *w_; }
  sw_pool* pool() { return pool_; }

 private:
  void make() {
    acc_.assign(p_.threads, ApiAccess(pool_));
    w_ = make_api_workload(info_.name, &acc_, p_);
    ASSERT_NE(w_, nullptr);
  }
  const Info& info_;
  sw_engine_kind engine_;
  Params p_;
  std::string path_;
  sw_pool* pool_ = nullptr;
  std::vector<ApiAccess> acc_;
  std::unique_ptr<Workload> w_;
};

using Case = std::tuple<const Info*, EngineName>;

class WorkloadTest : public ::testing::TestWithParam<Case> {};

TEST_P(WorkloadTest, RunsAndVerifiesWithOneAndTwoThreadsAndAfterReopen) {
  const auto [info, engine] = GetParam();
  for (uint32_t threads : {1u, 2u}) {
    SCOPED_TRACE(std::to_string(threads) + " thread(s)");
    Fixture f(*info, engine.kind, small(*info, threads), std::string(info->name) + "_" + engine.name);
    ASSERT_NO_THROW(f.w().setup());
    EXPECT_EQ(f.w().verify(), "") << "after setup";
    try {
      run_threads(f.w(), 150);
    } catch (const WorkloadError& e) {
      FAIL() << e.what();
    }
    EXPECT_EQ(f.w().verify(), "") << "after the run";
    f.reopen();
    ASSERT_NO_THROW(f.w().attach());
    EXPECT_EQ(f.w().verify(), "") << "after reopening";
    ASSERT_NO_THROW(run_threads(f.w(), 50));
    EXPECT_EQ(f.w().verify(), "") << "after running on the reopened pool";
  }
}

// A workload's name as GoogleTest accepts it in a test name ("stmb7-s" ->
// "stmb7_s").
std::string test_name(std::string name) {
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  return test_name(std::get<0>(i.param)->name) + "_" + std::get<1>(i.param).name;
}

INSTANTIATE_TEST_SUITE_P(All, WorkloadTest,
                         ::testing::Combine(::testing::ValuesIn(all_workloads()), ::testing::ValuesIn(kEngines)),
                         case_name);

// The damage is the same on every engine: one suffices.
class DamageTest : public ::testing::TestWithParam<const Info*> {};

TEST_P(DamageTest, BrokenStructureFailsVerify) {
  const Info* info = GetParam();
  Fixture f(*info, SW_ENGINE_UNDO, small(*info, 1), std::string(info->name) + "_damage");
  f.w().setup();
  run_threads(f.w(), 20);
  ASSERT_EQ(f.w().verify(), "");
  f.w().damage();
  const std::string why = f.w().verify();
  EXPECT_NE(why, "") << "verify() did not notice the damage";
  EXPECT_NE(why.find(info->label), std::string::npos) << "the message names the workload: " << why;
}

INSTANTIATE_TEST_SUITE_P(All, DamageTest, ::testing::ValuesIn(all_workloads()),
                         [](const ::testing::TestParamInfo<const Info*>& i) { return test_name(i.param->name); });

// The Fig. 8 hook: the stores of each transaction, as the workload's
// definition has them.
std::map<uint64_t, uint64_t> store_counts(const Info& info, Params p, uint64_t transactions) {
  const std::string path = pool_path(std::string("observed_") + info.name);
  unlink(path.c_str());
  sw_config c = workload_config(SW_ENGINE_UNDO, SW_MEDIUM_X86);
  sw_pool* pool = sw_pool_create(path.c_str(), pool_bytes(info, p), &c);
  EXPECT_NE(pool, nullptr) << sw_errormsg();
  StoreHistogram h;
  std::vector<ObservedAccess<ApiAccess>> acc(p.threads, ObservedAccess<ApiAccess>(ApiAccess(pool), nullptr));
  {
    auto w = make_observed_workload(info.name, &acc, p);
    w->setup();
    acc.assign(p.threads, ObservedAccess<ApiAccess>(ApiAccess(pool), &h));
    run_threads(*w, transactions);
    EXPECT_EQ(w->verify(), "");
  }
  EXPECT_EQ(h.transactions() + h.aborted(), transactions * p.threads);
  EXPECT_EQ(sw_pool_close(pool), 0);
  unlink(path.c_str());
  return h.counts();
}

// The store counts each workload's header promises.
TEST(WorkloadStores, EachTransactionStoresWhatItsDefinitionSays) {
  auto only = [](const std::map<uint64_t, uint64_t>& c, std::set<uint64_t> allowed) {
    for (const auto& [stores, n] : c) {
      if (!allowed.count(stores)) return "a transaction stored " + std::to_string(stores) + " words";
    }
    return std::string();
  };
  auto within = [](const std::map<uint64_t, uint64_t>& c, uint64_t lo, uint64_t hi) {
    for (const auto& [stores, n] : c) {
      if (stores < lo || stores > hi) return "a transaction stored " + std::to_string(stores) + " words";
    }
    return std::string();
  };
  Params p = small(kSpsInfo, 1);
  p.tx_size = 5;
  EXPECT_EQ(only(store_counts(kSpsInfo, p, 40), {10}), "") << "SPS: 2 per swap";
  p = small(kPcInfo, 1);
  p.tx_size = 7;
  EXPECT_EQ(only(store_counts(kPcInfo, p, 40), {7}), "") << "PC: 1 per update";
  EXPECT_EQ(only(store_counts(kTatpInfo, small(kTatpInfo, 1), 40), {1}), "") << "TATP: one store";
  EXPECT_EQ(only(store_counts(kCqInfo, small(kCqInfo, 1), 100), {1, 4}), "") << "CQ: dequeue 1, enqueue 4";
  EXPECT_EQ(only(store_counts(kCtreeInfo, small(kCtreeInfo, 1), 100), {0, 1, 6}), "");
  EXPECT_EQ(only(store_counts(kHashmapInfo, small(kHashmapInfo, 1), 100), {0, 1, 4}), "");
  p = small(kLinkedListInfo, 1);
  p.tx_size = 4;
  EXPECT_EQ(within(store_counts(kLinkedListInfo, p, 100), 4 * 2, 4 * 5), "") << "LL: 2 per delete, 5 per insert";
  EXPECT_EQ(within(store_counts(kTpccInfo, small(kTpccInfo, 1), 200), 7 + 11 * 5, 7 + 11 * 15), "");
  const auto rb = store_counts(kRbtreeInfo, small(kRbtreeInfo, 1), 200);
  EXPECT_TRUE(rb.count(0) && rb.rbegin()->first >= 7) << "RB: from none (absent keys) to rebalancing inserts";
}

TEST(WorkloadRegistry, NamesAreUniqueAndFound) {
  for (const Info* i : all_workloads()) {
    EXPECT_EQ(find_workload(i->name), i);
    EXPECT_NE(i->what, nullptr);
    EXPECT_GT(i->small_scale, 0u);
    EXPECT_LE(i->small_scale, i->default_scale);
  }
  EXPECT_EQ(find_workload("no-such"), nullptr);
  std::vector<ApiAccess> none;
  EXPECT_EQ(make_api_workload("no-such", &none, Params{}), nullptr);
}

TEST(WorkloadRegistry, AttachRefusesAPoolWithoutTheWorkload) {
  const std::string path = pool_path("foreign");
  unlink(path.c_str());
  sw_config c = workload_config(SW_ENGINE_UNDO, SW_MEDIUM_X86);
  sw_pool* pool = sw_pool_create(path.c_str(), 64 << 20, &c);
  ASSERT_NE(pool, nullptr);
  std::vector<ApiAccess> acc(1, ApiAccess(pool));
  for (const Info* i : all_workloads()) {
    auto w = make_api_workload(i->name, &acc, small(*i, 1));
    EXPECT_THROW(w->attach(), WorkloadError) << i->name;
  }
  EXPECT_EQ(sw_pool_close(pool), 0);
  unlink(path.c_str());
}

}  // namespace
}  // namespace softwrap::workloads
