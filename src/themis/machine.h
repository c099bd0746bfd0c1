// machine.h — the simulated machine: cores, the shared LLC, the PM
// controller, and the event loop that runs a trace on them.
//
// Approach: a discrete-event simulation in cycles of the 3 GHz clock.  The
// structures are state machines (write_combining_buffer.h, l1_cache.h,
// writeback_buffer.h, llc.h, pm_controller.h); the cores (core.h) and this
// class move requests between them with the latencies of Table I.  Lines
// are tracked by their *version*, the number of temporal stores performed
// on them so far (coherence order): a writeback carries the version of the
// data it holds, the controller persists a line up to a version, and a
// clwb completes once its line is persistent up to the version it saw.
// Coherence is a directory of which L1s hold a line, one writer at a time:
// a dirty line another core wants leaves its owner through the owner's WBB
// (so Themis' ordering holds for it) and the request waits until it
// reaches the LLC.
//
// What persisted, and when, goes to a PersistObserver (persist_check.h
// checks it against the crash simulator's persistency model).
#ifndef SOFTWRAP_THEMIS_MACHINE_H_
#define SOFTWRAP_THEMIS_MACHINE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "themis/config.h"
#include "themis/core.h"
#include "themis/event_queue.h"
#include "themis/llc.h"
#include "themis/pm_controller.h"
#include "themis/stats.h"
#include "themis/trace_reader.h"

namespace softwrap::themis {

// The persist order of a run, as it happens.
class PersistObserver {
 public:
  virtual ~PersistObserver() = default;
  // In execution order: a temporal store entered the L1, a non-temporal
  // store the WCB, a clwb was issued, a fence completed.
  virtual void performed(const Op& op) = 0;
  // The controller accepted line `line` holding its first `version` stores.
  virtual void persisted_line(uint64_t line, uint64_t version) = 0;
  // The controller accepted the non-temporal store of trace event `event`.
  virtual void persisted_stream(uint32_t event) = 0;
};

struct RunOptions {
  // Time is counted from each core's operation this far into its program.
  double warmup_fraction = 0;
  // Start with every line the program touches in the LLC (in order of
  // first touch; LRU keeps the last ones if they do not all fit), as after
  // the untraced setup that built the structure.  The L1s start empty.
  bool warm_llc = false;
};

class Machine {
 public:
  explicit Machine(const Config& cfg);
  ~Machine();

  // Runs every thread of `p` on the core of its index until all are done.
  // False (and why) if the run cannot finish (a model bug).
  bool run(const Program& p, const RunOptions& o, PersistObserver* obs, Stats* out, std::string* why);

  // ---- for the cores
  EventQueue& events() { return q_; }
  // No event is due at or before t: the caller may run ahead to t.
  bool idle_until(Cycle t) const { return q_.empty() || q_.next_time() > t; }
  // An L1 miss (exclusive: to write it; also an upgrade of a shared line).
  void request(unsigned core, uint64_t line, bool exclusive, Cycle now);
  // A clwb issued by `core`: completes (Ev::kFlushAck) once the line is
  // persistent up to its current version.
  void clwb(unsigned core, uint64_t line, Cycle now);
  void store_performed(const Op& op);
  void observer_performed(const Op& op) {
    if (obs_) obs_->performed(op);
  }
  uint64_t version(uint64_t line) { return lines_[line].version; }
  // A writeback of the line entered (+1) or reached the LLC from (-1) a WBB.
  void below_l1(uint64_t line, int d) { lines_[line].below_l1 += d; }
  // Core dropped the line from its L1.
  void dropped(unsigned core, uint64_t line);

  const Config& config() const { return cfg_; }
  Core& core(unsigned i) { return *cores_[i]; }
  Llc& llc() { return llc_; }

 private:
  struct LineState {
    uint64_t version = 0;    // temporal stores performed
    uint64_t persisted = 0;  // stores the controller has
    int32_t below_l1 = 0;    // writebacks between an L1 and the LLC
    uint8_t holders = 0;     // L1s holding it (bit per core)
  };
  struct PmWrite {
    bool stream;
    uint8_t core;
    uint32_t pointer;  // stream: the WCB entry
    uint64_t line, version;
    Stamp stamp = {};  // themis-mc: a numbered writeback
    Cycle arrived = 0;
  };
  // themis-mc: a held controller entry's data (its newest version) and
  // when each write merged into it arrived (the stamp it waits for is the
  // controller's).
  struct Held {
    uint64_t line = 0, version = 0;
    std::vector<Cycle> arrivals;
  };
  struct ReadReq {
    uint8_t core;
    bool exclusive;
    uint64_t line;
  };
  struct Waiter {
    uint8_t core;
    bool exclusive;
  };
  struct FlushWaiter {
    uint8_t core;
    uint64_t version;
  };

  void dispatch(const Event& e);
  void llc_lookup(unsigned core, uint64_t line, bool exclusive, Cycle now);
  void fill_done(unsigned core, uint64_t line, bool exclusive, Cycle now);
  void llc_writeback(unsigned core, uint64_t line, uint64_t version, bool flush, const Stamp& s, Cycle now);
  void to_pm(const PmWrite& w, Cycle now);
  // Offers w to the write queue; false if it must wait at the input.
  bool try_accept(const PmWrite& w, Cycle now);
  void accept(const PmWrite& w, Cycle now);
  void resolved(const Stamp& s, Cycle now);
  void release(const PmController::Released& r, Cycle now);
  void retry_writes(Cycle now);
  void pm_read(uint64_t id, Cycle now);
  void bank_done(unsigned bank, Cycle now);
  void pm_start(Cycle now);
  void line_to_pm(uint64_t line, uint64_t version, Cycle t, const Stamp& s = {});

  Config cfg_;
  EventQueue q_;
  std::vector<std::unique_ptr<Core>> cores_;
  Llc llc_;
  PmController pm_;
  PersistObserver* obs_ = nullptr;
  Stats* stats_ = nullptr;
  std::vector<LineState> lines_;  // per line of the program's footprint
  std::unordered_map<uint64_t, std::vector<Waiter>> llc_waiters_;
  std::unordered_map<uint64_t, std::vector<FlushWaiter>> flush_waiters_;
  std::unordered_set<uint64_t> llc_forward_;  // lines a clwb wants sent on from the LLC
  std::deque<PmWrite> pm_writes_waiting_;      // arrivals that found the write queue full
  // themis-mc: non-temporal entries wait apart and go first (a held
  // writeback never keeps the entry it waits for out).
  bool split_inputs() const { return numbers_writebacks(cfg_.design); }
  std::deque<PmWrite> pm_streams_waiting_;
  std::unordered_map<uint64_t, Held> held_;
  std::deque<uint64_t> pm_reads_waiting_;
  std::vector<ReadReq> reads_;
  std::vector<uint64_t> free_reads_;
  std::vector<PmController::Started> started_;
};

// Runs `p` on a machine of configuration `cfg` (see Machine::run).
bool simulate(const Config& cfg, const Program& p, const RunOptions& o, PersistObserver* obs, Stats* out,
              std::string* why);

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_MACHINE_H_
