// btree_set.hpp — softwrap::btree_set: a sorted set of unique keys, a persistent B+tree in a softwrap
// pool with the STX/tlx B+tree's interface (see btree.hpp for the approach
// and docs/containers.md for the API and how it differs from tlx's).
//
//     softwrap::btree_set<uint64_t> t(pl);         // a new tree; keep t.header_offset()
//     t.insert(42);
//     // later, after reopening the pool:
//     softwrap::btree_set<uint64_t> again(pl, softwrap::attach, header_offset);
//
// Every mutating call is a wrap (flattened into the caller's open wrap).
// Not thread-safe.
#ifndef SOFTWRAP_BTREE_SET_HPP_
#define SOFTWRAP_BTREE_SET_HPP_

#include <functional>
#include <utility>

#include "softwrap/btree.hpp"

namespace softwrap {

template <class Key, class Compare = std::less<Key>, class Traits = btree_default_traits<Key, Key>>
class btree_set : public btree<Key, btree_detail::no_data, Compare, Traits, false, true> {
  using base = btree<Key, btree_detail::no_data, Compare, Traits, false, true>;

 public:
  using self = btree_set;
  using btree_impl = base;
  using base::base;

  // Exchanges the elements of two trees of one pool (btree::swap).
  void swap(btree_set& other) { base::swap(other); }
  friend void swap(btree_set& x, btree_set& y) { x.swap(y); }
};

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_SET_HPP_
