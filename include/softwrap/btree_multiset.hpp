// btree_multiset.hpp — softwrap::btree_multiset: a sorted multiset of keys, a persistent B+tree in a softwrap
// pool with the STX/tlx B+tree's interface (see btree.hpp for the approach
// and docs/containers.md for the API and how it differs from tlx's).
//
//     softwrap::btree_multiset<uint64_t> t(pl);         // a new tree; keep t.header_offset()
//     t.insert(42);
//     // later, after reopening the pool:
//     softwrap::btree_multiset<uint64_t> again(pl, softwrap::attach, header_offset);
//
// Every mutating call is a wrap (flattened into the caller's open wrap).
// Not thread-safe.
#ifndef SOFTWRAP_BTREE_MULTISET_HPP_
#define SOFTWRAP_BTREE_MULTISET_HPP_

#include <functional>
#include <utility>

#include "softwrap/btree.hpp"

namespace softwrap {

template <class Key, class Compare = std::less<Key>, class Traits = btree_default_traits<Key, Key>>
class btree_multiset : public btree<Key, btree_detail::no_data, Compare, Traits, true, true> {
  using base = btree<Key, btree_detail::no_data, Compare, Traits, true, true>;

 public:
  using self = btree_multiset;
  using btree_impl = base;
  using base::base;

  // Exchanges the elements of two trees of one pool (btree::swap).
  void swap(btree_multiset& other) { base::swap(other); }
  friend void swap(btree_multiset& x, btree_multiset& y) { x.swap(y); }
};

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_MULTISET_HPP_
