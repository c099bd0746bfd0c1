// kmeans.h — kmeans (WCL, Table 3: STAMP kmeans): k-means clustering on
// persistent arrays.
//
// The pool holds `scale` points of kDims doubles (generated around
// kCenters true centers), the current centers and the previous pass's,
// two membership arrays (one per pass parity: this pass's assignments go
// to membership[pass % 2], the previous pass's stay readable in the
// other), the new-center accumulators (per center a 64-bit count and
// kDims double sums) and the pass state: pass number and cursor (the
// next unassigned point, STAMP's global index).  Doubles are stored as
// their 64-bit patterns.
//
// A transaction (one wrap) is either
//   an assignment: the next kChunk points from the cursor are each given
//     their nearest center (squared Euclidean distance, lowest index on a
//     tie): the membership word stored, the center's count + 1 and each of
//     its kDims sums + the point's coordinate (the row of sums rewritten
//     through one modify() view: 43-60 % fewer instructions per
//     transaction than kDims word stores on every engine, docs/results.md);
//     then the cursor moves on; or,
//   when the cursor has reached the end, the end of the pass: the centers
//     are copied to the previous centers and replaced by the means of the
//     accumulators (a center nobody joined stays), the accumulators
//     zeroed, the pass number raised and the cursor reset.
// The cursor orders all transactions: one DRAM lock serializes them (as
// the shared index does in STAMP); the arithmetic is per point.
//
// verify(): the points this pass assigned (before the cursor) have their
// nearest current center; the accumulators hold exactly those points'
// counts and, to rounding, their sums; after the first pass, every point's
// previous membership is its nearest previous center and each current
// center is the mean of the points the previous pass gave it (or the
// previous center if none); the points assigned and the passes ended are
// what setup()/attach() found plus what the committed transactions did.
#ifndef SOFTWRAP_WORKLOADS_KMEANS_H_
#define SOFTWRAP_WORKLOADS_KMEANS_H_

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline constexpr uint64_t kKmeansDims = 16, kKmeansCenters = 16, kKmeansChunk = 4;

inline uint64_t kmeans_heap_bytes(const Params& p) {
  return p.scale * (kKmeansDims + 2) * 8 + kKmeansCenters * (3 * kKmeansDims + 1) * 8 + 65536;
}

inline const Info kKmeansInfo{"kmeans", "kmeans", "WCL, Table 3 (STAMP kmeans)",
                              "gives 4 points their nearest of 16 centers and adds them to the new-center sums",
                              nullptr, 1, "points (16 dimensions, 16 centers)", 16384, 24, kmeans_heap_bytes};

template <class A>
class Kmeans {
 public:
  static const Info& info() { return kKmeansInfo; }
  Kmeans(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), assigned_(p_.threads), passes_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    a.store(&t_.count[0],
            a.load(&t_.count[0]) + 1);  // the accumulators no longer match the memberships
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x4B4D45414E532D31ull;  // "KMEANS-1"
  static constexpr uint64_t D = kKmeansDims, K = kKmeansCenters;
  static constexpr uint64_t kNone = K;  // membership of a point not assigned yet
  struct Root {
    uint64_t magic, n, pass, cursor;
    uint64_t points, membership[2], centers, prev_centers, sum, count;
  };
  struct Arrays {
    uint64_t* points = nullptr;        // n x D double patterns
    uint64_t* membership[2] = {};      // n each
    uint64_t* centers = nullptr;       // K x D
    uint64_t* prev_centers = nullptr;  // K x D
    uint64_t* sum = nullptr;           // K x D
    uint64_t* count = nullptr;         // K
  };

  static double dbl(uint64_t bits) { return std::bit_cast<double>(bits); }
  static uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }
  static double dist2(const double* x, const double* c) {
    double s = 0;
    for (uint64_t j = 0; j < D; ++j) {
      const double d = x[j] - c[j];
      s += d * d;
    }
    return s;
  }
  // The nearest of the K centers (K x D), lowest index on a tie.
  static uint64_t nearest(const double* x, const double* centers) {
    uint64_t best = 0;
    double bd = dist2(x, centers);
    for (uint64_t k = 1; k < K; ++k) {
      const double d = dist2(x, centers + k * D);
      if (d < bd) bd = d, best = k;
    }
    return best;
  }
  // Whether center m is (to rounding) as near to x as any.
  static bool is_nearest(const double* x, const double* centers, uint64_t m) {
    if (m >= K) return false;
    const double dm = dist2(x, centers + m * D);
    for (uint64_t k = 0; k < K; ++k) {
      if (dist2(x, centers + k * D) * (1 + 1e-12) + 1e-12 < dm) return false;
    }
    return true;
  }
  void read_doubles(A& a, double* dst, const uint64_t* src, uint64_t n) { a.read(dst, src, n * 8); }
  void end_pass(A& a);
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  std::mutex mu_;  // the cursor orders every transaction
  ThreadCounts assigned_,
      passes_;  // points assigned and passes ended since setup()/attach()
  Root* root_ = nullptr;
  Arrays t_;
  uint64_t n_ = 0, base_assigned_ = 0, base_pass_ = 0;
};

template <class A>
void Kmeans<A>::setup() {
  A& a = acc_[0];
  n_ = std::max<uint64_t>(p_.scale, K);
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    t_.points = static_cast<uint64_t*>(a.alloc(n_ * D * 8));
    t_.membership[0] = static_cast<uint64_t*>(a.alloc(n_ * 8));
    t_.membership[1] = static_cast<uint64_t*>(a.alloc(n_ * 8));
    t_.centers = static_cast<uint64_t*>(a.alloc(K * D * 8));
    t_.prev_centers = static_cast<uint64_t*>(a.alloc(K * D * 8));
    t_.sum = static_cast<uint64_t*>(a.alloc(K * D * 8));
    t_.count = static_cast<uint64_t*>(a.alloc(K * 8));
    const Root r{0, n_, 0, 0, a.off(t_.points), {a.off(t_.membership[0]), a.off(t_.membership[1])},
                 a.off(t_.centers), a.off(t_.prev_centers), a.off(t_.sum), a.off(t_.count)};
    a.write(root_, &r, sizeof r);
    w.commit();
  }
  // Points scattered around K true centers in [0, 100)^D (noise +-5 per
  // coordinate); the first K points are the initial centers.
  Rng g(p_.seed);
  const auto unit = [&] { return static_cast<double>(g.next() >> 11) * 0x1.0p-53; };
  std::vector<double> truth(K * D);
  for (double& v : truth) v = 100 * unit();
  std::vector<double> pts(n_ * D);
  for (uint64_t i = 0; i < n_; ++i) {
    const uint64_t c = g.below(K);
    for (uint64_t j = 0; j < D; ++j) pts[i * D + j] = truth[c * D + j] + 5 * (unit() + unit() - 1);
  }
  write_words(a, t_.points, n_ * D, [&](uint64_t i) { return bits(pts[i]); });
  for (uint64_t* m : t_.membership) write_words(a, m, n_, [](uint64_t) { return kNone; });
  write_words(a, t_.centers, K * D, [&](uint64_t i) { return bits(pts[i]); });
  write_words(a, t_.prev_centers, K * D, [&](uint64_t i) { return bits(pts[i]); });
  write_words(a, t_.sum, K * D, [](uint64_t) { return bits(0.0); });
  write_words(a, t_.count, K, [](uint64_t) { return uint64_t{0}; });
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
  w.commit();
  adopt();
}

template <class A>
void Kmeans<A>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, "kmeans");
  n_ = a.load(&root_->n);
  t_.points = a.template ptr<uint64_t>(a.load(&root_->points));
  for (int b = 0; b < 2; ++b) t_.membership[b] = a.template ptr<uint64_t>(a.load(&root_->membership[b]));
  t_.centers = a.template ptr<uint64_t>(a.load(&root_->centers));
  t_.prev_centers = a.template ptr<uint64_t>(a.load(&root_->prev_centers));
  t_.sum = a.template ptr<uint64_t>(a.load(&root_->sum));
  t_.count = a.template ptr<uint64_t>(a.load(&root_->count));
  if (n_ < K || !t_.points || !t_.membership[0] || !t_.membership[1] || !t_.centers || !t_.prev_centers || !t_.sum ||
      !t_.count) {
    throw WorkloadError("kmeans: the root names no arrays");
  }
  adopt();
}

template <class A>
void Kmeans<A>::adopt() {
  A& a = acc_[0];
  base_pass_ = a.load(&root_->pass);
  base_assigned_ = base_pass_ * n_ + a.load(&root_->cursor);
  assigned_.clear();
  passes_.clear();
}

template <class A>
void Kmeans<A>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  std::vector<double> centers(K * D), x(D);
  for (uint64_t t = 0; t < transactions; ++t) {
    std::lock_guard<std::mutex> g(mu_);
    Wrap<A> w(a);
    const uint64_t cursor = a.load(&root_->cursor);
    if (cursor >= n_) {
      end_pass(a);
      w.commit();
      passes_.add(tid, 1);
      continue;
    }
    const uint64_t end = std::min(n_, cursor + kKmeansChunk);
    uint64_t* member = t_.membership[a.load(&root_->pass) % 2];
    read_doubles(a, centers.data(), t_.centers, K * D);
    for (uint64_t i = cursor; i < end; ++i) {
      read_doubles(a, x.data(), t_.points + i * D, D);
      const uint64_t c = nearest(x.data(), centers.data());
      a.store(&member[i], c);
      a.store(&t_.count[c], a.load(&t_.count[c]) + 1);
      uint64_t* s = a.modify(&t_.sum[c * D], D);  // the center's accumulator row, rewritten whole
      for (uint64_t j = 0; j < D; ++j) s[j] = bits(dbl(s[j]) + x[j]);
    }
    a.store(&root_->cursor, end);
    w.commit();
    assigned_.add(tid, static_cast<int64_t>(end - cursor));
  }
}

template <class A>
void Kmeans<A>::end_pass(A& a) {
  for (uint64_t k = 0; k < K; ++k) {
    const uint64_t cnt = a.load(&t_.count[k]);
    for (uint64_t j = 0; j < D; ++j) {
      const uint64_t at = k * D + j;
      const uint64_t c = a.load(&t_.centers[at]);
      a.store(&t_.prev_centers[at], c);
      if (cnt != 0) a.store(&t_.centers[at], bits(dbl(a.load(&t_.sum[at])) / static_cast<double>(cnt)));
      a.store(&t_.sum[at], bits(0.0));
    }
    a.store(&t_.count[k], uint64_t{0});
  }
  a.store(&root_->pass, a.load(&root_->pass) + 1);
  a.store(&root_->cursor, uint64_t{0});
}

template <class A>
std::string Kmeans<A>::verify() {
  A& a = acc_[0];
  const uint64_t pass = a.load(&root_->pass), cursor = a.load(&root_->cursor);
  if (cursor > n_) return mismatch("kmeans: cursor beyond the points", cursor, n_);
  std::vector<double> centers(K * D), prev(K * D), x(D), sum(K * D, 0.0), mag(K * D, 0.0);
  std::vector<uint64_t> count(K, 0);
  read_doubles(a, centers.data(), t_.centers, K * D);
  read_doubles(a, prev.data(), t_.prev_centers, K * D);
  const uint64_t* member = t_.membership[pass % 2];
  const uint64_t* before = t_.membership[(pass + 1) % 2];
  // The previous pass's groups (for the current centers).
  std::vector<double> psum(K * D, 0.0);
  std::vector<uint64_t> pcount(K, 0);
  for (uint64_t i = 0; i < n_; ++i) {
    read_doubles(a, x.data(), t_.points + i * D, D);
    if (i < cursor) {
      const uint64_t m = a.load(&member[i]);
      if (!is_nearest(x.data(), centers.data(), m)) {
        return "kmeans: point " + std::to_string(i) + " joined center " + std::to_string(m) +
               ", which is not its nearest";
      }
      ++count[m];
      for (uint64_t j = 0; j < D; ++j) sum[m * D + j] += x[j], mag[m * D + j] += std::fabs(x[j]);
    }
    if (pass > 0) {
      const uint64_t m = a.load(&before[i]);
      if (!is_nearest(x.data(), prev.data(), m)) {
        return "kmeans: point " + std::to_string(i) + " joined center " + std::to_string(m) +
               " last pass, which was not its nearest";
      }
      ++pcount[m];
      for (uint64_t j = 0; j < D; ++j) psum[m * D + j] += x[j];
    }
  }
  for (uint64_t k = 0; k < K; ++k) {
    const std::string ck = "kmeans: center " + std::to_string(k);
    if (a.load(&t_.count[k]) != count[k]) return mismatch(ck + ": count", a.load(&t_.count[k]), count[k]);
    for (uint64_t j = 0; j < D; ++j) {
      const uint64_t at = k * D + j;
      const double got = dbl(a.load(&t_.sum[at]));
      if (!(std::fabs(got - sum[at]) <= 1e-9 * (mag[at] + 1))) {
        return ck + ": sum " + std::to_string(j) + " is " + std::to_string(got) + ", the points add up to " +
               std::to_string(sum[at]);
      }
      if (pass > 0) {
        const double want = pcount[k] ? psum[at] / static_cast<double>(pcount[k]) : prev[at];
        if (!(std::fabs(centers[at] - want) <= 1e-9 * (std::fabs(want) + 1))) {
          return ck + ": coordinate " + std::to_string(j) + " is " + std::to_string(centers[at]) +
                 ", the mean of its last pass is " + std::to_string(want);
        }
      }
    }
  }
  const uint64_t assigned = pass * n_ + cursor, want = base_assigned_ + static_cast<uint64_t>(assigned_.sum());
  if (assigned != want) return mismatch("kmeans: points assigned", assigned, want);
  const uint64_t want_pass = base_pass_ + static_cast<uint64_t>(passes_.sum());
  if (pass != want_pass) return mismatch("kmeans: passes", pass, want_pass);
  return "";
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_KMEANS_H_
