// pm_controller.h — the persistent-memory controller: a 128-entry write
// queue, a 64-entry read queue and the PCM banks behind them.
//
// ADR: the controller is in the persistence domain, so a write persists
// the moment the write queue accepts it; the controller then ACKs it (the
// Machine carries the ACK back).  A write to a line still waiting in the
// queue merges into it (the newer data), as gem5's controller does.  A
// full queue refuses an arrival, which waits at the controller's input
// (the Machine keeps those in arrival order).  Behind the queues, each of
// the banks (gem5's NVM interface has 16; a line's bank is line % banks)
// does one operation at a time: a read takes the read latency (346 ns), a
// write the write latency (500 ns); a bank takes the oldest read queued
// for it before any write.  A read of a line still in the write queue is
// answered from there at once.  A write holds its queue slot until its
// bank has finished it.
#ifndef SOFTWRAP_THEMIS_PM_CONTROLLER_H_
#define SOFTWRAP_THEMIS_PM_CONTROLLER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "themis/config.h"

namespace softwrap::themis {

class PmController {
 public:
  explicit PmController(const Config& cfg);

  enum class Accept { kQueued, kMerged, kFull };
  Accept write(uint64_t line);
  enum class Read { kQueued, kForwarded, kFull };
  Read read(uint64_t line, uint64_t id);

  struct Started {
    unsigned bank;
    Cycle done;
  };
  // Starts an operation on every idle bank with work queued for it.
  void start(Cycle now, std::vector<Started>* out);
  struct Finished {
    bool read;
    uint64_t id;  // the read's id
  };
  // Bank `bank`'s operation is over (its write frees a queue slot).
  Finished finish(unsigned bank);

  size_t writes() const { return writes_; }  // queued or being written
  size_t reads() const { return reads_; }
  unsigned banks() const { return static_cast<unsigned>(banks_.size()); }
  bool bank_busy(unsigned b) const { return banks_[b].busy; }

 private:
  struct Bank {
    std::deque<uint64_t> writes;                      // lines, oldest first
    std::deque<std::pair<uint64_t, uint64_t>> reads;  // (line, id)
    bool busy = false, busy_read = false;
    uint64_t read_id = 0;
  };
  unsigned bank_of(uint64_t line) const { return static_cast<unsigned>(line % banks_.size()); }

  std::vector<Bank> banks_;
  size_t wq_cap_, rq_cap_;
  size_t writes_ = 0, reads_ = 0;
  size_t waiting_ = 0;  // queued operations no bank has started
  Cycle write_cycles_, read_cycles_;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_PM_CONTROLLER_H_
