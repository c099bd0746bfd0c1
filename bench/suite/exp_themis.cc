// exp_themis.cc — the Themis paper in software (docs/themis.md): every
// workload of its Table II on `undo` and `undo-themis` (the paper's Ideal:
// undo logging without the non-temporal -> temporal fences), and where
// softwrap, softwrap-local and nonatomic stand on the same workloads; on
// x86 (real sfence) and scm-emu, with 1 and 2 threads.  Fig. 3 (Ideal's
// speedup over undo, the fraction of fences removed), Fig. 8 (stores per
// transaction), Fig. 10 (distance between removable fences) and Fig. 12
// (Ideal's speedup against the transaction size of SPS, PC and LL).
//
// Approach.  Per workload, setup() runs once into an image (nonatomic
// engine, untimed), which is copied to one pool file per engine; the image
// itself then serves the Fig. 8 profile (ObservedAccess, one thread).  For
// each medium and thread count the five pools are opened with their engine
// and medium and attach()ed.  After a warm-up slice each, `rounds` rounds
// run one slice of `slice` seconds per engine, engines in an order rotated
// per round; each slice starts and ends with sw_pool_quiesce (what
// retirement has left is done untimed, so it never runs into the next
// engine's slice) and its counters are read after it.  A round's ratio of
// an engine's transactions/s to undo's comes from slices a second apart;
// the reported speedup is the median of the rounds' ratios, with their
// minimum and maximum as the noise.  Each rate is also taken per second of
// the running threads' CPU time, which leaves out the time other jobs on a
// shared machine took the CPU (for single-threaded cells, whose engines
// never block, the fairer measure).  After each (medium, threads) cell
// every pool's workload is verified (a wrong structure fails the
// experiment), and undo-themis must have issued no non-temporal ->
// temporal fence at all (a check in meta.csv).  Single-threaded cells pin
// the workload thread to one vCPU and the retirement threads to the other
// (harness.h); two-threaded cells are not pinned.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "suite.h"
#include "workload_cell.h"
#include "workloads/registry.h"
#include "workloads/runner.h"

namespace softwrap::bench {
namespace {

namespace wl = softwrap::workloads;

struct EngineSpec {
  sw_engine_kind kind;
  const char* label;
};
// Undo first: the others' ratios are to it.
const EngineSpec kEngines[] = {{SW_ENGINE_UNDO, "undo"},
                               {SW_ENGINE_UNDO_THEMIS, "ideal"},
                               {SW_ENGINE_SOFTWRAP, "softwrap"},
                               {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local"},
                               {SW_ENGINE_NONATOMIC, "nonatomic"}};
constexpr size_t kNumEngines = sizeof kEngines / sizeof kEngines[0];
const sw_medium_kind kMedia[] = {SW_MEDIUM_X86, SW_MEDIUM_SCM_EMU};
constexpr int kRounds = 9;
constexpr double kSliceSeconds = 0.12;
constexpr int kSweepRounds = 5;  // Fig. 12: undo and Ideal only
constexpr double kSweepSliceSeconds = 0.1;

std::string pool_path(const Context& ctx, const std::string& tag) {
  return ctx.opts().pool_dir + "/sw-themis-" + std::to_string(getpid()) + "-" + tag + ".pool";
}

// One engine's pool with its workload attached.
struct Contender : WorkloadCell {
  const EngineSpec* e = nullptr;
  std::vector<double> tps, ratio;          // per round; ratio to undo's
  std::vector<double> cpu_tps, cpu_ratio;  // the same per second of the threads' CPU time
};

// Opens e's pool file on medium m and attaches the workload (p.threads
// accesses).
void open_contender(Contender* c, const EngineSpec* e, const std::string& path, sw_medium_kind m,
                    const wl::Info& info, const wl::Params& p) {
  c->e = e;
  c->what = fmt("%s on %s (%s)", info.name, e->label, medium_str(m));
  sw_config cfg = wl::workload_config(e->kind, m);
  cfg.flags |= SW_CONFIG_NO_WCL;  // the Themis paper's undo logging: every store logged, whatever the medium
  c->open(path, cfg, info, p);
}

struct Outputs {
  Csv cells, rounds, fig3, fig8, fig10, fig12;
  bool themis_ok = true;  // no NT->T fence from undo-themis anywhere
  std::vector<double> x86_ideal_speedup, x86_ideal_speedup_cpu, x86_removed;  // 1 thread, per workload
};

double per_tx(uint64_t n, uint64_t tx) { return tx ? static_cast<double>(n) / static_cast<double>(tx) : 0.0; }

// One (workload, medium, threads) cell over the engines' pool files.
void run_cell(Context& ctx, const wl::Info& info, const wl::Params& base, sw_medium_kind m, uint32_t threads,
              const std::vector<std::unique_ptr<TempPool>>& files, Outputs* out) {
  const int rounds = ctx.quick() ? 1 : kRounds;
  const double secs = ctx.secs(kSliceSeconds, 0.01);
  wl::Params p = base;
  p.threads = threads;
  std::vector<Contender> cs(kNumEngines);
  for (size_t i = 0; i < kNumEngines; ++i) open_contender(&cs[i], &kEngines[i], files[i]->path, m, info, p);
  if (threads == 1) {
    pin_threads();
  } else {
    unpin_threads();
  }
  for (Contender& c : cs) slice(c, secs / 2, false);  // warm-up: caches, tables, the device queue
  for (int r = 0; r < rounds; ++r) {
    std::vector<Rate> rate(kNumEngines);
    for (size_t k = 0; k < kNumEngines; ++k) {
      const size_t i = (k + static_cast<size_t>(r)) % kNumEngines;
      rate[i] = slice(cs[i], secs, true);
    }
    for (size_t i = 0; i < kNumEngines; ++i) {
      cs[i].tps.push_back(rate[i].wall);
      cs[i].ratio.push_back(rate[i].wall / rate[0].wall);
      cs[i].cpu_tps.push_back(rate[i].cpu);
      cs[i].cpu_ratio.push_back(rate[i].cpu / rate[0].cpu);
      out->rounds.add(info.name).add(medium_str(m)).add(threads).add(cs[i].e->label).add(r).add(rate[i].wall)
          .add(rate[i].cpu);
      out->rounds.end_row();
    }
  }
  unpin_threads();
  for (Contender& c : cs) c.close();
  const Contender& undo = cs[0];
  const Contender& ideal = cs[1];
  if (ideal.sum.fences_log != 0) out->themis_ok = false;
  for (const Contender& c : cs) {
    const sw_stats& s = c.sum;
    auto mm = std::minmax_element(c.ratio.begin(), c.ratio.end());
    out->cells.add(info.name).add(medium_str(m)).add(threads).add(c.e->label).add(rounds).add(c.tx);
    out->cells.add(median(c.tps)).add(*std::min_element(c.tps.begin(), c.tps.end()))
        .add(*std::max_element(c.tps.begin(), c.tps.end()));
    out->cells.add(median(c.ratio)).add(*mm.first).add(*mm.second);
    const auto cm = std::minmax_element(c.cpu_ratio.begin(), c.cpu_ratio.end());
    out->cells.add(median(c.cpu_tps)).add(median(c.cpu_ratio)).add(*cm.first).add(*cm.second);
    out->cells.add(per_tx(s.fences, c.tx)).add(per_tx(s.fences_log, c.tx))
        .add(per_tx(s.fences_data + s.fences_retire, c.tx)).add(per_tx(s.fences_commit, c.tx))
        .add(per_tx(s.fences_other, c.tx)).add(per_tx(s.fences_elided, c.tx));
    out->cells.add(per_tx(s.streamed_lines, c.tx)).add(per_tx(s.flushes, c.tx)).add(per_tx(s.log_bytes, c.tx))
        .add(per_tx(s.aborts, c.tx));
    out->cells.end_row();
  }
  const double removed = undo.sum.fences ? static_cast<double>(undo.sum.fences_log) / undo.sum.fences : 0.0;
  out->fig3.add(info.name).add(medium_str(m)).add(threads).add(median(ideal.ratio))
      .add(*std::min_element(ideal.ratio.begin(), ideal.ratio.end()))
      .add(*std::max_element(ideal.ratio.begin(), ideal.ratio.end())).add(removed)
      .add(per_tx(undo.sum.fences, undo.tx)).add(per_tx(undo.sum.fences_log, undo.tx))
      .add(per_tx(ideal.sum.fences, ideal.tx)).add(per_tx(ideal.sum.fences_elided, ideal.tx))
      .add(median(cs[2].ratio)).add(median(cs[3].ratio)).add(median(cs[4].ratio))
      .add(median(ideal.cpu_ratio)).add(*std::min_element(ideal.cpu_ratio.begin(), ideal.cpu_ratio.end()))
      .add(*std::max_element(ideal.cpu_ratio.begin(), ideal.cpu_ratio.end()));
  out->fig3.end_row();
  if (m == SW_MEDIUM_X86 && threads == 1) {
    out->x86_ideal_speedup.push_back(median(ideal.ratio));
    out->x86_ideal_speedup_cpu.push_back(median(ideal.cpu_ratio));
    out->x86_removed.push_back(removed);
    // Fig. 10's distances in events count the loads between fences, and an
    // inline load that reads home is counted only where every load is
    // (SW_CONFIG_COUNT_LOADS, which makes each a call of the library): so
    // the event distances come from one more, untimed undo slice that
    // counts them, the cycle distances from the timed ones.
    Contender counted;
    sw_config cc = wl::workload_config(SW_ENGINE_UNDO, m);
    cc.flags |= SW_CONFIG_COUNT_LOADS | SW_CONFIG_NO_WCL;
    counted.e = &kEngines[0];
    counted.what = fmt("%s on undo, loads counted (%s)", info.name, medium_str(m));
    counted.open(files[0]->path, cc, info, p);
    slice(counted, secs, true);
    counted.close();
    for (unsigned b = 0; b < SW_GAP_BUCKETS; ++b) {
      if (undo.sum.removable_gap_cycles[b] == 0 && counted.sum.removable_gap_events[b] == 0) continue;
      out->fig10.add(info.name).add(b).add(sw_gap_bucket_low(b))
          .add(b + 1 < SW_GAP_BUCKETS ? sw_gap_bucket_low(b + 1) : ~uint64_t{0})
          .add(undo.sum.removable_gap_cycles[b]).add(counted.sum.removable_gap_events[b]);
      out->fig10.end_row();
    }
  }
}

// Fig. 8: the stores of `n` transactions of one thread on the image.
void profile(Context& ctx, const wl::Info& info, const wl::Params& base, const std::string& path, Outputs* out) {
  wl::StoreHistogram h;
  observe(path, info, base, ctx.quick() ? 200 : 5000, &h);
  for (const auto& [stores, n] : h.counts()) {
    out->fig8.add(info.name).add(stores).add(n);
    out->fig8.end_row();
  }
  ctx.note(fmt("stores per transaction: %s", info.name),
           fmt("mean %.1f, median %llu, p90 %llu, max %llu over %llu transactions (%llu rolled back)", h.mean(),
               static_cast<unsigned long long>(h.percentile(0.5)), static_cast<unsigned long long>(h.percentile(0.9)),
               static_cast<unsigned long long>(h.percentile(1.0)), static_cast<unsigned long long>(h.transactions()),
               static_cast<unsigned long long>(h.aborted())));
}

// Fig. 12: Ideal over undo as the transaction grows, for the workloads
// with a transaction-size parameter (one thread; undo's and Ideal's pools).
void sweep(Context& ctx, const wl::Info& info, const wl::Params& base,
           const std::vector<std::unique_ptr<TempPool>>& files, Outputs* out) {
  const std::vector<uint32_t> sizes =
      ctx.quick() ? std::vector<uint32_t>{1, 8} : std::vector<uint32_t>{1, 2, 4, 8, 16, 32, 64};
  const int rounds = ctx.quick() ? 1 : kSweepRounds;
  const double secs = ctx.secs(kSweepSliceSeconds, 0.01);
  for (sw_medium_kind m : kMedia) {
    ctx.step(fmt("%s: transaction sizes, %s", info.name, medium_str(m)));
    for (uint32_t size : sizes) {
      wl::Params p = base;
      p.threads = 1;
      p.tx_size = size;
      Contender cs[2];
      for (size_t i = 0; i < 2; ++i) open_contender(&cs[i], &kEngines[i], files[i]->path, m, info, p);
      pin_threads();
      for (Contender& c : cs) slice(c, secs / 2, false);
      std::vector<double> ratio, cpu_ratio;
      for (int r = 0; r < rounds; ++r) {
        Rate rate[2];
        for (size_t k = 0; k < 2; ++k) {
          const size_t i = (k + static_cast<size_t>(r)) % 2;
          rate[i] = slice(cs[i], secs, true);
        }
        ratio.push_back(rate[1].wall / rate[0].wall);
        cpu_ratio.push_back(rate[1].cpu / rate[0].cpu);
      }
      unpin_threads();
      for (Contender& c : cs) c.close();
      out->fig12.add(info.name).add(medium_str(m)).add(size).add(per_tx(cs[0].sum.fences_log, cs[0].tx))
          .add(median(ratio)).add(*std::min_element(ratio.begin(), ratio.end()))
          .add(*std::max_element(ratio.begin(), ratio.end())).add(median(cpu_ratio))
          .add(*std::min_element(cpu_ratio.begin(), cpu_ratio.end()))
          .add(*std::max_element(cpu_ratio.begin(), cpu_ratio.end()));
      out->fig12.end_row();
    }
  }
}

}  // namespace

void run_themis(Context& ctx) {
  Outputs out{
      Csv(ctx.file("themis.csv"),
          {"workload", "medium", "threads", "engine", "rounds", "transactions", "tps_median", "tps_min", "tps_max",
           "vs_undo_median", "vs_undo_min", "vs_undo_max", "cpu_tps_median", "vs_undo_cpu_median",
           "vs_undo_cpu_min", "vs_undo_cpu_max", "fences_per_tx", "nt_t_per_tx", "t_nt_per_tx",
           "commit_per_tx", "other_per_tx", "elided_per_tx", "streamed_per_tx", "flushes_per_tx", "log_bytes_per_tx",
           "aborts_per_tx"}),
      Csv(ctx.file("themis_rounds.csv"), {"workload", "medium", "threads", "engine", "round", "tps", "cpu_tps"}),
      Csv(ctx.file("themis_fig3.csv"),
          {"workload", "medium", "threads", "ideal_speedup", "ideal_speedup_min", "ideal_speedup_max",
           "removed_fraction", "undo_fences_per_tx", "undo_nt_t_per_tx", "ideal_fences_per_tx",
           "ideal_elided_per_tx", "softwrap_vs_undo", "softwrap_local_vs_undo", "nonatomic_vs_undo",
           "ideal_speedup_cpu", "ideal_speedup_cpu_min", "ideal_speedup_cpu_max"}),
      Csv(ctx.file("themis_fig8.csv"), {"workload", "stores", "transactions"}),
      Csv(ctx.file("themis_fig10.csv"), {"workload", "bucket", "low", "high", "cycles", "events"}),
      Csv(ctx.file("themis_fig12.csv"), {"workload", "medium", "tx_size", "undo_nt_t_per_tx", "ideal_speedup",
                                         "ideal_speedup_min", "ideal_speedup_max", "ideal_speedup_cpu",
                                         "ideal_speedup_cpu_min", "ideal_speedup_cpu_max"}),
      true,
      {},
      {},
      {},
  };
  // SOFTWRAP_THEMIS_WORKLOADS=sps,pc runs some (the CSV files then hold only those).
  std::vector<const wl::Info*> all;
  if (const char* only = std::getenv("SOFTWRAP_THEMIS_WORKLOADS"); only && *only) {
    std::string list = only;
    for (size_t at = 0; at <= list.size();) {
      const size_t end = std::min(list.find(',', at), list.size());
      const std::string name = list.substr(at, end - at);
      const wl::Info* info = wl::find_workload(name);
      if (!info) fail("SOFTWRAP_THEMIS_WORKLOADS: unknown workload '" + name + "' (" + wl::workload_names() + ")");
      all.push_back(info);
      at = end + 1;
    }
  } else {
    all = wl::themis_workloads();
  }
  int steps = 0;
  for (const wl::Info* info : all) steps += info->tx_size_means ? 7 : 5;
  ctx.set_total(steps);
  ctx.note("engines", "undo, ideal (= undo-themis with SW_CONFIG_THEMIS_IDEAL), softwrap, softwrap-local, nonatomic");
  ctx.note("slices", fmt("%d rounds of %.2f s per engine, engine order rotated per round", ctx.quick() ? 1 : kRounds,
                         ctx.secs(kSliceSeconds, 0.01)));
  for (const wl::Info* info : all) {
    wl::Params base;
    base.seed = 42;
    base.scale = ctx.quick() ? info->small_scale * 4 : info->default_scale;
    base = wl::resolve(*info, base);
    base.threads = 2;  // the largest count the pools serve
    ctx.step(fmt("%s: setup", info->name));
    TempPool image(pool_path(ctx, "image"));
    setup_image(image.path, *info, base);
    std::vector<std::unique_ptr<TempPool>> files;
    for (const EngineSpec& e : kEngines) {
      files.push_back(std::make_unique<TempPool>(pool_path(ctx, e.label)));
      copy_pool(image.path, files.back()->path);
    }
    profile(ctx, *info, base, image.path, &out);
    for (sw_medium_kind m : kMedia) {
      for (uint32_t threads : {1u, 2u}) {
        ctx.step(fmt("%s: %s, %u thread%s", info->name, medium_str(m), threads, threads > 1 ? "s" : ""));
        run_cell(ctx, *info, base, m, threads, files, &out);
      }
    }
    if (info->tx_size_means) sweep(ctx, *info, base, files, &out);
  }
  double sum = 0, sum_cpu = 0, removed = 0;
  for (double s : out.x86_ideal_speedup) sum += s;
  for (double s : out.x86_ideal_speedup_cpu) sum_cpu += s;
  for (double r : out.x86_removed) removed += r;
  const double n = static_cast<double>(out.x86_ideal_speedup.size());
  ctx.note("x86 1 thread: average Ideal speedup over undo", fmt("%.3f (paper, Fig. 3: 1.67)", sum / n));
  ctx.note("x86 1 thread: average Ideal speedup over undo, CPU time", fmt("%.3f", sum_cpu / n));
  ctx.note("x86 1 thread: average fraction of fences removed", fmt("%.1f %% (paper: 91.7 %%)", 100 * removed / n));
  ctx.check(out.themis_ok, "undo-themis issued no non-temporal->temporal fence in any cell");
}

}  // namespace softwrap::bench
