// btree_test.cc — the persistent B+tree containers (btree_map,
// btree_multimap, btree_set, btree_multiset), written after the checks of
// the STX/tlx B+tree test suites: random insert/erase against std::multiset
// and std::multimap with verify() after every operation (small-slot traits
// with self_verify, so splits, borrows and merges happen all the time),
// 32,000-key runs with the default traits, bounds, all four iterator kinds,
// nodes too big to be read whole (80 and 300 slots), bulk_load of many
// sizes, struct keys with a comparator, reopening the pool, and aborted
// wraps holding several tree operations.  Every test runs per engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "container_test_util.h"
#include "softwrap/btree_map.hpp"
#include "softwrap/btree_multimap.hpp"
#include "softwrap/btree_multiset.hpp"
#include "softwrap/btree_set.hpp"

namespace {

using softwrap::pool;
using softwrap::wrap;
using softwrap_test::PoolTest;

// Small nodes and verify() after every mutation: the checking build.
template <class Key, unsigned Leaf, unsigned Inner>
struct checking_traits {
  static constexpr bool self_verify = true;
  static constexpr unsigned leaf_slots = Leaf;
  static constexpr unsigned inner_slots = Inner;
};

using check_multiset = softwrap::btree_multiset<uint32_t, std::less<uint32_t>, checking_traits<uint32_t, 4, 5>>;
using check_multimap =
    softwrap::btree_multimap<uint32_t, uint64_t, std::less<uint32_t>, checking_traits<uint32_t, 5, 4>>;
using check_set = softwrap::btree_set<uint32_t, std::less<uint32_t>, checking_traits<uint32_t, 4, 4>>;
using check_map =
    softwrap::btree_map<uint64_t, uint64_t, std::less<uint64_t>, checking_traits<uint64_t, 6, 7>>;

template <class Tree, class Ref>
void expect_same_keys(const Tree& t, const Ref& ref) {
  ASSERT_EQ(t.size(), ref.size());
  auto it = t.begin();
  for (const auto& k : ref) {
    ASSERT_NE(it, t.end());
    ASSERT_EQ(it.key(), k);
    ++it;
  }
  EXPECT_EQ(it, t.end());
}

// Multimap contents as sorted (key, value) pairs: equal keys may be in any
// order in either container.
template <class Tree>
std::vector<std::pair<uint32_t, uint64_t>> sorted_pairs(const Tree& t) {
  std::vector<std::pair<uint32_t, uint64_t>> v;
  for (auto it = t.begin(); it != t.end(); ++it) v.push_back(*it);
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; }));
  std::sort(v.begin(), v.end());
  return v;
}

class BtreeTest : public PoolTest {};

TEST_P(BtreeTest, RandomInsertEraseMatchesMultisetWithVerifyEveryOp) {
  pool pl = create();
  check_multiset t(pl);
  std::multiset<uint32_t> ref;
  std::mt19937 rng(1);
  for (int i = 0; i < 3000; ++i) {
    const uint32_t k = rng() % 400;
    const int op = static_cast<int>(rng() % 10);
    if (op < 6 || ref.empty()) {
      auto r = t.insert(k);  // multiset: STX returns the iterator
      ASSERT_EQ(r.key(), k);
      ref.insert(k);
    } else if (op < 9) {
      const bool had = ref.count(k) > 0;
      ASSERT_EQ(t.erase_one(k), had);
      if (had) ref.erase(ref.find(k));
    } else {
      ASSERT_EQ(t.erase(k), ref.erase(k));
    }
    ASSERT_EQ(t.size(), ref.size());
    ASSERT_EQ(t.count(k), ref.count(k));
  }
  expect_same_keys(t, ref);
  // Erase everything, in random order, down to the empty tree.
  std::vector<uint32_t> keys(ref.begin(), ref.end());
  std::shuffle(keys.begin(), keys.end(), rng);
  for (uint32_t k : keys) ASSERT_TRUE(t.erase_one(k));
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.begin(), t.end());
  t.verify();
}

TEST_P(BtreeTest, RandomInsertEraseMatchesMultimapWithVerifyEveryOp) {
  pool pl = create();
  check_multimap t(pl);
  std::multimap<uint32_t, uint64_t> ref;
  std::mt19937 rng(2);
  for (int i = 0; i < 2500; ++i) {
    const uint32_t k = rng() % 300;
    if (rng() % 5 < 3 || ref.empty()) {
      const uint64_t v = rng();
      ASSERT_EQ(i % 2 ? t.insert2(k, v).data() : t.insert(std::make_pair(k, v)).data(), v);
      ref.emplace(k, v);
    } else {
      // Erase a specific element through an iterator.
      auto [lo, hi] = t.equal_range(k);
      if (lo == hi) {
        ASSERT_EQ(ref.count(k), 0u);
        continue;
      }
      const uint64_t v = lo.data();
      t.erase(lo);
      auto r = ref.equal_range(k);
      auto f = std::find_if(r.first, r.second, [&](const auto& e) { return e.second == v; });
      ASSERT_NE(f, r.second);
      ref.erase(f);
    }
    ASSERT_EQ(t.size(), ref.size());
  }
  std::vector<std::pair<uint32_t, uint64_t>> want(ref.begin(), ref.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(sorted_pairs(t), want);
}

TEST_P(BtreeTest, UniqueSetAndMapRefuseDuplicates) {
  pool pl = create();
  check_set s(pl);
  check_map m(pl);
  std::set<uint32_t> ref;
  std::map<uint64_t, uint64_t> mref;
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    const uint32_t k = rng() % 500;
    if (rng() % 3) {
      auto r = s.insert(k);
      ASSERT_EQ(r.second, ref.insert(k).second);
      ASSERT_EQ(*r.first, k);
      auto mr = m.insert(k, i);
      ASSERT_EQ(mr.second, mref.emplace(k, i).second);
      ASSERT_EQ(mr.first->second, mref[k]);
    } else {
      ASSERT_EQ(s.erase(k), ref.erase(k));
      ASSERT_EQ(m.erase_one(k), mref.erase(k) == 1);
    }
    ASSERT_EQ(s.exists(k), ref.count(k) == 1);
  }
  expect_same_keys(s, ref);
  ASSERT_EQ(m.size(), mref.size());
  auto it = m.begin();
  for (const auto& [k, v] : mref) {
    ASSERT_EQ(it->first, k);
    ASSERT_EQ(it.data(), v);
    ++it;
  }
}

TEST_P(BtreeTest, ThirtyTwoThousandKeysDefaultTraits) {
  pool pl = create();
  softwrap::btree_map<uint64_t, uint64_t> m(pl);
  softwrap::btree_multiset<uint32_t> ms(pl);
  std::map<uint64_t, uint64_t> ref;
  std::multiset<uint32_t> msref;
  std::mt19937_64 rng(4);
  for (int i = 0; i < 32000; ++i) {
    const uint64_t k = rng() % 1000000;
    ASSERT_EQ(m.insert(k, k * 3).second, ref.emplace(k, k * 3).second);
    const uint32_t mk = static_cast<uint32_t>(rng() % 4000);
    ms.insert(mk);
    msref.insert(mk);
    if (i % 8000 == 7999) {
      m.verify();
      ms.verify();
    }
  }
  expect_same_keys(ms, msref);
  ASSERT_EQ(m.size(), ref.size());
  for (const auto& [k, v] : ref) {
    auto f = m.find(k);
    ASSERT_NE(f, m.end());
    ASSERT_EQ(f.data(), v);
  }
  std::vector<uint64_t> keys;
  for (const auto& e : ref) keys.push_back(e.first);
  std::shuffle(keys.begin(), keys.end(), rng);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(m.erase_one(keys[i]));
    if (i % 8000 == 0) m.verify();
  }
  EXPECT_TRUE(m.empty());
  m.verify();
}

// Nodes too big to be read whole: a descent reads each node's head and
// keys (with one sw_read while they fit 2 KiB, else the head first) and
// the children and shifted data slot ranges from the pool.
template <unsigned Slots>
struct big_traits {
  static constexpr bool self_verify = false;
  static constexpr unsigned leaf_slots = Slots;
  static constexpr unsigned inner_slots = Slots;
};

template <unsigned Slots>
void random_ops_on_big_nodes(pool& pl, int ops, uint64_t seed) {
  softwrap::btree_map<uint64_t, uint64_t, std::less<uint64_t>, big_traits<Slots>> m(pl);
  std::map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < ops; ++i) {
    const uint64_t k = rng() % 100000;
    if (rng() % 4 != 0 || ref.empty()) {
      ASSERT_EQ(m.insert(k, ~k).second, ref.emplace(k, ~k).second);
    } else {
      const auto it = ref.lower_bound(k);
      const uint64_t victim = it == ref.end() ? ref.begin()->first : it->first;
      ASSERT_TRUE(m.erase_one(victim));
      ref.erase(victim);
    }
    if (i % 1000 == 999) m.verify();
  }
  ASSERT_EQ(m.size(), ref.size());
  auto it = m.begin();
  for (const auto& [k, v] : ref) {
    ASSERT_EQ(it.key(), k);
    ASSERT_EQ(it.data(), v);
    ++it;
  }
  // Down to empty, so borrows and merges of big nodes happen too.
  std::vector<uint64_t> keys;
  for (const auto& e : ref) keys.push_back(e.first);
  std::shuffle(keys.begin(), keys.end(), rng);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(m.erase_one(keys[i]));
    if (i % 1000 == 0) m.verify();
  }
  EXPECT_TRUE(m.empty());
  m.verify();
}

TEST_P(BtreeTest, BigNodesMatchMapThroughSplitsAndMerges) {
  pool pl = create();
  random_ops_on_big_nodes<80>(pl, 12000, 11);   // 1.3 KiB nodes: head and keys in one read
  random_ops_on_big_nodes<300>(pl, 3000, 12);  // 4.8 KiB nodes: the head read first
}

TEST_P(BtreeTest, BoundsAndEqualRangeMatchMultiset) {
  pool pl = create();
  check_multiset t(pl);
  std::multiset<uint32_t> ref;
  std::mt19937 rng(5);
  for (int i = 0; i < 600; ++i) {
    const uint32_t k = 2 * (rng() % 100);  // even keys, odd probes miss
    t.insert(k);
    ref.insert(k);
  }
  for (uint32_t k = 0; k <= 201; ++k) {
    const auto lo = static_cast<size_t>(std::distance(ref.begin(), ref.lower_bound(k)));
    const auto hi = static_cast<size_t>(std::distance(ref.begin(), ref.upper_bound(k)));
    ASSERT_EQ(static_cast<size_t>(std::distance(t.begin(), t.lower_bound(k))), lo) << k;
    ASSERT_EQ(static_cast<size_t>(std::distance(t.begin(), t.upper_bound(k))), hi) << k;
    auto [a, b] = t.equal_range(k);
    ASSERT_EQ(static_cast<size_t>(std::distance(a, b)), hi - lo);
    for (; a != b; ++a) ASSERT_EQ(*a, k);
    ASSERT_EQ(t.count(k), ref.count(k));
    ASSERT_EQ(t.exists(k), ref.count(k) > 0);
    if (ref.count(k)) {
      ASSERT_EQ(t.find(k).key(), k);
    } else {
      ASSERT_EQ(t.find(k), t.end());
    }
  }
  const check_multiset& ct = t;
  EXPECT_EQ(ct.lower_bound(1000), ct.end());
  EXPECT_EQ(ct.upper_bound(0), std::next(ct.begin(), static_cast<long>(ref.count(0))));
}

TEST_P(BtreeTest, AllIteratorKindsWalkBothWaysAndBothEnds) {
  pool pl = create();
  for (unsigned n : {0u, 1u, 2u, 5u, 37u, 300u}) {
    check_set t(pl);
    std::vector<uint32_t> ref;
    for (unsigned i = 0; i < n; ++i) {
      t.insert(i * 7);
      ref.push_back(i * 7);
    }
    // iterator / const_iterator forwards and backwards.
    std::vector<uint32_t> fw, cfw, bw, rv, crv, rbw;
    for (auto it = t.begin(); it != t.end(); ++it) fw.push_back(*it);
    const check_set& ct = t;
    for (check_set::const_iterator it = ct.begin(); it != ct.end(); it++) cfw.push_back(it.key());
    for (auto it = t.end(); it != t.begin();) bw.push_back(*--it);
    for (auto it = t.rbegin(); it != t.rend(); ++it) rv.push_back(*it);
    for (check_set::const_reverse_iterator it = ct.rbegin(); it != ct.rend(); it++) crv.push_back(it.key());
    for (auto it = t.rend(); it != t.rbegin();) rbw.push_back(*--it);
    std::vector<uint32_t> rref(ref.rbegin(), ref.rend());
    EXPECT_EQ(fw, ref);
    EXPECT_EQ(cfw, ref);
    EXPECT_EQ(bw, rref);
    EXPECT_EQ(rv, rref);
    EXPECT_EQ(crv, rref);
    EXPECT_EQ(rbw, ref);
    if (n == 0) {
      EXPECT_EQ(t.begin(), t.end());
      EXPECT_EQ(t.rbegin(), t.rend());
      continue;
    }
    // Both ends: --end() is the last, ++ of it is end(); ++begin then -- is begin.
    auto last = std::prev(t.end());
    EXPECT_EQ(*last, ref.back());
    EXPECT_EQ(std::next(last), t.end());
    EXPECT_EQ(std::prev(std::next(t.begin())), t.begin());
    EXPECT_EQ(*std::prev(t.rend()), ref.front());
    EXPECT_EQ(*t.rbegin(), ref.back());
    EXPECT_EQ(std::next(std::prev(t.rend())), t.rend());
    EXPECT_EQ(t.rbegin().base(), t.end());
    check_set::const_iterator ci = t.begin();  // iterator converts to const_iterator
    EXPECT_EQ(ci, ct.begin());
    check_set::const_reverse_iterator cri = t.rbegin();
    EXPECT_EQ(cri, ct.rbegin());
    t.clear();
    EXPECT_TRUE(t.empty());
    t.verify();
  }
}

TEST_P(BtreeTest, MapIteratorSetDataAndArrow) {
  pool pl = create();
  check_map m(pl);
  for (uint64_t k = 0; k < 100; ++k) m.insert(k, k);
  for (auto it = m.begin(); it != m.end(); ++it) it.set_data(it->second * 10);
  uint64_t k = 0;
  for (auto it = m.cbegin(); it != m.cend(); ++it, ++k) {
    EXPECT_EQ(it->first, k);
    EXPECT_EQ((*it).second, k * 10);
  }
  EXPECT_EQ(k, 100u);
}

TEST_P(BtreeTest, BulkLoadManySizes) {
  pool pl = create();
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 70; ++n) sizes.push_back(n);
  for (size_t n : {99, 100, 101, 255, 256, 257, 1000, 3001}) sizes.push_back(n);
  for (size_t n : sizes) {
    std::vector<std::pair<uint64_t, uint64_t>> in;
    for (size_t i = 0; i < n; ++i) in.emplace_back(i * 3, i);
    check_map m(pl);  // self_verify checks the loaded tree
    m.bulk_load(in.begin(), in.end());
    ASSERT_EQ(m.size(), n);
    size_t i = 0;
    for (auto it = m.begin(); it != m.end(); ++it, ++i) ASSERT_EQ(*it, in[i]);
    ASSERT_EQ(i, n);
    // The loaded tree takes further inserts and erases.
    m.insert(1, 1);
    if (n > 0) {
      ASSERT_TRUE(m.erase_one(0));
    }
    m.clear();

    softwrap::btree_multiset<uint32_t> ms(pl);  // default traits
    std::vector<uint32_t> keys;
    for (size_t j = 0; j < n; ++j) keys.push_back(static_cast<uint32_t>(j / 3));
    ms.bulk_load(keys.begin(), keys.end());
    ms.verify();
    expect_same_keys(ms, keys);
    ms.clear();
  }
  check_set s(pl);
  s.insert(5);
  std::vector<uint32_t> more{1, 2};
  EXPECT_THROW(s.bulk_load(more.begin(), more.end()), softwrap::error);  // not empty
  check_set u(pl);
  std::vector<uint32_t> unsorted{2, 1};
  EXPECT_THROW(u.bulk_load(unsorted.begin(), unsorted.end()), softwrap::error);
  EXPECT_TRUE(u.empty());
}

struct point {
  uint32_t x;
  uint32_t y;
  char tag[8];
};
struct by_y_then_x_desc {
  bool operator()(const point& a, const point& b) const {
    return a.y != b.y ? a.y < b.y : a.x > b.x;
  }
};
struct payload {
  double weight;
  uint16_t flags;
  char name[14];
};

TEST_P(BtreeTest, StructKeysWithComparator) {
  pool pl = create();
  softwrap::btree_map<point, payload, by_y_then_x_desc,
                      checking_traits<point, 4, 4>> m(pl);
  std::map<point, payload, by_y_then_x_desc> ref;
  std::mt19937 rng(6);
  for (int i = 0; i < 800; ++i) {
    point p{static_cast<uint32_t>(rng() % 20), static_cast<uint32_t>(rng() % 20), "pt"};
    payload v{i * 0.5, static_cast<uint16_t>(i), "value"};
    if (rng() % 4) {
      ASSERT_EQ(m.insert(p, v).second, ref.emplace(p, v).second);
    } else {
      ASSERT_EQ(m.erase(p), ref.erase(p));
    }
  }
  ASSERT_EQ(m.size(), ref.size());
  auto it = m.begin();
  for (const auto& [k, v] : ref) {
    ASSERT_EQ(it->first.x, k.x);
    ASSERT_EQ(it->first.y, k.y);
    ASSERT_STREQ(it->first.tag, "pt");
    ASSERT_EQ(it->second->weight, v.weight);  // data_ref: -> reads a member
    ASSERT_EQ(it.data().flags, v.flags);
    ++it;
  }
}

struct app_root {
  softwrap::p<uint64_t> tree;
};

TEST_P(BtreeTest, ReopenAttachesTheSameTree) {
  std::map<uint64_t, uint64_t> ref;
  {
    pool pl = create();
    auto* r = pl.root<app_root>();
    softwrap::btree_map<uint64_t, uint64_t> m(pl);
    r->tree = m.header_offset();
    std::mt19937_64 rng(7);
    for (int i = 0; i < 3000; ++i) {
      const uint64_t k = rng() % 10000;
      m.insert(k, i);
      ref.emplace(k, i);
    }
    for (int i = 0; i < 500; ++i) {
      const uint64_t k = rng() % 10000;
      m.erase(k);
      ref.erase(k);
    }
  }
  pool pl = reopen();
  auto* r = pl.root<app_root>();
  softwrap::btree_map<uint64_t, uint64_t> m(pl, softwrap::attach, r->tree.get());
  m.verify();
  ASSERT_EQ(m.size(), ref.size());
  auto it = m.begin();
  for (const auto& e : ref) ASSERT_EQ(*it++, (std::pair<uint64_t, uint64_t>(e)));
  // Attaching with another type or at a bogus offset is refused.
  EXPECT_THROW((softwrap::btree_multimap<uint64_t, uint64_t>(pl, softwrap::attach, r->tree.get())), softwrap::error);
  EXPECT_THROW((softwrap::btree_map<uint32_t, uint64_t>(pl, softwrap::attach, r->tree.get())), softwrap::error);
  EXPECT_THROW((softwrap::btree_map<uint64_t, uint64_t>(pl, softwrap::attach, pl.size() + 64)), softwrap::error);
}

TEST_P(BtreeTest, AbortedWrapLeavesTreeUnchanged) {
  pool pl = create();
  check_map m(pl);
  for (uint64_t k = 0; k < 200; ++k) m.insert(k * 2, k);
  auto snapshot = [&] {
    std::vector<std::pair<uint64_t, uint64_t>> v;
    for (auto it = m.begin(); it != m.end(); ++it) v.push_back(*it);
    return v;
  };
  const auto before = snapshot();
  {
    wrap w(pl);
    for (uint64_t k = 0; k < 60; ++k) m.insert(k * 2 + 1, 7);  // splits
    for (uint64_t k = 100; k < 180; ++k) m.erase_one(k * 2);    // merges
    m.begin().set_data(99);
    EXPECT_EQ(m.size(), 200u + 60 - 80);
    w.abort();
  }
  m.verify();
  EXPECT_EQ(snapshot(), before);
  // An exception inside run() aborts the same way.
  EXPECT_THROW(softwrap::run(pl, [&] {
                 m.insert(1001, 1);
                 m.erase_one(0);
                 throw std::runtime_error("caller gives up");
               }),
               std::runtime_error);
  m.verify();
  EXPECT_EQ(snapshot(), before);
  // Committed, the same nesting makes "insert a, erase b" one unit.
  softwrap::run(pl, [&] {
    m.insert(1001, 1);
    m.erase_one(0);
  });
  m.verify();
  EXPECT_TRUE(m.exists(1001));
  EXPECT_FALSE(m.exists(0));
}

TEST_P(BtreeTest, FullPoolFailsInsertWithTreeIntact) {
  cfg_.lane_size = 1u << 20;
  pool pl = create(8u << 20);
  check_map m(pl);
  // Fill the heap, then insert until a node allocation fails.
  {
    wrap w(pl);
    while (sw_pmalloc(pl.handle(), 4096) != nullptr) {
    }
    w.commit();
  }
  uint64_t inserted = 0;
  bool failed = false;
  for (uint64_t k = 0; k < 100000 && !failed; ++k) {
    try {
      m.insert(k, k);
      ++inserted;
    } catch (const softwrap::error& e) {
      EXPECT_EQ(e.code(), SW_ENOSPC);
      failed = true;
    }
  }
  EXPECT_TRUE(failed);
  m.verify();
  EXPECT_EQ(m.size(), inserted);
  EXPECT_EQ(static_cast<uint64_t>(std::distance(m.begin(), m.end())), inserted);
}

TEST_P(BtreeTest, EraseIteratorRangeAndRangeInsert) {
  pool pl = create();
  check_multiset t(pl);
  std::vector<uint32_t> in;
  for (uint32_t i = 0; i < 200; ++i) in.push_back(i % 50);
  t.insert(in.begin(), in.end());  // one wrap
  std::multiset<uint32_t> ref(in.begin(), in.end());
  auto [lo, hi] = t.equal_range(10);
  t.erase(lo, hi);
  ref.erase(10);
  auto a = t.lower_bound(20);
  auto b = t.upper_bound(29);
  t.erase(a, b);
  ref.erase(ref.lower_bound(20), ref.upper_bound(29));
  expect_same_keys(t, ref);
  EXPECT_EQ(t.count(25), 0u);
  EXPECT_EQ(t.count(30), 4u);
}

TEST_P(BtreeTest, VerifyDetectsCorruption) {
  pool pl = create();
  using set_t = softwrap::btree_set<uint32_t, std::less<uint32_t>, checking_traits<uint32_t, 4, 4>>;
  set_t s(pl);
  for (uint32_t k = 0; k < 4; ++k) s.insert(k * 10);  // one full root leaf
  s.verify();
  sw_pool* h = pl.handle();
  auto* hd = static_cast<softwrap::btree_detail::header*>(pl.ptr(s.header_offset()));
  auto* leaf = static_cast<softwrap::btree_detail::leaf_node<uint32_t, softwrap::btree_detail::no_data, 4, false>*>(
      pl.ptr(sw_load64(h, &hd->root)));
  sw_store32(h, &leaf->keys[1], 1000);  // keys out of order
  EXPECT_THROW(s.verify(), softwrap::btree_verify_error);
  sw_store32(h, &leaf->keys[1], 10);
  s.verify();
  sw_store64(h, &hd->size, 5);  // wrong element count
  EXPECT_THROW(s.verify(), softwrap::btree_verify_error);
  sw_store64(h, &hd->size, 4);
  sw_store64(h, &leaf->next, s.header_offset());  // a successor after the tail
  EXPECT_THROW(s.verify(), softwrap::btree_verify_error);
  sw_store64(h, &leaf->next, 0);
  s.verify();
}

INSTANTIATE_TEST_SUITE_P(Engines, BtreeTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO),
                         softwrap_test::engine_name);

}  // namespace
