// machine.cc — the event loop, coherence, the LLC's side of writebacks and
// clwb's, and the PM controller's input and banks.
#include "themis/machine.h"

#include <algorithm>
#include <cmath>

namespace softwrap::themis {

const char* design_name(Design d) {
  switch (d) {
    case Design::kBaseline: return "baseline";
    case Design::kThemis: return "themis";
    case Design::kIdeal: return "ideal";
    case Design::kBrokenWbb: return "broken-wbb";
    case Design::kThemisMc: return "themis-mc";
    case Design::kBrokenMc: return "broken-mc";
  }
  return "?";
}

Machine::Machine(const Config& cfg)
    : cfg_(cfg), llc_(uint64_t{cfg.llc_kib_per_core} * cfg.cores, cfg.llc_ways), pm_(cfg) {
  for (unsigned i = 0; i < cfg.cores; ++i) cores_.push_back(std::make_unique<Core>(i, cfg_, this));
}

Machine::~Machine() = default;

bool simulate(const Config& cfg, const Program& p, const RunOptions& o, PersistObserver* obs, Stats* out,
              std::string* why) {
  Machine m(cfg);
  return m.run(p, o, obs, out, why);
}

bool Machine::run(const Program& p, const RunOptions& o, PersistObserver* obs, Stats* out, std::string* why) {
  if (cfg_.cores == 0 || cfg_.cores > 8) {
    *why = "the machine has 1 to 8 cores";
    return false;
  }
  if (p.threads.size() > cfg_.cores) {
    *why = "the program has more threads than the machine has cores";
    return false;
  }
  if (numbers_writebacks(cfg_.design) &&
      (cfg_.seq_bits < 3 || cfg_.seq_bits > 31 || (1u << (cfg_.seq_bits - 1)) <= cfg_.wcb_entries ||
       cfg_.seq_guard_bits < 1 || cfg_.seq_guard_bits > 16)) {
    *why = "themis-mc needs sequence numbers of at most 31 bits with 2^(bits-1) above the WCB's " +
           std::to_string(cfg_.wcb_entries) + " entries (" + std::to_string(cfg_.seq_bits) +
           " given), and guard counters of 1 to 16 bits";
    return false;
  }
  *out = Stats{};
  obs_ = obs;
  stats_ = out;
  lines_.assign(p.footprint / 64 + 1, LineState{});
  if (o.warm_llc) {
    std::vector<bool> seen(lines_.size());
    for (const auto& ops : p.threads) {
      for (const Op& op : ops) {
        if (op.kind != OpKind::kFence && !seen[op.line]) {
          seen[op.line] = true;
          llc_.fill(op.line);
        }
      }
    }
  }
  for (size_t t = 0; t < p.threads.size(); ++t) {
    const auto& ops = p.threads[t];
    cores_[t]->set_program(&ops, static_cast<size_t>(std::floor(static_cast<double>(ops.size()) * o.warmup_fraction)));
  }
  while (!q_.empty()) dispatch(q_.pop());
  out->cores.resize(p.threads.size());
  for (size_t t = 0; t < p.threads.size(); ++t) {
    Core& c = *cores_[t];
    if (!c.done()) {
      *why = "core " + std::to_string(t) + " did not finish its program (the simulation deadlocked)";
      return false;
    }
    CoreStats& s = c.stats();
    s.measured = s.finish - std::min(s.finish, c.warm());
    out->cores[t] = s;
    out->cycles = std::max(out->cycles, s.measured);
    out->wbb_wait.merge(c.wbb().waits());
    out->writebacks += c.wbb().waits().total;
    out->wcb_overflows += c.wcb().overflows();
    out->wcb_allocations += c.wcb().allocations();
    out->wcb_coalesced += c.wcb().coalesced();
    out->wcb_drain_requests += c.drain_requests();
    out->seq_stamped += c.stamped();
    out->seq_guard_stalls += c.guard_stalls();
    out->seq_wbb_guard_waits += c.wbb_guard_waits();
  }
  out->seq_misjudged = pm_.misjudged();
  obs_ = nullptr;
  stats_ = nullptr;
  return true;
}

void Machine::dispatch(const Event& e) {
  const Cycle t = e.t;
  switch (e.kind) {
    case Ev::kCoreResume: cores_[e.core]->resume(t); break;
    case Ev::kSbStep: cores_[e.core]->sb_step(t); break;
    case Ev::kWcbPump: cores_[e.core]->wcb_pump(t); break;
    case Ev::kWcbArrive: {
      const auto& entry = cores_[e.core]->wcb().entry(static_cast<uint32_t>(e.x));
      to_pm(PmWrite{true, e.core, static_cast<uint32_t>(e.x), entry.line, 0}, t);
      break;
    }
    case Ev::kWcbAck: cores_[e.core]->wcb_ack(static_cast<uint32_t>(e.x), t); break;
    case Ev::kWbbPump: cores_[e.core]->wbb_pump(t); break;
    case Ev::kLlcWriteback:
      llc_writeback(e.core, e.line, e.x, (e.flag & 1) != 0, Stamp{(e.flag & 2) != 0, e.core, e.y}, t);
      break;
    case Ev::kLlcLookup: llc_lookup(e.core, e.line, e.flag != 0, t); break;
    case Ev::kLineToPm: to_pm(PmWrite{false, e.core, 0, e.line, e.x, Stamp{e.flag != 0, e.core, e.y}}, t); break;
    case Ev::kPmReadArrive: pm_read(e.x, t); break;
    case Ev::kPmReadReturn: {
      const ReadReq r = reads_[e.x];
      free_reads_.push_back(e.x);
      if (auto v = llc_.fill(r.line)) line_to_pm(v->line, v->version, t + cfg_.cycles(cfg_.llc_to_pm_ns));
      fill_done(r.core, r.line, r.exclusive, t);
      break;
    }
    case Ev::kPmBankDone: bank_done(static_cast<unsigned>(e.x), t); break;
    case Ev::kFillDone: fill_done(e.core, e.line, e.flag != 0, t); break;
    case Ev::kFlushAck: cores_[e.core]->flush_ack(t); break;
    case Ev::kSeqResolved: cores_[e.core]->seq_resolved(e.y, t); break;
  }
}

// ------------------------------------------------------------ coherence

void Machine::store_performed(const Op& op) {
  ++lines_[op.line].version;
  if (obs_) obs_->performed(op);
}

void Machine::dropped(unsigned core, uint64_t line) { lines_[line].holders &= static_cast<uint8_t>(~(1u << core)); }

void Machine::request(unsigned core, uint64_t line, bool exclusive, Cycle now) {
  LineState& ls = lines_[line];
  // Other L1s: a dirty copy leaves its owner through the owner's WBB; clean
  // copies are invalidated (a write) or lose their exclusivity (a read).
  for (unsigned o = 0; o < cores_.size(); ++o) {
    if (o == core || !(ls.holders >> o & 1)) continue;
    L1Cache::Line* l = cores_[o]->l1().find(line);
    if (!l) {
      ls.holders &= static_cast<uint8_t>(~(1u << o));
    } else if (l->dirty || exclusive) {
      if (auto wb = cores_[o]->l1().invalidate(line)) cores_[o]->push_writeback(*wb, ls.version, false, now);
      ls.holders &= static_cast<uint8_t>(~(1u << o));
    } else {
      l->exclusive = false;
    }
  }
  if (cores_[core]->holds_writeback(line)) {  // served from its own WBB
    q_.push(now + cfg_.cycles(cfg_.l1_hit_ns), Ev::kFillDone, core, line, 0, exclusive);
  } else if (ls.below_l1 > 0) {  // the newest data is on its way to the LLC
    llc_waiters_[line].push_back({static_cast<uint8_t>(core), exclusive});
  } else {
    q_.push(now + cfg_.cycles(cfg_.llc_hit_ns), Ev::kLlcLookup, core, line, 0, exclusive);
  }
}

void Machine::llc_lookup(unsigned core, uint64_t line, bool exclusive, Cycle now) {
  // An upgrade of a line the L1 holds needs no data.
  if (llc_.present(line) || cores_[core]->l1().peek(line)) return fill_done(core, line, exclusive, now);
  ++stats_->llc_misses;
  uint64_t id;
  if (free_reads_.empty()) {
    id = reads_.size();
    reads_.push_back({});
  } else {
    id = free_reads_.back();
    free_reads_.pop_back();
  }
  reads_[id] = ReadReq{static_cast<uint8_t>(core), exclusive, line};
  q_.push(now + cfg_.cycles(cfg_.llc_to_pm_ns), Ev::kPmReadArrive, 0, 0, id);
}

void Machine::fill_done(unsigned core, uint64_t line, bool exclusive, Cycle now) {
  LineState& ls = lines_[line];
  // The world may have changed since the request: check again.
  if (ls.below_l1 > 0 && !cores_[core]->holds_writeback(line)) return request(core, line, exclusive, now);
  bool others = false;
  for (unsigned o = 0; o < cores_.size(); ++o) {
    if (o == core || !(ls.holders >> o & 1)) continue;
    L1Cache::Line* l = cores_[o]->l1().find(line);
    if (!l) {
      ls.holders &= static_cast<uint8_t>(~(1u << o));
    } else if (l->dirty) {
      return request(core, line, exclusive, now);
    } else if (exclusive) {
      cores_[o]->l1().invalidate(line);
      ls.holders &= static_cast<uint8_t>(~(1u << o));
    } else {
      l->exclusive = false;
      others = true;
    }
  }
  Core& c = *cores_[core];
  if (L1Cache::Line* l = c.l1().find(line)) {
    if (exclusive) l->exclusive = true;  // an upgrade
  } else {
    const bool dirty = exclusive && llc_.take_dirty(line);
    if (auto ev = c.l1().fill(line, exclusive || !others, dirty)) {
      LineState& vs = lines_[ev->line];
      vs.holders &= static_cast<uint8_t>(~(1u << core));
      if (ev->dirty) c.push_writeback(ev->writeback(), vs.version, false, now);
    }
    lines_[line].holders |= static_cast<uint8_t>(1u << core);
  }
  c.filled(line, now);
}

// ------------------------------------------------------- writebacks, clwb

void Machine::llc_writeback(unsigned core, uint64_t line, uint64_t version, bool flush, const Stamp& s,
                            Cycle now) {
  LineState& ls = lines_[line];
  --ls.below_l1;
  const Cycle at_pm = now + cfg_.cycles(cfg_.llc_to_pm_ns);
  if (auto v = llc_.write(line, version)) line_to_pm(v->line, v->version, at_pm);
  // themis-mc: a stamped line goes on to the controller, which holds it if
  // it must; the LLC keeps it clean and so keeps no number.
  const bool forward = flush || llc_forward_.count(line);
  if (forward || s.on) {
    if (s.on && !forward) ++stats_->seq_write_throughs;
    if (auto w = llc_.clean(line)) line_to_pm(line, w->version, at_pm, s);  // dirty: written just above
  }
  if (ls.below_l1 == 0) {
    llc_forward_.erase(line);
    auto it = llc_waiters_.find(line);
    if (it != llc_waiters_.end()) {
      std::vector<Waiter> w;
      w.swap(it->second);
      llc_waiters_.erase(it);
      for (const Waiter& x : w) request(x.core, line, x.exclusive, now);
    }
  }
}

void Machine::clwb(unsigned core, uint64_t line, Cycle now) {
  LineState& ls = lines_[line];
  if (ls.persisted >= ls.version) {  // nothing newer than memory: a lookup
    q_.push(now + cfg_.cycles(cfg_.llc_hit_ns), Ev::kFlushAck, core);
    return;
  }
  flush_waiters_[line].push_back({static_cast<uint8_t>(core), ls.version});
  // Where the newest data is: an L1 (dirty), a WBB, on its way to the LLC,
  // the LLC, or on its way to the controller.
  for (unsigned i = 0; i < cores_.size(); ++i) {
    const unsigned o = (core + i) % cores_.size();
    if (!(ls.holders >> o & 1)) continue;
    L1Cache::Line* l = cores_[o]->l1().find(line);
    if (l && l->dirty) {
      cores_[o]->push_writeback(cores_[o]->l1().clean(*l), ls.version, true, now);
      return;
    }
  }
  for (auto& c : cores_) {
    if (c->flag_writeback(line)) return;
  }
  if (ls.below_l1 > 0) {
    llc_forward_.insert(line);
  } else if (auto w = llc_.clean(line)) {
    line_to_pm(line, w->version, now + cfg_.cycles(cfg_.llc_hit_ns) + cfg_.cycles(cfg_.llc_to_pm_ns));
  }
}

// --------------------------------------------------------- PM controller

void Machine::line_to_pm(uint64_t line, uint64_t version, Cycle t, const Stamp& s) {
  q_.push(t, Ev::kLineToPm, s.core, line, version, s.on, s.seq);
}

void Machine::to_pm(const PmWrite& w0, Cycle now) {
  PmWrite w = w0;
  w.arrived = now;
  std::deque<PmWrite>& waiting = split_inputs() && w.stream ? pm_streams_waiting_ : pm_writes_waiting_;
  if (waiting.empty() && try_accept(w, now)) {
    pm_start(now);
    return;
  }
  ++stats_->pm_write_queue_full;
  // A numbered write that found every holdable slot held (one is kept unheld).
  if (w.stamp.on && pm_.held() + 1 >= cfg_.pm_write_queue) ++stats_->pm_held_full;
  waiting.push_back(w);
}

bool Machine::try_accept(const PmWrite& w, Cycle now) {
  const PmController::Accept a = pm_.write(w.line, w.stamp, w.stream);
  switch (a) {
    case PmController::Accept::kFull: return false;
    case PmController::Accept::kQueued:
    case PmController::Accept::kMerged:
      ++(a == PmController::Accept::kMerged ? stats_->pm_write_merges : stats_->pm_writes);
      accept(w, now);
      if (w.stamp.on) resolved(w.stamp, now);
      break;
    case PmController::Accept::kHeld:
    case PmController::Accept::kMergedHeld: {
      ++(a == PmController::Accept::kMergedHeld ? stats_->pm_write_merges : stats_->pm_writes);
      ++stats_->pm_held;
      stats_->pm_held_max = std::max<uint64_t>(stats_->pm_held_max, pm_.held());
      Held& h = held_[pm_.held_id()];
      h.line = w.line;
      h.version = std::max(h.version, w.version);
      h.arrivals.push_back(w.arrived);
      // The entry keeps one stamp; the one a merge dropped is done with.
      if (a == PmController::Accept::kMergedHeld && pm_.dropped().on) resolved(pm_.dropped(), now);
      break;
    }
  }
  if (w.stream && split_inputs()) {  // the core's count moves on: release what it held
    // Entries arrive in their core's order: the number each carries is the
    // count of its core's entries before it (else the counting is wrong).
    if (w.pointer != pm_.arrived(w.core)) ++stats_->seq_out_of_order;
    std::vector<PmController::Released> released;
    pm_.stream_arrived(w.core, &released);
    for (const PmController::Released& r : released) release(r, now);
    if (!released.empty()) retry_writes(now);
  }
  return true;
}

// A held entry may persist: it enters the persistence domain now.
void Machine::release(const PmController::Released& r, Cycle now) {
  auto it = held_.find(r.id);
  const Held h = std::move(it->second);
  held_.erase(it);
  PmWrite w{false, 0, 0, h.line, h.version};
  accept(w, now);
  for (Cycle arrived : h.arrivals) stats_->pm_hold_wait.add(now - arrived);
  if (r.stamp.on) resolved(r.stamp, now);
}

// The controller tells the core it has done with a numbered writeback
// (held and released, or found its entries arrived).
void Machine::resolved(const Stamp& s, Cycle now) {
  q_.push(now + cfg_.cycles(cfg_.ack_ns), Ev::kSeqResolved, s.core, 0, 0, 0, s.seq);
}

// Writebacks refused for want of a held slot may fit now.
void Machine::retry_writes(Cycle now) {
  while (!pm_writes_waiting_.empty() && try_accept(pm_writes_waiting_.front(), now)) pm_writes_waiting_.pop_front();
}

// The write is in the write queue: persistent (ADR).
void Machine::accept(const PmWrite& w, Cycle now) {
  const Cycle ack = now + cfg_.cycles(cfg_.ack_ns);
  if (w.stream) {
    if (obs_) {
      for (uint32_t u : cores_[w.core]->wcb().entry(w.pointer).units) obs_->persisted_stream(u);
    }
    q_.push(ack, Ev::kWcbAck, w.core, 0, w.pointer);
    return;
  }
  LineState& ls = lines_[w.line];
  if (w.version < ls.persisted) {
    ++stats_->version_regressions;
    return;
  }
  if (w.version > ls.persisted) {
    ls.persisted = w.version;
    if (obs_) obs_->persisted_line(w.line, w.version);
  }
  auto it = flush_waiters_.find(w.line);
  if (it == flush_waiters_.end()) return;
  auto& ws = it->second;
  size_t keep = 0;
  for (const FlushWaiter& f : ws) {
    if (f.version <= ls.persisted) {
      q_.push(ack, Ev::kFlushAck, f.core);
    } else {
      ws[keep++] = f;
    }
  }
  ws.resize(keep);
  if (ws.empty()) flush_waiters_.erase(it);
}

void Machine::pm_read(uint64_t id, Cycle now) {
  if (pm_reads_waiting_.empty()) {
    switch (pm_.read(reads_[id].line, id)) {
      case PmController::Read::kForwarded:
        ++stats_->pm_reads;
        q_.push(now + cfg_.cycles(cfg_.llc_to_pm_ns), Ev::kPmReadReturn, 0, 0, id);
        return;
      case PmController::Read::kQueued:
        ++stats_->pm_reads;
        pm_start(now);
        return;
      case PmController::Read::kFull:
        break;
    }
  }
  pm_reads_waiting_.push_back(id);
}

void Machine::bank_done(unsigned bank, Cycle now) {
  const PmController::Finished f = pm_.finish(bank);
  if (f.read) q_.push(now + cfg_.cycles(cfg_.llc_to_pm_ns), Ev::kPmReadReturn, 0, 0, f.id);
  while (!pm_streams_waiting_.empty() && try_accept(pm_streams_waiting_.front(), now)) {
    pm_streams_waiting_.pop_front();
  }
  retry_writes(now);
  while (!pm_reads_waiting_.empty()) {
    const uint64_t id = pm_reads_waiting_.front();
    const PmController::Read r = pm_.read(reads_[id].line, id);
    if (r == PmController::Read::kFull) break;
    ++stats_->pm_reads;
    pm_reads_waiting_.pop_front();
    if (r == PmController::Read::kForwarded) q_.push(now + cfg_.cycles(cfg_.llc_to_pm_ns), Ev::kPmReadReturn, 0, 0, id);
  }
  pm_start(now);
}

void Machine::pm_start(Cycle now) {
  started_.clear();
  pm_.start(now, &started_);
  for (const PmController::Started& s : started_) q_.push(s.done, Ev::kPmBankDone, 0, 0, s.bank);
}

}  // namespace softwrap::themis
