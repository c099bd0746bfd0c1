// containers.hpp — the persistent containers of softwrap in one include:
// the B+tree family with the STX B+tree's interface (btree_map,
// btree_multimap, btree_set, btree_multiset), persistent_array<T> and
// persistent_hash_map<K, V>.  Each lives in a pool, reads and writes it
// only through the wrap API, and runs every mutating call as a wrap that
// joins the caller's open wrap (docs/containers.md).
#ifndef SOFTWRAP_CONTAINERS_HPP_
#define SOFTWRAP_CONTAINERS_HPP_

#include "softwrap/btree_map.hpp"
#include "softwrap/btree_multimap.hpp"
#include "softwrap/btree_multiset.hpp"
#include "softwrap/btree_set.hpp"
#include "softwrap/persistent_array.hpp"
#include "softwrap/persistent_hash_map.hpp"

#endif  // SOFTWRAP_CONTAINERS_HPP_
