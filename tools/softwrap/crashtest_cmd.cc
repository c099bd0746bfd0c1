// crashtest_cmd.cc — `softwrap crashtest`: the crash simulator from the
// command line (src/crashsim, docs/crash-simulator.md).
//
// Runs every selected engine under every selected persistency model on
// every workload, round after round with new seeds until the level's image
// target is met, then the controls; prints failure reports, the controls'
// outcomes and statistics, and as its last line exactly
//   crashtest: images=N distinct=D failures=F controls=C/T
// Exit 0 only when F = 0 and all T controls behaved as they must.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "crashsim/fresh_workload.h"
#include "crashsim/help_workload.h"
#include "crashsim/object_workload.h"
#include "crashsim/paper_workloads.h"
#include "crashsim/share_workload.h"
#include "crashsim/suite.h"

namespace softwrap::cli {

void crashtest_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap crashtest [--quick|--full] [--engine E] [--model x86|themis|page-cache|eadr]\n"
          "                          [--cpu-cache temporal|non-temporal] [--writeback-unit N] [--seed S] [--max-exhaustive N]\n"
          "                          [--workload W] [--size N] [--images N] [--no-controls] [--progress]\n"
          "\n"
          "Simulates power failures at every fence and wrap boundary of seeded workloads,\n"
          "enumerates the persisted images the x86 (ADR), Themis, page cache or eADR\n"
          "persistency model allows, and checks that recovery (also when itself interrupted) yields the\n"
          "state before or after the interrupted wrap.\n"
          "\n"
          "  --quick            at least 100,000 images (default)\n"
          "  --full             at least 10 million images (long)\n"
          "  --engine E         softwrap, softwrap-local or undo (default: all three);\n"
          "                     undo-themis must pass under --model themis and fail under\n"
          "                     x86 (its undo records are not fenced); nonatomic fails\n"
          "  --model M          x86, themis, page-cache or eadr (default: x86 and themis).\n"
          "                     page-cache: an ordinary file under the msync medium; any\n"
          "                     dirty page may be written back at any time, a fence syncs\n"
          "                     the pages its thread flushed or streamed; its controls run.\n"
          "                     eadr: the CPU caches persist (eADR, CXL): a store is durable\n"
          "                     once visible, in x86-TSO order; the engines run in the\n"
          "                     medium's cpu-cache form (no flushes, ordering fences\n"
          "                     elided; docs/media.md), both stream forms; its controls run\n"
          "  --cpu-cache F      the cpu-cache form with temporal or non-temporal streams\n"
          "                     only (default under eadr: both); with another model, the\n"
          "                     engines run in that form under it (they must fail x86)\n"
          "  --writeback-unit N the page cache's unit of writeback in bytes, a power of two\n"
          "                     from 512 (a sector: page writes tear) to 4096 (default)\n"
          "  --seed S           first seed (default 1); round r uses S + r\n"
          "  --max-exhaustive N enumerate every image of a crash point if there are at most N\n"
          "                     (default 16384); otherwise sample\n"
          "  --workload W       one of the workloads listed below (default: the simulator's\n"
          "                     own), a shared one (docs/workloads.md), themis: the\n"
          "                     Themis paper's nine shared workloads, fresh: the five\n"
          "                     fresh-memory workloads (issue 23), help: the three\n"
          "                     workloads of commits that help retirement (issue 24), or\n"
          "                     share: the two of a pool several handles share (issue 26)\n"
          "  --size N           wraps per workload run (default 12 quick, 40 full)\n"
          "  --images N         image target instead of the level's\n"
          "  --no-controls      skip the controls (then controls=0/0)\n"
          "  --progress         a line per round on stderr\n"
          "\n"
          "Last line: crashtest: images=N distinct=D failures=F controls=C/T\n"
          "Exit status 0 only if F = 0 and C = T.\n"
          "\n"
          "Workloads:\n");
  for (const crashsim::Workload& w : crashsim::workloads()) fprintf(out, "  %-12s %s\n", w.name, w.what);
  fprintf(out, "Fresh-memory workloads (--workload fresh: all five):\n");
  for (const crashsim::Workload& w : crashsim::fresh_workloads()) fprintf(out, "  %-12s %s\n", w.name, w.what);
  fprintf(out, "Workloads of commits that help retirement (--workload help: all three):\n");
  for (const crashsim::Workload& w : crashsim::help_workloads()) fprintf(out, "  %-12s %s\n", w.name, w.what);
  fprintf(out, "Object-write workloads (--workload objects: all three):\n");
  for (const crashsim::Workload& w : crashsim::object_workloads()) fprintf(out, "  %-12s %s\n", w.name, w.what);
  fprintf(out, "Workloads of a pool several handles share (--workload share: both; --full runs them too):\n");
  for (const crashsim::Workload& w : crashsim::share_workloads()) fprintf(out, "  %-12s %s\n", w.name, w.what);
  fprintf(out, "Shared workloads (workloads/):\n");
  for (const crashsim::Workload& w : crashsim::registry_workloads()) fprintf(out, "  %-12s %s\n", w.name, w.what);
}

int crashtest_command(const std::vector<std::string>& args) {
  Options opts({"engine", "model", "cpu-cache", "writeback-unit", "seed", "max-exhaustive", "workload", "size", "images"},
               {"quick", "full", "no-controls", "progress"});
  std::string err;
  if (!opts.parse(args, &err)) return usage_error(err, "crashtest");
  if (opts.help()) {
    crashtest_usage(stdout);
    return kExitOk;
  }
  if (!opts.positional().empty()) return usage_error("unexpected argument '" + opts.positional()[0] + "'", "crashtest");
  if (opts.has("quick") && opts.has("full")) return usage_error("--quick and --full exclude each other", "crashtest");
  crashsim::SuiteOptions so;
  so.full = opts.has("full");
  so.controls = !opts.has("no-controls");
  if (opts.has("progress")) so.progress = stderr;
  if (opts.has("engine")) {
    sw_engine_kind e;
    if (!parse_engine(opts.get("engine"), &e) || e == SW_ENGINE_DEFAULT) {
      return usage_error("unknown engine '" + opts.get("engine") + "'", "crashtest");
    }
    so.engines = {e};
  }
  if (opts.has("model")) {
    crashsim::Persistency p;
    if (!crashsim::parse_persistency(opts.get("model"), &p)) {
      return usage_error("unknown model '" + opts.get("model") + "' (x86, themis, page-cache or eadr)", "crashtest");
    }
    so.models = {p};
  }
  if (opts.has("cpu-cache")) {
    StreamForm f;
    std::string why;
    if (!parse_stream_form(opts.get("cpu-cache").c_str(), &f, &why) || opts.get("cpu-cache").empty()) {
      return usage_error("bad --cpu-cache (temporal or non-temporal)", "crashtest");
    }
    so.eadr_streams = {f};
    so.cpu_cache_all_models = true;
  }
  if (opts.has("writeback-unit")) {
    uint64_t u;
    if (!parse_u64(opts.get("writeback-unit"), &u) || !crashsim::valid_writeback_unit(u)) {
      return usage_error("bad --writeback-unit (a power of two from 512 to 4096)", "crashtest");
    }
    if (so.models != std::vector<crashsim::Persistency>{crashsim::Persistency::kPageCache}) {
      return usage_error("--writeback-unit needs --model page-cache", "crashtest");
    }
    so.writeback_unit = static_cast<uint32_t>(u);
  }
  if (opts.has("workload") && opts.get("workload") == "themis") {
    so.workloads = crashsim::themis_workloads();
  } else if (opts.has("workload") && opts.get("workload") == "fresh") {
    for (const crashsim::Workload& w : crashsim::fresh_workloads()) so.workloads.push_back(&w);
  } else if (opts.has("workload") && opts.get("workload") == "help") {
    for (const crashsim::Workload& w : crashsim::help_workloads()) so.workloads.push_back(&w);
  } else if (opts.has("workload") && opts.get("workload") == "objects") {
    for (const crashsim::Workload& w : crashsim::object_workloads()) so.workloads.push_back(&w);
  } else if (opts.has("workload") && opts.get("workload") == "share") {
    for (const crashsim::Workload& w : crashsim::share_workloads()) so.workloads.push_back(&w);
  } else if (opts.has("workload")) {
    const crashsim::Workload* w = crashsim::find_workload(opts.get("workload"));
    if (!w) return usage_error("unknown workload '" + opts.get("workload") + "'", "crashtest");
    so.workloads = {w};
  }
  uint64_t v;
  if (opts.has("seed")) {
    if (!parse_u64(opts.get("seed"), &v)) return usage_error("bad --seed", "crashtest");
    so.seed = v;
  }
  if (opts.has("max-exhaustive")) {
    if (!parse_u64(opts.get("max-exhaustive"), &v)) return usage_error("bad --max-exhaustive", "crashtest");
    so.max_exhaustive = v;
  }
  if (opts.has("size")) {
    if (!parse_u64(opts.get("size"), &v) || v == 0 || v > 100000) return usage_error("bad --size", "crashtest");
    so.size = static_cast<uint32_t>(v);
  }
  if (opts.has("images")) {
    if (!parse_u64(opts.get("images"), &v) || v == 0) return usage_error("bad --images", "crashtest");
    so.target_images = v;
  }

  const crashsim::SuiteResult r = crashsim::run_suite(so);
  for (const std::string& rep : r.reports) printf("%s\n\n", rep.c_str());
  for (const crashsim::ControlResult& c : r.controls) {
    printf("control: %-56s %s (%" PRIu64 " images, %" PRIu64 " failing)\n", c.name.c_str(),
           c.caught ? "ok" : "NOT AS EXPECTED", c.images, c.failures);
  }
  for (const crashsim::ControlResult& c : r.controls) {
    if (!c.caught && !c.detail.empty()) printf("%s\n\n", c.detail.c_str());
  }
  printf("runs=%" PRIu64 " crash-points=%" PRIu64 " exhaustive-points=%" PRIu64 " recovery-crash-images=%" PRIu64
         " seconds=%.1f images/s=%.0f\n",
         r.runs, r.crash_points, r.exhaustive_points, r.nested_images, r.seconds,
         r.seconds > 0 ? static_cast<double>(r.images) / r.seconds : 0.0);
  if (opts.has("progress")) {
    for (const auto& [label, n] : r.points_by_label) printf("crash points at %-36s %" PRIu64 "\n", label.c_str(), n);
  }
  if (r.mixed) printf("note: %" PRIu64 " line states mixed temporal and streamed stores to one word (not modelled)\n", r.mixed);
  printf("%s\n", r.summary().c_str());
  fflush(stdout);
  return r.passed() ? kExitOk : kExitFailed;
}

}  // namespace softwrap::cli
