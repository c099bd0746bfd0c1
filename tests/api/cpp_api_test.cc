// cpp_api_test.cc — the C++ API (softwrap.hpp): RAII wraps, run(), p<T>,
// persistent_ptr, make_persistent/delete_persistent, errors.
//
// Every test runs once per engine (the suite is parameterized).  The engine a
// pool really got is read back from the pool, so SOFTWRAP_ENGINE in the
// environment is honoured; under `nonatomic` an abort cannot take stores
// back, and the tests assert exactly that (SW_ENOTSUP, stores kept) instead
// of skipping.  Leaks are measured by allocating to exhaustion: the number
// of blocks that fit must be the same before and after aborted
// allocations.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.hpp"

namespace {

namespace fs = std::filesystem;
using softwrap::error;
using softwrap::p;
using softwrap::persistent_ptr;
using softwrap::pool;
using softwrap::wrap;

constexpr size_t kPoolSize = 16u << 20;

struct node {
  p<uint64_t> value;
  p<persistent_ptr<node>> next;
};

struct blob {
  char bytes[40];  // 40 bytes, alignment 1: goes through sw_read/sw_write
};

struct app_root {
  p<uint64_t> counter;
  p<int32_t> small;
  p<uint8_t> flag;
  p<double> ratio;
  p<blob> name;
  p<persistent_ptr<node>> head;
  p<uint64_t> per_thread[8];
};

struct big_object {
  p<uint64_t> words[512];  // 4 KiB
};

const char* engine_label(sw_engine_kind k) {
  switch (k) {
    case SW_ENGINE_SOFTWRAP: return "softwrap";
    case SW_ENGINE_SOFTWRAP_LOCAL: return "softwrap_local";
    case SW_ENGINE_UNDO: return "undo";
    case SW_ENGINE_NONATOMIC: return "nonatomic";
    default: return "default";
  }
}

class CppApiTest : public ::testing::TestWithParam<sw_engine_kind> {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/sw-cpp-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = dir_ + "/test.pool";
    cfg_ = sw_config{};
    cfg_.engine = GetParam();
    cfg_.lanes = 4;  // 4 MiB of log, the rest of the 16 MiB is heap
    cfg_.lane_size = 1u << 20;
  }
  void TearDown() override { fs::remove_all(dir_); }

  pool create() { return pool::create(path_, kPoolSize, cfg_); }
  pool reopen() { return pool::open(path_, cfg_); }
  static bool atomic(const pool& pl) { return pl.engine_name() != "nonatomic"; }

  // How many blocks of `size` bytes fit, measured in one wrap that is then
  // aborted (so the measurement itself leaves nothing behind).
  static size_t capacity(pool& pl, size_t size) {
    wrap w(pl);
    size_t n = 0;
    while (sw_pmalloc(pl.handle(), size) != nullptr) ++n;
    EXPECT_EQ(sw_errno(), SW_ENOSPC);
    w.abort();
    return n;
  }

  std::string dir_, path_;
  sw_config cfg_{};
};

TEST_P(CppApiTest, WrapCommitsAtScopeExit) {
  pool pl = create();
  auto* r = pl.root<app_root>();
  EXPECT_EQ(r->counter.get(), 0u);
  {
    wrap w(pl);
    EXPECT_EQ(wrap::depth(pl), 1);
    r->counter = 5;
    r->small = -7;
    r->flag = 1;
    r->ratio = 0.25;
    EXPECT_EQ(r->counter.get(), 5u);  // own store visible inside the wrap
  }
  EXPECT_EQ(wrap::depth(pl), 0);
  EXPECT_EQ(r->counter.get(), 5u);
  pl.close();
  EXPECT_FALSE(pl.is_open());

  pool again = reopen();
  r = again.root<app_root>();
  EXPECT_EQ(r->counter.get(), 5u);
  EXPECT_EQ(r->small.get(), -7);
  EXPECT_EQ(r->flag.get(), 1u);
  EXPECT_EQ(r->ratio.get(), 0.25);
}

TEST_P(CppApiTest, ExceptionInsideWrapRollsBack) {
  pool pl = create();
  auto* r = pl.root<app_root>();
  softwrap::run(pl, [&] { r->counter = 1; });
  EXPECT_THROW(
      {
        wrap w(pl);
        r->counter = 2;
        r->small = 9;
        throw std::runtime_error("business logic failed");
      },
      std::runtime_error);
  EXPECT_EQ(wrap::depth(pl), 0);
  if (atomic(pl)) {
    EXPECT_EQ(r->counter.get(), 1u);
    EXPECT_EQ(r->small.get(), 0);
  } else {
    EXPECT_EQ(r->counter.get(), 2u);  // the non-atomic baseline keeps them
  }
  // The same through run().
  EXPECT_THROW(softwrap::run(pl,
                             [&] {
                               r->counter += 10;
                               throw std::logic_error("no");
                             }),
               std::logic_error);
  EXPECT_EQ(r->counter.get(), atomic(pl) ? 1u : 12u);
  // Still usable, and the result survives reopen.
  EXPECT_EQ(softwrap::run(pl, [&] { return ++r->counter; }).get(), atomic(pl) ? 2u : 13u);
  const uint64_t expect = r->counter.get();
  pl.close();
  pool again = reopen();
  EXPECT_EQ(again.root<app_root>()->counter.get(), expect);
}

TEST_P(CppApiTest, RunReturnsValueAndCommits) {
  pool pl = create();
  auto* r = pl.root<app_root>();
  const uint64_t got = softwrap::run(pl, [&]() -> uint64_t {
    r->counter = 40;
    r->counter += 2;
    return r->counter;
  });
  EXPECT_EQ(got, 42u);
  EXPECT_EQ(wrap::depth(pl), 0);
  EXPECT_GE(pl.stats().wraps, 1u);
}

TEST_P(CppApiTest, NestedWrapsFlatten) {
  pool pl = create();
  auto* r = pl.root<app_root>();
  softwrap::run(pl, [&] { r->counter = 100; });

  // Abort of the outer wrap discards the committed inner one.
  {
    wrap outer(pl);
    r->small = 1;
    {
      wrap inner(pl);
      EXPECT_EQ(wrap::depth(pl), 2);
      r->counter = 200;
      inner.commit();
    }
    EXPECT_EQ(wrap::depth(pl), 1);
    EXPECT_EQ(r->counter.get(), 200u);  // visible to the wrap itself
    if (atomic(pl)) {
      outer.abort();
    } else {
      EXPECT_THROW(outer.abort(), error);
    }
  }
  EXPECT_EQ(wrap::depth(pl), 0);
  EXPECT_EQ(r->counter.get(), atomic(pl) ? 100u : 200u);

  if (!atomic(pl)) return;
  // Abort of an inner level ends the whole wrap: the outer cannot commit.
  wrap outer(pl);
  r->counter = 300;
  {
    wrap inner(pl);
    inner.abort();
  }
  EXPECT_EQ(wrap::depth(pl), 0);
  try {
    outer.commit();
    ADD_FAILURE() << "commit after a nested abort must throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), SW_EABORTED);
  }
  EXPECT_FALSE(outer.active());
  EXPECT_EQ(r->counter.get(), 100u);
  // A scope ended twice is an error, not a second commit.
  EXPECT_THROW(outer.commit(), error);
}

TEST_P(CppApiTest, ExceptionThroughNestedScopesAbortsOnce) {
  pool pl = create();
  auto* r = pl.root<app_root>();
  try {
    wrap outer(pl);
    r->counter = 1;
    wrap inner(pl);
    r->counter = 2;
    throw std::runtime_error("unwind two levels");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(wrap::depth(pl), 0);
  EXPECT_EQ(r->counter.get(), atomic(pl) ? 0u : 2u);
  softwrap::run(pl, [&] { r->counter = 3; });
  EXPECT_EQ(r->counter.get(), 3u);
}

TEST_P(CppApiTest, RootPersistsAcrossReopen) {
  {
    pool pl = create();
    auto* r = pl.root<app_root>();
    EXPECT_EQ(pl.root<app_root>(), r);
    blob b{};
    std::strcpy(b.bytes, "persistent name");
    softwrap::run(pl, [&] {
      r->name = b;
      for (int i = 0; i < 8; i++) r->per_thread[i] = uint64_t(i) * 11;
    });
  }  // pool destructor closes
  pool pl = reopen();
  auto* r = pl.root<app_root>();
  EXPECT_STREQ(r->name.get().bytes, "persistent name");
  for (int i = 0; i < 8; i++) EXPECT_EQ(r->per_thread[i].get(), uint64_t(i) * 11);
  // A root asked for as a larger type than it was created with is refused.
  try {
    (void)pl.root<big_object>();
    ADD_FAILURE() << "larger root must be refused";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), SW_EINVAL);
  }
}

TEST_P(CppApiTest, PersistentPtrRoundTripAcrossReopen) {
  constexpr int kNodes = 100;
  {
    pool pl = create();
    auto* r = pl.root<app_root>();
    softwrap::run(pl, [&] {
      for (int i = 0; i < kNodes; i++) {
        auto n = softwrap::make_persistent<node>(pl);
        n.get(pl)->value = uint64_t(i);
        n.get(pl)->next = r->head;
        r->head = n;
      }
    });
    EXPECT_TRUE(r->head.get());
  }
  pool pl = reopen();
  auto* r = pl.root<app_root>();
  uint64_t expect = kNodes;
  int seen = 0;
  for (persistent_ptr<node> n = r->head; n; n = n.get(pl)->next) {
    ASSERT_LT(seen, kNodes);
    EXPECT_EQ(n.get(pl)->value.get(), --expect);
    EXPECT_GE(sw_pusable_size(pl.handle(), n.get(pl)), sizeof(node));
    ++seen;
  }
  EXPECT_EQ(seen, kNodes);
  // Offsets are mapping-independent: rebuild a pointer from an address.
  persistent_ptr<node> h = r->head;
  EXPECT_EQ(persistent_ptr<node>(pl, h.get(pl)), h);
  persistent_ptr<const node> hc = h;
  persistent_ptr<void> hv = h;
  EXPECT_EQ(hc.offset(), h.offset());
  EXPECT_EQ(hv.offset(), h.offset());
  EXPECT_FALSE(persistent_ptr<node>(pl, nullptr));
  node dram_node;
  try {
    persistent_ptr<node> bad(pl, &dram_node);
    ADD_FAILURE() << "a DRAM address must be refused";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), SW_ERANGE);
  }
}

TEST_P(CppApiTest, MakePersistentInAbortedWrapDoesNotLeak) {
  pool pl = create();
  if (!atomic(pl)) {
    // Allocation needs abort to be undone; nonatomic refuses to pretend.
    wrap w(pl);
    auto obj = softwrap::make_persistent<big_object>(pl);
    EXPECT_TRUE(obj);
    EXPECT_THROW(w.abort(), error);
    return;
  }
  constexpr size_t kBlock = sizeof(big_object);
  const size_t before = capacity(pl, kBlock);
  ASSERT_GT(before, 100u);

  for (int i = 0; i < 40; i++) {
    wrap w(pl);
    auto a = softwrap::make_persistent<big_object>(pl);
    auto b = softwrap::make_persistent<node>(pl);
    EXPECT_TRUE(a && b);
    a.get(pl)->words[7] = 7;
    w.abort();
  }
  for (int i = 0; i < 40; i++) {
    EXPECT_THROW(softwrap::run(pl,
                               [&] {
                                 (void)softwrap::make_persistent<big_object>(pl);
                                 throw std::runtime_error("give up");
                               }),
                 std::runtime_error);
  }
  EXPECT_EQ(capacity(pl, kBlock), before);

  // A committed allocation is visible in the measurement; deleting it
  // gives the space back.
  auto keep = softwrap::make_persistent<big_object>(pl);  // a wrap of its own
  EXPECT_EQ(wrap::depth(pl), 0);
  EXPECT_GE(sw_pusable_size(pl.handle(), keep.get(pl)), sizeof(big_object));
  EXPECT_EQ(capacity(pl, kBlock), before - 1);
  softwrap::delete_persistent(pl, keep);
  EXPECT_EQ(capacity(pl, kBlock), before);

  // Survives reopen: the aborted allocations did not reappear.
  pl.close();
  pool again = reopen();
  EXPECT_EQ(capacity(again, kBlock), before);
}

TEST_P(CppApiTest, MakePersistentInitializesFromArguments) {
  pool pl = create();
  auto n = softwrap::make_persistent<node>(pl, node{});
  EXPECT_EQ(n.get(pl)->value.get(), 0u);
  EXPECT_FALSE(n.get(pl)->next.get());
  struct pair_obj {
    p<uint64_t> a, b;
    pair_obj(uint64_t x, uint64_t y) : a(x), b(y) {}
  };
  auto q = softwrap::make_persistent<pair_obj>(pl, 3u, 4u);
  EXPECT_EQ(q.get(pl)->a.get(), 3u);
  EXPECT_EQ(q.get(pl)->b.get(), 4u);
  softwrap::delete_persistent(pl, q);
  softwrap::delete_persistent(pl, persistent_ptr<pair_obj>{});  // null: no-op
  EXPECT_THROW(softwrap::delete_persistent(pl, persistent_ptr<node>(n.offset() + 16)), error);
}

TEST_P(CppApiTest, WrappedFieldSemantics) {
  pool pl = create();
  auto* r = pl.root<app_root>();
  // A p<T> outside every pool is a plain variable.
  p<uint64_t> local = 5;
  local += 3;
  EXPECT_EQ(local.get(), 8u);
  // Copying a pool field reads through the library.
  softwrap::run(pl, [&] {
    r->counter = 77;
    r->counter++;
    --r->counter;
    r->counter *= 2;
    r->counter -= 4;
    r->counter |= 1;
  });
  p<uint64_t> copy = r->counter;
  EXPECT_EQ(copy.get(), 151u);
  EXPECT_EQ(uint64_t(r->counter), 151u);
  // Hot-path overloads skip the lookup.
  r->counter.set(pl, 9);
  EXPECT_EQ(r->counter.get(pl), 9u);
  // Quiesce: home locations then hold the committed value.
  pl.quiesce();
  uint64_t home;
  std::memcpy(&home, static_cast<const void*>(&r->counter), sizeof home);
  EXPECT_EQ(home, 9u);
  pl.reset_stats();
  EXPECT_EQ(pl.stats().wraps, 0u);
  EXPECT_FALSE(pl.medium_name().empty());
  EXPECT_EQ(pl.write_combined(), sw_pool_wcl(pl.handle(), nullptr));
  EXPECT_GE(pl.write_combined(), 0);
  EXPECT_FALSE(pl.write_combined_why().empty());
  EXPECT_TRUE(pl.contains(r));
  EXPECT_FALSE(pl.contains(&local));
  (void)pl.recovery_report();
}

TEST_P(CppApiTest, TwoPoolsAtOnce) {
  pool a = create();
  pool b = pool::create(dir_ + "/second.pool", kPoolSize, cfg_);
  auto* ra = a.root<app_root>();
  auto* rb = b.root<app_root>();
  softwrap::run(a, [&] { ra->counter = 1; });
  softwrap::run(b, [&] { rb->counter = 2; });
  EXPECT_EQ(ra->counter.get(), 1u);
  EXPECT_EQ(rb->counter.get(), 2u);
  // Moving a pool keeps it registered.
  pool moved = std::move(b);
  EXPECT_FALSE(b.is_open());
  softwrap::run(moved, [&] { rb->counter += 1; });
  EXPECT_EQ(rb->counter.get(), 3u);
  moved.close();
  pool b2 = pool::open(dir_ + "/second.pool", cfg_);
  EXPECT_EQ(b2.root<app_root>()->counter.get(), 3u);
}

TEST_P(CppApiTest, ThreadsRunWrapsOnSeparateWords) {
  pool pl = create();
  auto* r = pl.root<app_root>();
  constexpr int kThreads = 4, kWraps = 500;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < kWraps; i++) softwrap::run(pl, [&] { r->per_thread[t] += 1; });
      } catch (const error&) {
        failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; t++) EXPECT_EQ(r->per_thread[t].get(), uint64_t(kWraps));
}

TEST_P(CppApiTest, ErrorsCarryCodeAndMessage) {
  { pool pl = create(); }
  try {
    (void)create();
    ADD_FAILURE() << "create over an existing pool must throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), SW_EEXIST);
    EXPECT_STREQ(e.name(), "SW_EEXIST");
    EXPECT_NE(std::string(e.what()).find("SW_EEXIST"), std::string::npos);
  }
  const std::string foreign = dir_ + "/foreign";
  {
    std::string junk(kPoolSize, 'x');
    FILE* f = fopen(foreign.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fwrite(junk.data(), 1, junk.size(), f), junk.size());
    fclose(f);
  }
  try {
    (void)pool::open(foreign, cfg_);
    ADD_FAILURE() << "open of a foreign file must throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), SW_EFOREIGN);
  }
  // close() with a wrap open: refused, pool stays open.
  pool pl = reopen();
  {
    wrap w(pl);
    try {
      pl.close();
      ADD_FAILURE() << "close with an open wrap must throw";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), SW_EBUSY);
    }
    EXPECT_TRUE(pl.is_open());
  }
  pl.close();
}

TEST_P(CppApiTest, OversizedWrapThrowsAtScopeExit) {
  cfg_.lanes = 4;
  cfg_.lane_size = 64u << 10;
  cfg_.medium = SW_MEDIUM_X86;  // not msync: the undo engine fences once per stored word here
  pool pl = create();
  if (!atomic(pl)) return;  // no log to overflow
  auto* r = pl.root<app_root>();
  softwrap::run(pl, [&] { r->counter = 1; });
  // Objects of 512 words filling ~40% of the heap, each allocated in a
  // wrap of its own; then one wrap storing all their words needs more log
  // (16 bytes per stored word) than the rest of the pool holds.
  std::vector<persistent_ptr<big_object>> objs;
  for (size_t i = 0; i < kPoolSize * 2 / 5 / sizeof(big_object); i++) {
    objs.push_back(softwrap::make_persistent<big_object>(pl));
  }
  bool threw = false;
  try {
    wrap w(pl);
    r->counter = 2;
    for (auto& o : objs)
      for (auto& x : o.get(pl)->words) x = 1;
    // leaving the scope normally commits, which must fail
  } catch (const error& e) {
    threw = true;
    EXPECT_EQ(e.code(), SW_EABORTED);
  }
  EXPECT_TRUE(threw);
  EXPECT_EQ(wrap::depth(pl), 0);
  EXPECT_EQ(r->counter.get(), 1u);
  for (auto& o : objs) EXPECT_EQ(o.get(pl)->words[100].get(), 0u);
  softwrap::run(pl, [&] { r->counter = 3; });
  EXPECT_EQ(r->counter.get(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Engines, CppApiTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO,
                                           SW_ENGINE_NONATOMIC),
                         [](const ::testing::TestParamInfo<sw_engine_kind>& info) {
                           return std::string(engine_label(info.param));
                         });

}  // namespace
