// trace_reader.h — turns a trace of the trace medium into the per-core
// programs the Machine runs.
//
// The trace (medium/trace_medium.h, recorded with TraceOptions loads and
// work) holds, per thread in program order, every temporal store (one
// event per word piece), non-temporal store (one per word), flush (a run
// of lines), fence (with its FenceKind), load of pool memory, and the work
// between them in TSC ticks.  Each becomes one operation per cache line
// for the core of the same index:
//   kStore   a temporal store to a line (one per store event);
//   kStream  a non-temporal store of one word of a line;
//   kFlush   a clwb of one line;
//   kFence   an sfence (kDrain too: a fence of the issuing core);
//   kLoad    a load of one line (a load spanning lines is one per line).
// Work becomes cycles of the simulated core: a TSC tick is taken as one
// cycle (cycles_per_tick; the TSC runs at the recording CPU's nominal
// clock), i.e. the simulated core runs the instructions between two events
// in the cycles the recording core took.  A gap longer than max_work_ns (a
// preemption, a page fault: the recording machine is shared) is cut to it
// and counted.  The fences a design drops
// (drop_log_order_fences: FenceKind::kLogOrder) and markers are removed,
// their work moved to the next operation.
#ifndef SOFTWRAP_THEMIS_TRACE_READER_H_
#define SOFTWRAP_THEMIS_TRACE_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/counters.h"
#include "medium/trace_medium.h"
#include "themis/config.h"

namespace softwrap::themis {

enum class OpKind : uint8_t { kLoad, kStore, kStream, kFlush, kFence };

struct Op {
  OpKind kind;
  uint8_t word;     // kStream: the word of the line (0..7)
  FenceKind fence;  // kFence
  uint32_t work;    // cycles of work before it
  uint64_t line;    // byte offset / 64 (kLoad, kStore, kStream, kFlush)
  uint32_t event;   // index of its trace event
};

struct ReadOptions {
  bool drop_log_order_fences = false;
  double cycles_per_tick = 1.0;
  double max_work_ns = 10000;
  // The trace's TSC ticks per ns (Trace::work_ticks_per_ns); 0: no work.
  double ticks_per_ns = 0;
};

struct Program {
  std::vector<std::vector<Op>> threads;  // per core, program order
  uint64_t footprint = 0;                // bytes: one past the highest offset touched
  uint64_t dropped_fences = 0;
  uint64_t capped_gaps = 0;              // gaps cut to max_work_ns
  double work_cycles = 0;                // total work, after capping
  size_t ops() const;
};

// Builds the programs; `why` says what is wrong if it returns false (more
// threads than cores, an event kind it does not know).
bool read_trace(const std::vector<TraceEvent>& events, const ReadOptions& o, unsigned cores, Program* out,
                std::string* why);

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_TRACE_READER_H_
