// rbtree.h — RB (Themis, Table II): insert and delete nodes of a
// red-black tree.
//
// A red-black tree with parent links (Cormen et al.'s algorithms, with 0
// for the leaves instead of a shared sentinel, so that no transaction
// writes a node it does not own): nodes {key, value, left, right, parent,
// color}.  An insert of a new key allocates and writes a node (6 words),
// links it (1 store) and rebalances (recolorings, rotations of about 6
// stores each); of a present key it stores the value.  A delete of a
// present key splices the node out (a few stores) and rebalances; of an
// absent key it stores nothing.  So transactions range from 0 to a few
// dozen stores.  Keys are uniform in [0, 2 x scale) (setup inserts the
// even ones), half the transactions insert, half delete (keyed_set.h).
// One DRAM lock serializes the tree.
//
// verify(): keys in order, every child's parent link, a black root, no red
// node with a red child, the same number of black nodes on every path,
// and as many nodes as setup and the committed transactions make.
#ifndef SOFTWRAP_WORKLOADS_RBTREE_H_
#define SOFTWRAP_WORKLOADS_RBTREE_H_

#include <mutex>
#include <vector>

#include "keyed_set.h"
#include "workload.h"

namespace softwrap::workloads {

inline uint64_t rbtree_heap_bytes(const Params& p) { return p.scale * 2 * 64 + 4096; }

inline const Info kRbtreeInfo{"rb", "RB", "Themis, Table II", "inserts or deletes one key of a red-black tree",
                              nullptr, 1, "initial keys (key space: twice as many)", 100'000, 16, rbtree_heap_bytes};

// The red-black tree behind RB (KeyedSet's structure, keyed_set.h).
template <class A>
class RedBlackTree {
 public:
  static constexpr uint64_t kMagic = 0x52422D5452454531ull;  // "RB-TREE1"
  struct Root {
    uint64_t magic, keyspace, top;
  };
  static const Info& info() { return kRbtreeInfo; }
  static uint64_t key(uint64_t k) { return k; }

  void create(A&, Root* r, uint64_t) { root_ = r; }
  void open(A&, Root* r) { root_ = r; }
  std::mutex& lock(uint64_t) { return mu_; }

  uint64_t count(A& a) {
    uint64_t n = 0;
    std::vector<uint64_t> todo;
    if (const uint64_t t = top(a)) todo.push_back(t);
    while (!todo.empty() && n < kWalkLimit) {
      const uint64_t x = todo.back();
      todo.pop_back();
      ++n;
      if (const uint64_t l = left(a, x)) todo.push_back(l);
      if (const uint64_t r = right(a, x)) todo.push_back(r);
    }
    return n;
  }

  std::string check(A& a, uint64_t expect) {
    const uint64_t t = top(a);
    if (t == 0) return "";
    if (color(a, t) != kBlack) return "RB: the root is red";
    if (parent(a, t) != 0) return "RB: the root has a parent";
    uint64_t nodes = 0;
    std::string why;
    check(a, t, 0, ~uint64_t{0}, expect + 2, &nodes, &why);
    return why;
  }

  void damage(A& a) {
    if (top(a) == 0) insert(a, 0, 0);
    set(a, top(a), kColor, kRed);
  }

 private:
  static constexpr uint64_t kRed = 1, kBlack = 0;
  // Word indexes in a node; kRoot addresses Root::top through node 0.
  enum Field : unsigned { kKey = 0, kValue, kLeft, kRight, kParent, kColor, kFields, kRoot = 99 };
  uint64_t* word(A& a, uint64_t n, unsigned f) {
    return f == kRoot ? &root_->top : a.template ptr<uint64_t>(n) + f;
  }
  uint64_t get(A& a, uint64_t n, unsigned f) { return a.load(word(a, n, f)); }
  void set(A& a, uint64_t n, unsigned f, uint64_t v) { a.store(word(a, n, f), v); }
  uint64_t left(A& a, uint64_t n) { return get(a, n, kLeft); }
  uint64_t right(A& a, uint64_t n) { return get(a, n, kRight); }
  uint64_t parent(A& a, uint64_t n) { return get(a, n, kParent); }
  uint64_t color(A& a, uint64_t n) { return n ? get(a, n, kColor) : kBlack; }  // leaves are black
  uint64_t top(A& a) { return get(a, 0, kRoot); }

  // Makes v take u's place under u's parent (v may be 0).
  void replace_child(A& a, uint64_t up, uint64_t u, uint64_t v) {
    if (up == 0) {
      set(a, 0, kRoot, v);
    } else if (left(a, up) == u) {
      set(a, up, kLeft, v);
    } else {
      set(a, up, kRight, v);
    }
  }

  // Rotates x down to the `side` (kLeft: x's right child comes up).
  void rotate(A& a, uint64_t x, unsigned side) {
    const unsigned other = side == kLeft ? kRight : kLeft;
    const uint64_t y = get(a, x, other);
    const uint64_t inner = get(a, y, side);
    set(a, x, other, inner);
    if (inner) set(a, inner, kParent, x);
    const uint64_t xp = parent(a, x);
    set(a, y, kParent, xp);
    replace_child(a, xp, x, y);
    set(a, y, side, x);
    set(a, x, kParent, y);
  }

 public:
  int insert(A& a, uint64_t key, uint64_t value) {
    uint64_t y = 0, x = top(a);
    while (x != 0) {
      y = x;
      const uint64_t k = get(a, x, kKey);
      if (k == key) {
        set(a, x, kValue, value);
        return 0;
      }
      x = key < k ? left(a, x) : right(a, x);
    }
    auto* mem = static_cast<uint64_t*>(a.alloc(kFields * 8));
    const uint64_t init[kFields] = {key, value, 0, 0, y, kRed};
    a.write(mem, init, sizeof init);
    const uint64_t z = a.off(mem);
    if (y == 0) {
      set(a, 0, kRoot, z);
    } else {
      set(a, y, key < get(a, y, kKey) ? kLeft : kRight, z);
    }
    insert_fixup(a, z);
    return 1;
  }

 private:
  void insert_fixup(A& a, uint64_t z) {
    for (uint64_t p = parent(a, z); p != 0 && color(a, p) == kRed; p = parent(a, z)) {
      const uint64_t g = parent(a, p);  // p is red, so not the root
      const unsigned side = p == left(a, g) ? kLeft : kRight;
      const unsigned other = side == kLeft ? kRight : kLeft;
      const uint64_t u = get(a, g, other);
      if (color(a, u) == kRed) {
        set(a, p, kColor, kBlack);
        set(a, u, kColor, kBlack);
        set(a, g, kColor, kRed);
        z = g;
        continue;
      }
      if (z == get(a, p, other)) {
        z = p;
        rotate(a, z, side);
        p = parent(a, z);
      }
      set(a, p, kColor, kBlack);
      set(a, g, kColor, kRed);
      rotate(a, g, other);
    }
    const uint64_t t = top(a);
    if (color(a, t) != kBlack) set(a, t, kColor, kBlack);
  }

 public:
  int erase(A& a, uint64_t key) {
    uint64_t z = top(a);
    while (z != 0) {
      const uint64_t k = get(a, z, kKey);
      if (k == key) break;
      z = key < k ? left(a, z) : right(a, z);
    }
    if (z == 0) return 0;
    uint64_t x, xp;  // the node that moved into the removed position, and its parent
    uint64_t removed_color = color(a, z);
    if (left(a, z) == 0 || right(a, z) == 0) {
      x = left(a, z) ? left(a, z) : right(a, z);
      xp = parent(a, z);
      replace_child(a, xp, z, x);
      if (x) set(a, x, kParent, xp);
    } else {
      uint64_t y = right(a, z);
      while (left(a, y) != 0) y = left(a, y);
      removed_color = color(a, y);
      x = right(a, y);
      if (parent(a, y) == z) {
        xp = y;
      } else {
        xp = parent(a, y);
        set(a, xp, kLeft, x);
        if (x) set(a, x, kParent, xp);
        const uint64_t zr = right(a, z);
        set(a, y, kRight, zr);
        set(a, zr, kParent, y);
      }
      const uint64_t zp = parent(a, z), zl = left(a, z);
      replace_child(a, zp, z, y);
      set(a, y, kParent, zp);
      set(a, y, kLeft, zl);
      set(a, zl, kParent, y);
      set(a, y, kColor, color(a, z));
    }
    a.free(a.template ptr<uint64_t>(z));
    if (removed_color == kBlack) erase_fixup(a, x, xp);
    return 1;
  }

 private:
  void erase_fixup(A& a, uint64_t x, uint64_t xp) {
    while (x != top(a) && color(a, x) == kBlack) {
      const unsigned side = x == left(a, xp) ? kLeft : kRight;
      const unsigned other = side == kLeft ? kRight : kLeft;
      uint64_t w = get(a, xp, other);  // not a leaf: x's side is a black node short
      if (color(a, w) == kRed) {
        set(a, w, kColor, kBlack);
        set(a, xp, kColor, kRed);
        rotate(a, xp, side);
        w = get(a, xp, other);
      }
      if (color(a, get(a, w, side)) == kBlack && color(a, get(a, w, other)) == kBlack) {
        set(a, w, kColor, kRed);
        x = xp;
        xp = parent(a, x);
        continue;
      }
      if (color(a, get(a, w, other)) == kBlack) {
        set(a, get(a, w, side), kColor, kBlack);
        set(a, w, kColor, kRed);
        rotate(a, w, other);
        w = get(a, xp, other);
      }
      set(a, w, kColor, color(a, xp));
      set(a, xp, kColor, kBlack);
      set(a, get(a, w, other), kColor, kBlack);
      rotate(a, xp, side);
      x = top(a);
      break;
    }
    if (x != 0 && color(a, x) != kBlack) set(a, x, kColor, kBlack);
  }

  // Black height of the subtree at n with keys in [lo, hi]; 0 and *why on
  // a violation.
  uint64_t check(A& a, uint64_t n, uint64_t lo, uint64_t hi, uint64_t max_nodes, uint64_t* nodes, std::string* why,
                 unsigned depth = 0) {
    if (n == 0) return 1;
    if (depth > 128) {  // a balanced tree of 2^64 nodes is not that deep
      *why = "RB: a path is longer than a red-black tree allows";
      return 0;
    }
    if (++*nodes > max_nodes) {
      *why = "RB: more nodes than inserted (a cycle?)";
      return 0;
    }
    const uint64_t k = get(a, n, kKey), l = left(a, n), r = right(a, n), c = color(a, n);
    if (k < lo || k > hi) {
      *why = "RB: key " + std::to_string(k) + " is out of order";
      return 0;
    }
    if ((l && parent(a, l) != n) || (r && parent(a, r) != n)) {
      *why = "RB: a child's parent link is wrong";
      return 0;
    }
    if (c != kRed && c != kBlack) {
      *why = mismatch("RB: a node's color", c, kBlack);
      return 0;
    }
    if (c == kRed && (color(a, l) == kRed || color(a, r) == kRed)) {
      *why = "RB: a red node has a red child";
      return 0;
    }
    if ((l && k == lo) || (r && k == hi)) {
      *why = "RB: key " + std::to_string(k) + " has a child where no key fits";
      return 0;
    }
    const uint64_t hl = l ? check(a, l, lo, k - 1, max_nodes, nodes, why, depth + 1) : 1;
    if (hl == 0) return 0;
    const uint64_t hr = r ? check(a, r, k + 1, hi, max_nodes, nodes, why, depth + 1) : 1;
    if (hr == 0) return 0;
    if (hl != hr) {
      *why = "RB: paths below key " + std::to_string(k) + " have different black counts";
      return 0;
    }
    return hl + (c == kBlack);
  }

  std::mutex mu_;  // one lock for the tree
  Root* root_ = nullptr;
};

template <class A>
using Rbtree = KeyedSet<A, RedBlackTree<A>>;

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_RBTREE_H_
