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
//   full_queue_case    themis-mc's full controller queue: two threads, each
//                      one undo record on a far non-temporal path (1 us),
//                      then 100 cached lines stored and flushed at once;
//                      the 200 writebacks reach the controller first and
//                      are held until the queue has one unheld slot left,
//                      the rest wait at its input, and each record still
//                      gets in and releases its thread's.
//   wrap_case          themis-mc's wrap guard: a record, a line stored and
//                      flushed (stamped 1), then 60 more records while the
//                      writeback crawls a slow LLC-to-controller path
//                      (1 us); with 6-bit numbers the core must wait for
//                      the writeback to be resolved before numbering the
//                      33rd entry, else the controller would compare 1
//                      with 61 modulo 64 and hold the line for ever.
// They keep their removable fence (FenceKind::kLogOrder) for Baseline;
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
std::vector<TraceEvent> full_queue_case();
std::vector<TraceEvent> wrap_case();

// The machine settings each case is about.
Config holding_wcb(Config c = {});      // wcb_idle_ns = 1000
Config slow_nt_path(Config c = {});     // wcb_to_pm_ns = 100
Config far_nt_path(Config c = {});      // wcb_to_pm_ns = 1000 (full_queue_case)
Config slow_llc_path(Config c = {});    // llc_to_pm_ns = 1000, seq_bits = 6 (wrap_case)

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_CASES_H_
