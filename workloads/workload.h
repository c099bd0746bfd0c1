// workload.h — what every workload is and what they share.
//
// Approach.  A workload is a class template W<A> over an access type
// (access.h) with the members
//   W(std::vector<A>* access, const Params& p)   no pool access yet
//   static const Info& info()                    name, description, defaults
//   void setup()           builds the initial structure in the pool, in
//                          wraps of bounded size (untimed)
//   void attach()          adopts the structure a setup() left in the pool
//                          (a reopened pool, a crash image), read from the
//                          pool's root alone
//   void run(tid, n)       n transactions of thread tid, each one wrap;
//                          threads share the structure under the
//                          workload's own DRAM locks, and every wrap closes
//                          before its locks are released
//   std::string verify()   "" or what is wrong with the structure: its
//                          invariants, read from the pool, plus what this
//                          object counted its transactions doing since
//                          setup()/attach()
//   void damage()          breaks one invariant on purpose (in a wrap), so
//                          a test can see verify() notice
// Thread tid uses (*access)[tid]; setup, attach, verify and damage use
// (*access)[0].  Every random choice comes from a per-thread Rng seeded
// from Params::seed and the thread id, so a run is a deterministic stream
// of transactions (per thread).  Erased<W> gives the template the virtual
// interface Workload, for registries and harnesses.
#ifndef SOFTWRAP_WORKLOADS_WORKLOAD_H_
#define SOFTWRAP_WORKLOADS_WORKLOAD_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "access.h"

namespace softwrap::workloads {

struct Params {
  uint32_t threads = 1;  // threads that will call run() (1..kMaxThreads)
  uint64_t seed = 1;
  uint32_t tx_size = 0;  // 0: Info::default_tx_size (workloads with Info::tx_size_means)
  uint64_t scale = 0;    // 0: Info::default_scale
};

inline constexpr uint32_t kMaxThreads = 64;
// Walks that count a structure's entries stop here, so that a corrupt
// (cyclic) structure cannot hang attach(); verify() says what is wrong.
inline constexpr uint64_t kWalkLimit = uint64_t{1} << 32;

struct Info {
  const char* name;   // registry key, lower case ("cq")
  const char* label;  // as the paper names it ("CQ")
  const char* paper;  // where it comes from ("Themis, Table II")
  const char* what;   // one line: what a transaction does
  // What Params::tx_size counts, or nullptr if the workload has no
  // transaction-size parameter (its transactions have their natural size).
  const char* tx_size_means;
  uint32_t default_tx_size;
  const char* scale_means;  // what Params::scale counts
  uint64_t default_scale;   // the benchmark's size
  uint64_t small_scale;     // tests and the crash simulator
  // Heap bytes the structure needs at this scale (for sizing pools).
  uint64_t (*heap_bytes)(const Params& p);
};

// Params with the workload's defaults filled in.
inline Params resolve(const Info& info, Params p) {
  if (p.scale == 0) p.scale = info.default_scale;
  if (p.tx_size == 0) p.tx_size = info.tx_size_means ? info.default_tx_size : 1;
  if (p.threads == 0) p.threads = 1;
  return p;
}

class Workload {
 public:
  virtual ~Workload() = default;
  virtual const Info& info() const = 0;
  virtual const Params& params() const = 0;
  virtual void setup() = 0;
  virtual void attach() = 0;
  virtual void run(uint32_t tid, uint64_t transactions) = 0;
  virtual std::string verify() = 0;
  virtual void damage() = 0;
};

template <class W>
class Erased final : public Workload {
 public:
  template <class A>
  Erased(std::vector<A>* access, const Params& p) : w_(access, p) {}
  const Info& info() const override { return W::info(); }
  const Params& params() const override { return w_.params(); }
  void setup() override { w_.setup(); }
  void attach() override { w_.attach(); }
  void run(uint32_t tid, uint64_t n) override { w_.run(tid, n); }
  std::string verify() override { return w_.verify(); }
  void damage() override { w_.damage(); }

 private:
  W w_;
};

// splitmix64: deterministic, a few ns per number.
class Rng {
 public:
  explicit Rng(uint64_t seed = 1) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool percent(unsigned p) { return below(100) < p; }

 private:
  uint64_t s_;
};

// A bijective 64-bit mix (keys spread over all bits).
inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Per-thread generators of one workload object: thread t's stream depends
// on (seed, t) only.
inline std::vector<Rng> thread_rngs(const Params& p) {
  std::vector<Rng> r;
  for (uint32_t t = 0; t < p.threads; ++t) r.emplace_back(mix64(p.seed * 0x9E3779B97F4A7C15ull + t + 1));
  return r;
}

// Striped DRAM locks.  A Guard takes the stripes of a set of items in
// ascending order (no deadlock between transactions that lock several).
class LockTable {
 public:
  explicit LockTable(size_t stripes) : mu_(std::max<size_t>(stripes, 1)) {}
  size_t stripe(uint64_t item) const { return item % mu_.size(); }

  // Holds the stripes of the items in `items` until destroyed.  `scratch`
  // is the caller's (reused, so a transaction allocates nothing).
  class Guard {
   public:
    Guard(LockTable& t, const std::vector<uint64_t>& items, std::vector<size_t>& scratch) : t_(t), held_(scratch) {
      held_.clear();
      for (uint64_t i : items) held_.push_back(t.stripe(i));
      std::sort(held_.begin(), held_.end());
      held_.erase(std::unique(held_.begin(), held_.end()), held_.end());
      for (size_t s : held_) t_.mu_[s].lock();
    }
    ~Guard() {
      for (size_t i = held_.size(); i-- > 0;) t_.mu_[held_[i]].unlock();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    LockTable& t_;
    std::vector<size_t>& held_;
  };
  // One item's stripe.
  std::mutex& of(uint64_t item) { return mu_[stripe(item)]; }

 private:
  std::vector<std::mutex> mu_;
};

// A count that threads change and verify() reads (net inserts, updates):
// one cache line per thread, no sharing on the hot path.
class ThreadCounts {
 public:
  explicit ThreadCounts(uint32_t threads) : v_(std::max<uint32_t>(threads, 1)) {}
  void add(uint32_t tid, int64_t d) { v_[tid].n.fetch_add(d, std::memory_order_relaxed); }
  int64_t sum() const {
    int64_t s = 0;
    for (const Slot& x : v_) s += x.n.load(std::memory_order_relaxed);
    return s;
  }
  void clear() {
    for (Slot& x : v_) x.n.store(0, std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Slot {
    std::atomic<int64_t> n{0};
  };
  std::vector<Slot> v_;
};

// Calls f(i) for i in [0, n), `per_wrap` calls to a wrap (setup of large
// structures in wraps of bounded log size).
template <class A, class F>
void in_wraps(A& a, uint64_t n, uint64_t per_wrap, F&& f) {
  for (uint64_t i = 0; i < n;) {
    Wrap<A> w(a);
    for (uint64_t end = std::min(n, i + per_wrap); i < end; ++i) f(i);
    w.commit();
  }
}

// Writes value(i) to dst[i] for i in [0, n), 512 words to a wrap (setup
// of arrays: every byte a new object will be read back as).
template <class A, class F>
void write_words(A& a, uint64_t* dst, uint64_t n, F&& value) {
  constexpr uint64_t kChunk = 512;
  std::vector<uint64_t> chunk;
  for (uint64_t i = 0; i < n; i += kChunk) {
    chunk.resize(std::min(kChunk, n - i));
    for (uint64_t k = 0; k < chunk.size(); ++k) chunk[k] = value(i + k);
    Wrap<A> w(a);
    a.write(dst + i, chunk.data(), chunk.size() * 8);
    w.commit();
  }
}

// The root object of a workload starts with its magic, so attach() can
// refuse a pool that holds something else.
template <class A, class Root>
Root* find_root(A& a, uint64_t magic, const char* name) {
  auto* r = static_cast<Root*>(a.root(sizeof(Root)));
  if (a.load(&r->magic) != magic) {
    throw WorkloadError(std::string("the pool holds no ") + name + " workload (its root has another magic)");
  }
  return r;
}

// "what: got X, expected Y" for verify() messages.
std::string mismatch(const std::string& what, uint64_t got, uint64_t expected);

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_WORKLOAD_H_
