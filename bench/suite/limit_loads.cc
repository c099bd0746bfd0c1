// limit_loads.cc — what a load through the API costs beside a plain load
// of the same word (limit.h): random 8-byte loads from an array that stays
// in the cache (8 MiB; L3 is 32 MiB here) and from one that misses it
// (512 MiB), and random stores, plain against sw_store64 (informational).
//
// Approach.  One pool image (nonatomic, untimed) holds three arrays of
// uint64 — the small and the big load arrays, filled with mix64(i), and a
// store region of 64 MiB that no load touches — and is copied to one pool
// per engine (softwrap, softwrap-local, undo, undo-themis, nonatomic; x86),
// all open at once.  Loads follow an xorshift64 index stream (13/7/17;
// the index is the random word masked to the array) and are summed, so
// they are not dead and do not depend on each other (misses overlap); the
// sums are the check: every load variant of a round must return what the
// plain loads returned.  Per array, each round runs, on every pool:
//   plain          n plain loads of the mapped words (sw_pool_base +
//                  offset), after sw_pool_quiesce: the baseline;
//   load           n sw_load64 outside wraps;
//   load_ro_wrap   n sw_load64 in read-only wraps of 1,000;
//   view, view_ro_wrap
//                  the same through a view (sw_view_load64; softwrap.h,
//                  "Views"): the check's inputs in registers;
//   plain_chase, load_chase
//                  n/5 dependent loads (each index from the value the
//                  previous load returned: a pointer chase, no overlap),
//                  plain and through sw_load64 outside wraps: what a load
//                  costs in latency rather than in issue slots;
// and on softwrap, where a wrap that stores makes its loads look up its
// own alias table first:
//   store_wrap_loads  wraps of 8 sw_store64 to random words of the store
//                     region, then 1,000 sw_load64;
//   view_store_wrap_loads  the same through a view;
//   store_wrap_only   the same wraps (same store stream) without the
//                     loads;
// the loads' own cost in such wraps is (store_wrap_loads - store_wrap_only)
// / loads (load_store_wrap).  Every variant of a round uses the same index
// stream; the cells of a round run in an order rotated per round; each
// cell lies between two quiesces (untimed), and before it an untimed pass
// of random loads of another stream warms the pool's array (see loads())
// and an untimed sweep reads every line of the small array (which is then
// in the cache: the cell measures cache-resident loads, not what the
// previous cell's alias lookups or a neighbour's job evicted) or, before
// a cell of the big
// array, of a 64 MiB DRAM buffer (which evicts the lines and page-table
// entries the previous cell of the same stream left), so every cell of a
// stream starts alike.  Stores: per pool, n plain stores to random words
// of the store region (after a quiesce) and n sw_store64 in wraps of 10
// (the engine's store path and commit); after the latter the region is
// checked against a replay of the stream, raw after a quiesce.
// Reported: ns per operation (median over rounds, per wall and per CPU
// second of the thread) and the median of the rounds' ratios to the plain
// variant of the same pool and round; the bars use the wall-time ratios.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "limit.h"
#include "workloads/runner.h"

namespace softwrap::bench::limit {
namespace {

namespace wl = softwrap::workloads;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kLoadsPerWrap = 1000;
constexpr uint64_t kStoresPerLoadWrap = 8;
constexpr uint64_t kStoresPerWrap = 10;
constexpr uint64_t kStoreSalt = 0x5A5A5A5A5A5A5A5Aull;  // sw_store64's values differ from the plain stores'
constexpr uint64_t kWarmSalt = 0x3C3C3C3C3C3C3C3Cull;   // the warm-up pass's stream differs from the timed one's
// Rounds: a round's ratio swings by a factor of two on the shared VM (a
// neighbour's job evicts the small array or takes the CPU inside a cell);
// the median of 21 moves by about 10 %.
constexpr int kRounds = 21;
constexpr uint64_t kRootMagic = 0x4C494D49544C4453ull;  // "LIMITLDS"

constexpr size_t kPools = std::size(kEngines);

struct Root {
  uint64_t magic, small, big, store;  // offsets
};

struct Sizes {
  uint64_t small, big, store;  // bytes, powers of two
};
Sizes sizes_of(const Context& ctx) {
  return ctx.quick() ? Sizes{8 * kMiB, 64 * kMiB, 8 * kMiB} : Sizes{8 * kMiB, 512 * kMiB, 64 * kMiB};
}

// The index stream: Marsaglia's xorshift64 (13, 7, 17); seed != 0.
struct Xorshift {
  uint64_t x;
  uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
};

// ------------------------------------------------------------ the kernels
// Out of line, so every variant's loop is compiled once, alike.

// The plain kernel loads each word with a relaxed atomic load (a plain
// mov, as sw_load64's inline path does) and then adds it.
__attribute__((noinline)) uint64_t plain_loads(const uint64_t* a, uint64_t mask, uint64_t seed, uint64_t n) {
  Xorshift s{seed};
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; ++i) sum += __atomic_load_n(a + (s.next() & mask), __ATOMIC_RELAXED);
  return sum;
}

// The two ways through the API a kernel loads a word: sw_load64 of the
// handle, and a view (softwrap.h, "Views"), made in the kernel (a local the
// compiler keeps in registers).
struct ApiLoad {
  explicit ApiLoad(sw_pool* pool) : p(pool) {}
  uint64_t operator()(const uint64_t* w) const { return sw_load64(p, w); }
  sw_pool* p;
};
struct ViewLoad {
  explicit ViewLoad(sw_pool* pool) : v(sw_view_of(pool)) {}
  uint64_t operator()(const uint64_t* w) const { return sw_view_load64(&v, w); }
  sw_view v;
};

template <class Load>
__attribute__((noinline)) uint64_t api_loads(sw_pool* p, const uint64_t* a, uint64_t mask, uint64_t seed, uint64_t n) {
  const Load load(p);
  Xorshift s{seed};
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; ++i) sum += load(a + (s.next() & mask));
  return sum;
}

// Dependent loads (a pointer chase): each load's index comes from the value
// the previous one returned, so no two misses overlap and a load costs its
// latency; the inline check's instructions then run while the miss is
// outstanding.  The array holds mix64 values, so the chase wanders the
// whole array.
__attribute__((noinline)) uint64_t plain_chase(const uint64_t* a, uint64_t mask, uint64_t seed, uint64_t n) {
  uint64_t x = seed, sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    x = a[(x ^ i) & mask];
    sum += x;
  }
  return sum;
}

__attribute__((noinline)) uint64_t api_chase(sw_pool* p, const uint64_t* a, uint64_t mask, uint64_t seed,
                                             uint64_t n) {
  uint64_t x = seed, sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    x = sw_load64(p, a + ((x ^ i) & mask));
    sum += x;
  }
  return sum;
}

template <class Load>
__attribute__((noinline)) uint64_t api_loads_ro_wraps(sw_pool* p, const uint64_t* a, uint64_t mask, uint64_t seed,
                                                      uint64_t n) {
  const Load load(p);
  Xorshift s{seed};
  uint64_t sum = 0;
  for (uint64_t w = 0; w < n / kLoadsPerWrap; ++w) {
    if (sw_wrap_open(p) != 0) fail_sw("sw_wrap_open");
    for (uint64_t i = 0; i < kLoadsPerWrap; ++i) sum += load(a + (s.next() & mask));
    if (sw_wrap_close(p) != 0) fail_sw("sw_wrap_close");
  }
  return sum;
}

// Wraps of kStoresPerLoadWrap stores to the store region, then
// `loads_per_wrap` loads (none: the stores alone).
template <class Load>
__attribute__((noinline)) uint64_t api_store_wraps(sw_pool* p, const uint64_t* a, uint64_t mask, uint64_t seed,
                                                   uint64_t wraps, uint64_t loads_per_wrap, uint64_t* st,
                                                   uint64_t smask, uint64_t sseed) {
  const Load load(p);
  Xorshift s{seed}, ss{sseed};
  uint64_t sum = 0;
  for (uint64_t w = 0; w < wraps; ++w) {
    if (sw_wrap_open(p) != 0) fail_sw("sw_wrap_open");
    for (uint64_t j = 0; j < kStoresPerLoadWrap; ++j) {
      const uint64_t x = ss.next();
      sw_store64(p, st + (x & smask), x);
    }
    for (uint64_t i = 0; i < loads_per_wrap; ++i) sum += load(a + (s.next() & mask));
    if (sw_wrap_close(p) != 0) fail_sw("sw_wrap_close");
  }
  return sum;
}

__attribute__((noinline)) void plain_stores(uint64_t* st, uint64_t smask, uint64_t seed, uint64_t n) {
  Xorshift s{seed};
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t x = s.next();
    st[x & smask] = x;
  }
}

__attribute__((noinline)) void api_stores(sw_pool* p, uint64_t* st, uint64_t smask, uint64_t seed, uint64_t n) {
  Xorshift s{seed};
  for (uint64_t w = 0; w < n / kStoresPerWrap; ++w) {
    if (sw_wrap_open(p) != 0) fail_sw("sw_wrap_open");
    for (uint64_t j = 0; j < kStoresPerWrap; ++j) {
      const uint64_t x = s.next();
      sw_store64(p, st + (x & smask), x ^ kStoreSalt);
    }
    if (sw_wrap_close(p) != 0) fail_sw("sw_wrap_close");
  }
}

// ------------------------------------------------------------- the pools

struct LoadPool {
  LoadPool() = default;
  LoadPool(const LoadPool&) = delete;
  LoadPool& operator=(const LoadPool&) = delete;
  ~LoadPool() {
    if (p) sw_pool_close(p);  // a failed run's; the file goes with `file`
  }
  const EngineSpec* e = nullptr;
  std::unique_ptr<TempPool> file;
  sw_pool* p = nullptr;
  uint64_t* small = nullptr;
  uint64_t* big = nullptr;
  uint64_t* store = nullptr;
};

void make_image(const std::string& path, const Sizes& z) {
  sw_config c = wl::workload_config(SW_ENGINE_NONATOMIC, SW_MEDIUM_X86);
  sw_pool* p = sw_pool_create(path.c_str(), z.small + z.big + z.store + 64 * kMiB, &c);
  if (!p) fail_sw("sw_pool_create " + path);
  auto* r = static_cast<Root*>(sw_pool_root(p, sizeof(Root)));
  if (!r) fail_sw("sw_pool_root");
  auto* small = static_cast<uint64_t*>(sw_pmalloc(p, z.small));
  auto* big = static_cast<uint64_t*>(sw_pmalloc(p, z.big));
  auto* store = static_cast<uint64_t*>(sw_pzalloc(p, z.store));
  if (!small || !big || !store) fail_sw("sw_pmalloc (the load arrays)");
  std::vector<uint64_t> chunk(kMiB / 8);
  for (auto [a, bytes] : {std::pair{small, z.small}, std::pair{big, z.big}}) {
    for (uint64_t i = 0; i < bytes / 8; i += chunk.size()) {
      for (uint64_t k = 0; k < chunk.size(); ++k) chunk[k] = wl::mix64(i + k + 1);
      if (sw_write(p, a + i, chunk.data(), kMiB) != 0) fail_sw("sw_write (the load arrays)");
    }
  }
  if (sw_wrap_open(p) != 0) fail_sw("sw_wrap_open");
  sw_store64(p, &r->small, sw_pool_offset(p, small));
  sw_store64(p, &r->big, sw_pool_offset(p, big));
  sw_store64(p, &r->store, sw_pool_offset(p, store));
  sw_store64(p, &r->magic, kRootMagic);
  if (sw_wrap_close(p) != 0) fail_sw("sw_wrap_close");
  if (sw_pool_close(p) != 0) fail_sw("sw_pool_close");
}

void open_pool(LoadPool* lp) {
  sw_config c = wl::workload_config(lp->e->kind, SW_MEDIUM_X86);
  lp->p = sw_pool_open(lp->file->path.c_str(), &c);
  if (!lp->p) fail_sw("sw_pool_open " + lp->file->path);
  auto* r = static_cast<Root*>(sw_pool_root(lp->p, 0));
  if (!r || sw_load64(lp->p, &r->magic) != kRootMagic) fail("the load pool's root is not ours");
  lp->small = static_cast<uint64_t*>(sw_pool_ptr(lp->p, sw_load64(lp->p, &r->small)));
  lp->big = static_cast<uint64_t*>(sw_pool_ptr(lp->p, sw_load64(lp->p, &r->big)));
  lp->store = static_cast<uint64_t*>(sw_pool_ptr(lp->p, sw_load64(lp->p, &r->store)));
  prefault(sw_pool_base(lp->p), sw_pool_size(lp->p));
}

void quiesce(const LoadPool& lp) {
  if (sw_pool_quiesce(lp.p) != 0) fail_sw(std::string("sw_pool_quiesce (") + lp.e->label + ")");
}

// Untimed: reads every cache line of [a, a + bytes).  Before a cell of the
// small array it brings the array into the cache; over a DRAM buffer
// twice the L3's size, before a cell of the big array, it evicts the lines
// and page-table entries the previous cell left.
volatile uint64_t g_sink;
void sweep(const uint64_t* a, uint64_t bytes) {
  uint64_t s = 0;
  for (uint64_t i = 0; i < bytes / 8; i += 8) s += a[i];
  g_sink = s;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Wall and CPU seconds of the calling thread since construction.
struct Stopwatch {
  Clock::time_point wall0 = Clock::now();
  double cpu0 = thread_cpu_seconds();
  std::pair<double, double> read() const {
    const double cpu = thread_cpu_seconds() - cpu0;
    return {std::chrono::duration<double>(Clock::now() - wall0).count(), cpu};
  }
};

// ---------------------------------------------------------- the variants

// The per-wrap variants (kStoreWrapLoads on) last.
enum Variant {
  kPlain,
  kLoad,
  kLoadRoWrap,
  kView,
  kViewRoWrap,
  kPlainChase,
  kLoadChase,
  kStoreWrapLoads,
  kViewStoreWrapLoads,
  kStoreWrapOnly,
  kVariants
};
const char* const kVariantName[kVariants] = {"plain",      "load",       "load_ro_wrap",     "view",
                                             "view_ro_wrap", "plain_chase", "load_chase",     "store_wrap_loads",
                                             "view_store_wrap_loads",      "store_wrap_only"};

struct Cell {
  size_t pool;
  Variant v;
};

// One variant's ns per operation, round by round, per wall and per CPU
// second.
struct PerOp {
  std::vector<double> wall, cpu;
  void add(std::pair<double, double> secs, uint64_t ops) {
    wall.push_back(1e9 * secs.first / static_cast<double>(ops));
    cpu.push_back(1e9 * secs.second / static_cast<double>(ops));
  }
};

// Round by round a / b.
std::vector<double> ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  for (size_t r = 0; r < a.size() && r < b.size(); ++r) out.push_back(a[r] / b[r]);
  return out;
}

struct Outputs {
  Csv loads, stores, rounds;
};

double min_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// A row of limit_loads.csv or limit_stores.csv; `plain` null for a
// variant that is not compared with plain loads (the wraps' own times).
void row(Csv& c, uint64_t mib, const char* engine, const char* variant, int rounds, uint64_t ops, const PerOp& x,
         const PerOp* plain) {
  c.add(mib).add(engine).add(variant).add(rounds).add(ops).add(median(x.wall)).add(min_of(x.wall))
      .add(max_of(x.wall)).add(median(x.cpu));
  if (plain) {
    const std::vector<double> r = ratios(x.wall, plain->wall);
    c.add(median(r)).add(min_of(r)).add(max_of(r)).add(median(ratios(x.cpu, plain->cpu)));
  } else {
    c.add("").add("").add("").add("");
  }
  c.end_row();
}

// The load variants on one array (small or big) of every pool.
void loads(Context& ctx, std::vector<LoadPool>& pools, bool big, const Sizes& z, const std::vector<uint64_t>& evict,
           Outputs* out) {
  const uint64_t bytes = big ? z.big : z.small;
  const uint64_t mib = bytes / kMiB, mask = bytes / 8 - 1, smask = z.store / 8 - 1;
  const uint64_t n = (ctx.quick() ? 100000 : (big ? 250000 : 500000)) / kLoadsPerWrap * kLoadsPerWrap;
  const uint64_t wraps = n / kLoadsPerWrap;
  const uint64_t nchase = n / 5;  // a dependent load takes the whole latency
  const auto chase = [](Variant v) { return v == kPlainChase || v == kLoadChase; };
  const int rounds = ctx.quick() ? 1 : kRounds;
  std::vector<Cell> cells;
  for (size_t i = 0; i < pools.size(); ++i) {
    for (Variant v : {kPlain, kLoad, kLoadRoWrap, kView, kViewRoWrap, kPlainChase, kLoadChase}) cells.push_back({i, v});
    if (pools[i].e->kind == SW_ENGINE_SOFTWRAP) {
      cells.push_back({i, kStoreWrapLoads});
      cells.push_back({i, kViewStoreWrapLoads});
      cells.push_back({i, kStoreWrapOnly});
    }
  }
  // t[pool][variant]: ns per load (per wrap for the storing wraps), round
  // by round.
  std::vector<std::vector<PerOp>> t(pools.size(), std::vector<PerOp>(kVariants));
  for (int r = 0; r < rounds; ++r) {
    ctx.step(fmt("loads, %llu MiB array, round %d of %d", static_cast<unsigned long long>(mib), r + 1, rounds));
    const uint64_t seed = wl::mix64(0x10AD + static_cast<uint64_t>(r) * 2 + (big ? 1 : 0)) | 1;
    const uint64_t sseed = wl::mix64(seed) | 1;
    uint64_t expect = 0, expect_chase = 0;
    bool have_expect = false, have_expect_chase = false;
    for (size_t k = 0; k < cells.size(); ++k) {
      const Cell& c = cells[(k + static_cast<size_t>(r)) % cells.size()];
      LoadPool& lp = pools[c.pool];
      const uint64_t* a = big ? lp.big : lp.small;
      quiesce(lp);
      // An untimed pass of random loads (another stream) over the pool's
      // array first: the first random pass over a pool's array after
      // cells on other pools ran 2x-3x slower here than every later pass
      // (8 MiB: 10 against 3.5-4 ns a load), the sweep below
      // notwithstanding; without it whichever variant came first on a
      // pool (plain, always, in the rotated order) paid for it.
      g_sink = plain_loads(a, mask, seed ^ kWarmSalt, n / 2);
      if (big) {
        sweep(evict.data(), evict.size() * 8);
      } else {
        sweep(a, bytes);
      }
      uint64_t sum = 0;
      const Stopwatch sw;
      switch (c.v) {
        case kPlain: sum = plain_loads(a, mask, seed, n); break;
        case kLoad: sum = api_loads<ApiLoad>(lp.p, a, mask, seed, n); break;
        case kLoadRoWrap: sum = api_loads_ro_wraps<ApiLoad>(lp.p, a, mask, seed, n); break;
        case kView: sum = api_loads<ViewLoad>(lp.p, a, mask, seed, n); break;
        case kViewRoWrap: sum = api_loads_ro_wraps<ViewLoad>(lp.p, a, mask, seed, n); break;
        case kPlainChase: sum = plain_chase(a, mask, seed, nchase); break;
        case kLoadChase: sum = api_chase(lp.p, a, mask, seed, nchase); break;
        case kStoreWrapLoads:
          sum = api_store_wraps<ApiLoad>(lp.p, a, mask, seed, wraps, kLoadsPerWrap, lp.store, smask, sseed);
          break;
        case kViewStoreWrapLoads:
          sum = api_store_wraps<ViewLoad>(lp.p, a, mask, seed, wraps, kLoadsPerWrap, lp.store, smask, sseed);
          break;
        case kStoreWrapOnly: api_store_wraps<ApiLoad>(lp.p, a, mask, seed, wraps, 0, lp.store, smask, sseed); break;
        default: break;
      }
      const auto secs = sw.read();
      quiesce(lp);
      t[c.pool][c.v].add(secs, c.v >= kStoreWrapLoads ? wraps : chase(c.v) ? nchase : n);
      if (c.v == kStoreWrapOnly) continue;
      // Every chase of the round sums alike, and every other load variant.
      const bool ch = chase(c.v);
      uint64_t& want = ch ? expect_chase : expect;
      bool& have = ch ? have_expect_chase : have_expect;
      if (!have) {
        want = sum;
        have = true;
      } else if (sum != want) {
        fail(fmt("%s, %llu MiB array, %s: the %s summed to %llu, the round's other %s to %llu", lp.e->label,
                 static_cast<unsigned long long>(mib), kVariantName[c.v], ch ? "chase" : "loads",
                 static_cast<unsigned long long>(sum), ch ? "chases" : "loads", static_cast<unsigned long long>(want)));
      }
    }
  }
  for (size_t i = 0; i < pools.size(); ++i) {
    const char* label = pools[i].e->label;
    const std::vector<PerOp>& x = t[i];
    for (int v = 0; v < kVariants; ++v) {
      if (x[v].wall.empty()) continue;
      const bool per_wrap = v >= kStoreWrapLoads;
      const PerOp* base = per_wrap ? nullptr : (v == kPlainChase || v == kLoadChase) ? &x[kPlainChase] : &x[kPlain];
      row(out->loads, mib, label, kVariantName[v], rounds,
          per_wrap ? wraps : (v == kPlainChase || v == kLoadChase) ? nchase : n, x[v], base);
      for (int r = 0; r < rounds; ++r) {
        out->rounds.add(mib).add(label).add(kVariantName[v]).add(r + 1).add(x[v].wall[r]).add(x[v].cpu[r]);
        out->rounds.end_row();
      }
    }
    // The loads' own cost in a wrap that also stores: what the wrap with
    // them takes more than the same wrap without, per load.
    PerOp derived, derived_view;
    const bool softwrap = !x[kStoreWrapLoads].wall.empty();
    if (softwrap) {
      const double per = static_cast<double>(kLoadsPerWrap);
      for (int r = 0; r < rounds; ++r) {
        derived.wall.push_back((x[kStoreWrapLoads].wall[r] - x[kStoreWrapOnly].wall[r]) / per);
        derived.cpu.push_back((x[kStoreWrapLoads].cpu[r] - x[kStoreWrapOnly].cpu[r]) / per);
        derived_view.wall.push_back((x[kViewStoreWrapLoads].wall[r] - x[kStoreWrapOnly].wall[r]) / per);
        derived_view.cpu.push_back((x[kViewStoreWrapLoads].cpu[r] - x[kStoreWrapOnly].cpu[r]) / per);
      }
      row(out->loads, mib, label, "load_store_wrap", rounds, n, derived, &x[kPlain]);
      row(out->loads, mib, label, "view_store_wrap", rounds, n, derived_view, &x[kPlain]);
    }
    const double bar = big ? 1.1 : 1.5;
    const auto check = [&](const char* how, const char* what, const PerOp& per_load) {
      const double m = median(ratios(per_load.wall, x[kPlain].wall));
      ctx.check(m <= bar, fmt("%llu MiB array, %s: %s %s %.2fx a plain load (%.1f vs %.1f ns; bar %.1fx)",
                              static_cast<unsigned long long>(mib), label, how, what, m, median(per_load.wall),
                              median(x[kPlain].wall), bar));
    };
    check("sw_load64", "outside wraps", x[kLoad]);
    check("sw_load64", "in read-only wraps", x[kLoadRoWrap]);
    if (softwrap) check("sw_load64", "in wraps that also store", derived);
    check("sw_view_load64", "outside wraps", x[kView]);
    check("sw_view_load64", "in read-only wraps", x[kViewRoWrap]);
    if (softwrap) check("sw_view_load64", "in wraps that also store", derived_view);
  }
}

// Random stores: plain against sw_store64 in wraps of kStoresPerWrap.
void stores(Context& ctx, std::vector<LoadPool>& pools, const Sizes& z, Outputs* out) {
  const uint64_t smask = z.store / 8 - 1, mib = z.store / kMiB;
  const uint64_t n = (ctx.quick() ? 20000 : 100000) / kStoresPerWrap * kStoresPerWrap;
  const int rounds = ctx.quick() ? 1 : kRounds;
  std::vector<PerOp> plain(pools.size()), api(pools.size());
  for (int r = 0; r < rounds; ++r) {
    ctx.step(fmt("stores, round %d of %d", r + 1, rounds));
    const uint64_t seed = wl::mix64(0x57025 + static_cast<uint64_t>(r)) | 1;
    for (size_t k = 0; k < 2 * pools.size(); ++k) {
      const size_t cell = (k + static_cast<size_t>(r)) % (2 * pools.size());
      LoadPool& lp = pools[cell / 2];
      const bool through_api = cell % 2 == 1;
      quiesce(lp);
      const Stopwatch sw;
      if (through_api) {
        api_stores(lp.p, lp.store, smask, seed, n);
      } else {
        plain_stores(lp.store, smask, seed, n);
      }
      const auto secs = sw.read();
      quiesce(lp);
      (through_api ? api : plain)[cell / 2].add(secs, n);
      if (!through_api) continue;
      // The region holds what the wraps stored last, at home.
      std::unordered_map<uint64_t, uint64_t> last;
      Xorshift s{seed};
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t x = s.next();
        last[x & smask] = x ^ kStoreSalt;
      }
      for (const auto& [w, v] : last) {
        if (lp.store[w] != v) {
          fail(fmt("%s: word %llu of the store region holds %llu after sw_store64 stored %llu", lp.e->label,
                   static_cast<unsigned long long>(w), static_cast<unsigned long long>(lp.store[w]),
                   static_cast<unsigned long long>(v)));
        }
      }
    }
  }
  for (size_t i = 0; i < pools.size(); ++i) {
    row(out->stores, mib, pools[i].e->label, "plain", rounds, n, plain[i], &plain[i]);
    row(out->stores, mib, pools[i].e->label, "store_in_wrap", rounds, n, api[i], &plain[i]);
  }
}

}  // namespace

void run_loads(Context& ctx) {
  const Sizes z = sizes_of(ctx);
  const std::vector<std::string> cols = {"array_mib", "engine", "variant", "rounds", "ops_per_slice", "ns_per_op",
                                         "ns_per_op_min", "ns_per_op_max", "cpu_ns_per_op", "vs_plain",
                                         "vs_plain_min", "vs_plain_max", "vs_plain_cpu"};
  Outputs out{
      Csv(ctx.file("limit_loads.csv"), cols),
      Csv(ctx.file("limit_stores.csv"), cols),
      Csv(ctx.file("limit_loads_rounds.csv"), {"array_mib", "engine", "variant", "round", "ns_per_op", "cpu_ns_per_op"}),
  };
  ctx.note("loads", fmt("arrays of %llu and %llu MiB, random 8-byte loads (xorshift64 index stream, summed), "
                        "%llu loads per read-only wrap, %llu stores + %llu loads per storing wrap (softwrap); "
                        "store region %llu MiB, %llu stores per wrap; %d rounds",
                        static_cast<unsigned long long>(z.small / kMiB), static_cast<unsigned long long>(z.big / kMiB),
                        static_cast<unsigned long long>(kLoadsPerWrap),
                        static_cast<unsigned long long>(kStoresPerLoadWrap),
                        static_cast<unsigned long long>(kLoadsPerWrap), static_cast<unsigned long long>(z.store / kMiB),
                        static_cast<unsigned long long>(kStoresPerWrap), ctx.quick() ? 1 : kRounds));
  ctx.step("loads: pools");
  std::vector<LoadPool> pools(kPools);
  {
    TempPool image(pool_path(ctx, "loads-image"));
    make_image(image.path, z);
    for (size_t i = 0; i < kPools; ++i) {
      pools[i].e = &kEngines[i];
      pools[i].file = std::make_unique<TempPool>(pool_path(ctx, std::string("loads-") + kEngines[i].label));
      copy_pool(image.path, pools[i].file->path);
    }
  }
  unpin_threads();
  for (LoadPool& lp : pools) open_pool(&lp);
  const std::vector<uint64_t> evict(64 * kMiB / 8, 1);  // twice the L3
  pin_threads();
  loads(ctx, pools, false, z, evict, &out);
  loads(ctx, pools, true, z, evict, &out);
  stores(ctx, pools, z, &out);
  unpin_threads();
  for (LoadPool& lp : pools) {
    if (sw_pool_close(lp.p) != 0) fail_sw("sw_pool_close");
    lp.p = nullptr;
  }
}

int loads_steps(const Context& ctx) { return 1 + (ctx.quick() ? 1 : kRounds) * 3; }

}  // namespace softwrap::bench::limit
