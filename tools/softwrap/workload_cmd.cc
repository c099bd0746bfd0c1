// workload_cmd.cc — `softwrap workload`: one of the shared workloads
// (workloads/, docs/workloads.md) on a fresh pool, verified, with its
// stores-per-transaction distribution (the Themis paper's Fig. 8) and its
// fences per transaction by kind.
//
// The pool is a temporary file (removed at the end) created with the
// engine and medium asked for; undo-themis on a real medium runs as the
// Themis paper's Ideal (SW_CONFIG_THEMIS_IDEAL), as the benchmark runs it.
// The transactions go through ObservedAccess, whose extra loads make the
// reported rate a profiling one, not a benchmark's (`softwrap bench themis`
// measures); --unobserved runs them through the plain C API access instead
// and reports only the count and time (for counting a transaction's
// instructions under callgrind).
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "workloads/registry.h"
#include "workloads/runner.h"

namespace softwrap::cli {

namespace wl = softwrap::workloads;

void workload_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap workload <name> | list [--engine E] [--medium M] [--threads N]\n"
          "                         [--transactions N] [--tx-size N] [--scale N] [--seed S]\n"
          "                         [--pool-dir DIR] [--unobserved]\n"
          "\n"
          "Runs one of the papers' workloads (docs/workloads.md) on a fresh pool, verifies\n"
          "it, and prints its stores per transaction (Themis Fig. 8) and its fences per\n"
          "transaction by kind.\n"
          "\n"
          "  --engine E        default undo; undo-themis runs as the Themis paper's Ideal\n"
          "  --unobserved      the C API access as the benchmarks use it, without the\n"
          "                    per-store observation: no distribution, only the count and\n"
          "                    the time (for counting instructions per transaction)\n"
          "  --medium M        default x86\n"
          "  --wcl, --no-wcl   write-combined logging on or off (default: the medium's choice)\n"
          "  --threads N       threads running transactions at once (default 1)\n"
          "  --transactions N  per thread (default 10000)\n"
          "  --tx-size N       units per transaction (SPS: swaps, PC: updates, LL:\n"
          "                    operations; the others have none)\n"
          "  --scale N         structure size (default: the benchmark's)\n"
          "  --seed S          default 1\n"
          "  --pool-dir DIR    where the temporary pool goes (default /dev/shm)\n");
}

namespace {

int list_workloads() {
  for (const wl::Info* i : wl::all_workloads()) {
    printf("%-8s %-7s %s; scale: %s (default %" PRIu64 ")%s%s\n", i->name, i->label, i->what, i->scale_means,
           i->default_scale, i->tx_size_means ? "; tx-size: " : "", i->tx_size_means ? i->tx_size_means : "");
  }
  return kExitOk;
}

void print_report(const wl::Info& info, const wl::Params& p, sw_pool* pool, const wl::StoreHistogram& h,
                  double seconds) {
  sw_stats st{};
  sw_pool_stats(pool, &st);
  const uint64_t tx = h.transactions();
  const auto d = [&](uint64_t n) { return tx ? static_cast<double>(n) / static_cast<double>(tx) : 0.0; };
  printf("%s (%s, %s): %s\n", info.name, info.label, info.paper, info.what);
  const bool ideal = std::string(sw_pool_engine_name(pool)) == "undo-themis";
  printf("engine %s%s on %s, %u thread%s, scale %" PRIu64 "%s: %" PRIu64 " transactions committed, %" PRIu64
         " rolled back, in %.2f s; verified\n",
         sw_pool_engine_name(pool), ideal ? " (the Themis paper's Ideal: not crash-safe on this medium)" : "",
         sw_pool_medium_name(pool), p.threads, p.threads > 1 ? "s" : "", p.scale,
         info.tx_size_means ? (", tx-size " + std::to_string(p.tx_size)).c_str() : "", tx, h.aborted(), seconds);
  printf("stores per transaction: mean %.1f, min %" PRIu64 ", median %" PRIu64 ", p90 %" PRIu64 ", max %" PRIu64
         "\n",
         h.mean(), h.percentile(0), h.percentile(0.5), h.percentile(0.9), h.percentile(1.0));
  const auto counts = h.counts();
  uint64_t most = 0;
  for (const auto& [s, n] : counts) most = std::max(most, n);
  for (const auto& [s, n] : counts) {
    const int bar = most ? static_cast<int>(40 * n / most) : 0;
    printf("  %6" PRIu64 " %-40s %" PRIu64 " (%.1f %%)\n", s, std::string(static_cast<size_t>(bar), '#').c_str(), n,
           100.0 * static_cast<double>(n) / static_cast<double>(tx ? tx : 1));
  }
  printf("fences per transaction: %.2f — non-temporal->temporal %.2f (removable under Themis), "
         "temporal->non-temporal %.2f, commit %.2f, other %.2f; elided by undo-themis %.2f\n",
         d(st.fences), d(st.fences_log), d(st.fences_data + st.fences_retire), d(st.fences_commit),
         d(st.fences_other), d(st.fences_elided));
  const uint64_t words = st.wcl_words_full + st.wcl_words_half + st.wcl_words_eliminated;
  if (words != 0) {  // write-combined logging was on
    const auto pct = [&](uint64_t n) { return 100.0 * static_cast<double>(n) / static_cast<double>(words); };
    printf("write-combined logging: %" PRIu64 " words stored: %.1f %% unchanged, %.1f %% changed in one half "
           "(%" PRIu64 " paired), %.1f %% otherwise; %" PRIu64 " log words and %" PRIu64 " log lines saved\n",
           words, pct(st.wcl_words_eliminated), pct(st.wcl_words_half), st.wcl_words_paired, pct(st.wcl_words_full),
           st.log_words_saved, st.log_lines_saved);
  }
  printf("NVRAM writes (log and home): %" PRIu64 " words, %" PRIu64 " lines\n", st.nvram_words, st.nvram_lines);
}

}  // namespace

// --unobserved: the workload through ApiAccess, verified; closes the pool.
int run_unobserved(const wl::Info& info, const wl::Params& p, sw_pool* pool, const std::string& path,
                   uint64_t transactions) {
  std::vector<wl::ApiAccess> acc(p.threads, wl::ApiAccess(pool));
  int rc = kExitOk;
  try {
    auto w = wl::make_api_workload(info.name, &acc, p);
    w->setup();
    const double seconds = wl::run_threads(*w, transactions);
    if (sw_pool_quiesce(pool) != 0) throw wl::WorkloadError(std::string("sw_pool_quiesce: ") + sw_errormsg());
    const std::string why = w->verify();
    if (!why.empty()) throw wl::WorkloadError("verify: " + why);
    printf("%s: engine %s on %s, %u thread%s: %" PRIu64 " transactions per thread in %.2f s; verified\n", info.name,
           sw_pool_engine_name(pool), sw_pool_medium_name(pool), p.threads, p.threads > 1 ? "s" : "", transactions,
           seconds);
  } catch (const wl::WorkloadError& e) {
    fprintf(stderr, "softwrap: workload %s: %s\n", info.name, e.what());
    rc = kExitFailed;
  }
  if (sw_pool_close(pool) != 0 && rc == kExitOk) rc = report_failure("sw_pool_close");
  unlink(path.c_str());
  return rc;
}

int workload_command(const std::vector<std::string>& args) {
  Options opts({"engine", "medium", "threads", "transactions", "tx-size", "scale", "seed", "pool-dir"},
               {"wcl", "no-wcl", "unobserved"});
  std::string err;
  if (!opts.parse(args, &err)) return usage_error(err, "workload");
  if (opts.help()) {
    workload_usage(stdout);
    return kExitOk;
  }
  if (opts.positional().size() != 1) return usage_error("name one workload, or 'list'", "workload");
  if (opts.positional()[0] == "list") return list_workloads();
  const wl::Info* info = wl::find_workload(opts.positional()[0]);
  if (!info) {
    return usage_error("unknown workload '" + opts.positional()[0] + "' (" + wl::workload_names() + ")", "workload");
  }
  sw_config cfg{};
  cfg.engine = SW_ENGINE_UNDO;
  cfg.medium = SW_MEDIUM_X86;
  if (!apply_engine_medium(opts, &cfg)) return kExitUsage;
  wl::Params p;
  uint64_t v = 0, transactions = 10000;
  struct Num {
    const char* name;
    uint64_t max;
    uint64_t* out;
  };
  uint64_t threads = 1, tx_size = 0, scale = 0, seed = 1;
  for (const Num& n : {Num{"threads", wl::kMaxThreads, &threads}, Num{"transactions", uint64_t{1} << 40, &transactions},
                       Num{"tx-size", 1u << 16, &tx_size}, Num{"scale", uint64_t{1} << 32, &scale},
                       Num{"seed", ~uint64_t{0}, &seed}}) {
    if (!opts.has(n.name)) continue;
    if (!parse_u64(opts.get(n.name), &v) || v == 0 || v > n.max) {
      return usage_error(std::string("bad --") + n.name, "workload");
    }
    *n.out = v;
  }
  if (tx_size && !info->tx_size_means) {
    return usage_error(std::string(info->name) + " has no transaction-size parameter", "workload");
  }
  p.threads = static_cast<uint32_t>(threads);
  p.tx_size = static_cast<uint32_t>(tx_size);
  p.scale = scale;
  p.seed = seed;
  p = wl::resolve(*info, p);
  const sw_config base = wl::workload_config(cfg.engine, cfg.medium);
  cfg.lanes = base.lanes;
  cfg.flags |= base.flags;
  const std::string path = opts.get("pool-dir", "/dev/shm") + "/sw-workload-" + std::to_string(getpid()) + ".pool";
  unlink(path.c_str());
  sw_pool* pool = sw_pool_create(path.c_str(), wl::pool_bytes(*info, p), &cfg);
  if (!pool) return report_failure("cannot create " + path);
  {
    const char* why = "";
    const int wcl = sw_pool_wcl(pool, &why);
    printf("pool: engine %s, medium %s, write-combined logging %s (%s)\n", sw_pool_engine_name(pool),
           sw_pool_medium_name(pool), wcl == 1 ? "on" : "off", why);
  }
  if (opts.has("unobserved")) return run_unobserved(*info, p, pool, path, transactions);
  wl::StoreHistogram h;
  std::vector<wl::ObservedAccess<wl::ApiAccess>> acc(p.threads, wl::ObservedAccess<wl::ApiAccess>(wl::ApiAccess(pool), nullptr));
  int rc = kExitOk;
  {
    auto w = wl::make_observed_workload(info->name, &acc, p);
    try {
      w->setup();
      acc.assign(p.threads, wl::ObservedAccess<wl::ApiAccess>(wl::ApiAccess(pool), &h));
      if (sw_pool_stats_reset(pool) != 0) throw wl::WorkloadError(std::string("sw_pool_stats_reset: ") + sw_errormsg());
      const double seconds = wl::run_threads(*w, transactions);
      if (sw_pool_quiesce(pool) != 0) throw wl::WorkloadError(std::string("sw_pool_quiesce: ") + sw_errormsg());
      const std::string why = w->verify();
      if (!why.empty()) throw wl::WorkloadError("verify: " + why);
      print_report(*info, p, pool, h, seconds);
    } catch (const wl::WorkloadError& e) {
      fprintf(stderr, "softwrap: workload %s: %s\n", info->name, e.what());
      rc = kExitFailed;
    }
  }
  if (sw_pool_close(pool) != 0 && rc == kExitOk) rc = report_failure("sw_pool_close");
  unlink(path.c_str());
  return rc;
}

}  // namespace softwrap::cli
