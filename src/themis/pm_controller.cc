// pm_controller.cc — write/read queues and bank timing.
#include "themis/pm_controller.h"

#include <algorithm>

namespace softwrap::themis {

PmController::PmController(const Config& cfg)
    : banks_(cfg.pm_banks),
      wq_cap_(cfg.pm_write_queue),
      rq_cap_(cfg.pm_read_queue),
      write_cycles_(cfg.cycles(cfg.pm_write_ns)),
      read_cycles_(cfg.cycles(cfg.pm_read_ns)),
      hold_(cfg.design == Design::kThemisMc),
      seq_mask_(cfg.seq_bits >= 32 ? ~0u : (1u << cfg.seq_bits) - 1),
      window_(cfg.wcb_entries),
      arrived_(cfg.cores, 0) {}

bool PmController::pending(const Stamp& s) {
  if (!hold_ || !s.on) return false;
  // The hardware's comparison: the stamp is at most a WCB's worth of
  // entries ahead of what arrived (the entries not yet arrived are unACKed,
  // so in the WCB), and never more than half the number space behind (the
  // core's guard).
  const uint32_t d = (s.seq - arrived_[s.core]) & seq_mask_;
  const bool hw = d != 0 && d <= window_;
  if (hw != (static_cast<int32_t>(s.seq - arrived_[s.core]) > 0)) ++misjudged_;
  return hw;
}

PmController::Accept PmController::write(uint64_t line, const Stamp& s, bool stream) {
  Bank& b = banks_[bank_of(line)];
  Write *newest = nullptr, *newest_held = nullptr;
  for (Write& w : b.writes) {
    if (w.line != line) continue;
    newest = &w;
    if (w.held) newest_held = &w;
  }
  const bool pend = !stream && pending(s);
  dropped_ = Stamp{};
  if (newest_held && !stream) {
    // Newer data of a held line waits with it; a stamp of the same core
    // replaces the older (a later writeback's count is never smaller: the
    // paths from a core to the controller keep its writebacks in order).
    Stamp& held = newest_held->stamp;
    if (!pend || !held.on || held.core == s.core) {
      const bool adopt = pend && (!held.on || static_cast<int32_t>(s.seq - held.seq) >= 0);
      dropped_ = adopt ? held : s;
      if (adopt) held = s;
      last_held_ = newest_held->id;
      return Accept::kMergedHeld;
    }
  } else if (newest && !pend && !newest->held) {
    return Accept::kMerged;
  }
  const bool hold = pend || (newest_held && !stream);  // or behind a held entry of its line
  if (writes_ >= wq_cap_ || (hold && held_ + 1 >= wq_cap_)) return Accept::kFull;
  Write w;
  w.line = line;
  if (hold) {
    w.held = true;
    w.stamp = pend ? s : Stamp{};
    w.id = last_held_ = next_id_++;
    ++held_;
  }
  b.writes.push_back(w);
  ++writes_;
  ++waiting_;
  return hold ? Accept::kHeld : Accept::kQueued;
}

void PmController::stream_arrived(unsigned core, std::vector<Released>* released) {
  ++arrived_[core];
  if (held_ == 0) return;
  for (Bank& b : banks_) {
    for (size_t i = 0; i < b.writes.size(); ++i) {
      Write& w = b.writes[i];
      if (!w.held || pending(w.stamp)) continue;
      bool older_held = false;
      for (size_t j = 0; j < i && !older_held; ++j) older_held = b.writes[j].held && b.writes[j].line == w.line;
      if (older_held) continue;
      w.held = false;
      --held_;
      released->push_back({w.id, w.stamp});
    }
  }
}

PmController::Read PmController::read(uint64_t line, uint64_t id) {
  Bank& b = banks_[bank_of(line)];
  if (std::any_of(b.writes.begin(), b.writes.end(), [&](const Write& w) { return w.line == line; })) {
    return Read::kForwarded;
  }
  if (reads_ >= rq_cap_) return Read::kFull;
  b.reads.emplace_back(line, id);
  ++reads_;
  ++waiting_;
  return Read::kQueued;
}

void PmController::start(Cycle now, std::vector<Started>* out) {
  for (unsigned i = 0; i < banks_.size() && waiting_ > 0; ++i) {
    Bank& b = banks_[i];
    if (b.busy) continue;
    if (!b.reads.empty()) {
      b.busy = b.busy_read = true;
      b.read_id = b.reads.front().second;
      b.reads.pop_front();
      --reads_;
      --waiting_;
      out->push_back({i, now + read_cycles_});
    } else {
      // The oldest released write leaves the merge window but keeps its
      // slot until done; held writes are not in the persistence domain.
      auto it = std::find_if(b.writes.begin(), b.writes.end(), [](const Write& w) { return !w.held; });
      if (it == b.writes.end()) continue;
      b.busy = true;
      b.busy_read = false;
      b.writes.erase(it);
      --waiting_;
      out->push_back({i, now + write_cycles_});
    }
  }
}

PmController::Finished PmController::finish(unsigned bank) {
  Bank& b = banks_[bank];
  b.busy = false;
  if (b.busy_read) return {true, b.read_id};
  --writes_;
  return {false, 0};
}

}  // namespace softwrap::themis
