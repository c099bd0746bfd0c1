// cases.cc — the constructed traces of cases.h.
#include "themis/cases.h"

namespace softwrap::themis {
namespace {

constexpr uint64_t kData = 1 << 16, kLog = 4096;

struct Builder {
  std::vector<TraceEvent> ev;
  void add(TraceKind k, uint64_t off, uint32_t aux, uint32_t work, const char* label) {
    ev.push_back({k, 0, aux, off, ~uint64_t{0}, ev.size() + 1, label, work});
  }
};

}  // namespace

std::vector<TraceEvent> held_record_case() {
  Builder b;
  b.add(TraceKind::kLoad, kData, 8, 0, "load");           // the data line is cached
  b.add(TraceKind::kStream, kLog, 0, 100, "undo:record");  // one word: a partial WCB entry
  b.add(TraceKind::kFence, 0, static_cast<uint32_t>(FenceKind::kLogOrder), 0, "undo:log-order");
  b.add(TraceKind::kStore, kData, 0, 0, "undo:data");
  b.add(TraceKind::kFlush, kData, 1, 0, "flush");
  b.add(TraceKind::kStore, kData + 128, 0, 5000, "work");
  b.add(TraceKind::kFence, 0, static_cast<uint32_t>(FenceKind::kCommit), 0, "commit");
  return b.ev;
}

std::vector<TraceEvent> slow_path_case() {
  Builder b;
  b.add(TraceKind::kLoad, kData, 8, 0, "load");
  for (uint64_t k = 0; k < 8; ++k) b.add(TraceKind::kStream, kLog + 8 * k, 0, 0, "undo:record");
  b.add(TraceKind::kFence, 0, static_cast<uint32_t>(FenceKind::kLogOrder), 0, "undo:log-order");
  b.add(TraceKind::kStore, kData, 0, 0, "undo:data");
  b.add(TraceKind::kFlush, kData, 1, 0, "flush");
  b.add(TraceKind::kFence, 0, static_cast<uint32_t>(FenceKind::kCommit), 0, "commit");
  return b.ev;
}

Config holding_wcb(Config c) {
  c.wcb_idle_ns = 1000;
  return c;
}

Config slow_nt_path(Config c) {
  c.wcb_to_pm_ns = 100;
  return c;
}

}  // namespace softwrap::themis
