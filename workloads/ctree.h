// ctree.h — CTree (Themis, Table II): insert and delete nodes of a
// crit-bit tree.
//
// A crit-bit tree (PMDK's ctree_map shape) of 64-bit keys: internal nodes
// {bit, child[2]} split on the most significant bit where their subtrees'
// keys differ, leaves {key, value}; references are pool offsets, a leaf's
// tagged with bit 0.  An insert of a new key allocates and writes a leaf
// (2 words) and an internal node (3 words) and links the node into the
// slot above it (1 store): 6 stores; an insert of a present key stores its
// value (1).  A delete of a present key links the leaf's sibling into its
// grandparent slot (1 store) and frees the leaf and its parent; of an
// absent key it stores nothing.  Keys are mix64(k) for k uniform in
// [0, 2 x scale) (setup inserts the even k), half the transactions insert,
// half delete (keyed_set.h).  One DRAM lock serializes the tree.
//
// verify(): bits strictly decrease from the root down; every leaf's key has
// the bit of each ancestor set as the branch taken to it, and agrees above
// that bit with the ancestor's leftmost leaf; the leaves number what setup
// and the committed transactions make.
#ifndef SOFTWRAP_WORKLOADS_CTREE_H_
#define SOFTWRAP_WORKLOADS_CTREE_H_

#include <mutex>
#include <vector>

#include "keyed_set.h"
#include "workload.h"

namespace softwrap::workloads {

inline uint64_t ctree_heap_bytes(const Params& p) { return p.scale * 2 * 96 + 4096; }

inline const Info kCtreeInfo{"ctree", "CTree", "Themis, Table II", "inserts or deletes one key of a crit-bit tree",
                             nullptr, 1, "initial keys (key space: twice as many)", 100'000, 16, ctree_heap_bytes};

// The crit-bit tree behind CTree (KeyedSet's structure, keyed_set.h).
template <class A>
class CritBitTree {
 public:
  static constexpr uint64_t kMagic = 0x43545245452D4342ull;  // "CTREE-CB"
  struct Root {
    uint64_t magic, keyspace, top;
  };
  static const Info& info() { return kCtreeInfo; }
  static uint64_t key(uint64_t k) { return mix64(k); }  // keys spread over all bits

  void create(A&, Root* r, uint64_t) { root_ = r; }
  void open(A&, Root* r) { root_ = r; }
  std::mutex& lock(uint64_t) { return mu_; }

  // 1 if the key is new, 0 if its value was replaced.
  int insert(A& a, uint64_t key, uint64_t value) {
    uint64_t r = a.load(&root_->top);
    if (r == 0) {
      a.store(&root_->top, new_leaf(a, key, value));
      return 1;
    }
    while (!is_leaf(r)) {
      const Inner* n = inner(a, r);
      r = a.load(&n->child[dir(key, a.load(&n->bit))]);
    }
    Leaf* best = leaf(a, r);
    const uint64_t diff = a.load(&best->key) ^ key;
    if (diff == 0) {
      a.store(&best->value, value);
      return 0;
    }
    const uint64_t bit = 63 - static_cast<uint64_t>(__builtin_clzll(diff));
    uint64_t* slot = &root_->top;
    r = a.load(slot);
    while (!is_leaf(r)) {
      Inner* n = inner(a, r);
      const uint64_t b = a.load(&n->bit);
      if (b < bit) break;
      slot = &n->child[dir(key, b)];
      r = a.load(slot);
    }
    auto* n = static_cast<Inner*>(a.alloc(sizeof(Inner)));
    Inner init{bit, {0, 0}};
    init.child[dir(key, bit)] = new_leaf(a, key, value);
    init.child[1 - dir(key, bit)] = r;
    a.write(n, &init, sizeof init);
    a.store(slot, a.off(n));
    return 1;
  }

  // 1 if the key was present (and is now gone), else 0.
  int erase(A& a, uint64_t key) {
    uint64_t* slot = &root_->top;
    uint64_t* above = nullptr;  // the slot that refers to `parent`
    Inner* parent = nullptr;
    uint64_t side = 0;
    uint64_t r = a.load(slot);
    if (r == 0) return 0;
    while (!is_leaf(r)) {
      Inner* n = inner(a, r);
      above = slot;
      parent = n;
      side = dir(key, a.load(&n->bit));
      slot = &n->child[side];
      r = a.load(slot);
    }
    if (a.load(&leaf(a, r)->key) != key) return 0;
    if (parent == nullptr) {
      a.store(&root_->top, uint64_t{0});
    } else {
      a.store(above, a.load(&parent->child[1 - side]));
      a.free(parent);
    }
    a.free(leaf(a, r));
    return 1;
  }

  uint64_t count(A& a) {
    uint64_t leaves = 0;
    std::vector<uint64_t> todo;
    if (const uint64_t top = a.load(&root_->top)) todo.push_back(top);
    while (!todo.empty() && leaves < kWalkLimit) {
      const uint64_t r = todo.back();
      todo.pop_back();
      if (is_leaf(r)) {
        ++leaves;
      } else {
        todo.push_back(a.load(&inner(a, r)->child[0]));
        todo.push_back(a.load(&inner(a, r)->child[1]));
      }
    }
    return leaves;
  }

  std::string check(A& a, uint64_t expect) {
    uint64_t nodes = 0;
    std::vector<Step> path;
    const uint64_t top = a.load(&root_->top);
    return top ? check(a, top, path, 2 * expect + 2, &nodes) : "";
  }

  void damage(A& a) {
    const uint64_t top = a.load(&root_->top);
    if (top == 0 || is_leaf(top)) {
      a.store(&root_->top, uint64_t{0});  // the keys counted no longer exist
    } else {
      Inner* n = inner(a, top);
      a.store(&n->bit, a.load(&n->bit) + 1);
    }
  }

 private:
  struct Inner {
    uint64_t bit, child[2];
  };
  struct Leaf {
    uint64_t key, value;
  };
  struct Step {
    uint64_t bit, dir, rep;  // an ancestor's crit bit, the branch taken, its leftmost leaf's key
  };

  static bool is_leaf(uint64_t ref) { return ref & 1; }
  static uint64_t dir(uint64_t key, uint64_t bit) { return (key >> bit) & 1; }
  Inner* inner(A& a, uint64_t ref) { return a.template ptr<Inner>(ref); }
  Leaf* leaf(A& a, uint64_t ref) { return a.template ptr<Leaf>(ref & ~uint64_t{1}); }

  uint64_t new_leaf(A& a, uint64_t key, uint64_t value) {
    auto* l = static_cast<Leaf*>(a.alloc(sizeof(Leaf)));
    const Leaf init{key, value};
    a.write(l, &init, sizeof init);
    return a.off(l) | 1;
  }

  // The subtree at `ref` below `path` (recursion depth <= 64: bits
  // strictly decrease).
  std::string check(A& a, uint64_t ref, std::vector<Step>& path, uint64_t max_nodes, uint64_t* nodes) {
    if (++*nodes > max_nodes) return "CTree: more nodes than the keys allow (a cycle?)";
    if (is_leaf(ref)) {
      const uint64_t key = a.load(&leaf(a, ref)->key);
      for (const Step& s : path) {
        if (dir(key, s.bit) != s.dir) return "CTree: a leaf's key lacks the bit of the branch taken to it";
        if (s.bit < 63 && ((key ^ s.rep) >> (s.bit + 1)) != 0) {
          return "CTree: a leaf's key differs from its subtree's above the subtree's crit bit";
        }
      }
      return "";
    }
    const Inner* n = inner(a, ref);
    const uint64_t bit = a.load(&n->bit);
    if (bit > 63 || (!path.empty() && bit >= path.back().bit)) {
      return mismatch("CTree: crit bits must decrease down the tree; bit", bit,
                      path.empty() ? 63 : path.back().bit - 1);
    }
    const uint64_t c[2] = {a.load(&n->child[0]), a.load(&n->child[1])};
    if (c[0] == 0 || c[1] == 0) return "CTree: an internal node lacks a child";
    uint64_t rep = c[0];
    for (int guard = 0; !is_leaf(rep) && guard < 64; ++guard) rep = a.load(&inner(a, rep)->child[0]);
    if (!is_leaf(rep)) return "CTree: no leaf below an internal node";
    const uint64_t rep_key = a.load(&leaf(a, rep)->key);
    for (uint64_t d = 0; d < 2; ++d) {
      path.push_back({bit, d, rep_key});
      std::string why = check(a, c[d], path, max_nodes, nodes);
      path.pop_back();
      if (!why.empty()) return why;
    }
    return "";
  }

  Root* root_ = nullptr;
  std::mutex mu_;  // one lock for the tree
};

template <class A>
using Ctree = KeyedSet<A, CritBitTree<A>>;

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_CTREE_H_
