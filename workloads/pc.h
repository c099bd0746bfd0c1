// pc.h — PC (Themis, Table II): update values in a hash table (a
// persistent cache).
//
// A chained hash table of `scale` keys 0..scale-1, entries {key, value,
// next}, filled by setup.  A transaction updates the values of `tx_size`
// random keys (default 16): a lookup along the key's chain, then one store,
// so tx_size stores.  A value is (version << 32 | check) with check =
// low 32 bits of mix64(key) + version, and each update raises the version
// by one, so a torn or misplaced value shows.  Threads lock the stripes of
// all buckets their transaction updates, in ascending order.
//
// verify(): every key 0..scale-1 is there once, in the bucket it hashes
// to; every value's check matches its key and version; the versions add
// up to the committed updates.
#ifndef SOFTWRAP_WORKLOADS_PC_H_
#define SOFTWRAP_WORKLOADS_PC_H_

#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline uint64_t pc_heap_bytes(const Params& p) { return p.scale * 8 + p.scale * 48 + 4096; }

inline const Info kPcInfo{"pc",   "PC",     "Themis, Table II", "updates the values of tx_size keys of a hash table",
                          "updates per transaction", 16, "keys (and buckets)", 100'000, 32, pc_heap_bytes};

template <class A>
class Pc {
 public:
  static const Info& info() { return kPcInfo; }
  Pc(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), locks_(1024), updates_(p_.threads),
        scratch_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup() {
    A& a = acc_[0];
    const uint64_t n = p_.scale;
    {
      Wrap<A> w(a);
      root_ = static_cast<Root*>(a.root(sizeof(Root)));
      buckets_ = static_cast<uint64_t*>(a.alloc(n * 8));
      a.store(&root_->keys, n);
      a.store(&root_->buckets, a.off(buckets_));
      w.commit();
    }
    keys_ = n;
    write_words(a, buckets_, n, [](uint64_t) { return uint64_t{0}; });
    in_wraps(a, n, 32, [&](uint64_t k) {
      uint64_t* head = &buckets_[bucket_of(k)];
      auto* e = static_cast<Entry*>(a.alloc(sizeof(Entry)));
      const Entry init{k, encode(k, 0), a.load(head)};
      a.write(e, &init, sizeof init);
      a.store(head, a.off(e));
    });
    Wrap<A> w(a);
    a.store(&root_->magic, kMagic);
    w.commit();
    base_ = 0;
    updates_.clear();
  }

  void attach() {
    A& a = acc_[0];
    root_ = find_root<A, Root>(a, kMagic, "PC");
    keys_ = a.load(&root_->keys);
    buckets_ = a.template ptr<uint64_t>(a.load(&root_->buckets));
    if (keys_ == 0 || buckets_ == nullptr) throw WorkloadError("PC: the root names no table");
    base_ = 0;
    for (uint64_t b = 0; b < keys_; ++b) {
      for (uint64_t e = a.load(&buckets_[b]); e != 0; e = a.load(&entry(a, e)->next)) {
        base_ += a.load(&entry(a, e)->value) >> 32;
      }
    }
    updates_.clear();
  }

  void run(uint32_t tid, uint64_t transactions) {
    A& a = acc_[tid];
    Rng& r = rng_[tid];
    std::vector<uint64_t> keys(p_.tx_size), buckets(p_.tx_size);
    for (uint64_t t = 0; t < transactions; ++t) {
      for (size_t i = 0; i < keys.size(); ++i) {
        keys[i] = r.below(keys_);
        buckets[i] = bucket_of(keys[i]);
      }
      LockTable::Guard g(locks_, buckets, scratch_[tid]);
      Wrap<A> w(a);
      for (uint64_t k : keys) {
        Entry* e = find(a, k);
        if (e == nullptr) throw WorkloadError("PC: key " + std::to_string(k) + " is missing");
        const uint64_t v = a.load(&e->value);
        a.store(&e->value, encode(k, (v >> 32) + 1));
      }
      w.commit();
      updates_.add(tid, static_cast<int64_t>(keys.size()));
    }
  }

  std::string verify() {
    A& a = acc_[0];
    std::vector<bool> seen(keys_);
    uint64_t versions = 0;
    for (uint64_t b = 0; b < keys_; ++b) {
      uint64_t chain = 0;
      for (uint64_t off = a.load(&buckets_[b]); off != 0; off = a.load(&entry(a, off)->next)) {
        Entry* e = entry(a, off);
        const uint64_t k = a.load(&e->key), v = a.load(&e->value);
        if (k >= keys_) return mismatch("PC: a key is out of range", k, keys_);
        if (bucket_of(k) != b) return "PC: key " + std::to_string(k) + " is in the wrong bucket";
        if (seen[k]) return "PC: key " + std::to_string(k) + " is there twice";
        seen[k] = true;
        if (v != encode(k, v >> 32)) return "PC: the value of key " + std::to_string(k) + " fails its check";
        versions += v >> 32;
        if (++chain > keys_) return "PC: a chain does not end";
      }
    }
    for (uint64_t k = 0; k < keys_; ++k) {
      if (!seen[k]) return "PC: key " + std::to_string(k) + " is missing";
    }
    const uint64_t want = base_ + static_cast<uint64_t>(updates_.sum());
    if (versions != want) return mismatch("PC: the versions add up to", versions, want);
    return "";
  }

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    Entry* e = find(a, 0);
    a.store(&e->value, a.load(&e->value) ^ 1);
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x50432D4341434845ull;  // "PC-CACHE"
  struct Root {
    uint64_t magic, keys, buckets;
  };
  struct Entry {
    uint64_t key, value, next;
  };

  static uint64_t encode(uint64_t key, uint64_t version) {
    return version << 32 | ((mix64(key) + version) & 0xFFFFFFFFull);
  }
  Entry* entry(A& a, uint64_t off) { return a.template ptr<Entry>(off); }
  uint64_t bucket_of(uint64_t key) const { return mix64(key ^ 0x5043) % keys_; }
  Entry* find(A& a, uint64_t key) {
    for (uint64_t off = a.load(&buckets_[bucket_of(key)]); off != 0; off = a.load(&entry(a, off)->next)) {
      if (a.load(&entry(a, off)->key) == key) return entry(a, off);
    }
    return nullptr;
  }

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  LockTable locks_;
  ThreadCounts updates_;
  std::vector<std::vector<size_t>> scratch_;
  Root* root_ = nullptr;
  uint64_t* buckets_ = nullptr;
  uint64_t keys_ = 0, base_ = 0;  // base_: the versions' sum at setup()/attach()
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_PC_H_
