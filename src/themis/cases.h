// cases.h — the two hand-made traces the persist-order check is shown on
// (tests and `softwrap bench themis-sim`).
//
//   held_record_case   the constructed case: an undo record's word sits in
//                      a WCB that holds partial lines (x86 combining) while
//                      the store it protects is flushed, and the program
//                      works on for 5000 cycles before its next fence.  On
//                      Ideal the data line persists first (Eq. 3 broken);
//                      Themis holds it in the WBB until the record is ACKed.
//   slow_path_case     a whole-line record (it leaves the WCB at once), its
//                      data store flushed right after: only a slow
//                      non-temporal path (e.g. 100 ns to the controller)
//                      lets the data line win, which is when a WBB that
//                      ignores DA pointers (the broken variant) is caught.
// Both keep their removable fence (FenceKind::kLogOrder) for Baseline;
// read them with drop_log_order_fences for the other designs.  Work is in
// ticks of one cycle each (ReadOptions::ticks_per_ns > 0, cycles_per_tick 1).
#ifndef SOFTWRAP_THEMIS_CASES_H_
#define SOFTWRAP_THEMIS_CASES_H_

#include <vector>

#include "medium/trace_medium.h"
#include "themis/config.h"

namespace softwrap::themis {

std::vector<TraceEvent> held_record_case();
std::vector<TraceEvent> slow_path_case();

// The machine settings each case is about.
Config holding_wcb(Config c = {});      // wcb_idle_ns = 1000
Config slow_nt_path(Config c = {});     // wcb_to_pm_ns = 100

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_CASES_H_
