// btree_set.hpp — softwrap::btree_set: a sorted set of unique keys, a persistent B+tree in a softwrap pool
// with the STX B+tree's interface (see btree.hpp for the approach and
// docs/containers.md for the API).
//
//     softwrap::btree_set<uint64_t> s(pl);      // a new tree; keep s.header_offset()
//     s.insert(42);
//     // later, after reopening the pool:
//     softwrap::btree_set<...> again(pl, header_offset);
//
// Every mutating call is a wrap (flattened into the caller's open wrap).
// Not thread-safe.
#ifndef SOFTWRAP_BTREE_SET_HPP_
#define SOFTWRAP_BTREE_SET_HPP_

#include <functional>
#include <utility>

#include "softwrap/btree.hpp"

namespace softwrap {

template <class Key, class Compare = std::less<Key>,
          class Traits = btree_default_traits<Key, Key>>
using btree_set = btree<Key, btree_detail::no_data, Compare, Traits, false, true>;

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_SET_HPP_
