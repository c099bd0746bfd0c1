// btree_verify.hpp — softwrap::btree::verify() (included by btree.hpp; not
// for direct use).
//
// Approach.  One depth-first walk reads every node through the wrap API
// and checks, after the STX/tlx B+tree's verify(): levels decrease by one
// per step and all leaves are at level 0; every node other than the root
// holds between half and all of its slots (the root at least one); keys
// are sorted within a node (strictly in unique trees); each child lies
// between its separators; the leaves, met left to right, form the doubly
// linked list from the header's head to its tail; and the elements counted
// equal the header's size.  The first violation throws btree_verify_error.
#ifndef SOFTWRAP_BTREE_VERIFY_HPP_
#define SOFTWRAP_BTREE_VERIFY_HPP_

#include "softwrap/btree.hpp"

namespace softwrap {

template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
void btree<Key, Data, Compare, Traits, Multi, IsSet>::verify() const {
  auto fail = [](const std::string& what) { throw btree_verify_error("btree::verify: " + what); };
  header_t h;
  a_.rd(&h, hdr(), sizeof h);
  if (h.magic != btree_detail::kMagic) fail("bad header magic");
  if (!h.root) {
    if (h.head_leaf || h.tail_leaf || h.size) fail("empty tree with leaves or a size");
    return;
  }
  SK min_key{};
  uint64_t leaves = 0, prev_leaf = 0;
  size_type count = 0;
  verify_node(h.root, a_.level(h.root), true, &min_key, &leaves, &prev_leaf, &count);
  if (prev_leaf != h.tail_leaf) fail("the last leaf is not the header's tail");
  if (a_.ld(&lf(prev_leaf)->next) != 0) fail("the last leaf has a successor");
  if (count != h.size) fail("element count " + std::to_string(count) + " != size " + std::to_string(h.size));
}

// Checks the subtree at node (expected at `level`); returns its largest key
// and stores its smallest in *min_key.
template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
auto btree<Key, Data, Compare, Traits, Multi, IsSet>::verify_node(uint64_t node, unsigned level,
                                                                 bool is_root, SK* min_key,
                                                                 uint64_t* leaves, uint64_t* prev_leaf,
                                                                 size_type* count) const -> SK {
  auto fail = [node](const std::string& what) {
    throw btree_verify_error("btree::verify: node at offset " + std::to_string(node) + ": " + what);
  };
  if (node == 0 || node % 16 != 0) fail("bad node offset");
  if (a_.level(node) != level) fail("level " + std::to_string(a_.level(node)) + ", expected " + std::to_string(level));
  const unsigned use = a_.slotuse(node);
  const bool leaf = level == 0;
  const unsigned max = leaf ? leaf_slotmax : inner_slotmax;
  const unsigned min = is_root ? 1 : (leaf ? leaf_slotmin : inner_slotmin);
  if (use < min || use > max) fail("slotuse " + std::to_string(use) + " outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  std::vector<SK> keys(use);
  a_.rd(keys.data(), leaf ? lf(node)->keys : in(node)->keys, use * sizeof(SK));
  for (unsigned i = 1; i < use; ++i) {
    if (Multi ? less_ss(keys[i], keys[i - 1]) : !less_ss(keys[i - 1], keys[i]))
      fail("keys out of order at slot " + std::to_string(i));
  }
  if (leaf) {
    if (a_.ld(&lf(node)->prev) != *prev_leaf) fail("prev link does not name the previous leaf");
    if (*prev_leaf == 0 && a_.ld(&hdr()->head_leaf) != node) fail("the first leaf is not the header's head");
    if (*prev_leaf != 0 && a_.ld(&lf(*prev_leaf)->next) != node) fail("the previous leaf's next link skips this leaf");
    *prev_leaf = node;
    ++*leaves;
    *count += use;
    *min_key = keys.front();
    return keys.back();
  }
  SK max_key{};
  for (unsigned s = 0; s <= use; ++s) {
    SK cmin{};
    const SK cmax = verify_node(a_.ld(&in(node)->children[s]), level - 1, false, &cmin, leaves,
                                 prev_leaf, count);
    if (s < use && less_ss(keys[s], cmax)) fail("child " + std::to_string(s) + " exceeds its separator");
    if (s > 0 && (Multi ? less_ss(cmin, keys[s - 1]) : !less_ss(keys[s - 1], cmin)))
      fail("child " + std::to_string(s) + " lies below its separator");
    if (s == 0) *min_key = cmin;
    max_key = cmax;
  }
  return max_key;
}

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_VERIFY_HPP_
