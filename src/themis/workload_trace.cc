// workload_trace.cc — workloads run on the trace medium.
#include "themis/workload_trace.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "medium/medium.h"
#include "workloads/registry.h"
#include "workloads/runner.h"

namespace softwrap::themis {
namespace {

std::unique_ptr<Medium> trace_factory(const MediumOptions&, void* base, size_t len, void* ctx) {
  return std::make_unique<TraceMedium>(base, len, static_cast<Trace*>(ctx), nullptr);
}

// Removes the pool file however record_workload returns.
struct TempPool {
  std::string path;
  sw_pool* pool = nullptr;
  ~TempPool() {
    if (pool) sw_pool_close(pool);
    if (!path.empty()) unlink(path.c_str());
  }
};

bool is_log_order_fence(const TraceEvent& e) {
  return e.kind == TraceKind::kFence && static_cast<FenceKind>(e.aux) == FenceKind::kLogOrder;
}

// One traced run of the workload on a fresh pool: setup untraced, then
// `spec.transactions` per thread recorded with `o`, then verify().
bool traced_run(const RecordSpec& spec, const workloads::Params& p, TraceOptions o, Trace* trace, std::string* why) {
  static std::atomic<unsigned> serial{0};
  TempPool f;
  f.path = spec.pool_dir + "/softwrap-themis-sim-" + std::to_string(getpid()) + "-" + std::to_string(serial++) +
           ".pool";
  const sw_config cfg = workloads::workload_config(spec.engine, SW_MEDIUM_AUTO);
  set_medium_factory(&trace_factory, trace);
  f.pool = sw_pool_create(f.path.c_str(), workloads::pool_bytes(*workloads::find_workload(spec.workload), p), &cfg);
  set_medium_factory(nullptr, nullptr);
  if (!f.pool) {
    *why = "cannot create the pool " + f.path + ": " + sw_errormsg();
    return false;
  }
  try {
    std::vector<workloads::ApiAccess> access(p.threads, workloads::ApiAccess(f.pool));
    std::unique_ptr<workloads::Workload> w = workloads::make_api_workload(spec.workload, &access, p);
    w->setup();
    trace->start(o);
    workloads::run_threads(*w, spec.transactions);
    trace->stop();
    const std::string bad = w->verify();
    if (!bad.empty()) {
      *why = spec.workload + " failed its verify() after the traced run: " + bad;
      return false;
    }
  } catch (const workloads::WorkloadError& e) {
    *why = spec.workload + ": " + e.what();
    return false;
  }
  return true;
}

}  // namespace

bool record_workload(const RecordSpec& spec, Recorded* out, std::string* why) {
  const workloads::Info* info = workloads::find_workload(spec.workload);
  if (!info) {
    *why = "unknown workload '" + spec.workload + "' (known: " + workloads::workload_names() + ")";
    return false;
  }
  const workloads::Params p = workloads::resolve(*info, spec.params);
  {
    Trace trace;  // outlives the pool, whose medium records into it
    if (!traced_run(spec, p, TraceOptions{.loads = true, .work = true}, &trace, why)) return false;
    out->events = trace.take_events();
    out->ticks_per_ns = trace.work_ticks_per_ns();
  }
  const unsigned passes = p.threads == 1 ? spec.work_passes : 0;
  for (unsigned k = 0; k < passes; ++k) {
    Trace trace;
    if (!traced_run(spec, p, TraceOptions{.loads = true, .work_only = true}, &trace, why)) return false;
    const std::vector<uint32_t> works = trace.take_works();
    if (works.size() != out->events.size()) {
      *why = spec.workload + ": the work pass saw " + std::to_string(works.size()) + " events, the traced run " +
             std::to_string(out->events.size()) + " (the program is not deterministic)";
      return false;
    }
    for (size_t i = 0; i < works.size(); ++i) out->events[i].work = std::min(out->events[i].work, works[i]);
  }
  uint64_t data = 0;
  for (const TraceEvent& e : out->events) {
    if (e.kind == TraceKind::kStore && std::strcmp(e.label, "undo:data") == 0) ++data;
    if (e.kind == TraceKind::kFence || e.kind == TraceKind::kDrain) ++out->fences;
    if (e.kind == TraceKind::kFence && static_cast<FenceKind>(e.aux) == FenceKind::kCommit) ++out->transactions;
    if (is_log_order_fence(e)) ++out->removable_fences;
  }
  out->stores_per_tx = out->transactions ? static_cast<double>(data) / static_cast<double>(out->transactions) : 0;
  return true;
}

bool share_work(std::vector<TraceEvent>* undo, std::vector<TraceEvent>* themis, std::string* why) {
  size_t j = 0;
  uint64_t carried = 0;  // work of the undo trace's dropped fences before event i
  for (size_t i = 0; i < undo->size(); ++i) {
    TraceEvent& u = (*undo)[i];
    if (is_log_order_fence(u)) {
      carried += u.work;
      u.work = 0;
      continue;
    }
    if (j >= themis->size()) {
      *why = "the undo-themis trace ends at event " + std::to_string(j) + " while undo's goes on";
      return false;
    }
    TraceEvent& t = (*themis)[j];
    // Values are not compared: checksums (undo records, allocator
    // headers) are seeded with the pool's UUID.  Where, what and how much
    // must be the same.
    if (u.kind != t.kind || u.thread != t.thread || u.off != t.off || u.mask != t.mask || u.aux != t.aux) {
      *why = "the traces differ at undo event " + std::to_string(i) + " / undo-themis event " + std::to_string(j) +
             " (\"" + u.label + "\" vs \"" + t.label + "\"): not the same program but for the fences";
      return false;
    }
    const uint64_t w = std::min<uint64_t>(uint64_t{u.work} + carried, t.work);
    u.work = t.work = static_cast<uint32_t>(w);
    carried = 0;
    ++j;
  }
  if (j != themis->size()) {
    *why = "the undo-themis trace has " + std::to_string(themis->size() - j) + " events more than undo's";
    return false;
  }
  return true;
}

}  // namespace softwrap::themis
