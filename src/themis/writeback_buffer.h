// writeback_buffer.h — the L1's writeback buffer (WBB) with drainable-after
// pointers (the Themis paper's Fig. 7).
//
// Dirty lines leaving the L1 wait here for the port to the LLC.  Each
// entry carries the tail tag of the line's last store as its
// drainable-after (DA) pointer, and the WBB keeps a copy of the WCB's
// headACK (hAck').  The events are the figure's:
//   (a) incoming writeback whose tag is above hAck': it keeps the tag as DA
//       and may not leave yet;
//   (b) incoming writeback whose tag is at or below hAck' (or untagged):
//       drainable at once;
//   (c) headACK update from the WCB: hAck' moves and every entry whose DA is
//       at or below it becomes drainable.
// And the overflow reset: hAck' and every DA back to 0 (all earlier
// non-temporal stores have persisted).  A second writeback of a line still
// waiting here is merged into its entry (newest data, larger DA), so the
// line never overtakes itself.  `enforce` false ignores DA pointers
// (Baseline/Ideal hardware have none; BrokenWbb is the control).
#ifndef SOFTWRAP_THEMIS_WRITEBACK_BUFFER_H_
#define SOFTWRAP_THEMIS_WRITEBACK_BUFFER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "themis/config.h"
#include "themis/l1_cache.h"
#include "themis/stats.h"

namespace softwrap::themis {

class WritebackBuffer {
 public:
  struct Entry {
    uint64_t line = 0;
    uint64_t version = 0;  // stores to the line it carries (coherence order)
    uint32_t da = kNoTag;  // drainable after hAck' reaches this (kNoTag: none)
    bool drainable = true;
    bool flush = false;    // a clwb: the LLC sends it on to the PM controller
    Cycle entered = 0;
  };

  WritebackBuffer(unsigned entries, bool enforce) : cap_(entries), enforce_(enforce) {}

  bool full() const { return entries_.size() >= cap_; }
  size_t size() const { return entries_.size(); }
  // (a)/(b) A writeback from the L1.  REQUIRES: !full() unless the line is
  // already here (merge).  Returns true if it must wait for its DA pointer.
  bool insert(const Writeback& wb, uint64_t version, bool flush, Cycle now);
  // (c) headACK update: hAck' = h.  Returns how many entries became drainable.
  unsigned head_ack(uint32_t h, Cycle now);
  // Overflow reset of the WCB: hAck' = 0, every entry drainable.
  void overflow_reset(Cycle now);
  // The oldest drainable entry, removed.
  std::optional<Entry> pop_drainable();
  bool has_drainable() const;
  // Largest DA among waiting entries (kNoTag if none waits): the WCB entries
  // the WBB waits for.
  uint32_t max_waiting_da() const;
  Entry* find(uint64_t line);
  uint32_t head_ack_copy() const { return hack_; }
  // Fig. 11: cycles each writeback waited for its DA pointer (0 if none; a
  // writeback merged into a waiting entry is counted once, with it).
  const Histogram& waits() const { return waits_; }

 private:
  bool ok(uint32_t tag) const { return !enforce_ || tag == kNoTag || tag <= hack_; }
  void released(Entry& e, Cycle now);

  size_t cap_;
  bool enforce_;
  uint32_t hack_ = 0;
  std::vector<Entry> entries_;  // in arrival order
  Histogram waits_;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_WRITEBACK_BUFFER_H_
