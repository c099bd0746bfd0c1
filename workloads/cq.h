// cq.h — CQ (Themis, Table II): enqueue and dequeue nodes of a concurrent
// queue.
//
// A linked queue with a dummy head node (Michael and Scott's two-lock
// queue): enqueuers hold the tail lock, dequeuers the head lock.  A node is
// {value, next}.  An enqueue allocates a node, writes it whole (value =
// the tail node's value + 1, next = 0), links it after the tail and moves
// the tail: 4 word stores.  A dequeue moves the head to the first node
// (which becomes the new dummy) and frees the old dummy: 1 store.  Half the
// transactions of a thread enqueue, half dequeue (a dequeue that finds the
// queue empty enqueues instead).
//
// Isolation: a dequeuer must not read a link an open enqueue is writing.
// It reads the dummy's `next` only while a DRAM count of committed
// elements (raised after an enqueue's wrap closes, lowered after a
// dequeue's) is at least one; then that first element's enqueue has
// committed, and a concurrent enqueue writes the last node's `next`, which
// is not the dummy's.
//
// Values count up by one along the queue (each new node takes its
// predecessor's value + 1, a dequeued node keeps its value as the dummy),
// so FIFO order is checked by verify() (values from head to tail are
// consecutive, the length is the committed count) and by each dequeue
// (it gets the value after the last one dequeued).
#ifndef SOFTWRAP_WORKLOADS_CQ_H_
#define SOFTWRAP_WORKLOADS_CQ_H_

#include <mutex>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline uint64_t cq_heap_bytes(const Params& p) { return (p.scale + 1024) * 32 + 4096; }

inline const Info kCqInfo{"cq",          "CQ", "Themis, Table II", "enqueues or dequeues one node of a concurrent queue",
                          nullptr,       1,    "initial queue length",
                          1000,          8,    cq_heap_bytes};

template <class A>
class Cq {
 public:
  static const Info& info() { return kCqInfo; }
  Cq(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), net_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup() {
    A& a = acc_[0];
    {
      Wrap<A> w(a);
      root_ = static_cast<Root*>(a.root(sizeof(Root)));
      Node* dummy = new_node(a, 0);
      a.store(&root_->head, a.off(dummy));
      a.store(&root_->tail, a.off(dummy));
      w.commit();
    }
    in_wraps(a, p_.scale, 64, [&](uint64_t) { link(a); });
    Wrap<A> w(a);
    a.store(&root_->magic, kMagic);
    w.commit();
    adopt();
  }

  void attach() {
    root_ = find_root<A, Root>(acc_[0], kMagic, "CQ");
    adopt();
  }

  void run(uint32_t tid, uint64_t transactions) {
    A& a = acc_[tid];
    Rng& r = rng_[tid];
    for (uint64_t t = 0; t < transactions; ++t) {
      if (r.percent(50) && dequeue(a, tid)) continue;
      std::lock_guard<std::mutex> g(tail_mu_);
      Wrap<A> w(a);
      link(a);
      w.commit();
      committed_.fetch_add(1);
      net_.add(tid, 1);
    }
  }

  std::string verify() {
    A& a = acc_[0];
    const uint64_t tail = a.load(&root_->tail);
    uint64_t at = a.load(&root_->head), n = 0;
    uint64_t value = a.load(&node(a, at)->value);
    if (value != last_dequeued_) return mismatch("CQ: the dummy node's value (the last one dequeued)", value, last_dequeued_);
    while (at != tail) {
      const uint64_t next = a.load(&node(a, at)->next);
      if (next == 0) return "CQ: the list ends before reaching the tail, after " + std::to_string(n) + " nodes";
      const uint64_t v = a.load(&node(a, next)->value);
      if (v != value + 1) return mismatch("CQ: value of node " + std::to_string(n + 1) + " (FIFO order)", v, value + 1);
      value = v;
      at = next;
      if (++n > expected() + 1) break;
    }
    if (a.load(&node(a, tail)->next) != 0) return "CQ: the tail node has a successor";
    if (n != expected()) return mismatch("CQ: queue length", n, expected());
    if (!fifo_error_.empty()) return fifo_error_;
    return "";
  }

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    Node* dummy = node(a, a.load(&root_->head));
    a.store(&dummy->value, a.load(&dummy->value) + 7);
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x43512D51554555ull;  // "CQ-QUEU"
  struct Root {
    uint64_t magic, head, tail;
  };
  struct Node {
    uint64_t value, next;
  };

  Node* node(A& a, uint64_t off) { return a.template ptr<Node>(off); }

  Node* new_node(A& a, uint64_t value) {
    auto* n = static_cast<Node*>(a.alloc(sizeof(Node)));
    const Node init{value, 0};
    a.write(n, &init, sizeof init);
    return n;
  }

  // Appends a node after the tail (in the caller's wrap, tail lock held).
  void link(A& a) {
    Node* tail = node(a, a.load(&root_->tail));
    Node* n = new_node(a, a.load(&tail->value) + 1);
    a.store(&tail->next, a.off(n));
    a.store(&root_->tail, a.off(n));
  }

  // False if the queue had no committed element (the caller enqueues).
  bool dequeue(A& a, uint32_t tid) {
    std::lock_guard<std::mutex> g(head_mu_);
    if (committed_.load() == 0) return false;
    Wrap<A> w(a);
    const uint64_t head = a.load(&root_->head);
    const uint64_t first = a.load(&node(a, head)->next);
    if (first == 0) throw WorkloadError("CQ: a committed element is missing (the dummy node has no successor)");
    const uint64_t v = a.load(&node(a, first)->value);
    a.store(&root_->head, first);
    a.free(node(a, head));
    w.commit();
    committed_.fetch_sub(1);
    net_.add(tid, -1);
    if (v != last_dequeued_ + 1 && fifo_error_.empty()) {
      fifo_error_ = mismatch("CQ: dequeued value (FIFO order)", v, last_dequeued_ + 1);
    }
    last_dequeued_ = v;
    return true;
  }

  // Counts the queue as it is now: the baseline of verify().
  void adopt() {
    A& a = acc_[0];
    const uint64_t tail = a.load(&root_->tail);
    uint64_t at = a.load(&root_->head), n = 0;
    last_dequeued_ = a.load(&node(a, at)->value);
    while (at != tail && at != 0) {
      at = a.load(&node(a, at)->next);
      ++n;
    }
    base_ = n;
    committed_.store(n);
    net_.clear();
  }
  uint64_t expected() const { return static_cast<uint64_t>(static_cast<int64_t>(base_) + net_.sum()); }

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  std::mutex head_mu_, tail_mu_;
  std::atomic<uint64_t> committed_{0};
  ThreadCounts net_;
  uint64_t base_ = 0;
  uint64_t last_dequeued_ = 0;  // head lock
  std::string fifo_error_;      // head lock
  Root* root_ = nullptr;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_CQ_H_
