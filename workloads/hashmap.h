// hashmap.h — Hashmap (Themis, Table II): insert and delete nodes of a
// chained hash map.
//
// PMDK's hashmap_tx shape without resizing: `scale` buckets, each the head
// of a chain of entries {key, value, next}.  An insert of a new key
// allocates and writes an entry (3 words) and makes it the bucket's head
// (1 store): 4 stores; of a present key it stores the value (1).  A delete
// of a present key unlinks the entry (1 store: its predecessor's `next` or
// the bucket head) and frees it; of an absent key it stores nothing.  Keys
// are uniform in [0, 2 x scale) (setup inserts the even ones), half the
// transactions insert, half delete.  Threads lock the bucket's stripe.
//
// verify(): every entry sits in the bucket its key hashes to, no key is
// there twice, chains end, and the entries number what setup and the
// committed transactions make.
#ifndef SOFTWRAP_WORKLOADS_HASHMAP_H_
#define SOFTWRAP_WORKLOADS_HASHMAP_H_

#include <mutex>
#include <unordered_set>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline uint64_t hashmap_heap_bytes(const Params& p) { return p.scale * 8 + p.scale * 2 * 48 + 4096; }

inline const Info kHashmapInfo{"hashmap", "Hashmap", "Themis, Table II",
                               "inserts or deletes one key of a chained hash map", nullptr, 1,
                               "buckets and initial keys (key space: twice as many)", 100'000, 16,
                               hashmap_heap_bytes};

template <class A>
class Hashmap {
 public:
  static const Info& info() { return kHashmapInfo; }
  Hashmap(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), locks_(1024), net_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup() {
    A& a = acc_[0];
    const uint64_t nb = p_.scale;
    {
      Wrap<A> w(a);
      root_ = static_cast<Root*>(a.root(sizeof(Root)));
      buckets_ = static_cast<uint64_t*>(a.alloc(nb * 8));
      a.store(&root_->nbuckets, nb);
      a.store(&root_->keyspace, 2 * nb);
      a.store(&root_->buckets, a.off(buckets_));
      w.commit();
    }
    const std::vector<uint64_t> zero(kChunk, 0);
    for (uint64_t i = 0; i < nb; i += kChunk) {
      Wrap<A> w(a);
      a.write(buckets_ + i, zero.data(), std::min(kChunk, nb - i) * 8);
      w.commit();
    }
    nbuckets_ = nb;
    keyspace_ = 2 * nb;
    in_wraps(a, nb, 32, [&](uint64_t i) { insert(a, 2 * i, i); });
    Wrap<A> w(a);
    a.store(&root_->magic, kMagic);
    w.commit();
    adopt();
  }

  void attach() {
    A& a = acc_[0];
    root_ = find_root<A, Root>(a, kMagic, "Hashmap");
    nbuckets_ = a.load(&root_->nbuckets);
    keyspace_ = a.load(&root_->keyspace);
    buckets_ = a.template ptr<uint64_t>(a.load(&root_->buckets));
    if (nbuckets_ == 0 || buckets_ == nullptr) throw WorkloadError("Hashmap: the root names no bucket array");
    adopt();
  }

  void run(uint32_t tid, uint64_t transactions) {
    A& a = acc_[tid];
    Rng& r = rng_[tid];
    for (uint64_t t = 0; t < transactions; ++t) {
      const bool ins = r.percent(50);
      const uint64_t key = r.below(keyspace_), value = r.next();
      std::lock_guard<std::mutex> g(locks_.of(bucket_of(key)));
      Wrap<A> w(a);
      const int delta = ins ? insert(a, key, value) : -erase(a, key);
      w.commit();
      net_.add(tid, delta);
    }
  }

  std::string verify() {
    A& a = acc_[0];
    std::unordered_set<uint64_t> keys;
    for (uint64_t b = 0; b < nbuckets_; ++b) {
      for (uint64_t e = a.load(&buckets_[b]); e != 0; e = a.load(&entry(a, e)->next)) {
        const uint64_t key = a.load(&entry(a, e)->key);
        if (bucket_of(key) != b) {
          return "Hashmap: key " + std::to_string(key) + " is in bucket " + std::to_string(b) + ", hashes to " +
                 std::to_string(bucket_of(key));
        }
        if (!keys.insert(key).second) return "Hashmap: key " + std::to_string(key) + " is there twice";
        if (keys.size() > expected() + 1) return "Hashmap: more entries than inserted (a cycle?)";
      }
    }
    if (keys.size() != expected()) return mismatch("Hashmap: entries", keys.size(), expected());
    return "";
  }

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    for (uint64_t b = 0; b < nbuckets_; ++b) {
      if (const uint64_t e = a.load(&buckets_[b])) {
        Entry* x = entry(a, e);
        a.store(&x->key, a.load(&x->key) + 1);  // now in the wrong bucket (or a duplicate)
        break;
      }
    }
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x484153484D41502Dull;  // "HASHMAP-"
  static constexpr uint64_t kChunk = 512;
  struct Root {
    uint64_t magic, nbuckets, keyspace, buckets;
  };
  struct Entry {
    uint64_t key, value, next;
  };

  Entry* entry(A& a, uint64_t off) { return a.template ptr<Entry>(off); }
  uint64_t bucket_of(uint64_t key) const { return mix64(key) % nbuckets_; }

  int insert(A& a, uint64_t key, uint64_t value) {
    uint64_t* head = &buckets_[bucket_of(key)];
    for (uint64_t e = a.load(head); e != 0; e = a.load(&entry(a, e)->next)) {
      if (a.load(&entry(a, e)->key) == key) {
        a.store(&entry(a, e)->value, value);
        return 0;
      }
    }
    auto* n = static_cast<Entry*>(a.alloc(sizeof(Entry)));
    const Entry init{key, value, a.load(head)};
    a.write(n, &init, sizeof init);
    a.store(head, a.off(n));
    return 1;
  }

  int erase(A& a, uint64_t key) {
    uint64_t* link = &buckets_[bucket_of(key)];
    for (uint64_t e = a.load(link); e != 0; e = a.load(link)) {
      Entry* x = entry(a, e);
      if (a.load(&x->key) == key) {
        a.store(link, a.load(&x->next));
        a.free(x);
        return 1;
      }
      link = &x->next;
    }
    return 0;
  }

  void adopt() {
    A& a = acc_[0];
    uint64_t n = 0;
    for (uint64_t b = 0; b < nbuckets_; ++b) {
      for (uint64_t e = a.load(&buckets_[b]); e != 0; e = a.load(&entry(a, e)->next)) ++n;
    }
    base_ = n;
    net_.clear();
  }
  uint64_t expected() const { return static_cast<uint64_t>(static_cast<int64_t>(base_) + net_.sum()); }

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  LockTable locks_;
  ThreadCounts net_;
  uint64_t base_ = 0, nbuckets_ = 0, keyspace_ = 0;
  Root* root_ = nullptr;
  uint64_t* buckets_ = nullptr;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_HASHMAP_H_
