// exp_load.cc — the micro-benchmarks of the full paper, section V-C:
// Fig. 6 (response time and throughput vs arrival rate), Fig. 7
// (throughput vs alias table size), Fig. 8 (response time over time around
// table switches), Fig. 9 (throughput vs threads), Fig. 11 (response time
// vs wrap size, with the slides' block-copy variant) and Fig. 12 (maximum
// throughput vs data reuse).
//
// Approach: every point is one harness cell (a fresh open of the shared
// 1 GiB array pool with the point's engine, medium and alias tables,
// warm-up, measured loop, counters, verification), on scm-emu with the
// paper's Tw = 1 µs and Ts = 220 ns and on x86.  The paper's alias tables
// are 8K entries retired from 500 on (we use 8192 and 1/16 = 512), except
// where the figure varies them (Fig. 7: 2^8..2^22 entries retired from
// 1/8, as in its text; Fig. 9: 2^19).  "Maximum throughput" is a closed
// loop; Fig. 7 also runs the paper's 50,000 wraps/s open loop and reports
// what it achieved.  Fig. 9 gives each thread its own 8 KiB object and
// runs wraps of 10 random fields back to back on every thread.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "suite.h"

namespace softwrap::bench {
namespace {

const sw_engine_kind kThree[] = {SW_ENGINE_NONATOMIC, SW_ENGINE_SOFTWRAP, SW_ENGINE_UNDO};
const sw_medium_kind kMedia[] = {SW_MEDIUM_SCM_EMU, SW_MEDIUM_X86};

void open_row(Csv& csv, const CellSpec& s, const CellOutcome& c) {
  csv.add(medium_str(s.cfg.medium)).add(engine_str(s.cfg.engine)).add(s.rate).add(c.open.throughput);
  csv.add(c.open.wrap_ns.tmean).add(c.open.wrap_ns.p50).add(c.open.wrap_ns.p99);
  csv.add(c.open.resp_ns.mean).add(c.open.resp_ns.p50).add(c.open.resp_ns.p99);
  csv.add(c.per.fences).add(c.per.streamed + c.per.flushes).add(c.per.table_switches);
}
const std::vector<std::string> kOpenCols = {"medium", "engine", "rate", "throughput", "wrap_tmean_ns", "wrap_p50_ns",
                                            "wrap_p99_ns", "resp_mean_ns", "resp_p50_ns", "resp_p99_ns",
                                            "pcommits", "scm_writes", "table_switches"};

std::vector<std::string> with(std::vector<std::string> v, const std::string& first) {
  v.insert(v.begin(), first);
  return v;
}

}  // namespace

// ------------------------------------------------------------------ Fig. 6

void run_fig6(Context& ctx) {
  std::vector<double> rates = {10e3, 20e3, 30e3, 40e3, 50e3, 60e3, 70e3, 80e3, 90e3, 100e3, 125e3, 150e3, 200e3};
  if (ctx.quick()) rates = {10e3, 50e3, 200e3};
  const double secs = ctx.secs(0.3, 0.03);
  ctx.set_total(static_cast<int>(rates.size() * std::size(kThree) * std::size(kMedia)));
  Csv csv(ctx.file("fig6.csv"), kOpenCols);
  for (sw_medium_kind m : kMedia) {
    for (double rate : rates) {
      for (sw_engine_kind e : kThree) {
        ctx.step(fmt("%s %s %.0fk wraps/s", medium_str(m), engine_str(e), rate / 1e3));
        CellSpec s;
        s.cfg.engine = e;
        s.cfg.medium = m;
        s.rate = rate;
        s.seconds = secs;
        s.seed = 6 + static_cast<uint64_t>(rate);
        CellOutcome c = run_cell(ctx, s);
        open_row(csv, s, c);
        csv.end_row();
      }
    }
  }
}

// ------------------------------------------------------------------ Fig. 7

void run_fig7(Context& ctx) {
  std::vector<unsigned> log2s;
  for (unsigned l = 8; l <= 22; l++) log2s.push_back(l);
  if (ctx.quick()) log2s = {8, 13, 18};
  const double secs = ctx.secs(0.3, 0.03);
  ctx.set_total(static_cast<int>(log2s.size() * 2 * std::size(kMedia) + 2 * 2 * std::size(kMedia)));
  Csv csv(ctx.file("fig7.csv"), {"medium", "engine", "alias_entries", "open_rate", "open_throughput",
                                 "open_wrap_tmean_ns", "open_resp_mean_ns", "closed_throughput",
                                 "table_switches_per_wrap"});
  for (sw_medium_kind m : kMedia) {
    for (unsigned l : log2s) {
      CellSpec s;
      s.cfg.engine = SW_ENGINE_SOFTWRAP;
      s.cfg.medium = m;
      s.cfg.alias_entries = 1u << l;
      s.cfg.retire_divisor = 8;  // section V-C.2: retire from 1/8 of the capacity
      s.seconds = secs;
      s.seed = 70 + l;
      ctx.step(fmt("%s 2^%u entries, 50k/s", medium_str(m), l));
      s.rate = 50000;
      CellOutcome o = run_cell(ctx, s);
      ctx.step(fmt("%s 2^%u entries, closed", medium_str(m), l));
      s.rate = 0;
      CellOutcome c = run_cell(ctx, s);
      csv.add(medium_str(m)).add("softwrap").add(1u << l).add(50000).add(o.open.throughput);
      csv.add(o.open.wrap_ns.tmean).add(o.open.resp_ns.mean).add(c.closed_tput).add(c.per.table_switches);
      csv.end_row();
    }
    // The baselines do not have alias tables: one line each, for reference.
    for (sw_engine_kind e : {SW_ENGINE_NONATOMIC, SW_ENGINE_UNDO}) {
      CellSpec s;
      s.cfg.engine = e;
      s.cfg.medium = m;
      s.seconds = secs;
      s.seed = 77;
      ctx.step(fmt("%s %s, 50k/s", medium_str(m), engine_str(e)));
      s.rate = 50000;
      CellOutcome o = run_cell(ctx, s);
      ctx.step(fmt("%s %s, closed", medium_str(m), engine_str(e)));
      s.rate = 0;
      CellOutcome c = run_cell(ctx, s);
      csv.add(medium_str(m)).add(engine_str(e)).add(0).add(50000).add(o.open.throughput);
      csv.add(o.open.wrap_ns.tmean).add(o.open.resp_ns.mean).add(c.closed_tput).add(0);
      csv.end_row();
    }
  }
}

// ------------------------------------------------------------------ Fig. 8

void run_fig8(Context& ctx) {
  const double secs = ctx.secs(0.2, 0.03);
  ctx.set_total(static_cast<int>(std::size(kMedia)));
  Csv csv(ctx.file("fig8.csv"), {"medium", "wrap", "arrival_us", "open_us", "close_us", "resp_us", "wrap_us",
                                 "table_switches", "retired_entries"});
  Csv sum(ctx.file("fig8_summary.csv"), {"medium", "wraps", "switches", "switch_period_us", "resp_p50_us",
                                         "resp_p99_us", "resp_at_switch_mean_us", "resp_other_mean_us"});
  for (sw_medium_kind m : kMedia) {
    ctx.step(fmt("%s softwrap 50k/s, 8K-entry tables", medium_str(m)));
    CellSpec s;
    s.cfg.engine = SW_ENGINE_SOFTWRAP;
    s.cfg.medium = m;
    s.rate = 50000;
    s.seconds = secs;
    s.seed = 8;
    std::vector<WrapTrace> tr;
    CellOutcome c = run_cell(ctx, s, &tr);
    double at_sw = 0, other = 0;
    int n_sw = 0, n_other = 0;
    double first_switch = -1, last_switch = -1;
    uint64_t switches = 0;
    for (size_t i = 0; i < tr.size(); i++) {
      const WrapTrace& w = tr[i];
      const bool switched = i > 0 && w.table_switches != tr[i - 1].table_switches;
      const double resp = w.close_us - w.arrival_us;
      if (switched) {
        switches++;
        at_sw += resp;
        n_sw++;
        if (first_switch < 0) first_switch = w.close_us;
        last_switch = w.close_us;
      } else {
        other += resp;
        n_other++;
      }
      csv.add(medium_str(m)).add(static_cast<uint64_t>(i)).add(w.arrival_us).add(w.open_us).add(w.close_us);
      csv.add(resp).add(w.close_us - w.open_us).add(w.table_switches).add(w.retired_entries);
      csv.end_row();
    }
    sum.add(medium_str(m)).add(static_cast<uint64_t>(tr.size())).add(switches);
    sum.add(switches > 1 ? (last_switch - first_switch) / static_cast<double>(switches - 1) : 0.0);
    sum.add(c.open.resp_ns.p50 / 1e3).add(c.open.resp_ns.p99 / 1e3);
    sum.add(n_sw ? at_sw / n_sw : 0.0).add(n_other ? other / n_other : 0.0);
    sum.end_row();
  }
}

// ------------------------------------------------------------------ Fig. 9

void run_fig9(Context& ctx) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double secs = ctx.secs(0.5, 0.05);
  ctx.set_total(static_cast<int>(2 * cores * std::size(kThree) * std::size(kMedia)));
  Csv csv(ctx.file("fig9.csv"), {"medium", "engine", "threads", "cores", "throughput", "per_thread_min",
                                 "per_thread_max", "pcommits", "scm_writes"});
  constexpr uint64_t kObjectWords = 1024;  // 8 KiB object per thread
  for (sw_medium_kind m : kMedia) {
    for (unsigned t = 1; t <= 2 * cores; t++) {
      for (sw_engine_kind e : kThree) {
        ctx.step(fmt("%s %s %u thread(s)", medium_str(m), engine_str(e), t));
        CellConfig cfg;
        cfg.engine = e;
        cfg.medium = m;
        cfg.alias_entries = 1u << 19;
        cfg.retire_divisor = 8;
        ArrayPool& ap = ctx.pool();
        sw_pool* p = ap.open(cfg);
        std::vector<std::unique_ptr<ArrayWorkload>> ws;
        for (unsigned i = 0; i < t; i++) {
          // Objects 64 KiB apart (distinct pages and lines).
          ws.push_back(std::make_unique<ArrayWorkload>(ap.array() + i * 8192, kObjectWords, 10, 900 + i));
        }
        // All threads start together and stop at the same deadline; the
        // throughput is all their wraps over the wall time of the run.
        auto run_all = [&](double seconds, std::vector<double>* tput) {
          std::vector<std::thread> th;
          std::vector<uint64_t> done(t);
          std::atomic<unsigned> ready{0};
          std::atomic<bool> go{false};
          Clock::time_point stop;
          for (unsigned i = 0; i < t; i++) {
            th.emplace_back([&, i] {
              ready.fetch_add(1);
              while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
              const uint64_t before = ws[i]->wraps();
              while (Clock::now() < stop) {
                for (int k = 0; k < 8; k++) ws[i]->wrap(p);
              }
              done[i] = ws[i]->wraps() - before;
            });
          }
          while (ready.load() < t) std::this_thread::yield();
          const auto start = Clock::now();
          stop = start + std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
          go.store(true, std::memory_order_release);
          for (auto& x : th) x.join();
          const double wall = std::chrono::duration<double>(Clock::now() - start).count();
          if (tput) {
            tput->clear();
            for (uint64_t d : done) tput->push_back(static_cast<double>(d) / wall);
          }
        };
        run_all(secs / 10, nullptr);  // warm-up
        reset_counters(p);
        uint64_t before = 0;
        for (auto& w : ws) before += w->wraps();
        std::vector<double> tput;
        run_all(secs, &tput);
        uint64_t after = 0;
        for (auto& w : ws) after += w->wraps();
        for (auto& w : ws) w->verify(p, false);
        PerWrap per = counters_since_reset(p, after - before);
        for (auto& w : ws) w->verify(p, true);
        ap.close();
        double total = 0;
        for (double x : tput) total += x;
        csv.add(medium_str(m)).add(engine_str(e)).add(t).add(cores).add(total);
        csv.add(*std::min_element(tput.begin(), tput.end())).add(*std::max_element(tput.begin(), tput.end()));
        csv.add(per.fences).add(per.streamed + per.flushes);
        csv.end_row();
      }
    }
  }
}

// ----------------------------------------------------------------- Fig. 11

void run_fig11(Context& ctx) {
  std::vector<unsigned> sizes = {1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000};
  if (ctx.quick()) sizes = {1, 10, 1000};
  const double secs = ctx.secs(0.3, 0.03);
  ctx.set_total(static_cast<int>(sizes.size() * std::size(kThree) * std::size(kMedia) * 2));
  Csv csv(ctx.file("fig11.csv"), with(with(kOpenCols, "n"), "variant"));
  for (Pattern pat : {Pattern::kRandom, Pattern::kBlock}) {
    for (sw_medium_kind m : kMedia) {
      for (unsigned n : sizes) {
        for (sw_engine_kind e : kThree) {
          ctx.step(fmt("%s %s %s n=%u", pattern_str(pat), medium_str(m), engine_str(e), n));
          CellSpec s;
          s.cfg.engine = e;
          s.cfg.medium = m;
          s.n = n;
          s.pattern = pat;
          s.rate = 1000;
          s.seconds = secs;
          s.seed = 11 + n;
          CellOutcome c = run_cell(ctx, s);
          csv.add(pat == Pattern::kBlock ? "block" : "words").add(n);
          open_row(csv, s, c);
          csv.end_row();
        }
      }
    }
  }
}

// ----------------------------------------------------------------- Fig. 12

void run_fig12(Context& ctx) {
  std::vector<double> reuse;
  for (int r = 0; r <= 100; r += 10) reuse.push_back(r / 100.0);
  if (ctx.quick()) reuse = {0, 0.5, 1};
  const double secs = ctx.secs(0.3, 0.03);
  ctx.set_total(static_cast<int>(reuse.size() * std::size(kThree) * std::size(kMedia)));
  Csv csv(ctx.file("fig12.csv"), {"medium", "engine", "reuse_pct", "throughput", "home_writes_per_wrap",
                                  "scm_writes_per_wrap", "alias_retired_per_wrap"});
  for (sw_medium_kind m : kMedia) {
    for (double r : reuse) {
      for (sw_engine_kind e : kThree) {
        ctx.step(fmt("%s %s reuse %.0f%%", medium_str(m), engine_str(e), r * 100));
        CellSpec s;
        s.cfg.engine = e;
        s.cfg.medium = m;
        s.reuse = r;
        s.seconds = secs;
        s.seed = 12 + static_cast<uint64_t>(r * 100);
        CellOutcome c = run_cell(ctx, s);
        csv.add(medium_str(m)).add(engine_str(e)).add(std::round(r * 100)).add(c.closed_tput);
        csv.add(c.per.home_writes).add(c.per.streamed + c.per.flushes).add(c.per.retired);
        csv.end_row();
      }
    }
  }
}

}  // namespace softwrap::bench
