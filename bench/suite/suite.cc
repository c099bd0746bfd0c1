// suite.cc — the experiment table, the run loop, plotting and the
// launchers of the PMDK peer and of the limit's program.
//
// Approach: experiments run one after another, each in its own Context
// (its own output directory, array pool and meta.csv).  A failed
// experiment (an API error or a failed correctness check) is reported and
// the suite goes on with the next one.  Plotting is a separate process,
// /usr/bin/python3 plot.py <dir>, so that the C++ side needs no plotting
// library and a missing matplotlib only skips the PNGs.  The PMDK peer is
// a separate program (sw_bench_pmdk, built only when pkg-config finds
// libpmemobj) so that the softwrap tool never links PMDK; it is started
// with PMEM_IS_PMEM_FORCE=1, see pmdk_array.cc.  `bench limit` runs
// sw_bench_limit (limit.h) the same way, for the same reason: it compares
// every workload with PMDK.
#include "suite.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace softwrap::bench {
namespace {

std::string suite_source_dir() {
  if (const char* d = std::getenv("SOFTWRAP_BENCH_SUITE_DIR")) return d;
#ifdef SW_BENCH_SUITE_DIR
  return SW_BENCH_SUITE_DIR;
#else
  return self_dir() + "/../share/softwrap/bench";
#endif
}

const char* kPython = "/usr/bin/python3";  // Debian's, with python3-matplotlib

bool have_matplotlib() {
  static int have = -1;
  if (have < 0) {
    have = is_file(kPython) && run_program({kPython, "-c", "import matplotlib"}, {}) == 0 ? 1 : 0;
  }
  return have == 1;
}

}  // namespace

const std::vector<Experiment>& experiments() {
  static const std::vector<Experiment> kAll = {
      {"fig4", "Fig. 4: average nstore time vs group size (DRAM vs scm-emu)", run_fig4},
      {"table2", "Tables I/II, Fig. 5: estimated vs measured wrap time; pcommits and SCM writes", run_table2},
      {"fig6", "Fig. 6: response time and throughput vs arrival rate", run_fig6},
      {"fig7", "Fig. 7: throughput vs alias table size", run_fig7},
      {"fig8", "Fig. 8: response time over time around table switches", run_fig8},
      {"fig9", "Fig. 9: throughput vs threads", run_fig9},
      {"fig10", "Fig. 10: response time vs SCM write time Tw", run_fig10},
      {"fig11", "Fig. 11: response time vs wrap size (word stores and block copy)", run_fig11},
      {"fig12", "Fig. 12: maximum throughput vs data reuse", run_fig12},
      {"workshop", "Workshop paper: speedup over undo vs stores per wrap and consecutive wraps", run_workshop},
      {"pmdk", "PMDK peer: array update with pmemobj transactions vs softwrap", run_pmdk},
      {"themis", "Themis Figs. 3/8/10: undo without its log-order fences (Ideal) on the paper's nine workloads",
       run_themis},
      {"themis-sim", "Themis Figs. 9, 11, 12, V-E: the simulated hardware on the workloads' traces", run_themis_sim},
      {"wcl", "WCL Fig. 2, Tables 5/6, Figs. 6-9/11/12: write-combined logging on its workloads, Table II, B+tree, "
              "TPC-C",
       run_wcl},
      {"limit", "The limit: every workload on plain memory, PMDK and each engine; sw_load64 against a plain load",
       run_limit},
      {"eadr", "The limit on an eADR/CXL platform: the cpu-cache form of every engine against PMDK with "
               "PMEM_NO_FLUSH=1; undo with and without its ordering fences",
       run_limit_cpu_cache},
  };
  return kAll;
}

int run_suite(const std::vector<std::string>& names, const SuiteOptions& o) {
  // Each cell chooses engine, medium and timing itself.
  for (const char* v : {"SOFTWRAP_ENGINE", "SOFTWRAP_MEDIUM", "SOFTWRAP_SCM_WRITE_NS", "SOFTWRAP_SCM_SERIAL_NS"}) {
    unsetenv(v);
  }
  std::vector<const Experiment*> todo;
  for (const auto& n : names) {
    bool found = false;
    for (const auto& e : experiments()) {
      if (n == "all" || n == e.name) {
        todo.push_back(&e);
        found = true;
      }
    }
    if (!found) {
      std::fprintf(stderr, "softwrap bench: unknown experiment '%s'\n", n.c_str());
      return 2;
    }
  }
  int status = 0;
  const auto suite_start = Clock::now();
  for (const Experiment* e : todo) {
    const auto start = Clock::now();
    std::string error;
    int claims_failed = 0;
    {
      try {
        Context ctx(o, e->name);
        e->run(ctx);
        claims_failed = ctx.failures();
      } catch (const BenchFailure& f) {
        error = f.what;
      }
    }
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::string plot;
    if (error.empty() && o.plot) {
      const std::string script = suite_source_dir() + "/plot.py";
      if (!have_matplotlib()) {
        plot = ", no plot (/usr/bin/python3 with matplotlib not found)";
      } else if (!is_file(script)) {
        plot = ", no plot (" + script + " not found)";
      } else if (run_program({kPython, script, o.out_dir + "/" + e->name}, {}) != 0) {
        error = "plot.py failed";
      }
    }
    if (!error.empty()) {
      std::printf("%-9s FAILED after %.0f s: %s\n", e->name, secs, error.c_str());
      status = 1;
    } else {
      std::printf("%-9s ok in %.0f s%s%s -> %s/%s/\n", e->name, secs, plot.c_str(),
                  claims_failed ? fmt(", %d paper claim(s) not met (see meta.csv)", claims_failed).c_str() : "",
                  o.out_dir.c_str(), e->name);
      if (claims_failed && !o.quick) status = 1;
    }
    std::fflush(stdout);
  }
  std::printf("total %.0f s\n", std::chrono::duration<double>(Clock::now() - suite_start).count());
  return status;
}

// The PMDK peer: a separate program, interleaving its cells with ours.
void run_pmdk(Context& ctx) {
#ifndef SW_BENCH_PMDK_PATH
#define SW_BENCH_PMDK_PATH ""
#endif
  const std::string prog = find_program("SOFTWRAP_BENCH_PMDK", SW_BENCH_PMDK_PATH, "sw_bench_pmdk");
  if (prog.empty()) {
    ctx.note("skipped", "sw_bench_pmdk not built (libpmemobj not found by pkg-config)");
    return;
  }
  ctx.step("running " + prog);
  std::vector<std::string> argv = {prog, "--out", ctx.dir(), "--pool-dir", ctx.opts().pool_dir};
  if (ctx.quick()) argv.push_back("--quick");
  int rc = run_program(argv, {"PMEM_IS_PMEM_FORCE=1"});
  if (rc == 1) {
    ctx.check(false, "x86 n=10: softwrap >= 5x PMDK wraps/s (see pmdk.csv)");
  } else if (rc != 0) {
    fail(fmt("%s exited with status %d", prog.c_str(), rc));
  } else {
    ctx.check(true, "x86 n=10: softwrap >= 5x PMDK wraps/s (see pmdk.csv)");
  }
}

// The limit (issue 22): a separate program because it links PMDK where
// libpmemobj is found.  Its bars are checks in limit_meta.csv; exit status
// 1 says one was missed.
namespace {

int run_limit_program(Context& ctx, bool cpu_cache) {
#ifndef SW_BENCH_LIMIT_PATH
#define SW_BENCH_LIMIT_PATH ""
#endif
  const std::string prog = find_program("SOFTWRAP_BENCH_LIMIT", SW_BENCH_LIMIT_PATH, "sw_bench_limit");
  if (prog.empty()) fail("sw_bench_limit not found (build the target sw_bench_limit)");
  ctx.step("running " + prog);
  std::vector<std::string> argv = {prog, "--out", ctx.dir(), "--pool-dir", ctx.opts().pool_dir,
                                   "--time-scale", fmt("%g", ctx.opts().time_scale)};
  if (ctx.quick()) argv.push_back("--quick");
  if (!ctx.opts().pin) argv.push_back("--no-pin");
  if (cpu_cache) {
    argv.push_back("--cpu-cache");
    argv.push_back("--only");
    argv.push_back("workloads");
  }
  const int rc = run_program(argv, {"PMEM_IS_PMEM_FORCE=1"});
  if (rc != 0 && rc != 1) fail(fmt("%s exited with status %d", prog.c_str(), rc));
  return rc;
}

}  // namespace

void run_limit(Context& ctx) {
  const int rc = run_limit_program(ctx, false);
  ctx.check(rc == 0, "the limit's bars: softwrap faster than PMDK on every workload, within 1.5x of the limit on "
                     "the read-heavy ones; sw_load64 within 1.5x / 1.1x of a plain load (see limit_meta.csv)");
}

// The same workloads with the x86 medium in its cpu-cache form (limit.h,
// --cpu-cache): SOFTWRAP_PERSISTENCE=cpu-cache, PMDK with PMEM_NO_FLUSH=1.
void run_limit_cpu_cache(Context& ctx) {
  const int rc = run_limit_program(ctx, true);
  ctx.check(rc == 0, "the cpu-cache form's bars: softwrap faster than PMDK with its flushes off on every workload; "
                     "undo with its ordering fences at least 1.3x undo without them where a transaction stores "
                     "several words (see limit_meta.csv)");
}

}  // namespace softwrap::bench
