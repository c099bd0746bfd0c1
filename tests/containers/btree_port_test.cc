// btree_port_test.cc — programs written for tlx / STX B+trees, ported by
// changing only how trees are constructed (a pool argument, or
// softwrap::attach to find a tree again): the usage of their test and
// example programs — simple inserts and erases, large random runs, bounds,
// iterators walked every way, struct keys with a comparator, relations
// with copies, bulk loads, dump/restore, and STX's word-count example
// (operator[]++ on a map of strings).  Our code, after their programs'
// usage; each block says which program it follows.  Runs per engine.
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

namespace {

using softwrap::pool;
using softwrap_test::PoolTest;

// tlx's tests derive their traits from the defaults and turn on checks.
template <class Key>
struct traits_nodebug : softwrap::btree_default_traits<Key, Key> {
  static constexpr bool self_verify = true;
  static constexpr bool debug = false;
  static constexpr int leaf_slots = 8;
  static constexpr int inner_slots = 8;
};

class BtreePortTest : public PoolTest {};

// tlx SimpleTest: empty tree, 3200 inserts and erases ascending and
// descending, set and map.
TEST_P(BtreePortTest, SimpleInsertEraseAscendingDescending) {
  pool pl = create();
  using btree_type = softwrap::btree_set<unsigned, std::less<unsigned>, traits_nodebug<unsigned>>;
  btree_type bt(pl);  // was: btree_type bt;
  EXPECT_TRUE(bt.empty());
  EXPECT_EQ(bt.size(), 0u);
  bt.verify();
  for (unsigned i = 0; i < 3200; ++i) bt.insert(i * 7 % 3200);
  EXPECT_EQ(bt.size(), 3200u);
  for (unsigned i = 0; i < 3200; ++i) EXPECT_TRUE(bt.exists(i));
  for (unsigned i = 3200; i-- > 0;) EXPECT_TRUE(bt.erase_one(i));
  EXPECT_TRUE(bt.empty());

  using map_type = softwrap::btree_map<unsigned, unsigned, std::less<unsigned>, traits_nodebug<unsigned>>;
  map_type m(pl);
  for (unsigned i = 3200; i-- > 0;) m.insert2(i, i * 2);
  EXPECT_EQ(m.size(), 3200u);
  for (unsigned i = 0; i < 3200; ++i) EXPECT_EQ(m.find(i)->second, i * 2);
  for (unsigned i = 0; i < 3200; ++i) EXPECT_EQ(m.erase(i), 1u);
  EXPECT_TRUE(m.empty());
}

// tlx LargeTest: a multiset against std::multiset with random keys.
TEST_P(BtreePortTest, LargeMultisetMatchesStd) {
  pool pl = create();
  using btree_type = softwrap::btree_multiset<unsigned, std::less<unsigned>, traits_nodebug<unsigned>>;
  for (auto [insnum, modulo] : {std::pair{320u, 1000u}, std::pair{3200u, 10u}, std::pair{3200u, 100u}}) {
    btree_type bt(pl);
    std::multiset<unsigned> set;
    std::mt19937 rng(34234235);
    for (unsigned i = 0; i < insnum; ++i) {
      const unsigned k = rng() % modulo;
      bt.insert(k);
      set.insert(k);
      ASSERT_EQ(bt.size(), set.size());
    }
    ASSERT_TRUE(std::equal(bt.begin(), bt.end(), set.begin(), set.end()));
    rng.seed(34234235);
    for (unsigned i = 0; i < insnum; ++i) {
      const unsigned k = rng() % modulo;
      ASSERT_TRUE(bt.exists(k));
      ASSERT_EQ(bt.count(k), set.count(k));
      set.erase(set.find(k));
      bt.erase_one(k);
    }
    ASSERT_TRUE(bt.empty());
    bt.destroy();
  }
}

// tlx BoundTest: lower_bound/upper_bound/equal_range on a multimap.
TEST_P(BtreePortTest, BoundsOnMultimap) {
  pool pl = create();
  using btree_type = softwrap::btree_multimap<unsigned, unsigned, std::less<unsigned>, traits_nodebug<unsigned>>;
  btree_type bt(pl);
  std::multimap<unsigned, unsigned> ref;
  std::mt19937 rng(1);
  for (unsigned i = 0; i < 3200; ++i) {
    const unsigned k = rng() % 100;
    const unsigned v = 234;
    bt.insert2(k, v);
    ref.insert({k, v});
  }
  for (unsigned k = 0; k < 105; ++k) {
    const auto lb = bt.lower_bound(k);
    const auto ub = bt.upper_bound(k);
    const auto er = bt.equal_range(k);
    EXPECT_EQ(er.first, lb);
    EXPECT_EQ(er.second, ub);
    EXPECT_EQ(std::distance(lb, ub), static_cast<std::ptrdiff_t>(ref.count(k)));
    EXPECT_EQ(lb == bt.end(), ref.lower_bound(k) == ref.end());
    if (lb != bt.end()) {
      EXPECT_EQ(lb->first, ref.lower_bound(k)->first);
    }
    for (auto it = lb; it != ub; ++it) EXPECT_EQ(it->second, 234u);
  }
}

// tlx IteratorTest 3-5: a map walked by every iterator kind, both ways,
// and walking off either end stays there.
TEST_P(BtreePortTest, IteratorsEveryWay) {
  pool pl = create();
  using btree_type = softwrap::btree_map<unsigned, unsigned, std::less<unsigned>, traits_nodebug<unsigned>>;
  btree_type map(pl);
  const unsigned maxnum = 1000;
  for (unsigned i = 0; i < maxnum; ++i) map.insert(std::make_pair(i, i * 3));
  unsigned nownum = 0;
  for (btree_type::iterator i = map.begin(); i != map.end(); ++i, ++nownum) {
    EXPECT_EQ(nownum, i->first);
    EXPECT_EQ(nownum * 3, i->second);
  }
  EXPECT_EQ(nownum, maxnum);
  btree_type::iterator i;
  for (i = --map.end(); i != map.begin(); --i) {
    --nownum;
    EXPECT_EQ(nownum, i->first);
    EXPECT_EQ(nownum * 3, i->second);
  }
  EXPECT_EQ(nownum - 1, i->first);
  nownum = 0;
  for (btree_type::const_iterator ci = map.begin(); ci != map.end(); ci++, ++nownum) EXPECT_EQ(nownum, ci->first);
  for (btree_type::reverse_iterator ri = map.rbegin(); ri != map.rend(); ++ri) {
    --nownum;
    EXPECT_EQ(nownum, ri->first);
    EXPECT_EQ(nownum * 3, ri->second);
  }
  for (btree_type::const_reverse_iterator cri = map.rbegin(); cri != map.rend(); cri++, ++nownum) {
    EXPECT_EQ(maxnum - 1 - nownum, cri->first);
  }
  // IteratorTest 5: off either end.
  auto it = map.begin();
  it--;
  EXPECT_EQ(it, map.begin());
  it = map.end();
  it++;
  EXPECT_EQ(it, map.end());
  btree_type::reverse_iterator rit = map.rbegin();
  --rit;
  EXPECT_EQ(rit, map.rbegin());
  // IteratorTest 1-2: a multiset copied into a vector both ways.
  softwrap::btree_multiset<unsigned> ms(pl);
  std::vector<unsigned> vector;
  std::mt19937 rng(34234235);
  for (unsigned k = 0; k < 3200; ++k) {
    vector.push_back(rng() % 1000);
    ms.insert(vector.back());
  }
  std::sort(vector.begin(), vector.end());
  std::vector<unsigned> walked(ms.begin(), ms.end());
  EXPECT_EQ(walked, vector);
  std::vector<unsigned> back(ms.rbegin(), ms.rend());
  std::reverse(back.begin(), back.end());
  EXPECT_EQ(back, vector);
}

// tlx StructureTest: a struct key ordered by one member.
struct TestData {
  unsigned a, b;
  bool operator==(const TestData& o) const { return a == o.a && b == o.b; }
};
struct TestCompare {
  unsigned somevalue = 0;
  explicit TestCompare(unsigned sv) : somevalue(sv) {}
  bool operator()(const TestData& a, const TestData& b) const { return a.a > b.a; }
};

TEST_P(BtreePortTest, StructKeysWithStatefulComparator) {
  pool pl = create();
  using btree_type = softwrap::btree_multiset<TestData, TestCompare, traits_nodebug<TestData>>;
  btree_type bt(pl, TestCompare(42));  // was: btree_type bt(TestCompare(42));
  std::mt19937 rng(34234235);
  for (unsigned i = 0; i < 320; ++i) bt.insert(TestData{static_cast<unsigned>(rng() % 1000), i});
  EXPECT_EQ(bt.size(), 320u);
  EXPECT_EQ(bt.key_comp().somevalue, 42u);
  unsigned prev = ~0u;
  for (auto it = bt.begin(); it != bt.end(); ++it) {
    EXPECT_LE(it->a, prev);  // descending by a
    prev = it->a;
  }
}

// tlx RelationTest: equal, less, assignment and copy construction.
TEST_P(BtreePortTest, RelationsAssignmentAndCopies) {
  pool pl = create();
  using btree_type = softwrap::btree_multiset<unsigned, std::less<unsigned>, traits_nodebug<unsigned>>;
  btree_type bt1(pl), bt2(pl);
  std::mt19937 rng(34234236);
  for (unsigned i = 0; i < 320; i++) {
    const unsigned key = rng() % 1000;
    bt1.insert(key);
    bt2.insert(key);
  }
  EXPECT_TRUE(bt1 == bt2);
  bt1.insert(499);
  bt2.insert(500);
  EXPECT_TRUE(bt1 != bt2);
  EXPECT_TRUE(bt1 < bt2);
  EXPECT_TRUE(!(bt1 > bt2));
  bt1.insert(500);
  bt2.insert(499);
  EXPECT_TRUE(bt1 == bt2);
  EXPECT_TRUE(bt1 <= bt2);
  btree_type bt3(pl);  // was: btree_type bt3;
  bt3 = bt1;
  EXPECT_TRUE(bt1 == bt3);
  EXPECT_TRUE(bt1 >= bt3);
  btree_type bt4 = bt3;  // a deep copy, as in tlx
  EXPECT_TRUE(bt1 == bt4);
  bt3.clear();  // the copy does not notice
  EXPECT_TRUE(bt1 == bt4);
}

// tlx BulkLoadTest: bulk_load of sorted ranges of many sizes.
TEST_P(BtreePortTest, BulkLoadSetAndMap) {
  pool pl = create();
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 100u, 3200u}) {
    std::vector<unsigned> keys(n);
    std::mt19937 rng(static_cast<unsigned>(n));
    for (auto& k : keys) k = rng() % 1000;
    std::sort(keys.begin(), keys.end());
    softwrap::btree_multiset<unsigned, std::less<unsigned>, traits_nodebug<unsigned>> bt(pl);
    bt.bulk_load(keys.begin(), keys.end());
    EXPECT_EQ(bt.size(), n);
    EXPECT_TRUE(std::equal(bt.begin(), bt.end(), keys.begin(), keys.end()));
    std::vector<std::pair<unsigned, unsigned>> pairs;
    for (unsigned i = 0; i < n; ++i) pairs.emplace_back(i * 3, i);
    softwrap::btree_map<unsigned, unsigned, std::less<unsigned>, traits_nodebug<unsigned>> bm(pl);
    bm.bulk_load(pairs.begin(), pairs.end());
    EXPECT_EQ(bm.size(), n);
    for (const auto& [k, v] : pairs) EXPECT_EQ(bm.find(k)->second, v);
  }
}

// STX DumpRestoreTest: dump a multiset to a string, restore it into a new
// tree (here: after reopening the pool, in another tree found again by
// softwrap::attach), and refuse a dump of another type.
TEST_P(BtreePortTest, DumpRestoreAcrossReopen) {
  std::string dump;
  uint64_t header = 0;
  {
    pool pl = create();
    softwrap::btree_multiset<unsigned, std::less<unsigned>, traits_nodebug<unsigned>> bt(pl);
    std::mt19937 rng(34234235);
    for (unsigned i = 0; i < 3200; ++i) bt.insert(rng() % 100);
    std::ostringstream os;
    bt.dump(os);
    dump = os.str();
    header = bt.header_offset();
  }
  pool pl = reopen();
  softwrap::btree_multiset<unsigned, std::less<unsigned>, traits_nodebug<unsigned>> kept(pl, softwrap::attach, header);
  softwrap::btree_multiset<unsigned, std::less<unsigned>, traits_nodebug<unsigned>> bt2(pl);
  std::istringstream is(dump);
  ASSERT_TRUE(bt2.restore(is));
  EXPECT_EQ(bt2.size(), 3200u);
  EXPECT_TRUE(bt2 == kept);
  // Another key size (as STX, the format cannot tell int from unsigned).
  softwrap::btree_multiset<uint64_t> other(pl);
  std::istringstream is2(dump);
  EXPECT_FALSE(other.restore(is2));
  EXPECT_TRUE(other.empty());
}

// STX's word-count example: count the words of a text in a map of strings
// with operator[]++, then list them in order.
TEST_P(BtreePortTest, WordCountExample) {
  pool pl = create();
  const std::string text =
      "the quick brown fox jumps over the lazy dog the dog sleeps and the fox runs "
      "a b-tree keeps its keys in order and a persistent b-tree keeps them across crashes";
  softwrap::btree_map<std::string, unsigned> wordcount(pl);  // was: btree_map<std::string, unsigned> wordcount;
  std::map<std::string, unsigned> ref;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    wordcount[w]++;
    ref[w]++;
  }
  std::ostringstream out, want;
  for (auto it = wordcount.begin(); it != wordcount.end(); ++it) out << it->first << ": " << it->second << "\n";
  for (const auto& [w, n] : ref) want << w << ": " << n << "\n";
  EXPECT_EQ(out.str(), want.str());
  EXPECT_EQ(wordcount["the"], 4u);
}

INSTANTIATE_TEST_SUITE_P(Engines, BtreePortTest,
                         ::testing::Values(SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO,
                                           SW_ENGINE_NONATOMIC),
                         softwrap_test::engine_name);

}  // namespace
