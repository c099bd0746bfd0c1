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
// transactions insert, half delete (keyed_set.h).  Threads lock the
// bucket's stripe.
//
// verify(): every entry sits in the bucket its key hashes to, no key is
// there twice, chains end, and the entries number what setup and the
// committed transactions make.
#ifndef SOFTWRAP_WORKLOADS_HASHMAP_H_
#define SOFTWRAP_WORKLOADS_HASHMAP_H_

#include <mutex>
#include <unordered_set>
#include <vector>

#include "keyed_set.h"
#include "workload.h"

namespace softwrap::workloads {

inline uint64_t hashmap_heap_bytes(const Params& p) { return p.scale * 8 + p.scale * 2 * 48 + 4096; }

inline const Info kHashmapInfo{"hashmap", "Hashmap", "Themis, Table II",
                               "inserts or deletes one key of a chained hash map", nullptr, 1,
                               "buckets and initial keys (key space: twice as many)", 100'000, 16,
                               hashmap_heap_bytes};

// The chained hash map behind Hashmap (KeyedSet's structure, keyed_set.h).
template <class A>
class ChainedHashMap {
 public:
  static constexpr uint64_t kMagic = 0x484153484D41502Dull;  // "HASHMAP-"
  struct Root {
    uint64_t magic, keyspace, nbuckets, buckets;
  };
  static const Info& info() { return kHashmapInfo; }
  static uint64_t key(uint64_t k) { return k; }

  ChainedHashMap() : locks_(1024) {}

  void create(A& a, Root* r, uint64_t scale) {
    root_ = r;
    nbuckets_ = scale;
    {
      Wrap<A> w(a);
      buckets_ = static_cast<uint64_t*>(a.alloc(nbuckets_ * 8));
      a.store(&root_->nbuckets, nbuckets_);
      a.store(&root_->buckets, a.off(buckets_));
      w.commit();
    }
    write_words(a, buckets_, nbuckets_, [](uint64_t) { return uint64_t{0}; });
  }

  void open(A& a, Root* r) {
    root_ = r;
    nbuckets_ = a.load(&root_->nbuckets);
    buckets_ = a.template ptr<uint64_t>(a.load(&root_->buckets));
    if (nbuckets_ == 0 || buckets_ == nullptr) throw WorkloadError("Hashmap: the root names no bucket array");
  }

  std::mutex& lock(uint64_t key) { return locks_.of(bucket_of(key)); }

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

  uint64_t count(A& a) {
    uint64_t n = 0;
    for (uint64_t b = 0; b < nbuckets_; ++b) {
      for (uint64_t e = a.load(&buckets_[b]); e != 0 && n < kWalkLimit; e = a.load(&entry(a, e)->next)) ++n;
    }
    return n;
  }

  std::string check(A& a, uint64_t expect) {
    std::unordered_set<uint64_t> keys;
    for (uint64_t b = 0; b < nbuckets_; ++b) {
      for (uint64_t e = a.load(&buckets_[b]); e != 0; e = a.load(&entry(a, e)->next)) {
        const uint64_t key = a.load(&entry(a, e)->key);
        if (bucket_of(key) != b) {
          return "Hashmap: key " + std::to_string(key) + " is in bucket " + std::to_string(b) + ", hashes to " +
                 std::to_string(bucket_of(key));
        }
        if (!keys.insert(key).second) return "Hashmap: key " + std::to_string(key) + " is there twice";
        if (keys.size() > expect + 2) return "Hashmap: more entries than inserted (a cycle?)";
      }
    }
    return "";
  }

  void damage(A& a) {
    for (uint64_t b = 0; b < nbuckets_; ++b) {
      if (const uint64_t e = a.load(&buckets_[b])) {
        Entry* x = entry(a, e);
        a.store(&x->key, a.load(&x->key) + 1);  // now in the wrong bucket (or a duplicate)
        return;
      }
    }
  }

 private:
  struct Entry {
    uint64_t key, value, next;
  };

  Entry* entry(A& a, uint64_t off) { return a.template ptr<Entry>(off); }
  uint64_t bucket_of(uint64_t key) const { return mix64(key) % nbuckets_; }

  LockTable locks_;  // striped over the buckets
  Root* root_ = nullptr;
  uint64_t* buckets_ = nullptr;
  uint64_t nbuckets_ = 0;
};

template <class A>
using Hashmap = KeyedSet<A, ChainedHashMap<A>>;

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_HASHMAP_H_
