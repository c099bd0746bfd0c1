// btree_modify.hpp — the mutating half of softwrap::btree (included by
// btree.hpp; not for direct use): insert with node splits, erase with
// borrowing and merging, bulk_load and clear.
//
// Approach.  Insert descends recursively and reports a split upwards as
// (separator key, new node); the full node's keys plus the new one are laid
// out in DRAM and divided evenly, so both halves hold at least half their
// slots, and both are written with one sw_write per array.  A plain insert
// shifts the slots right of the insertion point with one sw_write per
// array plus slotuse, built from the node image the descent read — or, in
// small nodes where that logs no more bytes (an insertion near the front),
// with one sw_write of the node's image up to its last used slot.  Erase
// descends along every child that may hold the key (with equal separators a
// key can sit right of its separator) and, on the way back up, fixes an
// underfull child by borrowing one slot from a sibling with spare slots or
// else merging with a sibling.
// All of it runs inside the operation's wrap, so a failure part-way
// (SW_ENOSPC) leaves nothing.  String slots: an element's strings are
// allocated when it is inserted (not before: a refused duplicate allocates
// nothing) and freed when it is erased; a separator copied up from a leaf
// is made for it (btree::separator: under std::less on strings a short
// prefix kept inline, else a copy with a block of its own), one moved
// between inner nodes keeps its block, one dropped by a merge or replaced
// by a borrow is freed.
#ifndef SOFTWRAP_BTREE_MODIFY_HPP_
#define SOFTWRAP_BTREE_MODIFY_HPP_

#include <vector>

#include "softwrap/btree.hpp"

namespace softwrap {

#define SW_BTREE_TEMPLATE \
  template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
#define SW_BTREE btree<Key, Data, Compare, Traits, Multi, IsSet>

/* ------------------------------------------------------------------ insert */

SW_BTREE_TEMPLATE
auto SW_BTREE::insert_start(key_arg k, const Data& d) -> std::pair<iterator, bool> {
  wrap w(a_.handle());
  header_t* h = hdr();
  // root, head_leaf, tail_leaf and size are adjacent: one read.
  uint64_t links[4];
  static_assert(offsetof(header_t, size) == offsetof(header_t, root) + 3 * sizeof(uint64_t));
  std::memcpy(links, a_.peek(&h->root, sizeof links, links), sizeof links);
  uint64_t root = links[0];
  if (!root) {
    root = a_.alloc(sizeof(leaf_t), 0, 0);
    const uint64_t init[3] = {root, root, root};
    a_.wr(&h->root, init, sizeof init);  // root, head, tail
  }
  SK split_key{};
  uint64_t split_node = 0;
  iterator pos;
  const bool inserted = insert_descend(root, -1, make_probe(k), k, d, &split_key, &split_node, &pos);
  if (split_node) {
    const uint64_t nr = a_.alloc(sizeof(inner_t), static_cast<uint16_t>(a_.level(root) + 1), 1);
    a_.st(&in(nr)->keys[0], split_key);
    const uint64_t kids[2] = {root, split_node};
    a_.wr(&in(nr)->children[0], kids, sizeof kids);
    a_.st(&h->root, nr);
  }
  if (inserted) a_.st(&h->size, links[3] + 1);
  after_change();
  w.commit();
  return {pos, inserted};
}

SW_BTREE_TEMPLATE
bool SW_BTREE::insert_descend(uint64_t node, int level, const probe& p, key_arg k, const Data& d, SK* split_key,
                              uint64_t* split_node, iterator* pos) {
  node_view v;
  read_node(node, level, &v);
  const btree_detail::node_head hd = v.head();
  const unsigned use = hd.slotuse;
  if (hd.level == 0) {
    leaf_t* l = lf(node);
    const unsigned slot = search_local<false>(v.keys(), use, p);
    if (!Multi && slot < use && !less_ps(p, v.keys()[slot])) {
      *pos = make_it(node, slot);
      return false;
    }
    const SK sk = store_key(k);
    const SD sd = kHasData ? store_data(d) : SD();
    if (use == leaf_slotmax) {
      split_leaf_insert(node, v, slot, sk, sd, split_key, split_node, pos);
      return true;
    }
    const size_t shifted = (use - slot + 1) * (sizeof(SK) + (kHasData ? sizeof(SD) : 0));
    if (one_write_pays(leaf_used_end(use + 1), shifted)) {
      // One sw_write of the node's image up to its last used slot.
      const size_t end = leaf_used_end(use + 1);
      btree_detail::scratch buf(end);
      auto* b = static_cast<unsigned char*>(buf.data());
      std::memcpy(b, v.p, end);
      set_head_slotuse(b, use + 1);
      shift_in(b + kLeafKeysAt, slot, use, sk);
      if constexpr (kHasData) shift_in(b + kLeafDataAt, slot, use, sd);
      a_.wr(l, b, end);
    } else {
      a_.insert_at(l->keys, slot, use, sk, v.keys());
      if constexpr (kHasData) a_.insert_at(l->data, slot, use, sd, v.data());
      a_.set_slotuse(node, use + 1);
    }
    *pos = make_it(node, slot);
    return true;
  }
  inner_t* n = in(node);
  const unsigned slot = search_local<false>(v.keys(), use, p);
  SK child_key{};
  uint64_t child_split = 0;
  const bool inserted = insert_descend(v.children()[slot], hd.level - 1, p, k, d, &child_key, &child_split, pos);
  if (!child_split) return inserted;
  // This node is unchanged below us: v still holds it.
  if (use == inner_slotmax) {
    split_inner_insert(node, v, slot, child_key, child_split, split_key, split_node);
  } else if (one_write_pays(kInnerChildrenAt + (use + 2) * sizeof(uint64_t),
                            (use - slot + 1) * (sizeof(SK) + sizeof(uint64_t)))) {
    const size_t end = kInnerChildrenAt + (use + 2) * sizeof(uint64_t);
    btree_detail::scratch buf(end);
    auto* b = static_cast<unsigned char*>(buf.data());
    std::memcpy(b, v.p, end);
    set_head_slotuse(b, use + 1);
    shift_in(b + kInnerKeysAt, slot, use, child_key);
    shift_in(b + kInnerChildrenAt, slot + 1, use + 1, child_split);
    a_.wr(n, b, end);
  } else {
    a_.insert_at(n->keys, slot, use, child_key, v.keys());
    a_.insert_at(n->children, slot + 1, use + 1, child_split, v.children());
    a_.set_slotuse(node, use + 1);
  }
  return inserted;
}

// The full leaf plus (k, d) at slot, divided in two: the left half stays in
// `leaf`, the right half goes to a new leaf linked after it.
SW_BTREE_TEMPLATE
void SW_BTREE::split_leaf_insert(uint64_t leaf, const node_view& v, unsigned slot, const SK& k, const SD& d,
                                 SK* split_key, uint64_t* split_node, iterator* pos) {
  constexpr unsigned total = leaf_slotmax + 1;
  constexpr unsigned left = total / 2;
  leaf_t* l = lf(leaf);
  std::vector<SK> keys(total);
  const SK* vk = v.keys();
  std::copy(vk, vk + slot, keys.begin());
  keys[slot] = k;
  std::copy(vk + slot, vk + leaf_slotmax, keys.begin() + slot + 1);
  const uint64_t next = v.next();
  std::vector<SD> data;
  if constexpr (kHasData) {
    data.resize(total);
    const SD* vd = v.data();
    std::copy(vd, vd + slot, data.begin());
    data[slot] = d;
    std::copy(vd + slot, vd + leaf_slotmax, data.begin() + slot + 1);
  }
  // v may be the leaf's home bytes: everything needed is copied above.
  const uint64_t nl = a_.alloc(sizeof(leaf_t), 0, total - left, leaf, next);
  a_.wr(l->keys, keys.data(), left * sizeof(SK));
  a_.wr(lf(nl)->keys, keys.data() + left, (total - left) * sizeof(SK));
  if constexpr (kHasData) {
    a_.wr(l->data, data.data(), left * sizeof(SD));
    a_.wr(lf(nl)->data, data.data() + left, (total - left) * sizeof(SD));
  }
  a_.set_slotuse(leaf, left);
  a_.st(&l->next, nl);
  if (next) a_.st(&lf(next)->prev, nl);
  else a_.st(&hdr()->tail_leaf, nl);
  *split_key = separator(keys[left - 1], keys[left]);
  *split_node = nl;
  *pos = slot < left ? make_it(leaf, slot) : make_it(nl, slot - left);
}

// The full inner node plus (k, child) at slot, divided in two around the
// middle key, which moves up.
SW_BTREE_TEMPLATE
void SW_BTREE::split_inner_insert(uint64_t node, const node_view& v, unsigned slot, const SK& k, uint64_t child,
                                  SK* split_key, uint64_t* split_node) {
  constexpr unsigned total = inner_slotmax + 1;  // keys after the insert
  constexpr unsigned up = total / 2;             // left keeps keys [0, up)
  inner_t* n = in(node);
  std::vector<SK> keys(total);
  std::vector<uint64_t> kids(total + 1);
  const SK* vk = v.keys();
  const uint64_t* vc = v.children();
  std::copy(vk, vk + slot, keys.begin());
  keys[slot] = k;
  std::copy(vk + slot, vk + inner_slotmax, keys.begin() + slot + 1);
  std::copy(vc, vc + slot + 1, kids.begin());
  kids[slot + 1] = child;
  std::copy(vc + slot + 1, vc + inner_slotmax + 1, kids.begin() + slot + 2);
  const unsigned right = total - up - 1;
  const uint64_t nn = a_.alloc(sizeof(inner_t), v.head().level, static_cast<uint16_t>(right));
  a_.wr(n->keys, keys.data(), up * sizeof(SK));
  a_.wr(n->children, kids.data(), (up + 1) * sizeof(uint64_t));
  a_.wr(in(nn)->keys, keys.data() + up + 1, right * sizeof(SK));
  a_.wr(in(nn)->children, kids.data() + up + 1, (right + 1) * sizeof(uint64_t));
  a_.set_slotuse(node, up);
  *split_key = keys[up];
  *split_node = nn;
}

/* ------------------------------------------------------------------- erase */

SW_BTREE_TEMPLATE
bool SW_BTREE::erase_start(const probe& p, uint64_t target_leaf, unsigned target_slot) {
  header_t* h = hdr();
  const uint64_t root = a_.ld(&h->root);
  if (!root) return false;
  bool underflow = false;
  if (!erase_descend(root, -1, p, target_leaf, target_slot, &underflow)) return false;
  a_.st(&h->size, a_.ld(&h->size) - 1);
  const btree_detail::node_head rh = a_.head(root);
  if (rh.slotuse == 0) {
    if (rh.level > 0) {
      a_.st(&h->root, a_.ld(&in(root)->children[0]));
    } else {
      const uint64_t zero[3] = {0, 0, 0};
      a_.wr(&h->root, zero, sizeof zero);
    }
    a_.free(root);
  }
  after_change();
  return true;
}

SW_BTREE_TEMPLATE
bool SW_BTREE::erase_descend(uint64_t node, int level, const probe& p, uint64_t target_leaf, unsigned target_slot,
                             bool* underflow) {
  node_view v;
  read_node(node, level, &v);
  const btree_detail::node_head hd = v.head();
  const unsigned use = hd.slotuse;
  if (hd.level == 0) {
    leaf_t* l = lf(node);
    unsigned slot;
    if (target_leaf) {
      if (node != target_leaf || target_slot >= use) return false;
      slot = target_slot;
    } else {
      slot = search_local<false>(v.keys(), use, p);
      if (slot >= use || less_ps(p, v.keys()[slot])) return false;
    }
    const SK old_key = v.keys()[slot];
    SD old_data{};
    if constexpr (kHasData) old_data = v.data()[slot];
    if constexpr (kOneWrite) {
      const size_t end = leaf_used_end(use);
      btree_detail::scratch buf(end);
      auto* b = static_cast<unsigned char*>(buf.data());
      std::memcpy(b, v.p, end);
      set_head_slotuse(b, use - 1);
      shift_out<SK>(b + kLeafKeysAt, slot, use);
      if constexpr (kHasData) shift_out<SD>(b + kLeafDataAt, slot, use);
      a_.wr(l, b, leaf_used_end(use - 1));
    } else {
      a_.remove_at(l->keys, slot, use, v.keys());
      if constexpr (kHasData) a_.remove_at(l->data, slot, use, v.data());
      a_.set_slotuse(node, use - 1);
    }
    free_key(old_key);
    free_data(old_data);
    *underflow = use - 1 < leaf_slotmin;
    return true;
  }
  // The node read above stays valid through the loop: a child that does
  // not hold the key returns without changing anything.
  const unsigned first = search_local<false>(v.keys(), use, p);
  for (unsigned s = first; s <= use; ++s) {
    // Child s may hold the key only if it is >= keys[s - 1], i.e. equal.
    if (s > first && less_ps(p, v.keys()[s - 1])) break;
    bool child_under = false;
    if (erase_descend(v.children()[s], hd.level - 1, p, target_leaf, target_slot, &child_under)) {
      if (child_under) fix_child(node, s);
      *underflow = a_.slotuse(node) < inner_slotmin;
      return true;
    }
  }
  return false;
}

// Child `slot` of parent has one slot too few: borrow from a sibling that
// can spare one, else merge with a sibling.
SW_BTREE_TEMPLATE
void SW_BTREE::fix_child(uint64_t parent, unsigned slot) {
  inner_t* p = in(parent);
  const unsigned puse = a_.slotuse(parent);
  const uint64_t child = a_.ld(&p->children[slot]);
  const uint64_t left = slot > 0 ? a_.ld(&p->children[slot - 1]) : 0;
  const uint64_t right = slot < puse ? a_.ld(&p->children[slot + 1]) : 0;
  const btree_detail::node_head ch = a_.head(child);
  const bool leaf = ch.level == 0;
  const unsigned min = leaf ? leaf_slotmin : inner_slotmin;
  const unsigned cuse = ch.slotuse;
  const unsigned luse = left ? a_.slotuse(left) : 0;
  const unsigned ruse = right ? a_.slotuse(right) : 0;

  if (left && luse > min) {  // borrow the left sibling's last slot
    if (leaf) {
      const SK k = a_.ld(&lf(left)->keys[luse - 1]);
      a_.insert_at(lf(child)->keys, 0, cuse, k);
      if constexpr (kHasData) a_.insert_at(lf(child)->data, 0, cuse, a_.ld(&lf(left)->data[luse - 1]));
      const SK old_sep = a_.ld(&p->keys[slot - 1]);
      a_.st(&p->keys[slot - 1], separator(a_.ld(&lf(left)->keys[luse - 2]), k));
      free_key(old_sep);
    } else {
      a_.insert_at(in(child)->keys, 0, cuse, a_.ld(&p->keys[slot - 1]));
      a_.insert_at(in(child)->children, 0, cuse + 1, a_.ld(&in(left)->children[luse]));
      a_.st(&p->keys[slot - 1], a_.ld(&in(left)->keys[luse - 1]));
    }
    a_.set_slotuse(left, luse - 1);
    a_.set_slotuse(child, cuse + 1);
  } else if (right && ruse > min) {  // borrow the right sibling's first slot
    if (leaf) {
      const SK k = a_.ld(&lf(right)->keys[0]);
      const SK next = a_.ld(&lf(right)->keys[1]);
      a_.st(&lf(child)->keys[cuse], k);
      if constexpr (kHasData) a_.st(&lf(child)->data[cuse], a_.ld(&lf(right)->data[0]));
      a_.remove_at(lf(right)->keys, 0, ruse);
      if constexpr (kHasData) a_.remove_at(lf(right)->data, 0, ruse);
      const SK old_sep = a_.ld(&p->keys[slot]);
      a_.st(&p->keys[slot], separator(k, next));
      free_key(old_sep);
    } else {
      a_.st(&in(child)->keys[cuse], a_.ld(&p->keys[slot]));
      a_.st(&in(child)->children[cuse + 1], a_.ld(&in(right)->children[0]));
      a_.st(&p->keys[slot], a_.ld(&in(right)->keys[0]));
      a_.remove_at(in(right)->keys, 0, ruse);
      a_.remove_at(in(right)->children, 0, ruse + 1);
    }
    a_.set_slotuse(right, ruse - 1);
    a_.set_slotuse(child, cuse + 1);
  } else if (left) {
    if (leaf) merge_leaves(parent, slot - 1, left, child);
    else merge_inners(parent, slot - 1, left, child);
  } else {
    if (leaf) merge_leaves(parent, slot, child, right);
    else merge_inners(parent, slot, child, right);
  }
}

// right (child sep + 1 of parent) is appended to left and freed; the
// parent loses key sep (freed) and child sep + 1.
SW_BTREE_TEMPLATE
void SW_BTREE::merge_leaves(uint64_t parent, unsigned sep, uint64_t left, uint64_t right) {
  const unsigned luse = a_.slotuse(left), ruse = a_.slotuse(right);
  a_.copy(lf(left)->keys + luse, lf(right)->keys, ruse);
  if constexpr (kHasData) a_.copy(lf(left)->data + luse, lf(right)->data, ruse);
  a_.set_slotuse(left, luse + ruse);
  const uint64_t next = a_.ld(&lf(right)->next);
  a_.st(&lf(left)->next, next);
  if (next) a_.st(&lf(next)->prev, left);
  else a_.st(&hdr()->tail_leaf, left);
  const unsigned puse = a_.slotuse(parent);
  free_key(a_.ld(&in(parent)->keys[sep]));
  a_.remove_at(in(parent)->keys, sep, puse);
  a_.remove_at(in(parent)->children, sep + 1, puse + 1);
  a_.set_slotuse(parent, puse - 1);
  a_.free(right);
}

// The parent's key sep moves down between left's and right's keys.
SW_BTREE_TEMPLATE
void SW_BTREE::merge_inners(uint64_t parent, unsigned sep, uint64_t left, uint64_t right) {
  const unsigned luse = a_.slotuse(left), ruse = a_.slotuse(right);
  a_.st(&in(left)->keys[luse], a_.ld(&in(parent)->keys[sep]));
  a_.copy(in(left)->keys + luse + 1, in(right)->keys, ruse);
  a_.copy(in(left)->children + luse + 1, in(right)->children, ruse + 1);
  a_.set_slotuse(left, luse + 1 + ruse);
  const unsigned puse = a_.slotuse(parent);
  a_.remove_at(in(parent)->keys, sep, puse);
  a_.remove_at(in(parent)->children, sep + 1, puse + 1);
  a_.set_slotuse(parent, puse - 1);
  a_.free(right);
}

SW_BTREE_TEMPLATE
void SW_BTREE::free_subtree(uint64_t node) {
  const btree_detail::node_head hd = a_.head(node);
  if (hd.level > 0) {
    for (unsigned s = 0; s <= hd.slotuse; ++s) free_subtree(a_.ld(&in(node)->children[s]));
    if constexpr (kStrKey)
      for (unsigned s = 0; s < hd.slotuse; ++s) free_key(a_.ld(&in(node)->keys[s]));
  } else {
    for (unsigned s = 0; s < hd.slotuse && (kStrKey || (kStrData && kHasData)); ++s) {
      free_key(a_.ld(&lf(node)->keys[s]));
      if constexpr (kHasData) free_data(a_.ld(&lf(node)->data[s]));
    }
  }
  a_.free(node);
}

/* --------------------------------------------------------------- bulk load */

SW_BTREE_TEMPLATE
template <class InputIt>
void SW_BTREE::bulk_load(InputIt first, InputIt last) {
  wrap w(a_.handle());
  if (a_.ld(&hdr()->root) != 0) throw error(SW_EINVAL, "btree::bulk_load needs an empty tree");
  std::vector<value_type> in_order;
  for (; first != last; ++first) in_order.push_back(static_cast<value_type>(*first));
  auto key = [](const value_type& v) -> const Key& {
    if constexpr (IsSet) return v;
    else return v.first;
  };
  for (size_t i = 1; i < in_order.size(); ++i) {
    const Key& a = key(in_order[i - 1]);
    const Key& b = key(in_order[i]);
    if (Multi ? cmp_(b, a) : !cmp_(a, b)) throw error(SW_EINVAL, "btree::bulk_load needs a sorted range");
  }
  std::vector<SK> keys;
  std::vector<SD> data;
  keys.reserve(in_order.size());
  for (const value_type& v : in_order) {
    keys.push_back(store_key(key(v)));
    if constexpr (kHasData) data.push_back(store_data(v.second));
  }
  build(keys, data);
  after_change();
  w.commit();
}

// Builds the nodes over sorted stored slots (owned by the tree from now
// on) into an empty tree, in the open wrap.  Leaves are filled as evenly as
// possible with ceil(n / leaf_slots) leaves (so each holds at least half),
// then each inner level likewise over the level below; a node's separator
// is a copy of the largest key of its left subtree.
SW_BTREE_TEMPLATE
void SW_BTREE::build(std::vector<SK>& keys, std::vector<SD>& data) {
  const size_t n = keys.size();
  if (n == 0) return;
  struct built {
    uint64_t node;
    SK max;
  };
  std::vector<built> level;
  const size_t leaves = (n + leaf_slotmax - 1) / leaf_slotmax;
  uint64_t prev = 0;
  size_t at = 0;
  for (size_t i = 0; i < leaves; ++i) {
    const size_t cnt = n / leaves + (i < n % leaves ? 1 : 0);
    const uint64_t node = a_.alloc(sizeof(leaf_t), 0, static_cast<uint16_t>(cnt), prev, 0);
    a_.wr(lf(node)->keys, keys.data() + at, cnt * sizeof(SK));
    if constexpr (kHasData) a_.wr(lf(node)->data, data.data() + at, cnt * sizeof(SD));
    if (prev) a_.st(&lf(prev)->next, node);
    level.push_back({node, keys[at + cnt - 1]});
    prev = node;
    at += cnt;
  }
  const uint64_t head = level.front().node, tail = level.back().node;
  uint16_t height = 0;
  while (level.size() > 1) {
    ++height;
    const size_t kids = level.size();
    const size_t nodes = (kids + inner_slotmax) / (inner_slotmax + 1);
    std::vector<built> up;
    size_t k = 0;
    for (size_t i = 0; i < nodes; ++i) {
      const size_t cnt = kids / nodes + (i < kids % nodes ? 1 : 0);  // children
      std::vector<SK> sep(cnt - 1);
      std::vector<uint64_t> ch(cnt);
      for (size_t j = 0; j < cnt; ++j) {
        ch[j] = level[k + j].node;
        if (j + 1 < cnt) sep[j] = dup_key(level[k + j].max, a_);
      }
      const uint64_t node = a_.alloc(sizeof(inner_t), height, static_cast<uint16_t>(cnt - 1));
      a_.wr(in(node)->keys, sep.data(), sep.size() * sizeof(SK));
      a_.wr(in(node)->children, ch.data(), ch.size() * sizeof(uint64_t));
      up.push_back({node, level[k + cnt - 1].max});
      k += cnt;
    }
    level = std::move(up);
  }
  const uint64_t hd[4] = {level.front().node, head, tail, n};
  a_.wr(&hdr()->root, hd, sizeof hd);
}

#undef SW_BTREE
#undef SW_BTREE_TEMPLATE

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_MODIFY_HPP_
