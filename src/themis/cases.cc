// cases.cc — the constructed traces of cases.h.
#include "themis/cases.h"

namespace softwrap::themis {
namespace {

constexpr uint64_t kData = 1 << 16, kLog = 4096;

struct Builder {
  std::vector<TraceEvent> ev;
  void add(TraceKind k, uint64_t off, uint32_t aux, uint32_t work, const char* label, uint8_t thread = 0) {
    ev.push_back({k, thread, aux, off, ~uint64_t{0}, ev.size() + 1, label, work});
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

std::vector<TraceEvent> full_queue_case() {
  Builder b;
  constexpr uint64_t kLines = 100;
  for (uint8_t t = 0; t < 2; ++t) {
    const uint64_t data = kData + t * 64 * kLines;
    for (uint64_t i = 0; i < kLines; ++i) b.add(TraceKind::kLoad, data + 64 * i, 8, 0, "load", t);
    b.add(TraceKind::kStream, kLog + 64 * t, 0, 0, "undo:record", t);
    b.add(TraceKind::kFence, 0, static_cast<uint32_t>(FenceKind::kLogOrder), 0, "undo:log-order", t);
    for (uint64_t i = 0; i < kLines; ++i) {
      b.add(TraceKind::kStore, data + 64 * i, 0, 0, "undo:data", t);
      b.add(TraceKind::kFlush, data + 64 * i, 1, 0, "flush", t);
    }
    b.add(TraceKind::kFence, 0, static_cast<uint32_t>(FenceKind::kCommit), 0, "commit", t);
  }
  return b.ev;
}

std::vector<TraceEvent> wrap_case() {
  Builder b;
  b.add(TraceKind::kLoad, kData, 8, 0, "load");
  b.add(TraceKind::kStream, kLog, 0, 0, "undo:record");
  b.add(TraceKind::kFence, 0, static_cast<uint32_t>(FenceKind::kLogOrder), 0, "undo:log-order");
  b.add(TraceKind::kStore, kData, 0, 0, "undo:data");
  b.add(TraceKind::kFlush, kData, 1, 0, "flush");
  for (uint64_t i = 1; i <= 60; ++i) b.add(TraceKind::kStream, kLog + 64 * i, 0, 0, "undo:record");
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

Config far_nt_path(Config c) {
  c.wcb_to_pm_ns = 1000;
  return c;
}

Config slow_llc_path(Config c) {
  c.llc_to_pm_ns = 1000;
  c.seq_bits = 6;
  return c;
}

}  // namespace softwrap::themis
