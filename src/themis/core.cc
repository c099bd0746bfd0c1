// core.cc — issue, the store buffer, the WCB's drain engine and the WBB's
// port to the LLC (see core.h for the simplified core).
#include "themis/core.h"

#include <algorithm>

#include "themis/machine.h"

namespace softwrap::themis {

Core::Core(unsigned id, const Config& cfg, Machine* m)
    : id_(id),
      cfg_(cfg),
      m_(m),
      wcb_(cfg.wcb_entries, tags_stores(cfg.design) ? cfg.tail_bits : 0),
      l1_(cfg.l1_kib, cfg.l1_ways),
      wbb_(cfg.wbb_entries, cfg.design == Design::kThemis),
      tags_(tags_stores(cfg.design)),
      numbers_(numbers_writebacks(cfg.design)) {}

void Core::set_program(const std::vector<Op>* ops, size_t warmup_ops) {
  ops_ = ops;
  warmup_ops_ = warmup_ops;
  pc_ = 0;
  work_spent_ = false;
  warmed_ = false;
  state_ = State::kRun;
  m_->events().push(0, Ev::kCoreResume, id_);
}

void Core::schedule_resume(Cycle t) { m_->events().push(t, Ev::kCoreResume, id_); }

// ------------------------------------------------------------------ issue

void Core::resume(Cycle now) {
  if (state_ == State::kDone) return;
  state_ = State::kRun;
  for (;;) {
    if (pc_ == warmup_ops_ && !warmed_) {
      warmed_ = true;
      warm_ = now;
    }
    if (pc_ == ops_->size()) {
      state_ = State::kDrainEnd;
      if (sb_.empty()) {
        state_ = State::kDone;
        stats_.finish = now;
      }
      return;
    }
    const Op& op = (*ops_)[pc_];
    Cycle t = now + 1;
    if (!work_spent_ && op.work > 0) {
      work_spent_ = true;
      t = now + op.work;
    } else {
      switch (op.kind) {
        case OpKind::kLoad: {
          ++stats_.loads;
          if (!sb_has_store(op.line) && !l1_.find(op.line)) {
            ++stats_.l1_misses;
            load_line_ = op.line;
            state_ = State::kLoad;
            stall_from_ = now;
            ++pc_;
            work_spent_ = false;
            if (!fill_pending(op.line)) {
              fills_.push_back(op.line);
              m_->request(id_, op.line, false, now);
            }
            return;
          }
          break;
        }
        case OpKind::kStore:
        case OpKind::kStream:
        case OpKind::kFlush:
          if (sb_.size() >= cfg_.store_buffer) {
            state_ = State::kSbFull;
            stall_from_ = now;
            return;
          }
          sb_.push_back(&op);
          kick_sb(now);
          break;
        case OpKind::kFence:
          ++stats_.fences;
          state_ = State::kFence;
          stall_from_ = now;
          force_drain_ = true;
          kick_wcb(now);
          try_fence(now);
          return;
      }
      ++stats_.ops;
      ++pc_;
      work_spent_ = false;
    }
    if (!m_->idle_until(t)) {
      state_ = State::kWork;
      schedule_resume(t);
      return;
    }
    now = t;
  }
}

bool Core::sb_has_store(uint64_t line) const {
  return std::any_of(sb_.begin(), sb_.end(), [&](const Op* o) { return o->kind == OpKind::kStore && o->line == line; });
}

bool Core::fill_pending(uint64_t line) const { return std::find(fills_.begin(), fills_.end(), line) != fills_.end(); }

void Core::filled(uint64_t line, Cycle now) {
  fills_.erase(std::remove(fills_.begin(), fills_.end(), line), fills_.end());
  if (state_ == State::kLoad && load_line_ == line) {
    stats_.load_stall += now - stall_from_;
    schedule_resume(now);
  }
  if (sb_wait_ == SbWait::kLine && sb_line_ == line) {
    // The store is performed as the line arrives, before another core's
    // request can take it away again (else two writers could starve).
    sb_wait_ = SbWait::kNone;
    if (!sb_scheduled_) sb_step(now);
  }
}

// ------------------------------------------------------------ store buffer

void Core::kick_sb(Cycle now) {
  if (sb_scheduled_ || sb_wait_ != SbWait::kNone) return;
  sb_scheduled_ = true;
  m_->events().push(now, Ev::kSbStep, id_);
}

void Core::sb_step(Cycle now) {
  sb_scheduled_ = false;
  if (sb_wait_ != SbWait::kNone || sb_.empty()) return;
  const Op& op = *sb_.front();
  bool ok = true;
  switch (op.kind) {
    case OpKind::kStore: ok = sb_store(op, now); break;
    case OpKind::kStream: ok = sb_stream(op, now); break;
    case OpKind::kFlush: sb_flush(op, now); break;
    default: break;
  }
  if (!ok) return;
  sb_.pop_front();
  if (state_ == State::kSbFull) {
    stats_.sb_stall += now - stall_from_;
    state_ = State::kWork;
    schedule_resume(now);
  }
  if (sb_.empty()) {
    if (state_ == State::kFence) try_fence(now);
    if (state_ == State::kDrainEnd) {
      state_ = State::kDone;
      stats_.finish = now;
    }
    return;
  }
  sb_scheduled_ = true;
  m_->events().push(now + 1, Ev::kSbStep, id_);
}

bool Core::sb_store(const Op& op, Cycle now) {
  L1Cache::Line* l = l1_.find(op.line);
  if (l && l->exclusive) {
    m_->store_performed(op);
    l1_.store(*l, tags_ ? wcb_.tail() : kNoTag);
    ++stats_.stores;
    // The store now depends on the WCB's entries below its tag: have them
    // drained rather than held for combining (our addition, see core.h).
    if ((tags_ || numbers_) && wcb_.tail() > drain_to_ && wcb_.head() != wcb_.tail()) {
      drain_to_ = wcb_.tail();
      ++drain_requests_;
      kick_wcb(now);
    }
    return true;
  }
  if (!victims_.empty()) {  // the fill's victim would have nowhere to go
    sb_wait_ = SbWait::kVictims;
    return false;
  }
  sb_wait_ = SbWait::kLine;
  sb_line_ = op.line;
  if (!fill_pending(op.line)) {
    if (!l) ++stats_.l1_misses;
    fills_.push_back(op.line);
    m_->request(id_, op.line, true, now);
  }
  return false;
}

bool Core::sb_stream(const Op& op, Cycle now) {
  // A non-temporal store takes its line out of the cache (x86).
  if (l1_.peek(op.line)) {
    if (auto wb = l1_.invalidate(op.line)) push_writeback(*wb, m_->version(op.line), false, now);
    m_->dropped(id_, op.line);
  }
  // themis-mc's wrap guard: no new number while a stamp two generations
  // back is unresolved (core.h).
  if (numbers_ && cfg_.seq_guard && !wcb_.holds_undrained(op.line) && !wcb_.full() && guard_closed()) {
    ++guard_stalls_;  // (the store buffer is not stepped again until seq_resolved clears the wait)
    sb_wait_ = SbWait::kSeqGuard;
    return false;
  }
  switch (wcb_.store(op.line, op.word, op.event, now)) {
    case WriteCombiningBuffer::Put::kAllocated:
    case WriteCombiningBuffer::Put::kCoalesced:
      m_->observer_performed(op);
      ++stats_.streams;
      kick_wcb(now);
      return true;
    case WriteCombiningBuffer::Put::kFull:
    case WriteCombiningBuffer::Put::kOverflowing:
      sb_wait_ = SbWait::kWcb;
      kick_wcb(now);
      return false;
  }
  return false;
}

void Core::sb_flush(const Op& op, Cycle now) {
  ++stats_.flushes;
  ++outstanding_flushes_;
  m_->observer_performed(op);
  m_->clwb(id_, op.line, now);
}

void Core::flush_ack(Cycle now) {
  --outstanding_flushes_;
  try_fence(now);
}

void Core::seq_resolved(uint32_t seq, Cycle now) {
  --unresolved_[generation(seq)];
  // The store buffer waits until the generation two back is all resolved.
  if (sb_wait_ == SbWait::kSeqGuard && !guard_closed()) {
    sb_wait_ = SbWait::kNone;
    kick_sb(now);
  }
  if (wbb_guard_wait_) {
    wbb_guard_wait_ = false;
    kick_wbb(now);
  }
}

void Core::try_fence(Cycle now) {
  if (state_ != State::kFence || !sb_.empty() || !wcb_.all_acked() || outstanding_flushes_ != 0) return;
  m_->observer_performed((*ops_)[pc_]);
  stats_.fence_stall += now - stall_from_;
  force_drain_ = false;
  ++stats_.ops;
  ++pc_;
  work_spent_ = false;
  state_ = State::kWork;
  schedule_resume(now + 1);
}

// --------------------------------------------------------------------- WCB

void Core::kick_wcb(Cycle t) {
  if (wcb_pump_at_ <= t) return;
  wcb_pump_at_ = t;
  m_->events().push(t, Ev::kWcbPump, id_);
}

void Core::wcb_pump(Cycle now) {
  if (now != wcb_pump_at_) return;  // superseded by an earlier pump
  wcb_pump_at_ = ~Cycle{0};
  if (!wcb_.has_undrained()) return;
  if (link_free_ > now) return kick_wcb(link_free_);
  const uint32_t h = wcb_.head();
  const WriteCombiningBuffer::Entry& e = wcb_.entry(h);
  const Cycle idle_at = e.last_write + cfg_.cycles(cfg_.wcb_idle_ns);
  const bool go = e.complete() || h + 1 != wcb_.tail() || force_drain_ || wcb_.overflowing() || h < drain_to_ ||
                  now >= idle_at;
  if (!go) return kick_wcb(idle_at);
  const uint32_t p = wcb_.drain();
  m_->events().push(now + cfg_.cycles(cfg_.wcb_to_pm_ns), Ev::kWcbArrive, id_, 0, p);
  link_free_ = now + cfg_.wcb_issue_cycles;
  if (wcb_.has_undrained()) kick_wcb(link_free_);
}

void Core::wcb_ack(uint32_t p, Cycle now) {
  const WriteCombiningBuffer::AckResult r = wcb_.ack(p);
  if (r.reset) {
    // (d) Overflow done: the core tells the L1 (nullify tags) and the WBB.
    l1_.nullify_tags();
    wbb_.overflow_reset(now);
    drain_to_ = 0;
    kick_wbb(now);
  } else if (r.head_ack_moved && wbb_.head_ack(wcb_.head_ack(), now) > 0) {
    kick_wbb(now);
  }
  if (sb_wait_ == SbWait::kWcb && !wcb_.full() && !wcb_.overflowing()) {
    sb_wait_ = SbWait::kNone;
    kick_sb(now);
  }
  if (wcb_.has_undrained()) kick_wcb(now);
  try_fence(now);
}

// --------------------------------------------------------------------- WBB

void Core::request_drain() {
  const uint32_t da = wbb_.max_waiting_da();
  if (da == kNoTag || da <= drain_to_) return;
  drain_to_ = da;
  ++drain_requests_;
}

void Core::push_writeback(const Writeback& wb, uint64_t version, bool flush, Cycle now) {
  if (wbb_.find(wb.line)) {
    if (wbb_.insert(wb, version, flush, now)) request_drain();
  } else if (!victims_.empty() || wbb_.full()) {
    victims_.push_back({wb, version, flush});
    m_->below_l1(wb.line, +1);
  } else {
    if (wbb_.insert(wb, version, flush, now)) request_drain();
    m_->below_l1(wb.line, +1);
  }
  kick_wcb(now);
  kick_wbb(now);
}

void Core::move_victims(Cycle now) {
  while (!victims_.empty() && (!wbb_.full() || wbb_.find(victims_.front().wb.line))) {
    const Victim v = victims_.front();
    victims_.pop_front();
    if (wbb_.find(v.wb.line)) m_->below_l1(v.wb.line, -1);  // merges into the entry already counted
    if (wbb_.insert(v.wb, v.version, v.flush, now)) request_drain();
  }
  kick_wcb(now);
  if (victims_.empty() && sb_wait_ == SbWait::kVictims) {
    sb_wait_ = SbWait::kNone;
    kick_sb(now);
  }
}

bool Core::holds_writeback(uint64_t line) const {
  if (const_cast<WritebackBuffer&>(wbb_).find(line)) return true;
  return std::any_of(victims_.begin(), victims_.end(), [&](const Victim& v) { return v.wb.line == line; });
}

bool Core::flag_writeback(uint64_t line) {
  bool found = false;
  if (WritebackBuffer::Entry* e = wbb_.find(line)) found = e->flush = true;
  for (Victim& v : victims_) {
    if (v.wb.line == line) found = v.flush = true;
  }
  return found;
}

void Core::kick_wbb(Cycle now) {
  if (wbb_scheduled_) return;
  wbb_scheduled_ = true;
  m_->events().push(std::max(now, wbb_port_free_), Ev::kWbbPump, id_);
}

void Core::wbb_pump(Cycle now) {
  wbb_scheduled_ = false;
  // themis-mc: a writeback leaving while an entry of the WCB is unACKed is
  // stamped with the count of entries allocated so far.
  const uint32_t seq = wcb_.tail();
  const bool stamp = numbers_ && seq != wcb_.head_ack() && wbb_.has_drainable();
  if (stamp && unresolved_[generation(seq)] >= (1u << cfg_.seq_guard_bits) - 1) {
    if (!wbb_guard_wait_) ++wbb_guard_waits_;
    wbb_guard_wait_ = true;  // seq_resolved kicks the WBB
    return;
  }
  std::optional<WritebackBuffer::Entry> e = wbb_.pop_drainable();
  if (e) {
    uint8_t flag = e->flush ? 1 : 0;
    if (stamp) {
      flag |= 2;
      ++unresolved_[generation(seq)];
      ++stamped_;
      if (seq > drain_to_) {  // have the entries it waits for sent at once
        drain_to_ = seq;
        ++drain_requests_;
        kick_wcb(now);
      }
    }
    m_->events().push(now + cfg_.cycles(cfg_.llc_hit_ns), Ev::kLlcWriteback, id_, e->line, e->version, flag,
                      stamp ? seq : 0);
    wbb_port_free_ = now + 1;
  }
  move_victims(now);
  if (wbb_.has_drainable()) kick_wbb(now + 1);
}

}  // namespace softwrap::themis
