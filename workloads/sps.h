// sps.h — SPS (Themis, Table II): swap random entries of an array.
//
// The array holds a permutation of 0..n-1 (the identity after setup).  A
// transaction swaps `tx_size` random pairs of distinct entries: two loads
// and two stores per swap, so 2 x tx_size stores (the paper's Fig. 8 puts
// SPS above a hundred stores per transaction; the default of 64 swaps is
// 128).  Threads lock the stripes of every entry their transaction swaps,
// in ascending order, before opening its wrap.  verify(): the array is
// still a permutation of 0..n-1.
#ifndef SOFTWRAP_WORKLOADS_SPS_H_
#define SOFTWRAP_WORKLOADS_SPS_H_

#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline uint64_t sps_heap_bytes(const Params& p) { return p.scale * 8 + 4096; }

inline const Info kSpsInfo{
    "sps", "SPS", "Themis, Table II", "swaps random pairs of entries of an array", "swaps per transaction", 64,
    "array entries", 1'000'000, 64, sps_heap_bytes};

template <class A>
class Sps {
 public:
  static const Info& info() { return kSpsInfo; }
  Sps(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), locks_(4096), scratch_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup() {
    A& a = acc_[0];
    const uint64_t n = p_.scale;
    {
      Wrap<A> w(a);
      root_ = static_cast<Root*>(a.root(sizeof(Root)));
      arr_ = static_cast<uint64_t*>(a.alloc(n * 8));
      a.store(&root_->n, n);
      a.store(&root_->array, a.off(arr_));
      w.commit();
    }
    write_words(a, arr_, n, [](uint64_t i) { return i; });
    Wrap<A> w(a);
    a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
    w.commit();
    n_ = n;
  }

  void attach() {
    A& a = acc_[0];
    root_ = find_root<A, Root>(a, kMagic, "SPS");
    n_ = a.load(&root_->n);
    arr_ = a.template ptr<uint64_t>(a.load(&root_->array));
    if (n_ < 2 || arr_ == nullptr) throw WorkloadError("SPS: the root names no array");
  }

  void run(uint32_t tid, uint64_t transactions) {
    A& a = acc_[tid];
    Rng& r = rng_[tid];
    std::vector<uint64_t> idx(2 * p_.tx_size);
    for (uint64_t t = 0; t < transactions; ++t) {
      for (size_t s = 0; s < idx.size(); s += 2) {
        idx[s] = r.below(n_);
        const uint64_t j = r.below(n_ - 1);
        idx[s + 1] = j >= idx[s] ? j + 1 : j;
      }
      LockTable::Guard g(locks_, idx, scratch_[tid]);
      Wrap<A> w(a);
      for (size_t s = 0; s < idx.size(); s += 2) {
        uint64_t* x = arr_ + idx[s];
        uint64_t* y = arr_ + idx[s + 1];
        const uint64_t vx = a.load(x), vy = a.load(y);
        a.store(x, vy);
        a.store(y, vx);
      }
      w.commit();
    }
  }

  std::string verify() {
    A& a = acc_[0];
    std::vector<bool> seen(n_);
    std::vector<uint64_t> chunk;
    for (uint64_t i = 0; i < n_; i += kChunk) {
      chunk.resize(std::min(kChunk, n_ - i));
      a.read(chunk.data(), arr_ + i, chunk.size() * 8);
      for (uint64_t k = 0; k < chunk.size(); ++k) {
        const uint64_t v = chunk[k];
        if (v >= n_) return mismatch("SPS: entry " + std::to_string(i + k) + " is out of range", v, n_);
        if (seen[v]) return "SPS: value " + std::to_string(v) + " appears twice (entry " + std::to_string(i + k) + ")";
        seen[v] = true;
      }
    }
    return "";
  }

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    a.store(arr_, a.load(arr_ + 1));
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x5350532D41525259ull;  // "SPS-ARRY"
  static constexpr uint64_t kChunk = 512;                    // entries per verify read
  struct Root {
    uint64_t magic, n, array;
  };

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  LockTable locks_;
  std::vector<std::vector<size_t>> scratch_;
  Root* root_ = nullptr;
  uint64_t* arr_ = nullptr;
  uint64_t n_ = 0;
};

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_SPS_H_
