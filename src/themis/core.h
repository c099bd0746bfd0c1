// core.h — one simulated core: its program, store buffer, WCB, L1 and WBB.
//
// The core is simplified (docs/themis-sim.md says what that means for the
// absolute figures): it issues its operations in program order, one per
// cycle, after the work the trace measured before each.
//   * A load that hits the L1 (or a store still in the store buffer) costs
//     its issue cycle, as an out-of-order core would hide the hit; a miss
//     blocks the core until the data arrives (no memory-level parallelism).
//   * Stores, non-temporal stores and clwb's enter the store buffer (32
//     entries; a full one stalls the core) and leave it in order, one per
//     cycle: a temporal store needs its line exclusive in the L1 (a miss
//     stops the buffer until the line arrives) and is tagged there with the
//     WCB's tail (Themis); a non-temporal store goes into the WCB (a full
//     or overflowing WCB stops the buffer); a clwb sends its line's newest
//     data towards memory and counts as outstanding until the controller
//     has it.
//   * A fence stalls the core until the store buffer is empty, every WCB
//     entry is ACKed (the fence makes the WCB drain its partial entries)
//     and every outstanding clwb has completed.
// The WCB holds a partial entry for combining, as x86 does: it drains its
// head entry when it is complete, when a newer entry is behind it, at a
// fence, during an overflow, or after wcb_idle_ns without a store to it.
// Themis adds one signal the paper does not describe (its Fig. 11 waits
// imply non-temporal stores are on their way when writebacks come): a
// store tagged with tail t asks the WCB to drain the entries below t, and
// so does a writeback waiting in the WBB (without it a full WBB could wait
// for a partial entry that nothing drains).  The broken variant keeps this
// signal and only ignores the DA pointers.
// themis-mc (config.h) tags nothing in the L1 and never holds the WBB: a
// writeback leaving the WBB while one of the core's WCB entries is unACKed
// is stamped with the core's count of entries (its place in the core's
// sequence) and asks the WCB to send the entries below it; the LLC sends
// a stamped line on to the controller, which holds it until those entries
// have arrived (pm_controller.h).  The wrap guard: the core counts its
// stamped writebacks the controller has not yet resolved in four
// generations of 2^(seq_bits-2) numbers, and allocates no entry while any
// of two generations back is unresolved, so no number is compared after
// it wrapped (a full generation counter keeps a stamped writeback in the
// WBB).  A temporal store asks the WCB to send its entries too, as under
// Themis.
#ifndef SOFTWRAP_THEMIS_CORE_H_
#define SOFTWRAP_THEMIS_CORE_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "themis/config.h"
#include "themis/l1_cache.h"
#include "themis/stats.h"
#include "themis/trace_reader.h"
#include "themis/write_combining_buffer.h"
#include "themis/writeback_buffer.h"

namespace softwrap::themis {

class Machine;

class Core {
 public:
  Core(unsigned id, const Config& cfg, Machine* m);

  void set_program(const std::vector<Op>* ops, size_t warmup_ops);
  bool done() const { return state_ == State::kDone; }

  // Event handlers (the Machine's events of this core).
  void resume(Cycle now);
  void sb_step(Cycle now);
  void wcb_pump(Cycle now);
  void wcb_ack(uint32_t p, Cycle now);
  void wbb_pump(Cycle now);
  void flush_ack(Cycle now);
  // themis-mc: the controller has done with the writeback stamped `seq`.
  void seq_resolved(uint32_t seq, Cycle now);
  // The Machine filled (or upgraded) `line` in this L1.
  void filled(uint64_t line, Cycle now);

  // A line leaving this L1 dirty (replacement, coherence, clwb).
  void push_writeback(const Writeback& wb, uint64_t version, bool flush, Cycle now);
  // Whether the line waits in this WBB or its victim queue; flag it as a clwb's.
  bool holds_writeback(uint64_t line) const;
  bool flag_writeback(uint64_t line);

  unsigned id() const { return id_; }
  L1Cache& l1() { return l1_; }
  const WriteCombiningBuffer& wcb() const { return wcb_; }
  const WritebackBuffer& wbb() const { return wbb_; }
  CoreStats& stats() { return stats_; }
  Cycle warm() const { return warm_; }
  uint64_t drain_requests() const { return drain_requests_; }
  uint64_t stamped() const { return stamped_; }
  uint64_t guard_stalls() const { return guard_stalls_; }
  uint64_t wbb_guard_waits() const { return wbb_guard_waits_; }
  uint32_t unresolved(unsigned generation) const { return unresolved_[generation & 3]; }

 private:
  enum class State : uint8_t { kRun, kWork, kLoad, kSbFull, kFence, kDrainEnd, kDone };
  enum class SbWait : uint8_t { kNone, kLine, kWcb, kVictims, kSeqGuard };
  struct Victim {
    Writeback wb;
    uint64_t version;
    bool flush;
  };

  void schedule_resume(Cycle t);
  void kick_sb(Cycle now);
  void kick_wcb(Cycle t);
  void kick_wbb(Cycle now);
  void request_drain();
  void try_fence(Cycle now);
  void move_victims(Cycle now);
  bool sb_has_store(uint64_t line) const;
  // The SB head, returns false if it must wait.
  bool sb_store(const Op& op, Cycle now);
  bool sb_stream(const Op& op, Cycle now);
  void sb_flush(const Op& op, Cycle now);
  bool fill_pending(uint64_t line) const;
  unsigned generation(uint32_t seq) const { return (seq >> (cfg_.seq_bits - 2)) & 3; }
  // The wrap guard: a stamp two generations back from the next entry's
  // number is unresolved, so that entry may not be numbered yet.
  bool guard_closed() const { return unresolved_[(generation(wcb_.tail()) + 2) & 3] != 0; }

  unsigned id_;
  const Config& cfg_;
  Machine* m_;
  WriteCombiningBuffer wcb_;
  L1Cache l1_;
  WritebackBuffer wbb_;
  bool tags_;
  bool numbers_;  // themis-mc and its control

  const std::vector<Op>* ops_ = nullptr;
  size_t pc_ = 0, warmup_ops_ = 0;
  bool work_spent_ = false;
  bool warmed_ = false;
  State state_ = State::kDone;
  Cycle stall_from_ = 0, warm_ = 0;
  uint64_t load_line_ = 0;
  std::vector<uint64_t> fills_;  // lines with a request outstanding

  std::deque<const Op*> sb_;
  SbWait sb_wait_ = SbWait::kNone;
  uint64_t sb_line_ = 0;
  bool sb_scheduled_ = false;
  uint64_t outstanding_flushes_ = 0;

  bool force_drain_ = false;   // a fence is waiting
  uint32_t drain_to_ = 0;      // writebacks wait for WCB entries below this
  Cycle link_free_ = 0;
  Cycle wcb_pump_at_ = ~Cycle{0};
  bool wbb_scheduled_ = false;
  Cycle wbb_port_free_ = 0;
  std::deque<Victim> victims_;  // writebacks waiting for a WBB slot
  uint64_t drain_requests_ = 0;
  uint32_t unresolved_[4] = {0, 0, 0, 0};  // stamped writebacks per generation, not yet resolved
  bool wbb_guard_wait_ = false;            // the WBB's next writeback waits for a generation counter
  uint64_t stamped_ = 0, guard_stalls_ = 0, wbb_guard_waits_ = 0;
  CoreStats stats_;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_CORE_H_
