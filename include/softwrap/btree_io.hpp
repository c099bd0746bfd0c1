// btree_io.hpp — the whole-tree operations of softwrap::btree (included by
// btree.hpp; not for direct use): deep copy, get_stats, print and
// print_leaves, and STX's dump/restore.
//
// Approach.  A copy reads the source's leaves in order, gives every string
// a block of its own in the destination pool, and builds the destination
// bottom-up as bulk_load does (one wrap).  Statistics and printing walk
// the nodes.  dump() writes the elements, not the nodes (the node layout is
// the pool's business), in a small versioned format (docs/containers.md):
//   "SWBTDUMP" | u32 version (1) | u32 flags (btree_detail::kMulti, kSet,
//   kStringKey, kStringData) | u32 key bytes | u32 value bytes (0 for
//   strings and for sets' values) | u64 count | count records of key then
//   value, fixed-size ones as their bytes, strings as u64 length + bytes;
// all integers in the host's byte order.  restore() checks the header
// against this tree's type and reads every record before it changes
// anything, then replaces the elements in one wrap.
#ifndef SOFTWRAP_BTREE_IO_HPP_
#define SOFTWRAP_BTREE_IO_HPP_

#include <iostream>
#include <istream>
#include <ostream>
#include <vector>

#include "softwrap/btree.hpp"

namespace softwrap {

#define SW_BTREE_TEMPLATE \
  template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
#define SW_BTREE btree<Key, Data, Compare, Traits, Multi, IsSet>

namespace btree_detail {
inline constexpr char kDumpMagic[8] = {'S', 'W', 'B', 'T', 'D', 'U', 'M', 'P'};
inline constexpr uint32_t kDumpVersion = 1;

// Writes x to os: what operator<< shows, or a placeholder.
template <class T>
void show(std::ostream& os, const T& x) {
  if constexpr (requires { os << x; }) os << x;
  else os << '?';
}
}  // namespace btree_detail

SW_BTREE_TEMPLATE
void SW_BTREE::copy_from(const btree& other) {
  std::vector<SK> keys;
  std::vector<SD> data;
  for (uint64_t l = other.a_.ld(&other.hdr()->head_leaf); l != 0;) {
    node_view v;
    other.read_node(l, 0, &v);
    const unsigned use = v.head().slotuse;
    const uint64_t next = v.next();
    // Copy the slots out first: dup_key writes (and may change peeked bytes).
    std::vector<SK> ks(v.keys(), v.keys() + use);
    std::vector<SD> ds;
    if constexpr (kHasData) ds.assign(v.data(), v.data() + use);
    for (unsigned s = 0; s < use; ++s) {
      keys.push_back(dup_key(ks[s], other.a_));
      if constexpr (kHasData) data.push_back(dup_data(ds[s], other.a_));
    }
    l = next;
  }
  build(keys, data);
  after_change();
}

SW_BTREE_TEMPLATE
void SW_BTREE::after_change() const {
  if constexpr (tr::self_verify) verify();
  if constexpr (tr::debug) print(std::cerr);
}

SW_BTREE_TEMPLATE
auto SW_BTREE::get_stats() const -> tree_stats {
  tree_stats s;
  s.size = size();
  if (const uint64_t r = a_.ld(&hdr()->root)) stats_node(r, &s);
  return s;
}

SW_BTREE_TEMPLATE
void SW_BTREE::stats_node(uint64_t node, tree_stats* s) const {
  const btree_detail::node_head hd = a_.head(node);
  if (hd.level == 0) {
    ++s->leaves;
    return;
  }
  ++s->inner_nodes;
  for (unsigned i = 0; i <= hd.slotuse; ++i) stats_node(a_.ld(&in(node)->children[i]), s);
}

SW_BTREE_TEMPLATE
void SW_BTREE::print(std::ostream& os) const {
  const uint64_t r = a_.ld(&hdr()->root);
  os << "btree @" << hdr_ << ": " << size() << " elements\n";
  if (r) print_node(os, r, 0, true);
}

SW_BTREE_TEMPLATE
void SW_BTREE::print_leaves(std::ostream& os) const {
  os << "leaves:\n";
  for (uint64_t l = a_.ld(&hdr()->head_leaf); l != 0; l = a_.ld(&lf(l)->next)) print_node(os, l, 1, false);
}

// One line per node: kind, offset, fill and keys (a leaf's values too).
SW_BTREE_TEMPLATE
void SW_BTREE::print_node(std::ostream& os, uint64_t node, unsigned depth, bool recurse) const {
  const btree_detail::node_head hd = a_.head(node);
  const unsigned use = hd.slotuse;
  os << std::string(2 * depth, ' ') << (hd.level == 0 ? "leaf" : "inner") << " @" << node << " level " << hd.level
     << " slots " << use << "/" << (hd.level == 0 ? leaf_slotmax : inner_slotmax) << ":";
  for (unsigned s = 0; s < use; ++s) {
    os << ' ';
    if (hd.level == 0) {
      btree_detail::show(os, key_of(a_, a_.ld(&lf(node)->keys[s])));
      if constexpr (kHasData) {
        os << '=';
        btree_detail::show(os, data_of(a_, a_.ld(&lf(node)->data[s])));
      }
    } else {
      btree_detail::show(os, key_of(a_, a_.ld(&in(node)->keys[s])));
    }
  }
  os << '\n';
  if (recurse && hd.level > 0)
    for (unsigned s = 0; s <= use; ++s) print_node(os, a_.ld(&in(node)->children[s]), depth + 1, true);
}

namespace btree_detail {
template <class T>
void put(std::ostream& os, const T& v) {
  os.write(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
bool get(std::istream& is, T* v) {
  return static_cast<bool>(is.read(reinterpret_cast<char*>(v), sizeof *v));
}
template <class T>
void put_value(std::ostream& os, const T& v) {
  if constexpr (stored<T>::is_string) {
    put(os, uint64_t{v.size()});
    os.write(v.data(), static_cast<std::streamsize>(v.size()));
  } else {
    put(os, v);
  }
}
template <class T>
bool get_value(std::istream& is, T* v) {
  if constexpr (stored<T>::is_string) {
    uint64_t n;
    if (!get(is, &n) || n > (uint64_t{1} << 40)) return false;
    v->resize(n);
    return static_cast<bool>(is.read(v->data(), static_cast<std::streamsize>(n)));
  } else {
    return get(is, v);
  }
}
}  // namespace btree_detail

SW_BTREE_TEMPLATE
void SW_BTREE::dump(std::ostream& os) const {
  os.write(btree_detail::kDumpMagic, sizeof btree_detail::kDumpMagic);
  btree_detail::put(os, btree_detail::kDumpVersion);
  btree_detail::put(os, kFlags);
  btree_detail::put(os, uint32_t{kStrKey ? 0u : static_cast<uint32_t>(sizeof(Key))});
  btree_detail::put(os, uint32_t{kStrData || !kHasData ? 0u : static_cast<uint32_t>(sizeof(Data))});
  btree_detail::put(os, uint64_t{size()});
  for (auto it = begin(); it != end(); ++it) {
    btree_detail::put_value(os, it.key());
    if constexpr (kHasData) btree_detail::put_value(os, it.data());
  }
}

SW_BTREE_TEMPLATE
bool SW_BTREE::restore(std::istream& is) {
  char magic[8];
  uint32_t version, flags, ksize, dsize;
  uint64_t n;
  if (!is.read(magic, sizeof magic) || std::memcmp(magic, btree_detail::kDumpMagic, sizeof magic) != 0) return false;
  if (!btree_detail::get(is, &version) || version != btree_detail::kDumpVersion) return false;
  if (!btree_detail::get(is, &flags) || flags != kFlags) return false;
  if (!btree_detail::get(is, &ksize) || ksize != (kStrKey ? 0u : sizeof(Key))) return false;
  if (!btree_detail::get(is, &dsize) || dsize != (kStrData || !kHasData ? 0u : sizeof(Data))) return false;
  if (!btree_detail::get(is, &n)) return false;
  std::vector<value_type> elems;
  for (uint64_t i = 0; i < n; ++i) {
    Key k{};
    Data d{};
    if (!btree_detail::get_value(is, &k)) return false;
    if constexpr (kHasData) {
      if (!btree_detail::get_value(is, &d)) return false;
      elems.emplace_back(std::move(k), std::move(d));
    } else {
      elems.push_back(std::move(k));
    }
  }
  auto key = [](const value_type& v) -> const Key& {
    if constexpr (IsSet) return v;
    else return v.first;
  };
  for (size_t i = 1; i < elems.size(); ++i) {
    if (Multi ? cmp_(key(elems[i]), key(elems[i - 1])) : !cmp_(key(elems[i - 1]), key(elems[i]))) return false;
  }
  wrap w(a_.handle());
  clear();
  bulk_load(elems.begin(), elems.end());
  w.commit();
  return true;
}

#undef SW_BTREE
#undef SW_BTREE_TEMPLATE

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_IO_HPP_
