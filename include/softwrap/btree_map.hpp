// btree_map.hpp — softwrap::btree_map: sorted unique keys with a value each, a persistent B+tree in a softwrap
// pool with the STX/tlx B+tree's interface (see btree.hpp for the approach
// and docs/containers.md for the API and how it differs from tlx's).
//
//     softwrap::btree_map<uint64_t, uint64_t> t(pl);         // a new tree; keep t.header_offset()
//     t.insert(42, 7);
//     // later, after reopening the pool:
//     softwrap::btree_map<uint64_t, uint64_t> again(pl, softwrap::attach, header_offset);
//
// Every mutating call is a wrap (flattened into the caller's open wrap).
// Not thread-safe.
#ifndef SOFTWRAP_BTREE_MAP_HPP_
#define SOFTWRAP_BTREE_MAP_HPP_

#include <functional>
#include <utility>

#include "softwrap/btree.hpp"

namespace softwrap {

template <class Key, class Data, class Compare = std::less<Key>,
          class Traits = btree_default_traits<Key, std::pair<Key, Data>>>
class btree_map : public btree<Key, Data, Compare, Traits, false, false> {
  using base = btree<Key, Data, Compare, Traits, false, false>;

 public:
  using self = btree_map;
  using btree_impl = base;
  using base::base;

  // Exchanges the elements of two trees of one pool (btree::swap).
  void swap(btree_map& other) { base::swap(other); }
  friend void swap(btree_map& x, btree_map& y) { x.swap(y); }
};

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_MAP_HPP_
