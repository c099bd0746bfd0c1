// test_trace.h — hand-built traces for the themis tests: the events the
// trace medium would record, with their work given in cycles of the
// simulated core (one tick is one cycle).
#ifndef SOFTWRAP_THEMIS_TEST_TRACE_H_
#define SOFTWRAP_THEMIS_TEST_TRACE_H_

#include <functional>
#include <string>
#include <vector>

#include "crashsim/model.h"
#include "themis/machine.h"
#include "themis/persist_check.h"
#include "themis/trace_reader.h"

namespace softwrap::themis {

struct TestTrace {
  std::vector<TraceEvent> ev;
  uint64_t next_val = 1;

  TestTrace& add(TraceKind k, uint8_t t, uint64_t off, uint32_t aux, uint32_t work, const char* label) {
    ev.push_back({k, t, aux, off, ~uint64_t{0}, next_val++, label, work});
    return *this;
  }
  TestTrace& store(uint8_t t, uint64_t off, uint32_t work = 0) {
    return add(TraceKind::kStore, t, off & ~uint64_t{7}, 0, work, "store");
  }
  TestTrace& stream(uint8_t t, uint64_t off, uint32_t work = 0) {
    return add(TraceKind::kStream, t, off & ~uint64_t{7}, 0, work, "stream");
  }
  TestTrace& flush(uint8_t t, uint64_t off, uint32_t lines = 1, uint32_t work = 0) {
    return add(TraceKind::kFlush, t, off & ~uint64_t{63}, lines, work, "flush");
  }
  TestTrace& fence(uint8_t t, FenceKind k, uint32_t work = 0) {
    return add(TraceKind::kFence, t, 0, static_cast<uint32_t>(k), work, "fence");
  }
  TestTrace& load(uint8_t t, uint64_t off, uint32_t n = 8, uint32_t work = 0) {
    return add(TraceKind::kLoad, t, off, n, work, "load");
  }
  Program program(bool drop_log_order_fences, unsigned cores = 4) const {
    ReadOptions o;
    o.drop_log_order_fences = drop_log_order_fences;
    o.ticks_per_ns = 3;
    Program p;
    std::string why;
    if (!read_trace(ev, o, cores, &p, &why)) p.threads.clear();
    return p;
  }
};

// A run whose persist order was checked.
struct Checked {
  bool ok = false;  // the trace was read and the run finished
  std::string why;
  Stats stats;
  uint64_t order = 0, fence = 0;  // violations
  std::vector<std::string> examples;
};

// Runs `ev` on a machine of configuration `cfg` (the design's removable
// fences dropped unless it keeps them), its persist order checked under
// `p`; `after` sees the machine once the run is over.
inline Checked run_checked(const std::vector<TraceEvent>& ev, const Config& cfg, crashsim::Persistency p,
                           double ticks_per_ns, const std::function<void(Machine&)>& after = {}) {
  ReadOptions o;
  o.drop_log_order_fences = !keeps_log_order_fences(cfg.design);
  o.ticks_per_ns = ticks_per_ns;
  Program prog;
  Checked out;
  if (!read_trace(ev, o, cfg.cores, &prog, &out.why)) return out;
  PersistCheck check(ev, prog.footprint, p);
  Machine m(cfg);
  out.ok = m.run(prog, {}, &check, &out.stats, &out.why);
  out.order = check.order_violations();
  out.fence = check.fence_violations();
  out.examples = check.examples();
  if (after) after(m);
  return out;
}

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_TEST_TRACE_H_
