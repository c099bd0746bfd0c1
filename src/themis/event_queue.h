// event_queue.h — the Machine's timed events, in time order (ties in the
// order they were scheduled, so a run is deterministic).
#ifndef SOFTWRAP_THEMIS_EVENT_QUEUE_H_
#define SOFTWRAP_THEMIS_EVENT_QUEUE_H_

#include <cstdint>
#include <queue>
#include <vector>

#include "themis/config.h"

namespace softwrap::themis {

enum class Ev : uint8_t {
  kCoreResume,     // core: issue its next operations
  kSbStep,         // core: the store buffer's head goes to the L1 / WCB
  kWcbPump,        // core: the WCB drains an entry if one may go
  kWcbArrive,      // core, x = pointer: a WCB entry at the controller's input
  kWcbAck,         // core, x = pointer: the controller's ACK at the WCB
  kWbbPump,        // core: the WBB sends a drainable entry to the LLC
  kLlcWriteback,   // core, line, x = version, flag = clwb | stamped << 1, y = stamp: a WBB entry at the LLC
  kLlcLookup,      // core, line, flag = exclusive: an L1 miss at the LLC
  kLineToPm,       // line, x = version (core, flag = stamped, y = stamp): an LLC line at the controller's input
  kPmReadArrive,   // x = read id: an LLC miss at the controller
  kPmReadReturn,   // x = read id: its data back at the LLC
  kPmBankDone,     // x = bank
  kFillDone,       // core, line, flag = exclusive | dirty << 1: data at the L1
  kFlushAck,       // core: a clwb's line is persistent
  kSeqResolved,    // core, y = stamp: the controller has done with a numbered writeback (themis-mc)
};

struct Event {
  Cycle t;
  uint64_t seq;
  Ev kind;
  uint8_t core;
  uint8_t flag;
  uint32_t y;
  uint64_t line;
  uint64_t x;
};

class EventQueue {
 public:
  void push(Cycle t, Ev k, unsigned core = 0, uint64_t line = 0, uint64_t x = 0, uint8_t flag = 0, uint32_t y = 0) {
    q_.push(Event{t, seq_++, k, static_cast<uint8_t>(core), flag, y, line, x});
  }
  bool empty() const { return q_.empty(); }
  Cycle next_time() const { return q_.top().t; }
  Event pop() {
    Event e = q_.top();
    q_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, Later> q_;
  uint64_t seq_ = 0;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_EVENT_QUEUE_H_
