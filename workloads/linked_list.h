// linked_list.h — LL (Themis, Table II): insert and delete nodes of a
// linked list.
//
// A circular doubly linked list with its sentinel in the root; nodes are
// {value, prev, next}.  A transaction does `tx_size` operations (default
// 8), each an insert after a random node (allocate and write the node: 3
// words; link it: 2 stores — 5 stores) or a delete of a random node (2
// stores, then free): inserts while the list is below half its initial
// length, deletes above twice, otherwise either with equal chance.  The
// random node comes from a DRAM index of the list's nodes (a volatile
// index over a persistent list), so a transaction stores without walking
// the list.  One DRAM lock serializes the list.
//
// verify(): following `next` from the sentinel comes back to it, every
// node's `prev` is the node before it, the nodes are exactly the index's,
// and they number what setup and the committed transactions make.
#ifndef SOFTWRAP_WORKLOADS_LINKED_LIST_H_
#define SOFTWRAP_WORKLOADS_LINKED_LIST_H_

#include <mutex>
#include <unordered_map>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline uint64_t ll_heap_bytes(const Params& p) { return p.scale * 2 * 48 + 4096; }

inline const Info kLinkedListInfo{"ll", "LL", "Themis, Table II",
                                  "inserts or deletes tx_size nodes of a doubly linked list",
                                  "insert/delete operations per transaction", 8, "initial list length", 100'000, 16,
                                  ll_heap_bytes};

template <class A>
class LinkedList {
 public:
  static const Info& info() { return kLinkedListInfo; }
  LinkedList(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)) {}
  const Params& params() const { return p_; }

  void setup() {
    A& a = acc_[0];
    {
      Wrap<A> w(a);
      root_ = static_cast<Root*>(a.root(sizeof(Root)));
      const uint64_t s = a.off(&root_->sentinel);
      const Node init{0, s, s};
      a.write(&root_->sentinel, &init, sizeof init);
      a.store(&root_->length, p_.scale);
      w.commit();
    }
    sentinel_ = a.off(&root_->sentinel);
    nodes_.clear();
    pos_.clear();
    Rng r(p_.seed);
    in_wraps(a, p_.scale, 32, [&](uint64_t i) { insert_after(a, nodes_.empty() ? sentinel_ : pick(r), i); });
    Wrap<A> w(a);
    a.store(&root_->magic, kMagic);
    w.commit();
    length_ = a.load(&root_->length);
  }

  void attach() {
    A& a = acc_[0];
    root_ = find_root<A, Root>(a, kMagic, "LL");
    sentinel_ = a.off(&root_->sentinel);
    length_ = a.load(&root_->length);
    nodes_.clear();
    pos_.clear();
    for (uint64_t n = a.load(&root_->sentinel.next); n != sentinel_ && n != 0 && !pos_.count(n);
         n = a.load(&node(a, n)->next)) {
      add(n);  // a broken list stops here; verify() says what is wrong
    }
  }

  void run(uint32_t tid, uint64_t transactions) {
    A& a = acc_[tid];
    Rng& r = rng_[tid];
    for (uint64_t t = 0; t < transactions; ++t) {
      std::lock_guard<std::mutex> g(mu_);
      Wrap<A> w(a);
      for (uint32_t op = 0; op < p_.tx_size; ++op) {
        const uint64_t n = nodes_.size();
        const bool ins = n < length_ / 2 ? true : n > 2 * length_ ? false : r.percent(50);
        if (ins || n == 0) {
          insert_after(a, pick(r), r.next());
        } else {
          erase(a, pick(r));
        }
      }
      w.commit();
    }
  }

  std::string verify() {
    A& a = acc_[0];
    uint64_t prev = sentinel_, n = 0;
    for (uint64_t at = a.load(&root_->sentinel.next);; at = a.load(&node(a, at)->next)) {
      if (at == 0) return "LL: a node's next is null";
      if (a.load(&node(a, at)->prev) != prev) return "LL: a node's prev is not the node before it";
      if (at == sentinel_) break;
      if (pos_.find(at) == pos_.end()) return "LL: the list holds a node the transactions never inserted";
      if (++n > nodes_.size()) return "LL: the list is longer than the nodes inserted (a cycle?)";
      prev = at;
    }
    if (n != nodes_.size()) return mismatch("LL: list length", n, nodes_.size());
    return "";
  }

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    Node* first = node(a, a.load(&root_->sentinel.next));
    a.store(&first->prev, a.off(first));
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x4C4C2D4C49535431ull;  // "LL-LIST1"
  struct Node {
    uint64_t value, prev, next;
  };
  struct Root {
    uint64_t magic, length;
    Node sentinel;
  };

  Node* node(A& a, uint64_t off) { return a.template ptr<Node>(off); }
  uint64_t pick(Rng& r) { return nodes_.empty() ? sentinel_ : nodes_[r.below(nodes_.size())]; }
  void add(uint64_t n) {
    pos_[n] = nodes_.size();
    nodes_.push_back(n);
  }
  void remove(uint64_t n) {
    const size_t i = pos_[n];
    nodes_[i] = nodes_.back();
    pos_[nodes_[i]] = i;
    nodes_.pop_back();
    pos_.erase(n);
  }

  void insert_after(A& a, uint64_t at, uint64_t value) {
    Node* x = node(a, at);
    const uint64_t y = a.load(&x->next);
    auto* n = static_cast<Node*>(a.alloc(sizeof(Node)));
    const Node init{value, at, y};
    a.write(n, &init, sizeof init);
    a.store(&node(a, y)->prev, a.off(n));
    a.store(&x->next, a.off(n));
    add(a.off(n));
  }

  void erase(A& a, uint64_t at) {
    Node* n = node(a, at);
    const uint64_t p = a.load(&n->prev), q = a.load(&n->next);
    a.store(&node(a, p)->next, q);
    a.store(&node(a, q)->prev, p);
    a.free(n);
    remove(at);
  }

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  std::mutex mu_;
  Root* root_ = nullptr;
  uint64_t sentinel_ = 0, length_ = 0;
  std::vector<uint64_t> nodes_;                // the DRAM index (mu_)
  std::unordered_map<uint64_t, size_t> pos_;  // node -> index in nodes_
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_LINKED_LIST_H_
