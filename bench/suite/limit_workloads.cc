// limit_workloads.cc — every workload on the limit, on PMDK and on each
// engine (limit.h).
//
// Approach.  Per workload (one thread, the benchmark's scale, seed 42),
// setup() runs once into a pool image (nonatomic engine, untimed) that
// each engine's pool copies, as in the Themis and WCL experiments; the
// limit (PlainAccess on a PlainHeap) and PMDK (PmdkAccess on a libpmemobj
// pool in the pool directory) run the same setup() themselves, so every
// contender starts from the same structure (laid out by its own
// allocator).  The contenders then run the same transactions: a
// calibration runs 2, 4, 8, ... transactions on each until their sum
// takes a quarter of a round, which fixes the slice (the count that makes
// one slice of each contender about a round's time, and the limit's at
// least 2 ms); each of the rounds
// runs one slice of that count on every contender, in an order rotated
// per round, so no contender always runs first and each round's
// contenders are a second apart.  A slice runs on the calling thread,
// pinned to one CPU (the library's retirement threads on the other);
// an engine's slice lies between two sw_pool_quiesce calls (what
// retirement left is done untimed) and must have committed exactly its
// transactions.  Reported: the median time per transaction and, per
// engine, the median of the rounds' ratios to the limit's and to PMDK's
// time (min and max as the noise; also per CPU second).  Afterwards every
// contender's structure is verified: a wrong answer fails the experiment.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "limit.h"
#include "workloads/plain_access.h"
#include "workloads/runner.h"

namespace softwrap::bench::limit {
namespace {

namespace wl = softwrap::workloads;

// Rounds of one slice per contender.  A round's ratio swings by a factor
// of two and more on the shared 2-vCPU VM (another job's time slice lands
// in one contender's slice), so the median needs many: 21, as Table II's.
constexpr int kRounds = 21;
constexpr double kRoundSeconds = 0.6;  // one slice of every contender
// The limit's slice lasts at least this long (cq's transactions take tens
// of ns there: a slice of a millisecond would be at the mercy of one
// interrupt).
constexpr double kMinLimitSliceSeconds = 0.002;
// Workloads whose transactions mostly read: softwrap's bar is 1.5x the
// limit's time there.
const char* const kReadHeavy[] = {"vacation", "stmb7-s", "stmb7-m", "stmb7-b"};

// The engines' contenders: every engine, and under --cpu-cache the other
// forms of softwrap and undo (limit.h).
struct ApiSpec {
  EngineSpec engine;
  const char* label;
  const char* streams = nullptr;  // SOFTWRAP_CPU_CACHE_STREAMS while the pool opens
  const char* fences = nullptr;   // SOFTWRAP_CPU_CACHE_FENCES while the pool opens
};

std::vector<ApiSpec> api_specs() {
  std::vector<ApiSpec> v;
  for (const EngineSpec& e : kEngines) v.push_back({e, e.label});
  if (g_cpu_cache) {
    v.push_back({kEngines[0], "softwrap/nt", "non-temporal"});
    v.push_back({kEngines[2], "undo/nt", "non-temporal"});
    v.push_back({kEngines[2], "undo/fenced", nullptr, "keep"});
  }
  return v;
}

}  // namespace

bool g_cpu_cache = false;

Rate run_timed(wl::Workload& w, uint64_t n, const std::string& what) {
  wl::Timed t;
  try {
    t = run_here(w, n);
  } catch (const wl::WorkloadError& e) {
    fail(what + ": " + e.what());
  }
  const double x = static_cast<double>(t.transactions);
  return {x / t.seconds, t.cpu_seconds > 0 ? x / t.cpu_seconds : 0.0, t.transactions};
}

namespace {

// The limit: the workload on volatile memory.
class PlainContender final : public Contender {
 public:
  PlainContender(const wl::Info& info, const wl::Params& params) : Contender("limit"), what_(fmt("%s on the limit",
                                                                                               info.name)) {
    acc_.push_back(heap_.access());
    w_ = wl::make_workload(info.name, &acc_, params);
    try {
      w_->setup();
    } catch (const wl::WorkloadError& e) {
      fail(what_ + ": setup: " + e.what());
    }
  }
  Rate run(uint64_t n) override { return run_timed(*w_, n, what_); }
  void verify_and_close() override {
    const std::string why = w_->verify();
    if (!why.empty()) fail(what_ + ": " + why);
    w_.reset();
  }

 private:
  std::string what_;
  wl::PlainHeap heap_;  // outlives the workload and its accesses
  std::vector<wl::PlainAccess> acc_;
  std::unique_ptr<wl::Workload> w_;
};

// An engine on x86 through ApiAccess, on a copy of the setup image.
class ApiContender final : public Contender {
 public:
  ApiContender(const ApiSpec& e, const std::string& path, const wl::Info& info, const wl::Params& params)
      : Contender(e.label) {
    cell_.what = fmt("%s on %s (x86)", info.name, e.label);
    sw_config c = wl::workload_config(e.engine.kind, SW_MEDIUM_X86);
    // Room to grow: the rounds may run more transactions than the
    // workload's heap estimate was made for (vacation keeps every
    // reservation); a pool grows only when its heap is full.
    c.max_size = 4 * wl::pool_bytes(info, params);
    // The cpu-cache form's variables are read when the pool opens.
    if (e.streams) setenv("SOFTWRAP_CPU_CACHE_STREAMS", e.streams, 1);
    if (e.fences) setenv("SOFTWRAP_CPU_CACHE_FENCES", e.fences, 1);
    cell_.open(path, c, info, params);
    unsetenv("SOFTWRAP_CPU_CACHE_STREAMS");
    unsetenv("SOFTWRAP_CPU_CACHE_FENCES");
  }
  Rate run(uint64_t n) override { return slice_here(cell_, n, true); }
  void verify_and_close() override { cell_.close(); }
  const WorkloadCell* cell() const override { return &cell_; }

 private:
  WorkloadCell cell_;
};

struct Outputs {
  Csv cells, rounds;
};

double min_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// One workload on every contender.
void measure(Context& ctx, const wl::Info& info, Outputs* out) {
  wl::Params params;
  params.seed = 42;
  params.scale = ctx.quick() ? info.small_scale * 4 : info.default_scale;
  params = wl::resolve(info, params);
  params.threads = 1;
  const int rounds = ctx.quick() ? 2 : kRounds;
  const double round_secs = ctx.secs(kRoundSeconds, 0.02);

  ctx.step(fmt("%s: setup", info.name));
  std::vector<std::unique_ptr<TempPool>> files;
  const std::vector<ApiSpec> specs = api_specs();
  {
    TempPool image(pool_path(ctx, "image"));
    setup_image(image.path, info, params);
    for (const ApiSpec& e : specs) {
      std::string tag = e.label;
      std::replace(tag.begin(), tag.end(), '/', '-');
      files.push_back(std::make_unique<TempPool>(pool_path(ctx, tag)));
      copy_pool(image.path, files.back()->path);
    }
  }
  TempPool pmdk_file(pool_path(ctx, "pmdk"));
  unpin_threads();  // retirement threads start from the whole machine
  std::vector<std::unique_ptr<Contender>> cs;
  cs.push_back(std::make_unique<PlainContender>(info, params));
  const size_t limit = 0, pmdk = have_pmdk() ? 1 : 0;  // pmdk == 0: no PMDK contender
  if (pmdk) cs.push_back(make_pmdk_contender(pmdk_file.path, info, params));
  for (size_t e = 0; e < specs.size(); ++e) {
    cs.push_back(std::make_unique<ApiContender>(specs[e], files[e]->path, info, params));
  }
  const size_t n_cs = cs.size();
  pin_threads();

  // Calibration (and warm-up): the same counts on every contender.
  ctx.step(fmt("%s: calibration", info.name));
  uint64_t n = 2;
  double sum = 0, limit_secs = 0;
  for (;;) {
    sum = 0;
    for (size_t i = 0; i < n_cs; ++i) {
      const double secs = static_cast<double>(n) / cs[i]->run(n).wall;
      sum += secs;
      if (i == limit) limit_secs = secs;
    }
    if (sum >= round_secs / 4 || n >= (uint64_t{1} << 24)) break;
    n *= 2;
  }
  const uint64_t per_slice = std::max<uint64_t>(
      {1, static_cast<uint64_t>(static_cast<double>(n) * round_secs / sum),
       static_cast<uint64_t>(static_cast<double>(n) * ctx.secs(kMinLimitSliceSeconds, 0) / limit_secs)});

  std::vector<std::vector<double>> ns(n_cs), cpu_ns(n_cs);
  for (int r = 0; r < rounds; ++r) {
    ctx.step(fmt("%s: round %d of %d (%llu transactions per slice)", info.name, r + 1, rounds,
                 static_cast<unsigned long long>(per_slice)));
    for (size_t k = 0; k < n_cs; ++k) {
      const size_t i = (k + static_cast<size_t>(r)) % n_cs;
      const Rate x = cs[i]->run(per_slice);
      ns[i].push_back(1e9 / x.wall);
      cpu_ns[i].push_back(x.cpu > 0 ? 1e9 / x.cpu : 0.0);
    }
    for (size_t i = 0; i < n_cs; ++i) {
      out->rounds.add(info.name).add(cs[i]->label()).add(r + 1).add(ns[i].back()).add(cpu_ns[i].back());
      out->rounds.end_row();
    }
  }
  unpin_threads();
  ctx.step(fmt("%s: verify", info.name));
  for (auto& c : cs) c->verify_and_close();

  // Per contender: the rounds' ratios to the limit and to PMDK.
  auto ratios = [&](const std::vector<std::vector<double>>& t, size_t i, size_t base) {
    std::vector<double> v;
    for (int r = 0; r < rounds; ++r) v.push_back(t[i][r] / t[base][r]);
    return v;
  };
  auto find = [&](const char* label) {
    for (size_t i = 0; i < n_cs; ++i) {
      if (cs[i]->label() == label) return i;
    }
    return n_cs;
  };
  if (g_cpu_cache) {
    // Undo's ordering fences, where a transaction stores several words (at
    // least two undo records per transaction on average).  With them: the
    // form that needs them, non-temporal records each fenced before the
    // store it protects (undo/nt: undo as on an ADR platform, less the
    // flushes); without them: temporal records, TSO's order (undo).  And
    // the fences alone: temporal records with the fences kept (undo/fenced).
    const size_t u = find("undo"), nt = find("undo/nt"), f = find("undo/fenced");
    const WorkloadCell* uc = cs[u]->cell();
    const double per_tx = uc->tx ? static_cast<double>(uc->sum.fences_elided) / static_cast<double>(uc->tx) : 0;
    const double m = median(ratios(ns, nt, u)), mf = median(ratios(ns, f, u));
    ctx.note(fmt("%s undo ordering fences", info.name),
             fmt("%.1f elided per transaction; undo/nt %.2fx undo's time, undo/fenced %.2fx", per_tx, m, mf));
    if (per_tx >= 2) {
      ctx.check(m >= 1.3, fmt("%s: undo with its ordering fences (undo/nt) %.2fx the time of undo without them, "
                              "%.1f per transaction (bar: at least 1.3x)", info.name, m, per_tx));
    }
  }
  for (size_t i = 0; i < n_cs; ++i) {
    const std::vector<double> vl = ratios(ns, i, limit), vl_cpu = ratios(cpu_ns, i, limit);
    out->cells.add(info.name).add(cs[i]->label()).add(rounds).add(per_slice).add(median(ns[i])).add(min_of(ns[i]))
        .add(max_of(ns[i])).add(median(cpu_ns[i]));
    out->cells.add(median(vl)).add(min_of(vl)).add(max_of(vl)).add(median(vl_cpu));
    if (pmdk) {
      const std::vector<double> vp = ratios(ns, i, pmdk), vp_cpu = ratios(cpu_ns, i, pmdk);
      out->cells.add(median(vp)).add(min_of(vp)).add(max_of(vp)).add(median(vp_cpu));
    } else {
      out->cells.add("").add("").add("").add("");
    }
    out->cells.end_row();
    if (cs[i]->label() != "softwrap") continue;
    if (pmdk) {
      const double m = median(ratios(ns, i, pmdk));
      ctx.check(m < 1, fmt(g_cpu_cache ? "%s: softwrap %.2fx PMDK's time per transaction, both without flushes "
                                         "(bar: faster than PMDK)"
                                       : "%s: softwrap %.2fx PMDK's time per transaction (bar: faster than PMDK)",
                           info.name, m));
    }
    for (const char* rh : kReadHeavy) {
      if (g_cpu_cache || std::strcmp(rh, info.name) != 0) continue;  // the limit's own bar, checked there
      const double m = median(ratios(ns, i, limit));
      ctx.check(m <= 1.5, fmt("%s (read-heavy): softwrap %.2fx the limit's time per transaction (bar: 1.5x)",
                              info.name, m));
    }
  }
}

}  // namespace

std::string pool_path(const Context& ctx, const std::string& tag) {
  return ctx.opts().pool_dir + "/sw-limit-" + std::to_string(getpid()) + "-" + tag + ".pool";
}

int workload_steps(const Context& ctx) { return 3 + (ctx.quick() ? 2 : kRounds); }

void run_workloads(Context& ctx, const std::vector<const wl::Info*>& which) {
  Outputs out{
      Csv(ctx.file("limit.csv"),
          {"workload", "access", "rounds", "tx_per_slice", "ns_per_tx", "ns_per_tx_min", "ns_per_tx_max",
           "cpu_ns_per_tx", "vs_limit", "vs_limit_min", "vs_limit_max", "vs_limit_cpu", "vs_pmdk", "vs_pmdk_min",
           "vs_pmdk_max", "vs_pmdk_cpu"}),
      Csv(ctx.file("limit_rounds.csv"), {"workload", "access", "round", "ns_per_tx", "cpu_ns_per_tx"}),
  };
  ctx.note("contenders", std::string("limit (PlainAccess: malloc'd DRAM, plain loads and stores), ") +
                             (have_pmdk() ? (g_cpu_cache ? "pmdk (PmdkAccess: libpmemobj transactions, "
                                                           "PMEM_IS_PMEM_FORCE=1 PMEM_NO_FLUSH=1), "
                                                         : "pmdk (PmdkAccess: libpmemobj transactions, PMEM_IS_PMEM_FORCE=1), ")
                                          : "") +
                             "softwrap, softwrap-local, undo, undo-themis (the Themis paper's Ideal), nonatomic "
                             "(x86, ApiAccess)" +
                             (g_cpu_cache ? "; all in the x86 medium's cpu-cache form (SOFTWRAP_PERSISTENCE=cpu-cache, "
                                            "temporal streams, ordering fences elided), and softwrap/nt, undo/nt "
                                            "(non-temporal streams) and undo/fenced (ordering fences kept)"
                                          : ""));
  ctx.note("pmdk", have_pmdk() ? "measured" : std::string("skipped: ") + pmdk_missing_reason());
  ctx.note("workload rounds", fmt("%d rounds of one slice per contender, about %.2f s a round, order rotated per "
                                  "round; the same transaction count per slice on every contender",
                                  ctx.quick() ? 2 : kRounds, ctx.secs(kRoundSeconds, 0.02)));
  for (const wl::Info* info : which) measure(ctx, *info, &out);
}

}  // namespace softwrap::bench::limit
