// bench_cmd.cc — `softwrap bench`: the SoftWrAP papers' evaluation, one
// experiment per figure or table (bench/suite, docs/results.md).
//
// A thin front end: it parses the command line and hands the experiment
// names and options to the suite library (bench/suite/suite.h), which runs
// them, writes CSV files and PNG plots under --out and prints one summary
// line per experiment.  Without the suite (SOFTWRAP_BUILD_BENCH=OFF) the
// command only explains that it is missing.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.h"

#ifdef SOFTWRAP_HAVE_BENCH_SUITE
#include "suite.h"
#endif

namespace softwrap::cli {

void bench_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap bench <experiment>... | all | list  [--quick] [--out DIR]\n"
          "                      [--pool-dir DIR] [--no-plot] [--no-pin] [--time-scale X]\n"
          "\n"
          "Reproduces the SoftWrAP evaluation on scm-emu (the papers' emulated SCM,\n"
          "Tw = 1 us, Ts = 220 ns) and on x86, compares with PMDK (libpmemobj),\n"
          "measures the Themis paper's Figs. 3, 8 and 10 (bench themis), and how far\n"
          "every workload and a load through the API are from plain memory and from\n"
          "PMDK (bench limit: runs sw_bench_limit, about 6 minutes).\n"
          "Each experiment writes CSV files and a PNG plot to DIR/<experiment>/ and\n"
          "prints one line; a progress line is shown on stderr while it runs.\n"
          "\n"
          "  --quick          small arrays and short cells (smoke test, < 3 minutes)\n"
          "  --out DIR        output directory (default: results)\n"
          "  --pool-dir DIR   where the benchmark pool files go (default: /dev/shm;\n"
          "                   about 1.2 GiB, 2.4 GiB during the PMDK comparison,\n"
          "                   3.9 GiB during bench limit's loads)\n"
          "  --no-plot        CSV only (plots need /usr/bin/python3 with matplotlib)\n"
          "  --no-pin         do not pin single-threaded cells' foreground thread to one\n"
          "                   CPU and the retirement thread to the others\n"
          "  --time-scale X   multiply every measurement's duration by X\n"
          "  --wcl, --no-wcl  every pool the experiments open uses write-combined logging\n"
          "                   (SW_CONFIG_WCL), or none does: sets SOFTWRAP_WCL for the run\n"
          "                   (neither: each pool as its experiment sets it; a paper's\n"
          "                   system without WCL pins SW_CONFIG_NO_WCL, others leave it\n"
          "                   to the medium: docs/media.md)\n"
          "\n"
          "Exit status: 0 ok; 1 an experiment failed its correctness checks, or (not\n"
          "with --quick) a paper claim checked by the suite did not hold; 2 usage.\n");
#ifdef SOFTWRAP_HAVE_BENCH_SUITE
  fprintf(out, "\nExperiments:\n");
  for (const auto& e : softwrap::bench::experiments()) fprintf(out, "  %-9s %s\n", e.name, e.title);
#endif
}

int bench_command(const std::vector<std::string>& args) {
  Options opts({"out", "pool-dir", "time-scale"}, {"quick", "no-plot", "no-pin", "wcl", "no-wcl"});
  std::string err;
  if (!opts.parse(args, &err)) return usage_error(err, "bench");
  if (opts.help()) {
    bench_usage(stdout);
    return kExitOk;
  }
#ifndef SOFTWRAP_HAVE_BENCH_SUITE
  fprintf(stderr, "softwrap: this build has no benchmark suite (configure with SOFTWRAP_BUILD_BENCH=ON)\n");
  return kExitFailed;
#else
  if (opts.positional().empty()) return usage_error("name an experiment, 'all' or 'list'", "bench");
  if (opts.positional().size() == 1 && opts.positional()[0] == "list") {
    for (const auto& e : softwrap::bench::experiments()) printf("%-9s %s\n", e.name, e.title);
    return kExitOk;
  }
  if (opts.has("wcl") && opts.has("no-wcl")) return usage_error("--wcl and --no-wcl contradict each other", "bench");
  // The experiments set their pools' flags themselves; the environment wins
  // over them, as it does for any program.
  if (opts.has("wcl")) setenv("SOFTWRAP_WCL", "1", 1);
  if (opts.has("no-wcl")) setenv("SOFTWRAP_WCL", "0", 1);
  softwrap::bench::SuiteOptions o;
  o.quick = opts.has("quick");
  o.plot = !opts.has("no-plot");
  o.pin = !opts.has("no-pin");
  o.out_dir = opts.get("out", "results");
  o.pool_dir = opts.get("pool-dir", "/dev/shm");
  if (opts.has("time-scale")) {
    char* end = nullptr;
    o.time_scale = std::strtod(opts.get("time-scale").c_str(), &end);
    if (*end != '\0' || !(o.time_scale > 0 && o.time_scale <= 100)) {
      return usage_error("--time-scale needs a number in (0, 100]", "bench");
    }
  }
  int rc = softwrap::bench::run_suite(opts.positional(), o);
  return rc == 2 ? kExitUsage : rc == 0 ? kExitOk : kExitFailed;
#endif
}

}  // namespace softwrap::cli
