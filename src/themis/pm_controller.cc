// pm_controller.cc — write/read queues and bank timing.
#include "themis/pm_controller.h"

#include <algorithm>

namespace softwrap::themis {

PmController::PmController(const Config& cfg)
    : banks_(cfg.pm_banks),
      wq_cap_(cfg.pm_write_queue),
      rq_cap_(cfg.pm_read_queue),
      write_cycles_(cfg.cycles(cfg.pm_write_ns)),
      read_cycles_(cfg.cycles(cfg.pm_read_ns)) {}

PmController::Accept PmController::write(uint64_t line) {
  Bank& b = banks_[bank_of(line)];
  if (std::find(b.writes.begin(), b.writes.end(), line) != b.writes.end()) return Accept::kMerged;
  if (writes_ >= wq_cap_) return Accept::kFull;
  b.writes.push_back(line);
  ++writes_;
  ++waiting_;
  return Accept::kQueued;
}

PmController::Read PmController::read(uint64_t line, uint64_t id) {
  Bank& b = banks_[bank_of(line)];
  if (std::find(b.writes.begin(), b.writes.end(), line) != b.writes.end()) return Read::kForwarded;
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
    } else if (!b.writes.empty()) {
      // The write leaves the merge window but keeps its slot until done.
      b.busy = true;
      b.busy_read = false;
      b.writes.pop_front();
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
