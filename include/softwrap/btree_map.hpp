// btree_map.hpp — softwrap::btree_map: sorted unique keys with a value each, a persistent B+tree in a softwrap pool
// with the STX B+tree's interface (see btree.hpp for the approach and
// docs/containers.md for the API).
//
//     softwrap::btree_map<uint64_t, uint64_t> m(pl);   // a new tree; keep m.header_offset()
//     m.insert(42, 7);
//     // later, after reopening the pool:
//     softwrap::btree_map<...> again(pl, header_offset);
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
using btree_map = btree<Key, Data, Compare, Traits, false, false>;

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_MAP_HPP_
