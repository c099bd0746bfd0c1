// trace_reader.cc — trace events to per-core operations.
#include "themis/trace_reader.h"

#include <algorithm>

namespace softwrap::themis {

size_t Program::ops() const {
  size_t n = 0;
  for (const auto& t : threads) n += t.size();
  return n;
}

bool read_trace(const std::vector<TraceEvent>& events, const ReadOptions& o, unsigned cores, Program* out,
                std::string* why) {
  *out = Program{};
  const double cycles_per_tick = o.ticks_per_ns > 0 ? o.cycles_per_tick : 0;
  const double cap = o.max_work_ns * o.ticks_per_ns * o.cycles_per_tick;
  std::vector<double> carry;  // per thread: work of removed events
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (e.thread >= cores) {
      *why = "the trace has more threads than the machine has cores (" + std::to_string(cores) + ")";
      return false;
    }
    if (out->threads.size() <= e.thread) {
      out->threads.resize(e.thread + 1u);
      carry.resize(e.thread + 1u, 0);
    }
    double w = e.work * cycles_per_tick;
    if (w > cap) {
      w = cap;
      ++out->capped_gaps;
    }
    carry[e.thread] += w;
    auto& prog = out->threads[e.thread];
    auto emit = [&](OpKind k, uint64_t line, uint8_t word, FenceKind f) {
      const double c = std::min(carry[e.thread], double{UINT32_MAX});
      prog.push_back(Op{k, word, f, static_cast<uint32_t>(c), line, static_cast<uint32_t>(i)});
      out->work_cycles += c;
      carry[e.thread] = 0;
    };
    auto touch = [&](uint64_t end) { out->footprint = std::max(out->footprint, end); };
    switch (e.kind) {
      case TraceKind::kStore:
        emit(OpKind::kStore, e.off / 64, 0, FenceKind::kOther);
        touch(e.off + 8);
        break;
      case TraceKind::kStream:
        emit(OpKind::kStream, e.off / 64, static_cast<uint8_t>(e.off % 64 / 8), FenceKind::kOther);
        touch(e.off + 8);
        break;
      case TraceKind::kFlush:
        for (uint32_t k = 0; k < e.aux; ++k) emit(OpKind::kFlush, e.off / 64 + k, 0, FenceKind::kOther);
        touch(e.off + uint64_t{e.aux} * 64);
        break;
      case TraceKind::kLoad:
        if (e.aux == 0) break;
        for (uint64_t l = e.off / 64; l <= (e.off + e.aux - 1) / 64; ++l) emit(OpKind::kLoad, l, 0, FenceKind::kOther);
        touch(e.off + e.aux);
        break;
      case TraceKind::kFence: {
        const auto k = static_cast<FenceKind>(e.aux);
        if (o.drop_log_order_fences && k == FenceKind::kLogOrder) {
          ++out->dropped_fences;
          break;
        }
        emit(OpKind::kFence, 0, 0, k);
        break;
      }
      case TraceKind::kDrain:
        emit(OpKind::kFence, 0, 0, FenceKind::kOther);
        break;
      case TraceKind::kMark:
        break;
      default:
        *why = "unknown trace event kind " + std::to_string(static_cast<int>(e.kind));
        return false;
    }
  }
  out->footprint = (out->footprint + 63) & ~uint64_t{63};
  return true;
}

}  // namespace softwrap::themis
