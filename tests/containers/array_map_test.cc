// array_map_test.cc — persistent_array<T> and persistent_hash_map<K, V>
// (the workshop paper's WrapArray and WrapMap): element access, growth,
// put/get/remove against std containers, iteration, reopening the pool,
// and wraps holding several operations that abort (nothing changes) or
// commit (all of it).  Every test runs per engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "container_test_util.h"
#include "softwrap/containers.hpp"

namespace {

using softwrap::pool;
using softwrap::wrap;
using softwrap_test::PoolTest;

struct rec {
  uint32_t id;
  uint16_t kind;
  char name[10];
};

struct app_root {
  softwrap::p<uint64_t> array;
  softwrap::p<uint64_t> map;
};

class ArrayTest : public PoolTest {};
class HashMapTest : public PoolTest {};

TEST_P(ArrayTest, GrowsAndMatchesVector) {
  pool pl = create();
  softwrap::persistent_array<uint64_t> a(pl);
  std::vector<uint64_t> ref;
  EXPECT_TRUE(a.empty());
  for (uint64_t i = 0; i < 5000; ++i) {
    a.push_back(i * i);
    ref.push_back(i * i);
  }
  ASSERT_EQ(a.size(), ref.size());
  EXPECT_GE(a.capacity(), a.size());
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    const size_t at = rng() % ref.size();
    a[at] = a[at] + 1;
    ref[at] += 1;
  }
  EXPECT_EQ(a.to_vector(), ref);
  EXPECT_EQ(a.front(), ref.front());
  EXPECT_EQ(a.back(), ref.back());
  EXPECT_THROW((void)a.get(ref.size()), std::out_of_range);
  a.resize(6000, 7);
  EXPECT_EQ(a.size(), 6000u);
  EXPECT_EQ(a.get(5999), 7u);
  EXPECT_EQ(a.get(4999), ref.back());
  a.resize(10);
  ref.resize(10);
  EXPECT_EQ(a.to_vector(), ref);
  a.pop_back();
  EXPECT_EQ(a.size(), 9u);
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_THROW(a.pop_back(), std::out_of_range);
}

TEST_P(ArrayTest, StructElementsAndReopen) {
  {
    pool pl = create();
    softwrap::persistent_array<rec> a(pl);
    a.reserve(4);
    pl.root<app_root>()->array = a.header_offset();
    for (uint32_t i = 0; i < 300; ++i) a.push_back(rec{i, static_cast<uint16_t>(i % 7), "rec"});
  }
  pool pl = reopen();
  softwrap::persistent_array<rec> a(pl, pl.root<app_root>()->array.get());
  ASSERT_EQ(a.size(), 300u);
  for (uint32_t i = 0; i < 300; ++i) {
    const rec r = a[i];
    EXPECT_EQ(r.id, i);
    EXPECT_EQ(r.kind, i % 7);
    EXPECT_STREQ(r.name, "rec");
  }
  EXPECT_THROW((softwrap::persistent_array<uint64_t>(pl, a.header_offset())), softwrap::error);
}

TEST_P(ArrayTest, AbortedWrapUndoesGrowthAndStores) {
  pool pl = create();
  softwrap::persistent_array<uint32_t> a(pl);
  for (uint32_t i = 0; i < 8; ++i) a.push_back(i);
  const auto before = a.to_vector();
  const auto cap = a.capacity();
  {
    wrap w(pl);
    for (uint32_t i = 0; i < 100; ++i) a.push_back(100 + i);  // grows
    a[0] = 42;
    a.resize(50);
    w.abort();
  }
  EXPECT_EQ(a.to_vector(), before);
  EXPECT_EQ(a.capacity(), cap);
  softwrap::run(pl, [&] {
    a.push_back(9);
    a[0] = 42;
  });
  EXPECT_EQ(a.size(), 9u);
  EXPECT_EQ(a.get(0), 42u);
  EXPECT_EQ(a.get(8), 9u);
}

// modify(): a span of elements written with plain stores in a wrap —
// sorted in place, committed with the wrap, dropped by an abort, and
// refused outside a wrap or past the end.
TEST_P(ArrayTest, ModifiedSpansCommitWithTheWrapAndAbortsDropThem) {
  pool pl = create();
  softwrap::persistent_array<uint64_t> a(pl);
  std::vector<uint64_t> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    ref.push_back(rng() % 100000);
    a.push_back(ref.back());
  }
  EXPECT_THROW((void)a.modify(0, 1), softwrap::error) << "outside a wrap";
  softwrap::run(pl, [&] {
    std::span<uint64_t> s = a.modify(0, a.size());
    std::sort(s.begin(), s.end());
    EXPECT_EQ(a.get(0), *std::min_element(ref.begin(), ref.end())) << "the wrap reads its newest elements";
  });
  std::sort(ref.begin(), ref.end());
  EXPECT_EQ(a.to_vector(), ref);
  {
    wrap w(pl);
    std::span<uint64_t> s = a.modify(10, 20);
    for (uint64_t& x : s) x = 0;
    a[15] = 5;  // a store of a modified element: the span shows it
    EXPECT_EQ(s[5], 5u);
    EXPECT_THROW((void)a.modify(990, 11), std::out_of_range);
    w.abort();
  }
  EXPECT_EQ(a.to_vector(), ref) << "an abort drops what the span changed";
  softwrap::run(pl, [&] {
    std::span<uint64_t> s = a.modify(500, 3);
    s[1] = 77;
  });
  ref[501] = 77;
  EXPECT_EQ(a.to_vector(), ref);
  const uint64_t at = a.header_offset();
  pl.close();
  pool again = reopen();
  softwrap::persistent_array<uint64_t> b(again, at);
  EXPECT_EQ(b.to_vector(), ref);
}

TEST_P(HashMapTest, PutGetRemoveMatchUnorderedMap) {
  pool pl = create();
  softwrap::persistent_hash_map<uint64_t, uint64_t> m(pl);
  std::unordered_map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(2);
  for (int i = 0; i < 6000; ++i) {
    const uint64_t k = rng() % 3000;
    switch (rng() % 3) {
      case 0:
      case 1: {
        const uint64_t v = rng();
        const bool fresh = ref.find(k) == ref.end();
        ASSERT_EQ(m.put(k, v), fresh);
        ref[k] = v;
        break;
      }
      default:
        ASSERT_EQ(m.remove(k), ref.erase(k) == 1);
    }
    auto g = m.get(k);
    auto r = ref.find(k);
    ASSERT_EQ(g.has_value(), r != ref.end());
    if (g) {
      ASSERT_EQ(*g, r->second);
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  EXPECT_GE(m.bucket_count(), m.size());
  // Iteration visits every entry once.
  std::map<uint64_t, uint64_t> seen;
  for (auto it = m.begin(); it != m.end(); ++it) ASSERT_TRUE(seen.emplace((*it).first, it.value()).second);
  EXPECT_EQ(seen, (std::map<uint64_t, uint64_t>(ref.begin(), ref.end())));
  m.clear();
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.begin(), m.end());
  EXPECT_FALSE(m.get(1).has_value());
}

TEST_P(HashMapTest, ReopenAndStructValues) {
  {
    pool pl = create();
    softwrap::persistent_hash_map<uint32_t, rec> m(pl);
    pl.root<app_root>()->map = m.header_offset();
    for (uint32_t i = 0; i < 1000; ++i) m.put(i * 11, rec{i, 1, "v"});
    for (uint32_t i = 0; i < 1000; i += 3) m.remove(i * 11);
  }
  pool pl = reopen();
  softwrap::persistent_hash_map<uint32_t, rec> m(pl, pl.root<app_root>()->map.get());
  size_t n = 0;
  for (uint32_t i = 0; i < 1000; ++i) {
    auto v = m.get(i * 11);
    ASSERT_EQ(v.has_value(), i % 3 != 0);
    if (v) {
      EXPECT_EQ(v->id, i);
      ++n;
    }
  }
  EXPECT_EQ(m.size(), n);
  EXPECT_THROW((softwrap::persistent_hash_map<uint64_t, rec>(pl, m.header_offset())), softwrap::error);
}

TEST_P(HashMapTest, AbortedWrapUndoesPutsRemovesAndRehash) {
  pool pl = create();
  softwrap::persistent_hash_map<uint64_t, uint64_t> m(pl);
  for (uint64_t k = 0; k < 10; ++k) m.put(k, k);
  const auto buckets = m.bucket_count();
  {
    wrap w(pl);
    for (uint64_t k = 100; k < 200; ++k) m.put(k, k);  // rehashes
    m.remove(3);
    m.put(4, 44);
    EXPECT_GT(m.bucket_count(), buckets);
    w.abort();
  }
  EXPECT_EQ(m.size(), 10u);
  EXPECT_EQ(m.bucket_count(), buckets);
  for (uint64_t k = 0; k < 10; ++k) EXPECT_EQ(m.get(k), std::optional<uint64_t>(k));
  EXPECT_FALSE(m.contains(150));
  softwrap::run(pl, [&] {
    m.remove(3);
    m.put(4, 44);
  });
  EXPECT_FALSE(m.contains(3));
  EXPECT_EQ(m.get(4), std::optional<uint64_t>(44));
}

INSTANTIATE_TEST_SUITE_P(Engines, ArrayTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                         softwrap_test::engine_name);
INSTANTIATE_TEST_SUITE_P(Engines, HashMapTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                         softwrap_test::engine_name);

}  // namespace
