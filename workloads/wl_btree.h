// wl_btree.h — a compact persistent B+tree over an access type, for the
// workloads' tables (vacation's cars, flights, rooms and customers).
//
// Approach.  Keys and values are 64-bit words (a value is usually the pool
// offset of a record).  A node is one fixed-size pool object: a meta word
// (key count in the low 16 bits, the leaf flag in bit 16), kSlots keys and
// kSlots + 1 references.  In a leaf, ref[i] is key[i]'s value and
// ref[kSlots] the offset of the next leaf (0 for the last); in an inner
// node, child ref[i] holds the keys k with key[i-1] <= k < key[i].  Nodes
// refer to each other by offset; the tree itself is one pool word, the
// offset of its root node (0: empty), owned by the caller's root object.
//
// insert() descends to the leaf, shifts the greater entries one slot right
// word by word (as an in-place array insert does) and splits full nodes on
// the way back up; a split writes the new right node whole and stores the
// count and next link of the left one; a root split writes a new root.
// erase() shifts the leaf's greater entries left and lowers its count; it
// does not merge or rebalance (a leaf may become empty; the separators
// above it stay valid bounds), which is enough for tables whose key range
// is fixed.  The tree takes no locks: the caller serializes what touches
// it.  check() walks the whole tree: key order within and across nodes,
// separators bounding their subtrees, every leaf at the same depth, the
// leaf chain in key order.
#ifndef SOFTWRAP_WORKLOADS_WL_BTREE_H_
#define SOFTWRAP_WORKLOADS_WL_BTREE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "access.h"
#include "workload.h"

namespace softwrap::workloads {

template <class A>
class WlBTree {
 public:
  static constexpr uint32_t kSlots = 8;  // keys per node
  struct Node {
    uint64_t meta;  // count | leaf << 16
    uint64_t key[kSlots];
    uint64_t ref[kSlots + 1];
  };
  static constexpr uint64_t kLeaf = uint64_t{1} << 16;

  WlBTree() = default;
  // The tree whose root offset is the pool word *root (0: empty).
  explicit WlBTree(uint64_t* root) : root_(root) {}

  // True and *value set if key is present.
  bool find(A& a, uint64_t key, uint64_t* value) {
    uint64_t n = a.load(root_);
    if (n == 0) return false;
    for (;;) {
      Node* x = node(a, n);
      const uint64_t meta = a.load(&x->meta);
      const uint32_t c = count(meta);
      if (meta & kLeaf) {
        for (uint32_t i = 0; i < c; ++i) {
          const uint64_t k = a.load(&x->key[i]);
          if (k == key) {
            *value = a.load(&x->ref[i]);
            return true;
          }
          if (k > key) return false;
        }
        return false;
      }
      n = a.load(&x->ref[child_index(a, x, c, key)]);
    }
  }

  // Inserts (key, value); false (nothing stored) if key is present.
  bool insert(A& a, uint64_t key, uint64_t value) {
    const uint64_t r = a.load(root_);
    if (r == 0) {
      Node leaf{};
      leaf.meta = kLeaf | 1;
      leaf.key[0] = key;
      leaf.ref[0] = value;
      a.store(root_, make(a, leaf));
      return true;
    }
    Split s;
    const int rc = insert_at(a, r, key, value, &s);
    if (rc < 0) return false;
    if (rc == 1) {  // the root split: a new root above the two halves
      Node top{};
      top.meta = 1;
      top.key[0] = s.sep;
      top.ref[0] = r;
      top.ref[1] = s.right;
      a.store(root_, make(a, top));
    }
    return true;
  }

  // Removes key; true and *value set (its value) if it was present.
  bool erase(A& a, uint64_t key, uint64_t* value) {
    uint64_t n = a.load(root_);
    if (n == 0) return false;
    Node* x = node(a, n);
    uint64_t meta = a.load(&x->meta);
    while (!(meta & kLeaf)) {
      x = node(a, a.load(&x->ref[child_index(a, x, count(meta), key)]));
      meta = a.load(&x->meta);
    }
    const uint32_t c = count(meta);
    uint32_t i = 0;
    while (i < c && a.load(&x->key[i]) < key) ++i;
    if (i == c || a.load(&x->key[i]) != key) return false;
    *value = a.load(&x->ref[i]);
    for (uint32_t j = i; j + 1 < c; ++j) {
      a.store(&x->key[j], a.load(&x->key[j + 1]));
      a.store(&x->ref[j], a.load(&x->ref[j + 1]));
    }
    a.store(&x->meta, meta - 1);
    return true;
  }

  // f(key, value) for every entry in key order (by the leaf chain); stops
  // after kWalkLimit entries.
  template <class F>
  void for_each(A& a, F&& f) {
    uint64_t n = a.load(root_);
    if (n == 0) return;
    while (!(a.load(&node(a, n)->meta) & kLeaf)) n = a.load(&node(a, n)->ref[0]);
    uint64_t seen = 0;
    for (; n != 0 && seen < kWalkLimit; n = a.load(&node(a, n)->ref[kSlots])) {
      Node* x = node(a, n);
      const uint32_t c = count(a.load(&x->meta));
      for (uint32_t i = 0; i < c && i < kSlots; ++i, ++seen) f(a.load(&x->key[i]), a.load(&x->ref[i]));
    }
  }

  // "" or what is wrong with the tree's structure (prefixed by `name`);
  // *entries gets the number of keys.
  std::string check(A& a, const std::string& name, uint64_t* entries) {
    *entries = 0;
    const uint64_t r = a.load(root_);
    if (r == 0) return "";
    Walk w{name, {}, -1, 0};
    std::string why = walk(a, r, 0, false, 0, false, 0, &w);
    if (!why.empty()) return why;
    for (size_t i = 0; i < w.leaves.size(); ++i) {
      const uint64_t next = a.load(&node(a, w.leaves[i])->ref[kSlots]);
      const uint64_t want = i + 1 < w.leaves.size() ? w.leaves[i + 1] : 0;
      if (next != want) return mismatch(name + ": B+tree leaf chain: next of leaf " + std::to_string(i), next, want);
    }
    *entries = w.entries;
    return "";
  }

 private:
  struct Split {
    uint64_t sep = 0, right = 0;
  };
  struct Walk {
    std::string name;
    std::vector<uint64_t> leaves;
    int leaf_depth;
    uint64_t entries;
  };

  static uint32_t count(uint64_t meta) { return static_cast<uint32_t>(meta & 0xFFFF); }
  Node* node(A& a, uint64_t off) { return a.template ptr<Node>(off); }

  // Index of the child of inner node x (c keys) whose range holds key.
  uint32_t child_index(A& a, Node* x, uint32_t c, uint64_t key) {
    uint32_t i = 0;
    while (i < c && a.load(&x->key[i]) <= key) ++i;
    return i;
  }

  // A new node holding n (written whole); its offset.
  uint64_t make(A& a, const Node& n) {
    auto* p = static_cast<Node*>(a.alloc(sizeof(Node)));
    a.write(p, &n, sizeof n);
    return a.off(p);
  }

  // Inserts into the subtree at n: -1 key present, 0 done, 1 n split (*s
  // names the separator and the new right sibling).
  int insert_at(A& a, uint64_t n, uint64_t key, uint64_t value, Split* s) {
    Node* x = node(a, n);
    const uint64_t meta = a.load(&x->meta);
    const uint32_t c = count(meta);
    if (meta & kLeaf) {
      uint32_t i = 0;
      while (i < c && a.load(&x->key[i]) < key) ++i;
      if (i < c && a.load(&x->key[i]) == key) return -1;
      return put(a, x, meta, i, key, value, s);
    }
    const uint32_t i = child_index(a, x, c, key);
    Split below;
    const int rc = insert_at(a, a.load(&x->ref[i]), key, value, &below);
    if (rc <= 0) return rc;
    return put(a, x, meta, i, below.sep, below.right, s);
  }

  // Puts key k at slot i of x (a leaf: with value v; an inner node: with
  // v as the child right of k), splitting x if it is full.
  int put(A& a, Node* x, uint64_t meta, uint32_t i, uint64_t k, uint64_t v, Split* s) {
    const bool leaf = meta & kLeaf;
    const uint32_t c = count(meta);
    const uint32_t ri = leaf ? i : i + 1;  // where v goes among the refs
    if (c < kSlots) {
      for (uint32_t j = c; j > i; --j) a.store(&x->key[j], a.load(&x->key[j - 1]));
      const uint32_t rend = leaf ? c : c + 1;
      for (uint32_t j = rend; j > ri; --j) a.store(&x->ref[j], a.load(&x->ref[j - 1]));
      a.store(&x->key[i], k);
      a.store(&x->ref[ri], v);
      a.store(&x->meta, meta + 1);
      return 0;
    }
    // Full: lay out the kSlots + 1 entries in DRAM, keep the lower half in
    // x and move the upper half to a new right sibling.
    uint64_t keys[kSlots + 1], refs[kSlots + 2];
    for (uint32_t j = 0, from = 0; j <= kSlots; ++j) keys[j] = j == i ? k : a.load(&x->key[from++]);
    const uint32_t nrefs = leaf ? kSlots + 1 : kSlots + 2;
    for (uint32_t j = 0, from = 0; j < nrefs; ++j) refs[j] = j == ri ? v : a.load(&x->ref[from++]);
    Node right{};
    uint32_t left_count;
    if (leaf) {
      left_count = (kSlots + 1) / 2;
      const uint32_t rc = kSlots + 1 - left_count;
      right.meta = kLeaf | rc;
      for (uint32_t j = 0; j < rc; ++j) {
        right.key[j] = keys[left_count + j];
        right.ref[j] = refs[left_count + j];
      }
      right.ref[kSlots] = a.load(&x->ref[kSlots]);
      s->sep = right.key[0];
    } else {
      left_count = kSlots / 2;  // keys[left_count] moves up
      const uint32_t rc = kSlots - left_count;
      right.meta = rc;
      for (uint32_t j = 0; j < rc; ++j) right.key[j] = keys[left_count + 1 + j];
      for (uint32_t j = 0; j <= rc; ++j) right.ref[j] = refs[left_count + 1 + j];
      s->sep = keys[left_count];
    }
    s->right = make(a, right);
    // The left half: the slots up to the insert point are already in place.
    for (uint32_t j = i; j < left_count; ++j) a.store(&x->key[j], keys[j]);
    const uint32_t left_refs = leaf ? left_count : left_count + 1;
    for (uint32_t j = ri; j < left_refs; ++j) a.store(&x->ref[j], refs[j]);
    if (leaf) a.store(&x->ref[kSlots], s->right);
    a.store(&x->meta, (meta & kLeaf) | left_count);
    return 1;
  }

  // Checks the subtree at n: its keys lie in [lo, hi) (each bound only if
  // has_lo / has_hi).
  std::string walk(A& a, uint64_t n, uint64_t lo, bool has_lo, uint64_t hi, bool has_hi, int depth, Walk* w) {
    if (depth > 64) return w->name + ": B+tree deeper than 64 levels (a cycle?)";
    Node* x = node(a, n);
    const uint64_t meta = a.load(&x->meta);
    const uint32_t c = count(meta);
    if (c > kSlots || (meta >> 17) != 0) return mismatch(w->name + ": B+tree node meta", meta, c);
    for (uint32_t i = 0; i < c; ++i) {
      const uint64_t k = a.load(&x->key[i]);
      if ((has_lo && k < lo) || (has_hi && k >= hi) || (i > 0 && a.load(&x->key[i - 1]) >= k)) {
        return w->name + ": B+tree key " + std::to_string(k) + " out of order";
      }
    }
    if (meta & kLeaf) {
      if (w->leaf_depth < 0) w->leaf_depth = depth;
      if (w->leaf_depth != depth) return w->name + ": B+tree leaves at different depths";
      w->leaves.push_back(n);
      w->entries += c;
      return "";
    }
    if (c == 0) return w->name + ": B+tree inner node without keys";
    for (uint32_t i = 0; i <= c; ++i) {
      const bool l = i > 0 || has_lo, h = i < c || has_hi;
      const uint64_t clo = i > 0 ? a.load(&x->key[i - 1]) : lo, chi = i < c ? a.load(&x->key[i]) : hi;
      const uint64_t child = a.load(&x->ref[i]);
      if (child == 0) return w->name + ": B+tree inner node with a null child";
      std::string why = walk(a, child, clo, l, chi, h, depth + 1, w);
      if (!why.empty()) return why;
    }
    return "";
  }

  uint64_t* root_ = nullptr;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_WL_BTREE_H_
