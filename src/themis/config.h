// config.h — the simulated machine (the Themis paper's Table I) and the
// designs it is run as.
//
// Times are given in nanoseconds as in the paper and turned into cycles of
// the simulated 3 GHz clock once (Config::cycles).  Parameters the paper
// does not give are marked "ours" and documented in docs/themis-sim.md with
// what they change.
#ifndef SOFTWRAP_THEMIS_CONFIG_H_
#define SOFTWRAP_THEMIS_CONFIG_H_

#include <cmath>
#include <cstdint>

namespace softwrap::themis {

using Cycle = uint64_t;

// Baseline: x86 as it is, the program keeps every fence.  Themis: the
// mechanism of section IV, the program drops its non-temporal->temporal
// fences.  Ideal: x86 as it is, the program drops those fences (fast, not
// crash-consistent).  BrokenWbb: Themis whose writeback buffer ignores the
// drainable-after pointers (a control the persist-order check must catch).
// ThemisMc (ours, docs/themis-sim.md): the order is enforced at the PM
// controller instead — each core numbers its non-temporal WCB entries, a
// writeback leaving an L1 while an earlier entry is unACKed carries the
// core's count, and the controller holds it until that core's entries
// numbered below it have arrived; the WBB never waits.  BrokenMc: ThemisMc
// whose controller ignores the numbers (the control).
enum class Design : uint8_t { kBaseline, kThemis, kIdeal, kBrokenWbb, kThemisMc, kBrokenMc };
const char* design_name(Design d);

// Stores are tagged with the WCB tail and the WCB runs the overflow
// protocol (section IV-A/B).
inline bool tags_stores(Design d) { return d == Design::kThemis || d == Design::kBrokenWbb; }
// Writebacks are numbered in their core's sequence (themis-mc and its control).
inline bool numbers_writebacks(Design d) { return d == Design::kThemisMc || d == Design::kBrokenMc; }
// The program keeps its non-temporal->temporal (FenceKind::kLogOrder) fences.
inline bool keeps_log_order_fences(Design d) { return d == Design::kBaseline; }

struct Config {
  Design design = Design::kThemis;
  double ghz = 3.0;     // 3 GHz cores
  unsigned cores = 4;   // 4 cores

  // Core (simplified: in-order issue, blocking loads, a store buffer).
  unsigned store_buffer = 32;  // the 32-entry store queue

  // Write-combining buffer: 16 entries, 20 ns to the PM controller.
  unsigned wcb_entries = 16;
  unsigned tail_bits = 6;       // tail/head/headACK pointer width (4, 6, 8, 10)
  double wcb_to_pm_ns = 20;
  double ack_ns = 20;           // ours: the ACK travels back as far
  // Ours: a partial entry with no store for this long drains.  1 ns: an
  // entry leaves once the burst of stores writing it ends (what the
  // paper's Fig. 11 waits imply); x86 WC buffers hold partial lines longer
  // for combining (the bench's "holding WCB", 1000 ns).
  double wcb_idle_ns = 1;
  unsigned wcb_issue_cycles = 2;  // ours: one 64-byte entry per 2 cycles on the link

  // themis-mc: sequence numbers of seq_bits bits (the controller compares
  // them modulo 2^seq_bits, which needs 2^(seq_bits-1) > wcb_entries: 6 or
  // more for 16 entries), and the core's four counters of numbered
  // writebacks the controller has not yet resolved, seq_guard_bits each
  // (what keeps a number from being compared after it wrapped; 7 bits:
  // one core's 127 numbered writebacks of a generation can fill every
  // holdable queue entry before its WBB has to keep the next one).
  unsigned seq_bits = 8;
  unsigned seq_guard_bits = 7;
  // For tests only: false lets a core allocate entries however far its
  // unresolved numbers lag (the comparison can then be wrong after a wrap).
  bool seq_guard = true;

  // L1 data cache: 64 KiB, 4-way, 64 B lines, 2 ns hit; 16-entry WBB.
  unsigned l1_kib = 64;
  unsigned l1_ways = 4;
  double l1_hit_ns = 2;
  unsigned wbb_entries = 16;

  // LLC: 2 MiB per core, 16-way, 20 ns hit.
  unsigned llc_kib_per_core = 2048;
  unsigned llc_ways = 16;
  double llc_hit_ns = 20;
  double llc_to_pm_ns = 20;  // ours: the LLC reaches the controller as the WCB does

  // PM controller: 128/64-entry write/read queues; PCM 500 ns write, 346 ns
  // read.  Banks: gem5's NVM interface (16 banks, 1 rank), which the
  // queue sizes of Table I come from.
  unsigned pm_write_queue = 128;
  unsigned pm_read_queue = 64;
  unsigned pm_banks = 16;
  double pm_write_ns = 500;
  double pm_read_ns = 346;

  Cycle cycles(double ns) const { return static_cast<Cycle>(std::llround(ns * ghz)); }
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_CONFIG_H_
