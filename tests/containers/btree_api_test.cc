// btree_api_test.cc — the STX/tlx API of the persistent B+trees member by
// member, each checked against std::map / std::multimap / std::set /
// std::multiset: deep copies (same and other pool), moves and swaps,
// assignment through iterator and operator[] proxies (and what copies of
// them do), STX's return types, hinted inserts, every iterator conversion,
// relational operators, value_comp, get_stats, print/print_leaves,
// dump/restore, destroy(), the attach tag, the tlx traits members, and
// std::string keys and values (out of line, prefix ties, embedded NULs,
// string_view lookups, a non-default comparator).  Every test runs per
// engine.  tests/containers/btree_port_test.cc ports STX/tlx's own test
// and example programs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "container_test_util.h"
#include "softwrap/btree_map.hpp"
#include "softwrap/btree_multimap.hpp"
#include "softwrap/btree_multiset.hpp"
#include "softwrap/btree_set.hpp"

// Class templates, not aliases: explicit instantiation by name works.
template class softwrap::btree_set<unsigned>;
template class softwrap::btree_multiset<int>;
template class softwrap::btree_map<int, double>;
template class softwrap::btree_multimap<int, int>;
template class softwrap::btree_map<std::string, std::string>;
template class softwrap::btree_multiset<std::string>;
// ... and forward declarations of them compile.
namespace softwrap {
template <class Key, class Data, class Compare, class Traits>
class btree_map;
}

namespace {

using softwrap::pool;
using softwrap_test::PoolTest;

template <int Leaf, int Inner>
struct small_traits : softwrap::btree_default_traits<uint32_t, uint32_t> {
  static constexpr bool self_verify = true;
  static constexpr int leaf_slots = Leaf;
  static constexpr int inner_slots = Inner;
};

using map_t = softwrap::btree_map<uint64_t, uint64_t, std::less<uint64_t>, small_traits<5, 4>>;
using mmap_t = softwrap::btree_multimap<uint32_t, uint64_t, std::less<uint32_t>, small_traits<4, 5>>;
using set_t = softwrap::btree_set<uint32_t, std::less<uint32_t>, small_traits<4, 4>>;
using mset_t = softwrap::btree_multiset<uint32_t, std::less<uint32_t>, small_traits<6, 4>>;
using smap_t = softwrap::btree_map<std::string, std::string, std::less<std::string>, small_traits<4, 4>>;
using smmap_t = softwrap::btree_multimap<std::string, std::string, std::less<>, small_traits<5, 4>>;

// STX's return types and the typedefs of tlx.
static_assert(std::is_same_v<decltype(std::declval<mmap_t&>().insert(1u, 2u)), mmap_t::iterator>);
static_assert(std::is_same_v<decltype(std::declval<mset_t&>().insert(1u)), mset_t::iterator>);
static_assert(std::is_same_v<decltype(std::declval<set_t&>().insert(1u)), std::pair<set_t::iterator, bool>>);
static_assert(std::is_same_v<decltype(std::declval<map_t&>().insert2(1, 2)), std::pair<map_t::iterator, bool>>);
static_assert(std::is_same_v<decltype(std::declval<map_t&>().insert(map_t::const_iterator(), {1, 2})), map_t::iterator>);
static_assert(std::is_same_v<map_t::iterator::self, map_t::iterator>);
static_assert(std::is_same_v<map_t::iterator::key_type, uint64_t>);
static_assert(std::is_same_v<map_t::self, map_t> && std::is_same_v<set_t::self, set_t>);
static_assert(map_t::leaf_slotmax == 5 && map_t::inner_slotmin == 2 && map_t::self_verify && !map_t::debug);
// Every iterator conversion tlx offers.
static_assert(std::is_convertible_v<map_t::iterator, map_t::const_iterator>);
static_assert(std::is_convertible_v<map_t::iterator, map_t::reverse_iterator>);
static_assert(std::is_convertible_v<map_t::iterator, map_t::const_reverse_iterator>);
static_assert(std::is_convertible_v<map_t::const_iterator, map_t::const_reverse_iterator>);
static_assert(std::is_convertible_v<map_t::reverse_iterator, map_t::iterator>);
static_assert(std::is_convertible_v<map_t::reverse_iterator, map_t::const_reverse_iterator>);
static_assert(std::is_convertible_v<map_t::const_reverse_iterator, map_t::const_iterator>);
static_assert(!std::is_convertible_v<map_t::const_iterator, map_t::iterator>);
static_assert(!std::is_convertible_v<map_t::const_reverse_iterator, map_t::iterator>);
static_assert(std::bidirectional_iterator<set_t::iterator> && std::bidirectional_iterator<map_t::const_iterator>);
// Default traits: a string takes a 16-byte slot.
static_assert(softwrap::btree_map<std::string, uint64_t>::leaf_slotmax == 10);
static_assert(softwrap::btree_map<uint64_t, uint64_t>::leaf_slotmax == 16);

template <class Tree, class Ref>
void expect_same(const Tree& t, const Ref& ref) {
  t.verify();
  ASSERT_EQ(t.size(), ref.size());
  auto it = t.begin();
  for (const auto& e : ref) {
    ASSERT_NE(it, t.end());
    if constexpr (requires { e.second; }) {
      ASSERT_EQ(it.key(), e.first);
      ASSERT_EQ(it.data(), e.second);
    } else {
      ASSERT_EQ(*it, e);
    }
    ++it;
  }
  ASSERT_EQ(it, t.end());
}

// A string of random length (0-40, NULs included) over few distinct
// prefixes, so that prefix ties and inline/out-of-line mixes are common.
std::string random_string(std::mt19937& rng) {
  using namespace std::string_view_literals;
  static const std::string_view stems[] = {""sv, "a"sv, "ab\0c"sv, "prefix!!"sv, "prefix!!x"sv, "zzzzzzzzzzzz"sv};
  std::string s(stems[rng() % 6]);
  const size_t extra = rng() % 30;
  for (size_t i = 0; i < extra; ++i) s.push_back(static_cast<char>(rng() % 4 == 0 ? 0 : 'a' + rng() % 3));
  return s;
}

struct debug_traits : softwrap::btree_default_traits<uint32_t, uint32_t> {
  static constexpr bool debug = true;
  static constexpr size_t binsearch_threshold = 1024;  // linear search
};

class BtreeApiTest : public PoolTest {};

TEST_P(BtreeApiTest, CopiesAreDeepAndIndependent) {
  pool pl = create();
  smap_t a(pl);
  std::map<std::string, std::string> ref;
  for (int i = 0; i < 300; ++i) {
    const std::string k = "key-" + std::to_string(i * 7919 % 1000), v(static_cast<size_t>(i % 40), 'v');
    a.insert(k, v);
    ref.emplace(k, v);
  }
  smap_t b = a;  // copy construction: a new tree
  EXPECT_NE(b.header_offset(), a.header_offset());
  a.clear();
  expect_same(b, ref);
  EXPECT_TRUE(a.empty());
  smap_t c(pl);
  c.insert("only", "one");
  const uint64_t c_hdr = c.header_offset();
  c = b;  // copy assignment keeps c's header
  EXPECT_EQ(c.header_offset(), c_hdr);
  b.erase("key-0");
  b.begin()->second = "changed";
  expect_same(c, ref);
  // Into another pool.
  const std::string other_path = dir_ + "/other.pool";
  pool p2 = pool::create(other_path, 32u << 20, cfg_);
  smap_t d(p2, c);
  c.clear();
  expect_same(d, ref);
  EXPECT_EQ(d.pool_handle(), p2.handle());
  // Moves take the handle; a moved-from object can be assigned again.
  smap_t e(std::move(d));
  EXPECT_EQ(e.header_offset() != 0, true);
  EXPECT_EQ(d.header_offset(), 0u);
  expect_same(e, ref);
  d = e;
  expect_same(d, ref);
  // Swap: same pool O(1), headers keep their owners.
  smap_t f(p2);
  f.insert("f", "g");
  const uint64_t eh = e.header_offset(), fh = f.header_offset();
  e.swap(f);
  EXPECT_EQ(e.header_offset(), eh);
  EXPECT_EQ(f.header_offset(), fh);
  EXPECT_EQ(e.size(), 1u);
  expect_same(f, ref);
  swap(e, f);
  expect_same(e, ref);
  EXPECT_THROW(e.swap(c), softwrap::error);  // different pools
  // Move assignment between trees of one pool moves the elements.
  f = std::move(e);
  expect_same(f, ref);
  EXPECT_TRUE(e.empty());
}

TEST_P(BtreeApiTest, ProxiesAssignThroughIteratorsAndSubscript) {
  pool pl = create();
  map_t m(pl);
  std::map<uint64_t, uint64_t> ref;
  for (uint64_t i = 0; i < 60; ++i) {
    m.insert(i * 3, i);
    ref[i * 3] = i;
  }
  for (auto it = m.begin(); it != m.end(); ++it) it->second = it->second * 10;  // it->second = x
  for (auto& [k, v] : ref) v *= 10;
  expect_same(m, ref);
  (*m.find(30)).second += 5;  // compound assignment
  ref[30] += 5;
  ++m.find(33)->second;
  ++ref[33];
  *m.find(36) = std::pair<uint64_t, uint64_t>(36, 777);  // *it = value with the same key
  ref[36] = 777;
  EXPECT_THROW(*m.find(39) = (std::pair<uint64_t, uint64_t>(40, 1)), softwrap::error);
  expect_same(m, ref);
  // Copies hold values (as with tlx's Data&): changing them changes nothing.
  {
    auto it = m.find(42);
    auto copy = it->second;
    copy = 1;
    auto pair_copy = *it;
    pair_copy.second = 2;
    EXPECT_EQ(static_cast<uint64_t>(copy), 1u);
    auto& bound = it->second;  // a reference stays bound to the slot
    bound = 4242;
    ref[42] = 4242;
  }
  for (auto [k, v] : m) v = 0;  // copies: no effect
  expect_same(m, ref);
  for (auto& [k, v] : m) v = v + k;  // references: stores
  for (auto& [k, v] : ref) v += k;
  expect_same(m, ref);
  // operator[]: inserts Data() when absent.
  m[1000] = 5;
  ref[1000] = 5;
  m[3] += 1;
  ref[3] += 1;
  EXPECT_EQ(m[77], 0u);
  ref[77];
  uint64_t plain = m[1000];
  EXPECT_EQ(plain, 5u);
  m[6] = m[9];  // proxy to proxy
  ref[6] = ref[9];
  expect_same(m, ref);
  // Reverse iterators and set_data.
  m.rbegin()->second = 1;
  ref.rbegin()->second = 1;
  m.begin().set_data(99);
  ref.begin()->second = 99;
  expect_same(m, ref);
  // Comparisons and streaming of proxies.
  m[1000] = 5;
  ref[1000] = 5;
  EXPECT_TRUE(m.find(1000)->second == 5u && 5u == m.find(1000)->second && m.find(1000)->second < 6u);
  std::ostringstream os;
  os << m.find(1000)->second;
  EXPECT_EQ(os.str(), "5");
  // A const_iterator's pair reads.
  map_t::const_iterator ci = m.find(1000);
  EXPECT_EQ(ci->first, 1000u);
  EXPECT_EQ(static_cast<uint64_t>(ci->second), 5u);
  // String values through the proxy (the old block is freed).
  smap_t s(pl);
  s["k"] = "a fairly long value, out of line";
  s["k"] = std::string("short");
  s.find("k")->second += "-er";
  EXPECT_EQ(s.find("k").data(), "short-er");
  EXPECT_EQ(s["k"].get().size(), 8u);
}

TEST_P(BtreeApiTest, MultiContainersMatchStdAndInsertDuplicatesFirst) {
  pool pl = create();
  mmap_t mm(pl);
  std::multimap<uint32_t, uint64_t> ref;
  std::mt19937 rng(5);
  for (int i = 0; i < 800; ++i) {
    const uint32_t k = rng() % 60;
    const uint64_t v = rng() % 1000;
    auto it = i % 3 == 0 ? mm.insert(k, v) : i % 3 == 1 ? mm.insert2(mm.end(), k, v) : mm.insert({k, v});
    ASSERT_EQ(it.key(), k);
    ASSERT_EQ(it.data(), v);
    // A new duplicate goes before its equals (STX, tlx).
    ASSERT_EQ(it, mm.lower_bound(k));
    ref.emplace_hint(ref.lower_bound(k), k, v);
    if (rng() % 4 == 0) {
      const uint32_t e = rng() % 60;
      ASSERT_EQ(mm.count(e), ref.count(e));
      if (rng() % 2) {
        ASSERT_EQ(mm.erase(e), ref.erase(e));
      } else if (auto f = ref.find(e); f != ref.end()) {
        ASSERT_TRUE(mm.erase_one(e));
        ref.erase(ref.lower_bound(e));  // erase_one takes the first
      }
    }
  }
  expect_same(mm, ref);
  mset_t ms(pl);
  std::multiset<uint32_t> mref;
  for (int i = 0; i < 500; ++i) {
    const uint32_t k = rng() % 40;
    ASSERT_EQ(*ms.insert(k), k);
    mref.insert(k);
    if (i % 7 == 0) {
      ASSERT_EQ(*ms.insert(ms.begin(), k), k);
      mref.insert(k);
    }
  }
  expect_same(ms, mref);
  // erase(first, last) against std.
  ms.erase(ms.lower_bound(10), ms.upper_bound(20));
  mref.erase(mref.lower_bound(10), mref.upper_bound(20));
  expect_same(ms, mref);
}

TEST_P(BtreeApiTest, IteratorConversionsBehaveAsTlx) {
  pool pl = create();
  set_t s(pl);
  for (uint32_t i = 0; i < 50; ++i) s.insert(i * 2);
  set_t::reverse_iterator r = s.end();  // implicit, reverse of end() is the last element
  EXPECT_EQ(*r, 98u);
  set_t::iterator f = r;  // back: the same position (base)
  EXPECT_EQ(f, s.end());
  set_t::const_reverse_iterator cr = r;
  set_t::const_reverse_iterator cr2 = s.begin();
  EXPECT_EQ(cr2, s.rend());
  set_t::const_iterator cf = cr;
  EXPECT_EQ(cf, s.cend());
  ++r;
  EXPECT_EQ(*r, 96u);
  EXPECT_EQ(r.key(), 96u);
  // Walking off either end stays there (tlx).
  auto b = s.begin();
  --b;
  EXPECT_EQ(b, s.begin());
  auto e = s.end();
  ++e;
  EXPECT_EQ(e, s.end());
  set_t empty(pl);
  auto eb = empty.begin();
  ++eb;
  --eb;
  EXPECT_EQ(eb, empty.end());
  EXPECT_EQ(std::distance(s.rbegin(), s.rend()), 50);
  EXPECT_TRUE(std::equal(s.crbegin(), s.crend(), std::set<uint32_t>(s.begin(), s.end()).rbegin()));
}

TEST_P(BtreeApiTest, RelationsCompareAndStats) {
  pool pl = create();
  mset_t a(pl), b(pl);
  for (uint32_t k : {5u, 1u, 9u, 1u}) a.insert(k), b.insert(k);
  EXPECT_TRUE(a == b);
  a.insert(4);
  b.insert(6);
  const std::multiset<uint32_t> ra(a.begin(), a.end()), rb(b.begin(), b.end());
  EXPECT_EQ(a < b, ra < rb);
  EXPECT_EQ(a > b, ra > rb);
  EXPECT_EQ(a <= b, ra <= rb);
  EXPECT_EQ(a >= b, ra >= rb);
  EXPECT_TRUE(a != b);
  map_t m(pl), n(pl);
  m.insert(1, 2);
  n.insert(1, 3);
  EXPECT_TRUE(m < n);
  EXPECT_FALSE(m == n);
  auto vc = m.value_comp();
  EXPECT_TRUE(vc({1, 100}, {2, 0}));
  EXPECT_FALSE(vc({2, 0}, {2, 1}));
  EXPECT_TRUE(m.key_comp()(1, 2));
  // get_stats: counts match a walk of the shape.
  mset_t big(pl);
  for (uint32_t i = 0; i < 1000; ++i) big.insert(i % 300);
  const auto st = big.get_stats();
  EXPECT_EQ(st.size, 1000u);
  EXPECT_GE(st.leaves, 1000u / mset_t::leaf_slotmax);
  EXPECT_LE(st.leaves, 1000u / mset_t::leaf_slotmin);
  EXPECT_GT(st.inner_nodes, 0u);
  EXPECT_EQ(st.nodes(), st.leaves + st.inner_nodes);
  EXPECT_GT(st.avgfill_leaves(), 0.49);
  EXPECT_LE(st.avgfill_leaves(), 1.0);
  EXPECT_EQ(mset_t::tree_stats::leaf_slots, 6);
  // print / print_leaves show every key.
  std::ostringstream all, leaves;
  m.print(all);
  big.print_leaves(leaves);
  EXPECT_NE(all.str().find("leaf"), std::string::npos);
  EXPECT_NE(all.str().find("1=2"), std::string::npos);
  size_t n299 = 0;
  for (size_t at = 0; (at = leaves.str().find(" 299", at)) != std::string::npos; ++at) ++n299;
  EXPECT_EQ(n299, 3u);
}

TEST_P(BtreeApiTest, DumpRestoreRoundTripsAndRefusesOtherStreams) {
  pool pl = create();
  smmap_t a(pl);
  std::multimap<std::string, std::string> ref;
  std::mt19937 rng(9);
  for (int i = 0; i < 400; ++i) {
    const std::string k = random_string(rng), v = random_string(rng);
    a.insert(k, v);
    ref.emplace_hint(ref.lower_bound(k), k, v);
  }
  std::stringstream ss;
  a.dump(ss);
  smmap_t b(pl);
  b.insert("stays?", "no: restore replaces");
  ASSERT_TRUE(b.restore(ss));
  EXPECT_TRUE(a == b);
  expect_same(b, ref);
  // Another type's dump, a truncated one and garbage are refused, tree unchanged.
  std::stringstream other;
  map_t(pl).dump(other);
  EXPECT_FALSE(b.restore(other));
  std::stringstream trunc(ss.str().substr(0, ss.str().size() / 2));
  EXPECT_FALSE(b.restore(trunc));
  std::stringstream junk("not a dump at all");
  EXPECT_FALSE(b.restore(junk));
  expect_same(b, ref);
  // Fixed-size types too.
  set_t s(pl), t(pl);
  for (uint32_t i = 0; i < 100; ++i) s.insert(i * 13 % 101);
  std::stringstream ss2;
  s.dump(ss2);
  ASSERT_TRUE(t.restore(ss2));
  EXPECT_TRUE(s == t);
}

TEST_P(BtreeApiTest, DestroyAndEraseFreeEverything) {
  // A pool that holds one tree of long strings at a time: leaking any node
  // or string block makes a later round fail with SW_ENOSPC.
  cfg_.lane_size = 1u << 20;
  pool pl = create(12u << 20);
  constexpr int kN = 4000;
  for (int round = 0; round < 12; ++round) {
    softwrap::btree_multimap<std::string, std::string> t(pl);
    for (int i = 0; i < kN; ++i)
      t.insert(std::string(40, static_cast<char>('a' + i % 26)) + std::to_string(i), std::string(60, 'x'));
    if (round % 3 == 0) {
      t.destroy();
      EXPECT_EQ(t.header_offset(), 0u);
    } else if (round % 3 == 1) {
      while (!t.empty()) t.erase(t.begin());
      t.destroy();
    } else {
      for (int i = 0; i < kN; ++i) t.erase(std::string(40, static_cast<char>('a' + i % 26)) + std::to_string(i));
      ASSERT_TRUE(t.empty());
      t.destroy();
    }
  }
}

TEST_P(BtreeApiTest, StringKeysMatchStdMultimapWithVerify) {
  pool pl = create();
  smmap_t t(pl);
  std::multimap<std::string, std::string> ref;
  std::mt19937 rng(3);
  for (int i = 0; i < 1500; ++i) {
    const std::string k = random_string(rng);
    if (rng() % 3 || ref.empty()) {
      const std::string v = random_string(rng);
      t.insert(k, v);
      ref.emplace_hint(ref.lower_bound(k), k, v);
    } else {
      ASSERT_EQ(t.erase(std::string_view(k)), ref.erase(k));
    }
    // Bounds by string_view, std::string and (NUL-free) const char*.
    auto lb = t.lower_bound(k);
    auto rlb = ref.lower_bound(k);
    ASSERT_EQ(lb == t.end(), rlb == ref.end());
    if (rlb != ref.end()) {
      ASSERT_EQ(lb.key(), rlb->first);
    }
    ASSERT_EQ(t.count(k), ref.count(k));
    ASSERT_EQ(t.exists(k), ref.count(k) > 0);
  }
  expect_same(t, ref);
  EXPECT_EQ(t.count("prefix!!"), ref.count("prefix!!"));
  // Unique string map with heterogeneous lookup.
  smap_t u(pl);
  std::map<std::string, std::string> uref;
  for (const auto& [k, v] : ref) {
    ASSERT_EQ(u.insert(k, v).second, uref.emplace(k, v).second);
  }
  expect_same(u, uref);
  for (const auto& [k, v] : uref) ASSERT_EQ(u.find(std::string_view(k)).data(), v);
  EXPECT_EQ(u.find(std::string_view("definitely absent")), u.end());
}

struct by_length {
  bool operator()(const std::string& a, const std::string& b) const {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  }
};

TEST_P(BtreeApiTest, StringKeysWithOwnComparatorAndStringSets) {
  pool pl = create();
  softwrap::btree_set<std::string, by_length, small_traits<4, 4>> s(pl);
  std::set<std::string, by_length> ref;
  std::mt19937 rng(4);
  for (int i = 0; i < 600; ++i) {
    const std::string k = random_string(rng);
    ASSERT_EQ(s.insert(k).second, ref.insert(k).second);
    if (i % 5 == 0) {
      const std::string e = random_string(rng);
      ASSERT_EQ(s.erase_one(e), ref.erase(e) == 1);
    }
  }
  expect_same(s, ref);
  softwrap::btree_multiset<std::string> ms(pl);
  std::multiset<std::string> mref;
  for (int i = 0; i < 300; ++i) {
    const std::string k = random_string(rng);
    ms.insert(k);
    mref.insert(k);
  }
  expect_same(ms, mref);
}

// A comparator constructible from an integer is a comparator, never an
// attach offset.
struct mod_less {
  explicit mod_less(int m = 1000) : mod(m) {}
  mod_less(long m) : mod(static_cast<int>(m)) {}  // NOLINT: implicit on purpose
  bool operator()(uint32_t a, uint32_t b) const { return a % mod < b % mod; }
  int mod;
};

TEST_P(BtreeApiTest, AttachNeedsTheTagAndTraitsMembersWork) {
  pool pl = create();
  softwrap::btree_set<uint32_t, mod_less> s(pl, 42L);  // Compare(42): a new tree
  EXPECT_EQ(s.key_comp().mod, 42);
  s.insert(50);
  EXPECT_FALSE(s.insert(8).second);  // 8 == 50 mod 42
  softwrap::btree_set<uint32_t, mod_less> again(pl, softwrap::attach, s.header_offset(), mod_less(42));
  EXPECT_EQ(again.size(), 1u);
  // debug: every mutation prints the tree.
  softwrap::btree_set<uint32_t, std::less<uint32_t>, debug_traits> d(pl);
  ::testing::internal::CaptureStderr();
  d.insert(7);
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("leaf"), std::string::npos) << out;
  for (uint32_t i = 0; i < 100; ++i) d.insert(i * 31 % 97);
  EXPECT_TRUE(d.exists(31));
  EXPECT_EQ(d.find(200), d.end());
}

TEST_P(BtreeApiTest, RangeConstructorsAndBulkLoad) {
  pool pl = create();
  std::vector<std::pair<std::string, uint64_t>> v;
  for (int i = 0; i < 500; ++i) v.emplace_back("k" + std::to_string(i), i);
  softwrap::btree_map<std::string, uint64_t> m(pl, v.begin(), v.end());
  const std::map<std::string, uint64_t> ref(v.begin(), v.end());
  expect_same(m, ref);
  softwrap::btree_map<std::string, uint64_t> bl(pl);
  bl.bulk_load(ref.begin(), ref.end());
  EXPECT_TRUE(bl == m);
  EXPECT_THROW(bl.bulk_load(ref.begin(), ref.end()), softwrap::error);  // not empty
  softwrap::btree_map<std::string, uint64_t> bad(pl);
  EXPECT_THROW(bad.bulk_load(v.rbegin(), v.rend()), softwrap::error);  // not sorted
  EXPECT_TRUE(bad.empty());
}

INSTANTIATE_TEST_SUITE_P(Engines, BtreeApiTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO,
                                           SW_ENGINE_NONATOMIC),
                         softwrap_test::engine_name);

}  // namespace
