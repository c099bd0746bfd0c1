// persist_check.cc — a PersistObserver over crashsim::Model.
#include "themis/persist_check.h"

#include <cinttypes>
#include <cstdio>

namespace softwrap::themis {

PersistCheck::PersistCheck(const std::vector<TraceEvent>& events, uint64_t footprint, crashsim::Persistency p)
    : events_(events), durable_(footprint + 64, 0), model_(durable_.data(), durable_.size(), p, 0, nullptr) {
  model_.set_observer([this](const crashsim::Unit& u, const crashsim::Unit* cause) { violated(u, cause); });
}

void PersistCheck::performed(const Op& op) {
  TraceEvent e = events_[op.event];
  if (op.kind == OpKind::kFlush) {  // one line of a flush event
    e.off = op.line * 64;
    e.aux = 1;
  } else if (op.kind == OpKind::kFence) {
    e.kind = TraceKind::kFence;  // a drain fences only the core that issues it
  }
  model_.step(e, op.event);
}

void PersistCheck::persisted_line(uint64_t line, uint64_t version) { model_.persist_line(line * 64, version); }

void PersistCheck::persisted_stream(uint32_t event) { model_.persist_stream(events_[event].thread, event); }

void PersistCheck::violated(const crashsim::Unit& u, const crashsim::Unit* cause) {
  ++(cause ? order_ : fence_);
  if (examples_.size() >= 5) return;
  char b[256];
  if (cause) {
    std::snprintf(b, sizeof b,
                  "thread %u: temporal store (event %" PRIu64 ", \"%s\", offset %" PRIu64
                  ") persisted before its earlier non-temporal store (event %" PRIu64 ", \"%s\", offset %" PRIu64 ")",
                  cause->thread, cause->seq, cause->label, cause->word, u.seq, u.label, u.word);
  } else {
    std::snprintf(b, sizeof b,
                  "thread %u: a fence completed before store event %" PRIu64 " (\"%s\", offset %" PRIu64
                  ") had persisted",
                  u.thread, u.seq, u.label, u.word);
  }
  examples_.emplace_back(b);
}

}  // namespace softwrap::themis
