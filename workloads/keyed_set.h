// keyed_set.h — what CTree, Hashmap and RB share: a persistent set of keys
// that transactions insert into and delete from.
//
// KeyedSet<A, S> is the workload; S<A>, the structure (crit-bit tree,
// chained hash map, red-black tree), knows its layout.  setup() has S lay
// out its root and inserts the even k of [0, 2 x scale) in a seeded random
// order; a transaction draws k uniform in [0, 2 x scale) and, with equal
// chance, inserts or deletes S::key(k) in one wrap, holding S's lock for
// that key from before the wrap opens until after it closes; verify() runs
// S's checks and compares the number of keys with setup's (or attach's)
// plus the inserts and minus the deletes that committed.
//
// S<A> provides:
//   static const Info& info(); static constexpr uint64_t kMagic;
//   struct Root, beginning with uint64_t magic, keyspace;
//   static uint64_t key(uint64_t k)        the key of drawn number k
//   void create(A&, Root*, uint64_t scale)  its part of the root (in wraps)
//   void open(A&, Root*)                    adopt an existing one (throws)
//   int insert(A&, key, value)              1 new key, 0 value replaced
//   int erase(A&, key)                      1 removed, 0 absent
//   std::mutex& lock(uint64_t key)          serializes what touches key
//   uint64_t count(A&)                      keys, by walking the structure
//   std::string check(A&, uint64_t expect)  "" or what is wrong (its own
//                                           invariants; a walk that finds
//                                           more than expect + 2 entries
//                                           stops: a cycle)
//   void damage(A&)                         breaks an invariant (in a wrap)
#ifndef SOFTWRAP_WORKLOADS_KEYED_SET_H_
#define SOFTWRAP_WORKLOADS_KEYED_SET_H_

#include <mutex>
#include <string>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

template <class A, class S>
class KeyedSet {
 public:
  using Root = typename S::Root;
  static const Info& info() { return S::info(); }
  KeyedSet(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), net_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup() {
    A& a = acc_[0];
    {
      Wrap<A> w(a);
      root_ = static_cast<Root*>(a.root(sizeof(Root)));
      a.store(&root_->keyspace, 2 * p_.scale);
      w.commit();
    }
    keyspace_ = 2 * p_.scale;
    s_.create(a, root_, p_.scale);
    Rng r(p_.seed);
    std::vector<uint64_t> order(p_.scale);
    for (uint64_t i = 0; i < order.size(); ++i) order[i] = 2 * i;
    for (uint64_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[r.below(i)]);
    in_wraps(a, order.size(), 32, [&](uint64_t i) { s_.insert(a, S::key(order[i]), i); });
    Wrap<A> w(a);
    a.store(&root_->magic, S::kMagic);  // last: a half-built pool is not adopted
    w.commit();
    adopt();
  }

  void attach() {
    A& a = acc_[0];
    root_ = find_root<A, Root>(a, S::kMagic, info().label);
    keyspace_ = a.load(&root_->keyspace);
    if (keyspace_ == 0) throw WorkloadError(std::string(info().label) + ": the root has an empty key space");
    s_.open(a, root_);
    adopt();
  }

  void run(uint32_t tid, uint64_t transactions) {
    A& a = acc_[tid];
    Rng& r = rng_[tid];
    for (uint64_t t = 0; t < transactions; ++t) {
      const bool ins = r.percent(50);
      const uint64_t key = S::key(r.below(keyspace_)), value = r.next();
      std::lock_guard<std::mutex> g(s_.lock(key));
      Wrap<A> w(a);
      const int delta = ins ? s_.insert(a, key, value) : -s_.erase(a, key);
      w.commit();
      net_.add(tid, delta);
    }
  }

  std::string verify() {
    A& a = acc_[0];
    const uint64_t want = static_cast<uint64_t>(static_cast<int64_t>(base_) + net_.sum());
    std::string why = s_.check(a, want);
    if (why.empty() && s_.count(a) != want) why = mismatch(std::string(info().label) + ": keys", s_.count(a), want);
    return why;
  }

  void damage() {
    Wrap<A> w(acc_[0]);
    s_.damage(acc_[0]);
    w.commit();
  }

 private:
  void adopt() {
    base_ = s_.count(acc_[0]);
    net_.clear();
  }

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  ThreadCounts net_;
  S s_;
  Root* root_ = nullptr;
  uint64_t keyspace_ = 0, base_ = 0;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_KEYED_SET_H_
