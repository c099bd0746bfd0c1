// write_combining_buffer.h — a core's write-combining buffer (WCB) with the
// pointers of the Themis paper's Fig. 5.
//
// A circular buffer of line-sized entries.  Three pointers are kept as
// counts since the last reset: tail (next entry to allocate), head (next
// entry to drain to the PM controller) and headACK (oldest entry not yet
// acknowledged); the ring slot of pointer p is p % entries, and a slot is
// reused only once its entry was ACKed.  The events are the figure's:
//   (a) incoming non-temporal store: coalesces into a not-yet-drained entry
//       of the same line, or is allocated at the tail (tail + 1); a full
//       WCB refuses it (the core stalls);
//   (b) drain: the entry at head goes to the PM controller (head + 1);
//   (c) ACK: the entry's ACK bit is set; headACK moves over ACKed entries
//       and the new value goes to the writeback buffer;
//   (d) overflow: with w-bit pointers the tail may count to 2^w; when it
//       gets there the WCB accepts no allocation, is force-drained, and
//       once every entry is ACKed resets all three pointers to 0 and
//       notifies the core (which nullifies the L1's tail tags).
// A WCB without pointer width (tail_bits 0: Baseline and Ideal hardware)
// never overflows.  The caller decides *when* to drain (Machine: a
// complete entry, an entry with a newer one behind it, a fence, an
// overflow, a writeback waiting for it, or an idle partial entry).
#ifndef SOFTWRAP_THEMIS_WRITE_COMBINING_BUFFER_H_
#define SOFTWRAP_THEMIS_WRITE_COMBINING_BUFFER_H_

#include <cstdint>
#include <vector>

#include "themis/config.h"

namespace softwrap::themis {

class WriteCombiningBuffer {
 public:
  struct Entry {
    uint64_t line = 0;
    uint8_t words = 0;  // bit i: word i of the line was written
    bool drained = false;
    bool acked = false;
    Cycle last_write = 0;
    std::vector<uint32_t> units;  // the stores it holds (trace event indexes)
    bool complete() const { return words == 0xFF; }
  };
  enum class Put { kAllocated, kCoalesced, kFull, kOverflowing };
  struct AckResult {
    bool head_ack_moved = false;
    bool reset = false;  // the overflow protocol finished: notify the core
  };

  // tail_bits 0: pointers never overflow.
  WriteCombiningBuffer(unsigned entries, unsigned tail_bits);

  // (a) A non-temporal store of word `word` (0..7) of `line`.
  Put store(uint64_t line, unsigned word, uint32_t unit, Cycle now);
  // (b) Drains the entry at head; returns its pointer.  REQUIRES: has_undrained().
  uint32_t drain();
  // (c) The PM controller's ACK of the entry drained as pointer `p`.
  AckResult ack(uint32_t p);

  uint32_t tail() const { return tail_; }
  uint32_t head() const { return head_; }
  uint32_t head_ack() const { return head_ack_; }
  // 2^tail_bits, or 0 without a pointer width.
  uint32_t limit() const { return limit_; }
  bool has_undrained() const { return head_ != tail_; }
  // Whether a store to `line` would coalesce (an undrained entry holds it).
  bool holds_undrained(uint64_t line) const { return undrained(line) != tail_; }
  bool all_acked() const { return head_ack_ == tail_; }
  bool full() const { return tail_ - head_ack_ == entries_.size(); }
  // (d) The tail reached 2^w: no allocation until the reset.
  bool overflowing() const { return overflowing_; }
  const Entry& entry(uint32_t p) const { return entries_[p % entries_.size()]; }
  uint64_t overflows() const { return overflows_; }
  uint64_t allocations() const { return allocations_; }
  uint64_t coalesced() const { return coalesced_; }

 private:
  Entry& at(uint32_t p) { return entries_[p % entries_.size()]; }
  // The pointer of the undrained entry of `line` (a line is in at most
  // one), or tail_ if none.
  uint32_t undrained(uint64_t line) const;

  std::vector<Entry> entries_;
  uint32_t limit_;
  uint32_t tail_ = 0, head_ = 0, head_ack_ = 0;
  bool overflowing_ = false;
  uint64_t overflows_ = 0, allocations_ = 0, coalesced_ = 0;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_WRITE_COMBINING_BUFFER_H_
