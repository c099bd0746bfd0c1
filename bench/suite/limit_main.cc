// limit_main.cc — sw_bench_limit: the command line of `softwrap bench
// limit`'s program (limit.h).
//
//   sw_bench_limit [--quick] [--out DIR] [--pool-dir DIR] [--no-pin]
//                  [--time-scale X] [--only workloads|loads] [--cpu-cache]
//
// --cpu-cache: the x86 medium's cpu-cache form against PMDK with
// PMEM_NO_FLUSH=1, and the other forms of softwrap and undo (limit.h).
// Writes limit.csv, limit_rounds.csv, limit_loads.csv, limit_stores.csv,
// limit_loads_rounds.csv and limit_meta.csv (notes and the bars' checks)
// into DIR.  SOFTWRAP_LIMIT_WORKLOADS=a,b runs only those workloads.
// Exit status: 0, every bar met; 1, a bar missed (the CSV files are
// complete); 2, an error or a wrong answer (a structure that failed to
// verify, a load that returned the wrong value).  With libpmemobj built in,
// the program re-executes itself with PMEM_IS_PMEM_FORCE=1 if that is not
// set (libpmem reads it when it is loaded; see pmdk_array.cc).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "limit.h"

namespace softwrap::bench::limit {
namespace {

namespace wl = softwrap::workloads;

std::vector<const wl::Info*> chosen_workloads() {
  const char* only = std::getenv("SOFTWRAP_LIMIT_WORKLOADS");
  if (!only || !*only) return wl::all_workloads();
  std::vector<const wl::Info*> out;
  const std::string list = only;
  for (size_t at = 0; at <= list.size();) {
    const size_t end = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, end - at);
    const wl::Info* info = wl::find_workload(name);
    if (!info) fail("SOFTWRAP_LIMIT_WORKLOADS: unknown workload '" + name + "' (" + wl::workload_names() + ")");
    out.push_back(info);
    at = end + 1;
  }
  return out;
}

int usage() {
  std::fprintf(stderr,
               "usage: sw_bench_limit [--quick] [--out DIR] [--pool-dir DIR] [--no-pin] [--time-scale X]\n"
               "                      [--only workloads|loads] [--cpu-cache]\n");
  return 2;
}

int run(int argc, char** argv) {
  SuiteOptions o;
  o.out_dir = "results/limit";
  bool workloads = true, loads = true;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--no-pin") {
      o.pin = false;
    } else if (a == "--out" && i + 1 < argc) {
      o.out_dir = argv[++i];
    } else if (a == "--pool-dir" && i + 1 < argc) {
      o.pool_dir = argv[++i];
    } else if (a == "--time-scale" && i + 1 < argc) {
      char* end = nullptr;
      o.time_scale = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(o.time_scale > 0 && o.time_scale <= 100)) return usage();
    } else if (a == "--cpu-cache") {
      g_cpu_cache = true;  // main set the environment
    } else if (a == "--only" && i + 1 < argc) {
      const std::string part = argv[++i];
      if (part != "workloads" && part != "loads") return usage();
      workloads = part == "workloads";
      loads = part == "loads";
    } else {
      return usage();
    }
  }
  // The output directory is the caller's (`softwrap bench limit` passes
  // <out>/limit): write there directly.
  Context ctx(o, ".", "limit_meta.csv", "limit");
  const std::vector<const wl::Info*> which = workloads ? chosen_workloads() : std::vector<const wl::Info*>{};
  ctx.set_total(static_cast<int>(which.size()) * workload_steps(ctx) + (loads ? loads_steps(ctx) : 0));
  if (workloads) run_workloads(ctx, which);
  if (loads) run_loads(ctx);
  return ctx.failures() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace softwrap::bench::limit

int main(int argc, char** argv) {
  bool cpu_cache = false;
  for (int i = 1; i < argc; ++i) cpu_cache |= std::strcmp(argv[i], "--cpu-cache") == 0;
  if (softwrap::bench::limit::have_pmdk()) {
    // libpmem reads both when it is loaded: PMEM_NO_FLUSH=1 is PMDK's own
    // switch for a platform whose caches persist (--cpu-cache).
    const char* force = std::getenv("PMEM_IS_PMEM_FORCE");
    const char* no_flush = std::getenv("PMEM_NO_FLUSH");
    const bool flush_ok = cpu_cache ? no_flush && std::strcmp(no_flush, "1") == 0 : !no_flush;
    if (!force || std::strcmp(force, "1") != 0 || !flush_ok) {
      setenv("PMEM_IS_PMEM_FORCE", "1", 1);
      if (cpu_cache) {
        setenv("PMEM_NO_FLUSH", "1", 1);
      } else {
        unsetenv("PMEM_NO_FLUSH");
      }
      execv("/proc/self/exe", argv);
      std::perror("sw_bench_limit: re-exec with PMEM_IS_PMEM_FORCE=1");
      return 2;
    }
  }
  for (const char* v : {"SOFTWRAP_ENGINE", "SOFTWRAP_MEDIUM", "SOFTWRAP_SCM_WRITE_NS", "SOFTWRAP_SCM_SERIAL_NS",
                        "SOFTWRAP_PERSISTENCE", "SOFTWRAP_CPU_CACHE_STREAMS", "SOFTWRAP_CPU_CACHE_FENCES"}) {
    unsetenv(v);
  }
  if (cpu_cache) setenv("SOFTWRAP_PERSISTENCE", "cpu-cache", 1);
  try {
    return softwrap::bench::limit::run(argc, argv);
  } catch (const softwrap::bench::BenchFailure& f) {
    std::fprintf(stderr, "\nsw_bench_limit: %s\n", f.what.c_str());
    return 2;
  }
}
