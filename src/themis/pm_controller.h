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
//
// themis-mc (Design::kThemisMc) adds holding.  A writeback may carry a
// Stamp: its core and its place in that core's sequence of non-temporal
// WCB entries (the core's count when the writeback left its L1).  The
// controller keeps, per core, how many of that core's entries have
// arrived (`arrived up to`, advanced by stream_arrived); a stamped write
// whose entries have not all arrived is *held*: it is in the queue but not
// in the persistence domain (ADR drains released entries only; a crash
// drops held ones), no bank starts it, and it is released — persists —
// when the last entry it waits for arrives.  Per line, order is kept: a
// newer write of a line merges into the line's held entry (it then waits
// for the same entries), a stamped write of another core behind it takes
// an entry of its own, and an entry is released only after every older
// entry of its line.  Numbers are compared as the hardware would, modulo
// 2^seq_bits: pending iff (stamp - arrived) mod 2^seq_bits is in
// [1, wcb_entries]; the true comparison is counted against it
// (misjudged(), which the core's wrap guard keeps at 0).  Held entries
// never fill the queue: at most wq - 1 are held, a stamped write that
// would need the last slot is refused (kFull) — so there is always a slot
// that a bank will free, which a non-temporal entry can take, and a held
// write waits only for entries that need no held slot to arrive (no
// deadlock; docs/themis-sim.md).
#ifndef SOFTWRAP_THEMIS_PM_CONTROLLER_H_
#define SOFTWRAP_THEMIS_PM_CONTROLLER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "themis/config.h"

namespace softwrap::themis {

// A writeback's place in its core's sequence: it may persist once `seq`
// of that core's non-temporal entries have arrived.  `seq` is the true
// count (the model's); the hardware's number is seq mod 2^seq_bits.
struct Stamp {
  bool on = false;
  uint8_t core = 0;
  uint32_t seq = 0;
};

class PmController {
 public:
  explicit PmController(const Config& cfg);

  // kHeld: queued as a held entry (held_id() names it); kMergedHeld: merged
  // into a held entry (persists with it).  Stamps are honoured only under
  // Design::kThemisMc; `stream`: a non-temporal entry (never held, never
  // merged into a held entry).
  enum class Accept { kQueued, kMerged, kHeld, kMergedHeld, kFull };
  Accept write(uint64_t line, const Stamp& s = {}, bool stream = false);
  // The held entry the last kHeld/kMergedHeld went to.
  uint64_t held_id() const { return last_held_; }
  // The stamp the last kMergedHeld made the controller forget: the entry's
  // older stamp of the same core, replaced, or the write's own, not needed
  // (on: false if none).  Its core may count it resolved now.
  const Stamp& dropped() const { return dropped_; }
  // A non-temporal entry of `core` arrived (was accepted): its count moves
  // on, and the held entries that now may persist are released, appended to
  // `released` (oldest first per line) with the stamp each waited for.
  struct Released {
    uint64_t id;
    Stamp stamp;
  };
  void stream_arrived(unsigned core, std::vector<Released>* released);
  // Whether the controller would hold a write stamped `s` now.
  bool pending(const Stamp& s);
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
  size_t held() const { return held_; }      // of which held
  uint32_t arrived(unsigned core) const { return arrived_[core]; }
  // Comparisons modulo 2^seq_bits that disagreed with the true counts.
  uint64_t misjudged() const { return misjudged_; }
  size_t reads() const { return reads_; }
  unsigned banks() const { return static_cast<unsigned>(banks_.size()); }
  bool bank_busy(unsigned b) const { return banks_[b].busy; }

 private:
  struct Write {
    uint64_t line;
    bool held = false;
    Stamp stamp;      // the newest stamp merged into a held entry
    uint64_t id = 0;  // held entries: their name
  };
  struct Bank {
    std::deque<Write> writes;                         // not started, oldest first
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
  bool hold_;                      // Design::kThemisMc
  uint32_t seq_mask_, window_;     // 2^seq_bits - 1, wcb_entries
  std::vector<uint32_t> arrived_;  // per core: non-temporal entries arrived (true count)
  size_t held_ = 0;
  uint64_t next_id_ = 0, last_held_ = 0, misjudged_ = 0;
  Stamp dropped_;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_PM_CONTROLLER_H_
