// exp_themis_sim.cc — the Themis paper's hardware evaluation (section V:
// Figs. 9, 11, 12, section V-E) on the trace-driven model of src/themis,
// with the persist order of every run checked by the crash simulator's
// persistency model.
//
// Approach: each of the paper's nine workloads (workloads/) runs
// single-threaded on the trace medium twice, under `undo` and
// `undo-themis`, with loads and work recorded; the two traces must be the
// same program but for the removable fences, and both get, per event, the
// smaller of the two measured works (share_work), so every design runs on
// identical work.  Baseline runs the undo trace, Themis and Ideal (and the
// broken WBB) the undo-themis one, on the 4-core machine of Table I with a
// warm LLC (the untraced setup built the structure), counting time from 10 %
// into the trace.  Besides the default machine, every workload also runs
// with a WCB that holds partial lines for combining (1 µs; Ideal's
// violations), with a slow non-temporal path (100 ns; the broken WBB), with
// tail pointers of 4/8/10 bits (section V-E), an ACK of 5 and 10 ns and
// the measured work scaled by 1/2 and 1/4 (sensitivities that explain the
// differences from the paper).  Fig. 12 records SPS, PC and LL at
// transaction sizes 1..64.  Correctness is not a claim: a Baseline or
// Themis violation, a line persisted backwards, a broken WBB never caught
// or a constructed case that does not behave fails the experiment.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "suite.h"
#include "themis/cases.h"
#include "themis/machine.h"
#include "themis/persist_check.h"
#include "themis/storage.h"
#include "themis/workload_trace.h"
#include "workloads/registry.h"

namespace softwrap::bench {
namespace {

using themis::Config;
using themis::mc_storage;
using themis::StoragePart;
using themis::themis_storage;
using themis::Design;
using crashsim::Persistency;

constexpr Design kDesigns[] = {Design::kBaseline, Design::kThemis,    Design::kThemisMc,
                               Design::kIdeal,    Design::kBrokenWbb, Design::kBrokenMc};

// Transactions per trace: about 400,000 events each (about 20,000 with
// --quick), from the events per transaction of each workload at its
// default size.
uint64_t transactions(const std::string& name, uint32_t tx_size, uint32_t default_tx_size, bool quick) {
  static const std::map<std::string, uint64_t> kEventsPerTx = {
      {"cq", 35},   {"ctree", 70}, {"hashmap", 22}, {"ll", 290},  {"pc", 196},
      {"rb", 77},   {"sps", 1156}, {"tatp", 16},    {"tpcc", 500}};
  const double per = static_cast<double>(kEventsPerTx.at(name)) * tx_size / std::max(1u, default_tx_size);
  const double want = quick ? 20000 : 400000;
  return std::max<uint64_t>(quick ? 10 : 100, static_cast<uint64_t>(want / std::max(per, 1.0)));
}

struct Traces {
  themis::Recorded undo, themis;
};

Traces record(const std::string& name, uint32_t tx_size, bool quick, const std::string& pool_dir) {
  const workloads::Info* info = workloads::find_workload(name);
  themis::RecordSpec s;
  s.workload = name;
  s.params.tx_size = tx_size;
  s.params.scale = quick ? info->small_scale * 16 : 0;
  s.transactions = transactions(name, tx_size ? tx_size : info->default_tx_size, info->default_tx_size, quick);
  s.pool_dir = pool_dir;
  s.work_passes = quick ? 1 : 2;
  Traces t;
  std::string why;
  s.engine = SW_ENGINE_UNDO;
  if (!themis::record_workload(s, &t.undo, &why)) fail(why);
  s.engine = SW_ENGINE_UNDO_THEMIS;
  if (!themis::record_workload(s, &t.themis, &why)) fail(why);
  if (!themis::share_work(&t.undo.events, &t.themis.events, &why)) fail(name + ": " + why);
  return t;
}

// Forwards what persisted to the checkers of several persistency models.
class Tee final : public themis::PersistObserver {
 public:
  explicit Tee(std::vector<themis::PersistCheck*> to) : to_(std::move(to)) {}
  void performed(const themis::Op& op) override {
    for (auto* c : to_) c->performed(op);
  }
  void persisted_line(uint64_t line, uint64_t version) override {
    for (auto* c : to_) c->persisted_line(line, version);
  }
  void persisted_stream(uint32_t event) override {
    for (auto* c : to_) c->persisted_stream(event);
  }

 private:
  std::vector<themis::PersistCheck*> to_;
};

struct Run {
  themis::Stats stats;
  uint64_t dropped = 0, capped = 0, events = 0;
  // Violations per model checked ("x86", "themis").
  std::map<std::string, std::pair<uint64_t, uint64_t>> violations;  // (order, fence)
  std::string example;
};

Run run(const std::vector<TraceEvent>& ev, double ticks_per_ns, Design d, Config cfg,
        const std::vector<Persistency>& models, double work_scale = 1.0) {
  cfg.design = d;
  themis::ReadOptions ro;
  ro.ticks_per_ns = ticks_per_ns;
  ro.cycles_per_tick = work_scale;
  ro.drop_log_order_fences = !themis::keeps_log_order_fences(d);
  themis::Program p;
  std::string why;
  if (!themis::read_trace(ev, ro, cfg.cores, &p, &why)) fail(why);
  std::vector<std::unique_ptr<themis::PersistCheck>> checks;
  std::vector<themis::PersistCheck*> raw;
  for (Persistency m : models) {
    checks.push_back(std::make_unique<themis::PersistCheck>(ev, p.footprint, m));
    raw.push_back(checks.back().get());
  }
  Tee tee(raw);
  Run r;
  themis::RunOptions o;
  o.warmup_fraction = 0.1;
  o.warm_llc = true;
  if (!themis::simulate(cfg, p, o, raw.empty() ? nullptr : &tee, &r.stats, &why)) fail(why);
  r.dropped = p.dropped_fences;
  r.capped = p.capped_gaps;
  r.events = ev.size();
  for (size_t i = 0; i < models.size(); ++i) {
    r.violations[crashsim::persistency_name(models[i])] = {checks[i]->order_violations(),
                                                            checks[i]->fence_violations()};
    if (r.example.empty() && !checks[i]->examples().empty()) r.example = checks[i]->examples()[0];
  }
  return r;
}

double speedup(const Run& base, const Run& r) {
  return r.stats.cycles ? static_cast<double>(base.stats.cycles) / static_cast<double>(r.stats.cycles) : 0;
}

std::string pct(double x) { return fmt("%+.1f%%", 100 * (x - 1)); }

// How many percent more cycles run a took than run b.
double vs_pct(const Run& a, const Run& b) {
  return 100.0 * (static_cast<double>(a.stats.cycles) / static_cast<double>(b.stats.cycles) - 1);
}

// One row of persist.csv per (design, setting, model); fails the run on a
// violation that must not happen.
class PersistTable {
 public:
  explicit PersistTable(Context& ctx)
      : csv_(ctx.file("persist.csv"), {"workload", "design", "setting", "model", "order_violations",
                                       "fence_violations", "version_regressions", "writebacks_waited",
                                       "wait_max_cycles", "example"}) {}
  void add(const std::string& w, Design d, const std::string& setting, const Run& r) {
    for (const auto& [model, v] : r.violations) {
      const themis::Histogram& h = themis::numbers_writebacks(d) ? r.stats.pm_hold_wait : r.stats.wbb_wait;
      csv_.add(w).add(themis::design_name(d)).add(setting).add(model).add(v.first).add(v.second);
      csv_.add(r.stats.version_regressions).add(h.total - h.counts[0]).add(static_cast<uint64_t>(h.max));
      csv_.add(v.first + v.second ? r.example : "");
      csv_.end_row();
      const bool must_keep = d == Design::kBaseline || d == Design::kThemis || d == Design::kThemisMc;
      if (must_keep && v.first + v.second > 0) {
        fail(fmt("%s: %s broke the persist order (%s model, %s): %s", w.c_str(), themis::design_name(d),
                 model.c_str(), setting.c_str(), r.example.c_str()));
      }
      if (r.stats.version_regressions) fail(w + ": a line persisted older data after newer (a model bug)");
      if (r.stats.seq_misjudged) fail(w + ": themis-mc compared a number after it wrapped (a model bug)");
      if (r.stats.seq_out_of_order) fail(w + ": a non-temporal entry arrived out of its core's order (a model bug)");
      order_[{d, setting}] += v.first;
    }
  }
  // Eq. 3 violations of design d over every workload run in `setting`.
  uint64_t order(Design d, const std::string& setting) { return order_[{d, setting}]; }

 private:
  Csv csv_;
  std::map<std::pair<Design, std::string>, uint64_t> order_;
};

void constructed_cases(Context& ctx) {
  Csv c(ctx.file("constructed.csv"), {"case", "design", "setting", "order_violations", "fence_violations",
                                       "wait_max_cycles", "held_max", "held_full", "guard_stalls", "misjudged"});
  struct Case {
    const char* name;
    std::vector<TraceEvent> ev;
    Config cfg;
    const char* setting;
  };
  const Case cases[] = {{"held-record", themis::held_record_case(), themis::holding_wcb(), "holding-wcb"},
                        {"held-record", themis::held_record_case(), Config{}, "default"},
                        {"slow-path", themis::slow_path_case(), themis::slow_nt_path(), "slow-nt-path"},
                        {"slow-path", themis::slow_path_case(), Config{}, "default"},
                        {"full-queue", themis::full_queue_case(), themis::far_nt_path(), "far-nt-path"},
                        {"wrap", themis::wrap_case(), themis::slow_llc_path(), "slow-llc-path"}};
  std::map<std::string, uint64_t> got;
  std::map<std::string, themis::Stats> stats;
  for (const Case& k : cases) {
    for (Design d : kDesigns) {
      const Run r = run(k.ev, 1.0, d, k.cfg, {Persistency::kThemis});
      const auto v = r.violations.at("themis");
      const themis::Stats& s = r.stats;
      c.add(k.name).add(themis::design_name(d)).add(k.setting).add(v.first).add(v.second);
      c.add(static_cast<uint64_t>(std::max(s.wbb_wait.max, s.pm_hold_wait.max))).add(s.pm_held_max);
      c.add(s.pm_held_full).add(s.seq_guard_stalls).add(s.seq_misjudged);
      c.end_row();
      const std::string key = fmt("%s/%s/%s", k.name, themis::design_name(d), k.setting);
      got[key] = v.first + v.second;
      stats[key] = s;
    }
  }
  auto expect = [&](const char* key, bool want_violation) {
    if ((got[key] > 0) != want_violation) {
      fail(fmt("constructed case %s: %llu violations, expected %s", key, static_cast<unsigned long long>(got[key]),
               want_violation ? "some" : "none"));
    }
  };
  expect("held-record/ideal/holding-wcb", true);
  expect("held-record/themis/holding-wcb", false);
  expect("held-record/themis-mc/holding-wcb", false);
  expect("held-record/baseline/holding-wcb", false);
  expect("slow-path/broken-wbb/slow-nt-path", true);
  expect("slow-path/broken-mc/slow-nt-path", true);
  expect("slow-path/themis/slow-nt-path", false);
  expect("slow-path/themis-mc/slow-nt-path", false);
  expect("full-queue/themis-mc/far-nt-path", false);
  expect("wrap/themis-mc/slow-llc-path", false);
  const themis::Stats& fq = stats["full-queue/themis-mc/far-nt-path"];
  const uint64_t cap = Config{}.pm_write_queue;
  if (fq.pm_held_max != cap - 1 || fq.pm_held_full == 0) {
    fail(fmt("constructed case full-queue: themis-mc held at most %llu writes (%llu refused); expected %llu and some",
             static_cast<unsigned long long>(fq.pm_held_max), static_cast<unsigned long long>(fq.pm_held_full),
             static_cast<unsigned long long>(cap - 1)));
  }
  const themis::Stats& wr = stats["wrap/themis-mc/slow-llc-path"];
  if (wr.seq_guard_stalls == 0 || wr.seq_misjudged != 0) {
    fail("constructed case wrap: themis-mc's wrap guard did not hold the core, or a number was misjudged");
  }
  ctx.note("constructed case (held record, holding WCB)",
           fmt("Ideal %llu Eq. 3 violation(s), Themis 0, themis-mc 0, Baseline 0",
               static_cast<unsigned long long>(got["held-record/ideal/holding-wcb"])));
  ctx.note("broken WBB and broken-mc (slow non-temporal path case)",
           fmt("caught: %llu and %llu violations", static_cast<unsigned long long>(got["slow-path/broken-wbb/slow-nt-path"]),
               static_cast<unsigned long long>(got["slow-path/broken-mc/slow-nt-path"])));
  ctx.note("themis-mc full controller queue (far non-temporal path)",
           fmt("%llu writes held at most (queue %llu), %llu arrivals refused a held slot, finished, 0 violations",
               static_cast<unsigned long long>(fq.pm_held_max), static_cast<unsigned long long>(cap),
               static_cast<unsigned long long>(fq.pm_held_full)));
}

}  // namespace

void run_themis_sim(Context& ctx) {
  const bool quick = ctx.quick();
  const auto& all = workloads::themis_workloads();
  const std::vector<std::pair<std::string, std::vector<uint32_t>>> fig12 = {
      {"sps", quick ? std::vector<uint32_t>{1, 16} : std::vector<uint32_t>{1, 2, 4, 8, 16, 32, 64}},
      {"pc", quick ? std::vector<uint32_t>{1, 16} : std::vector<uint32_t>{1, 2, 4, 8, 16, 32, 64}},
      {"ll", quick ? std::vector<uint32_t>{1, 8} : std::vector<uint32_t>{1, 2, 4, 8, 16, 32}}};
  int total = static_cast<int>(all.size()) + 1;
  for (const auto& f : fig12) total += static_cast<int>(f.second.size());
  ctx.set_total(total);
  ctx.note("machine", "Table I: 4 cores at 3 GHz, 16-entry WCB (6-bit pointers), 64 KiB 4-way L1 + 16-entry WBB, "
                      "2 MiB/core 16-way LLC, PM controller 128/64 queues, 16 banks, write 500 ns, read 346 ns, "
                      "WCB->controller 20 ns; ours: ACK 20 ns, LLC->controller 20 ns, WCB drains an entry 1 ns "
                      "after its last store");
  ctx.note("traces", quick ? "single-threaded, about 20,000 events each (--quick: scale 16x small)"
                           : "single-threaded, about 400,000 events each, default scales");

  ctx.step("constructed cases");
  constructed_cases(ctx);

  Csv f9(ctx.file("fig9.csv"),
         {"workload", "label", "transactions", "stores_per_tx", "removable_fences_per_tx", "events",
          "work_cycles_per_removable_fence", "capped_gaps", "baseline_cycles", "themis_cycles", "mc_cycles",
          "ideal_cycles", "themis_speedup", "mc_speedup", "ideal_speedup", "themis_vs_ideal_pct", "mc_vs_ideal_pct",
          "waited_pct", "wait_p50", "wait_p99", "wait_max", "mc_stamped_pct", "mc_held_pct", "mc_hold_p50",
          "mc_hold_p99", "mc_hold_max", "mc_held_max", "mc_write_throughs", "pm_writes", "holding_themis_speedup",
          "holding_mc_speedup", "holding_ideal_speedup"});
  Csv f11(ctx.file("fig11.csv"), {"workload", "design", "setting", "wait_from", "wait_to", "writebacks"});
  Csv tw(ctx.file("tail_width.csv"), {"workload", "bits", "tag_storage_bytes", "overflows",
                                      "overflows_per_1k_allocations", "themis_cycles", "speedup",
                                      "vs_6bit_pct"});
  Csv sw(ctx.file("seq_width.csv"), {"workload", "machine", "bits", "storage_bytes_per_core", "guard_stalls",
                                     "wbb_guard_waits", "held", "held_max", "misjudged", "mc_cycles", "speedup",
                                     "vs_8bit_pct"});
  Csv sens(ctx.file("sensitivity.csv"), {"workload", "knob", "value", "themis_speedup", "mc_speedup",
                                         "ideal_speedup", "themis_vs_ideal_pct", "mc_vs_ideal_pct"});
  PersistTable persist(ctx);
  const std::vector<Persistency> themis_model = {Persistency::kThemis};
  std::vector<std::string> far_from_ideal, mc_far_from_ideal, mc_far_at_40, th_far_at_40, not_faster;
  std::vector<double> th_speedups, mc_speedups, id_speedups;
  for (const workloads::Info* info : all) {
    const std::string w = info->name;
    ctx.step("fig. 9: " + w);
    Traces t = record(w, 0, quick, ctx.opts().pool_dir);
    const double tpn = t.undo.ticks_per_ns;
    const auto& ue = t.undo.events;
    const auto& te = t.themis.events;
    // Every design on the default machine, with a WCB that holds partial
    // lines (Ideal's violations) and a slow non-temporal path (the broken
    // variants); Baseline runs the undo trace, the others undo-themis's.
    std::map<std::string, std::map<Design, Run>> at;
    const std::pair<const char*, Config> machines[] = {
        {"default", Config{}}, {"holding-wcb", themis::holding_wcb()}, {"slow-nt-path", themis::slow_nt_path()}};
    for (const auto& [setting, cfg] : machines) {
      for (Design d : kDesigns) {
        const bool base = d == Design::kBaseline;
        const std::vector<Persistency> models =
            base && std::string(setting) == "default" ? std::vector<Persistency>{Persistency::kX86, Persistency::kThemis}
                                                      : themis_model;
        at[setting].emplace(d, run(base ? ue : te, tpn, d, cfg, models));
        persist.add(w, d, setting, at[setting].at(d));
      }
    }
    const Run& base = at["default"].at(Design::kBaseline);
    const Run& th = at["default"].at(Design::kThemis);
    const Run& mc = at["default"].at(Design::kThemisMc);
    const Run& id = at["default"].at(Design::kIdeal);
    const double sth = speedup(base, th), smc = speedup(base, mc), sid = speedup(base, id);
    th_speedups.push_back(sth);
    mc_speedups.push_back(smc);
    id_speedups.push_back(sid);
    if (vs_pct(th, id) > 5) far_from_ideal.push_back(w);
    if (vs_pct(mc, id) > 5) mc_far_from_ideal.push_back(w);
    if (sth <= 1.0) not_faster.push_back(w);
    const double tx = static_cast<double>(t.undo.transactions);
    const double rmf = static_cast<double>(t.undo.removable_fences);
    const themis::Histogram& h = th.stats.wbb_wait;
    const themis::Histogram& hm = mc.stats.pm_hold_wait;
    uint64_t work = 0;
    for (const TraceEvent& e : ue) work += e.work;
    const auto& hold = at["holding-wcb"];
    const double wbs = static_cast<double>(std::max<uint64_t>(1, mc.stats.writebacks));
    f9.add(w).add(info->label).add(t.undo.transactions).add(t.undo.stores_per_tx).add(rmf / tx);
    f9.add(static_cast<uint64_t>(ue.size())).add(rmf > 0 ? static_cast<double>(work) / rmf : 0.0).add(base.capped);
    f9.add(static_cast<uint64_t>(base.stats.cycles)).add(static_cast<uint64_t>(th.stats.cycles));
    f9.add(static_cast<uint64_t>(mc.stats.cycles)).add(static_cast<uint64_t>(id.stats.cycles));
    f9.add(sth).add(smc).add(sid).add(vs_pct(th, id)).add(vs_pct(mc, id));
    f9.add(h.total ? 100.0 * static_cast<double>(h.total - h.counts[0]) / static_cast<double>(h.total) : 0.0);
    f9.add(static_cast<uint64_t>(h.quantile(0.5))).add(static_cast<uint64_t>(h.quantile(0.99)));
    f9.add(static_cast<uint64_t>(h.max));
    f9.add(100.0 * static_cast<double>(mc.stats.seq_stamped) / wbs);
    f9.add(100.0 * static_cast<double>(hm.total - hm.counts[0]) / wbs);
    f9.add(static_cast<uint64_t>(hm.quantile(0.5))).add(static_cast<uint64_t>(hm.quantile(0.99)));
    f9.add(static_cast<uint64_t>(hm.max)).add(mc.stats.pm_held_max).add(mc.stats.seq_write_throughs);
    f9.add(mc.stats.pm_writes + mc.stats.pm_write_merges);
    f9.add(speedup(hold.at(Design::kBaseline), hold.at(Design::kThemis)));
    f9.add(speedup(hold.at(Design::kBaseline), hold.at(Design::kThemisMc)));
    f9.add(speedup(hold.at(Design::kBaseline), hold.at(Design::kIdeal)));
    f9.end_row();
    // Fig. 11: Themis' waits in the WBB, themis-mc's at the controller, in
    // bins of 10 cycles (writebacks that did not wait in bin 0), on the
    // default machine and with a slow non-temporal path.
    for (const char* setting : {"default", "slow-nt-path"}) {
      for (Design d : {Design::kThemis, Design::kThemisMc}) {
        const themis::Stats& st = at[setting].at(d).stats;
        const bool mcd = d == Design::kThemisMc;
        const themis::Histogram& hist = mcd ? st.pm_hold_wait : st.wbb_wait;
        // themis-mc's histogram has only the controller's held writes: the
        // writebacks not held (or held for 0 cycles) make bin 0.
        const uint64_t waited = hist.total - hist.counts[0];
        const uint64_t zero = mcd ? (st.writebacks > waited ? st.writebacks - waited : 0) : 0;
        for (themis::Cycle lo = 0; lo <= std::min<themis::Cycle>(hist.max, themis::Histogram::kExact);
             lo = lo ? lo + 10 : 1) {
          const themis::Cycle hi_ = lo == 0 ? 0 : std::min<themis::Cycle>(lo + 9, themis::Histogram::kExact);
          uint64_t n = lo == 0 && mcd ? zero : 0;
          for (themis::Cycle v = lo; v <= hi_; ++v) {
            if (!(mcd && v == 0)) n += hist.counts[v];
          }
          f11.add(w).add(themis::design_name(d)).add(setting).add(static_cast<uint64_t>(lo));
          f11.add(static_cast<uint64_t>(hi_)).add(n);
          f11.end_row();
        }
      }
    }
    // Section V-E: tail pointer widths (the persist order checked at each).
    for (unsigned bits : {4u, 6u, 8u, 10u}) {
      Config c;
      c.tail_bits = bits;
      const Run r = bits == 6 ? th : run(te, tpn, Design::kThemis, c, themis_model);
      if (bits != 6) persist.add(w, Design::kThemis, fmt("tail-%u", bits), r);
      const double alloc = static_cast<double>(r.stats.wcb_allocations);
      tw.add(w).add(bits).add(static_cast<uint64_t>(1024 * bits / 8)).add(r.stats.wcb_overflows);
      tw.add(alloc > 0 ? 1000.0 * static_cast<double>(r.stats.wcb_overflows) / alloc : 0.0);
      tw.add(static_cast<uint64_t>(r.stats.cycles)).add(speedup(base, r));
      tw.add(vs_pct(r, th));
      tw.end_row();
    }
    // themis-mc's sequence number widths (6 is the least for 16 entries),
    // on the default machine and with a slow non-temporal path (where
    // writes are held and numbers are compared while pending).
    for (const char* setting : {"default", "slow-nt-path"}) {
      const bool slow = std::string(setting) == "slow-nt-path";
      const Run& ref = at[setting].at(Design::kThemisMc);
      const Run& b = at[setting].at(Design::kBaseline);
      for (unsigned bits : {6u, 8u, 10u}) {
        Config c = slow ? themis::slow_nt_path() : Config{};
        c.seq_bits = bits;
        const Run r = bits == 8 ? ref : run(te, tpn, Design::kThemisMc, c, themis_model);
        if (bits != 8) persist.add(w, Design::kThemisMc, fmt("seq-%u%s", bits, slow ? "-slow-nt-path" : ""), r);
        sw.add(w).add(setting).add(bits).add(mc_storage(c).total_bytes()).add(r.stats.seq_guard_stalls);
        sw.add(r.stats.seq_wbb_guard_waits).add(r.stats.pm_held).add(r.stats.pm_held_max).add(r.stats.seq_misjudged);
        sw.add(static_cast<uint64_t>(r.stats.cycles)).add(speedup(b, r)).add(vs_pct(r, ref));
        sw.end_row();
      }
    }
    // Sensitivities: the ACK alone, both ways of the WCB's path, the WCB's
    // distance alone, and the work between events.  Themis and themis-mc
    // are checked at every latency.
    struct Knob {
      const char* name;
      double value;
      Config cfg;
      double scale;
    };
    std::vector<Knob> knobs;
    for (double ns : {5.0, 10.0, 40.0}) {
      Config a;
      a.ack_ns = ns;
      knobs.push_back({"ack_ns", ns, a, 1.0});
      Config e;
      e.ack_ns = e.wcb_to_pm_ns = ns;
      knobs.push_back({"each_way_ns", ns, e, 1.0});
    }
    for (double ns : {10.0, 40.0, 100.0}) {
      Config c;
      c.wcb_to_pm_ns = ns;
      knobs.push_back({"wcb_to_pm_ns", ns, c, 1.0});
    }
    for (double scale : {0.5, 0.25}) knobs.push_back({"work_scale", scale, Config{}, scale});
    for (const Knob& k : knobs) {
      const bool check = k.scale == 1.0;
      const Run b = run(ue, tpn, Design::kBaseline, k.cfg, {}, k.scale);
      const Run rt = run(te, tpn, Design::kThemis, k.cfg, check ? themis_model : std::vector<Persistency>{}, k.scale);
      const Run rm = run(te, tpn, Design::kThemisMc, k.cfg, check ? themis_model : std::vector<Persistency>{}, k.scale);
      const Run ri = run(te, tpn, Design::kIdeal, k.cfg, {}, k.scale);
      if (check) {
        const std::string setting = fmt("%s-%g", k.name, k.value);
        persist.add(w, Design::kThemis, setting, rt);
        persist.add(w, Design::kThemisMc, setting, rm);
      }
      sens.add(w).add(k.name).add(k.value).add(speedup(b, rt)).add(speedup(b, rm)).add(speedup(b, ri));
      sens.add(vs_pct(rt, ri)).add(vs_pct(rm, ri));
      sens.end_row();
      if (std::string(k.name) == "each_way_ns" && k.value == 40.0) {
        if (vs_pct(rm, ri) > 5) mc_far_at_40.push_back(w);
        if (vs_pct(rt, ri) > 5) th_far_at_40.push_back(w);
      }
    }
  }

  // Fig. 12: speedup against stores per transaction.
  Csv f12(ctx.file("fig12.csv"), {"workload", "tx_size", "stores_per_tx", "removable_fences_per_tx",
                                   "themis_speedup", "mc_speedup", "ideal_speedup"});
  for (const auto& [w, sizes] : fig12) {
    for (uint32_t s : sizes) {
      ctx.step(fmt("fig. 12: %s, size %u", w.c_str(), s));
      Traces t = record(w, s, quick, ctx.opts().pool_dir);
      const double tpn = t.undo.ticks_per_ns;
      const Run b = run(t.undo.events, tpn, Design::kBaseline, {}, {});
      const Run th = run(t.themis.events, tpn, Design::kThemis, {}, themis_model);
      persist.add(w, Design::kThemis, fmt("fig12-size-%u", s), th);
      const Run mc = run(t.themis.events, tpn, Design::kThemisMc, {}, themis_model);
      persist.add(w, Design::kThemisMc, fmt("fig12-size-%u", s), mc);
      const Run id = run(t.themis.events, tpn, Design::kIdeal, {}, {});
      f12.add(w).add(s).add(t.undo.stores_per_tx);
      f12.add(static_cast<double>(t.undo.removable_fences) / static_cast<double>(t.undo.transactions));
      f12.add(speedup(b, th)).add(speedup(b, mc)).add(speedup(b, id));
      f12.end_row();
    }
  }

  // Section V-E's storage, per core, beside the paper's design's.
  Csv st(ctx.file("storage.csv"), {"design", "structure", "where", "entries", "bits_each", "bytes_per_core"});
  for (const auto& [design, parts] : {std::pair{std::string("themis"), themis_storage(Config{})},
                                      {std::string("themis-mc"), mc_storage(Config{})}}) {
    for (const StoragePart& x : parts.parts) {
      st.add(design).add(x.structure).add(x.where).add(x.entries).add(x.bits_each).add(x.bytes_per_core());
      st.end_row();
    }
    st.add(design).add("total").add("").add("").add("").add(parts.total_bytes());
    st.end_row();
  }

  if (persist.order(Design::kBrokenWbb, "slow-nt-path") == 0) {
    fail("the broken WBB was never caught on the workloads with a slow non-temporal path");
  }
  if (persist.order(Design::kBrokenMc, "slow-nt-path") == 0) {
    fail("broken-mc (the controller ignores the numbers) was never caught on the workloads with a slow "
         "non-temporal path");
  }
  auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };
  ctx.note("themis speedup over baseline, mean of workloads", pct(mean(th_speedups)) + " (paper: +45.8%)");
  ctx.note("themis-mc speedup over baseline, mean of workloads", pct(mean(mc_speedups)));
  ctx.note("ideal speedup over baseline, mean of workloads", pct(mean(id_speedups)));
  auto totals = [&](auto get) {
    return fmt("%llu / %llu / %llu", static_cast<unsigned long long>(get("default")),
               static_cast<unsigned long long>(get("holding-wcb")), static_cast<unsigned long long>(get("slow-nt-path")));
  };
  for (Design d : {Design::kIdeal, Design::kBrokenWbb, Design::kBrokenMc}) {
    ctx.note(std::string(themis::design_name(d)) + ": Eq. 3 violations (default WCB / holding WCB / slow path)",
             totals([&](const char* s) { return persist.order(d, s); }));
  }
  ctx.note("storage per core: themis (6-bit tails) / themis-mc (8-bit numbers)",
           fmt("%.1f / %.1f bytes", themis_storage(Config{}).total_bytes(), mc_storage(Config{}).total_bytes()));
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("none") : s;
  };
  ctx.check(far_from_ideal.empty(), "Themis within 5% of Ideal on every workload (beyond: " + join(far_from_ideal) + ")");
  ctx.check(mc_far_from_ideal.empty(),
            "themis-mc within 5% of Ideal on every workload (beyond: " + join(mc_far_from_ideal) + ")");
  ctx.check(mc_far_at_40.empty(), "themis-mc within 5% of Ideal on every workload at 40 ns each way (beyond: " +
                                      join(mc_far_at_40) + ")");
  ctx.note("Themis beyond 5% of Ideal at 40 ns each way", join(th_far_at_40));
  ctx.check(not_faster.empty(), "Themis faster than Baseline on every workload (not: " + join(not_faster) + ")");
}

}  // namespace softwrap::bench
