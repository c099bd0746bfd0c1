// themis_mc_test.cc — themis-mc (Design::kThemisMc) on the machine, one
// test per event of the mechanism: a writeback leaving the WBB while a WCB
// entry is unACKed is numbered (and only then) and asks the WCB to send the
// entries below it, as a temporal store does; the LLC writes a numbered
// line through; the controller holds it until the core's entries arrived,
// then persists it (the persist check finds no order violation, broken-mc's
// ignored numbers do); two cores' held writes of one line persist in
// coherence order; the queue's last slot is never held (the full-queue
// case finishes); the wrap guard stalls numbering while a stamp two
// generations back is unresolved (else the wrap case deadlocks) and not
// while it is one back, and a full generation counter keeps a numbered
// writeback in the WBB; simulate refuses numbers too narrow for the WCB;
// two cores keep their own sequences.  And the storage each design adds
// (storage.h).  The controller's rules themselves are in
// pm_controller_test.cc.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "crashsim/model.h"
#include "themis/cases.h"
#include "themis/machine.h"
#include "themis/persist_check.h"
#include "themis/storage.h"
#include "themis/test_trace.h"

namespace softwrap::themis {
namespace {

constexpr uint64_t kData = 1 << 16, kLog = 4096;

struct Outcome : Checked {
  std::string example;               // the first violation, if any
  std::vector<uint64_t> stamped;     // per core
  std::vector<std::array<uint32_t, 4>> unresolved;  // per core: its four generation counters
};

// Runs `ev` (work in cycles) on a machine of design `d`, checked under the
// Themis persistency model, and keeps what the cores hold at the end.
Outcome run(const std::vector<TraceEvent>& ev, Design d, Config cfg = {}) {
  cfg.design = d;
  Outcome out;
  static_cast<Checked&>(out) = run_checked(ev, cfg, crashsim::Persistency::kThemis, 3, [&](Machine& m) {
    for (unsigned c = 0; c < cfg.cores; ++c) {
      out.stamped.push_back(m.core(c).stamped());
      std::array<uint32_t, 4> u{};
      for (unsigned g = 0; g < 4; ++g) u[g] = m.core(c).unresolved(g);
      out.unresolved.push_back(u);
    }
  });
  if (!out.examples.empty()) out.example = out.examples[0];
  return out;
}

// Every numbered writeback was resolved by the controller.
void expect_all_resolved(const Outcome& r, const char* what) {
  for (size_t c = 0; c < r.unresolved.size(); ++c) {
    for (unsigned g = 0; g < 4; ++g) {
      EXPECT_EQ(r.unresolved[c][g], 0u) << what << ": core " << c << " ended with numbered writebacks of generation "
                                        << g << " unresolved (or resolved twice)";
    }
  }
}

// An undo record's word, its data store, the store's clwb, the fence.
TestTrace record_store_flush() {
  TestTrace t;
  t.load(0, kData);
  t.stream(0, kLog, 3000);
  t.store(0, kData).flush(0, kData);
  t.fence(0, FenceKind::kCommit);
  return t;
}

TEST(ThemisMcTest, TheWbbNeverWaitsAndTheRunKeepsIdealsPace) {
  const TestTrace t = record_store_flush();
  const Outcome mc = run(t.ev, Design::kThemisMc), id = run(t.ev, Design::kIdeal), th = run(t.ev, Design::kThemis);
  ASSERT_TRUE(mc.ok && id.ok && th.ok) << mc.why << id.why << th.why;
  EXPECT_GT(th.stats.wbb_wait.max, 0u) << "Themis holds the flushed line in the WBB until the record is ACKed";
  EXPECT_EQ(mc.stats.wbb_wait.max, 0u) << "themis-mc's WBB never waits";
  EXPECT_EQ(mc.stats.seq_stamped, 1u) << "the flushed line left while the record's entry was unACKed";
  EXPECT_EQ(mc.stats.seq_write_throughs, 0u) << "a clwb's line goes to the controller anyway";
  EXPECT_LE(mc.stats.cycles, id.stats.cycles + 3) << "themis-mc must be within a few cycles of Ideal";
  EXPECT_LT(mc.stats.cycles, th.stats.cycles) << "the clwb did not wait for the record's ACK";
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  expect_all_resolved(mc, "themis-mc");
}

TEST(ThemisMcTest, AWritebackIsNumberedOnlyWhileAWcbEntryIsUnacked) {
  TestTrace t;
  t.load(0, kData);
  t.stream(0, kLog, 3000).fence(0, FenceKind::kCommit);  // the record is ACKed ...
  t.store(0, kData).flush(0, kData).fence(0, FenceKind::kCommit);  // ... before the line leaves
  const Outcome mc = run(t.ev, Design::kThemisMc);
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stats.seq_stamped, 0u) << "nothing unACKed: the writeback needs no number";
  EXPECT_EQ(mc.stats.pm_held, 0u);
  for (Design d : {Design::kThemis, Design::kIdeal, Design::kBaseline}) {
    const Outcome r = run(record_store_flush().ev, d);
    EXPECT_EQ(r.stats.seq_stamped, 0u) << design_name(d) << " numbers nothing";
  }
}

TEST(ThemisMcTest, ANumberedWritebackAsksTheWcbToSendTheEntriesBelowIt) {
  // The line is stored before the record (so its store asks the WCB for
  // nothing), the record's word sits in a WCB that holds partial lines for
  // 1000 ns, then the line is flushed: its numbered writeback must have the
  // record sent at once, or the controller holds the line for a microsecond.
  TestTrace t;
  t.load(0, kData);
  t.store(0, kData, 3000).stream(0, kLog).flush(0, kData);
  t.store(0, kData + 128, 5000).fence(0, FenceKind::kCommit);
  const Outcome mc = run(t.ev, Design::kThemisMc, holding_wcb());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stats.seq_stamped, 1u);
  EXPECT_EQ(mc.stats.wcb_drain_requests, 1u) << "the numbered writeback's request";
  EXPECT_EQ(mc.stats.pm_held, 0u) << "the record was sent at once and beat the line to the controller";
  EXPECT_LT(mc.stats.pm_hold_wait.max, Config{}.cycles(100));
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
}

TEST(ThemisMcTest, ATemporalStoreAsksTheWcbToSendTheEntriesBeforeIt) {
  // The record's word sits in a WCB that holds partial lines for 1000 ns;
  // the store after it asks for it at once, so when the line is flushed
  // (2000 cycles later) the record is ACKed and the writeback needs no
  // number (it would, had the record waited for the idle timeout).
  TestTrace t;
  t.load(0, kData);
  t.stream(0, kLog, 3000).store(0, kData).flush(0, kData, 1, 2000);
  t.fence(0, FenceKind::kCommit);
  const Outcome mc = run(t.ev, Design::kThemisMc, holding_wcb());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stats.wcb_drain_requests, 1u) << "the store's request";
  EXPECT_EQ(mc.stats.seq_stamped, 0u) << "the record was ACKed long before the line left";
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
}

TEST(ThemisMcTest, TheLlcWritesANumberedLineThroughAndTheControllerHoldsIt) {
  // Core 1 reads the line core 0 stored after its record: the dirty line
  // leaves core 0 through its WBB (no clwb) while the record crawls a slow
  // non-temporal path; it is numbered, the LLC sends it on, and the
  // controller must hold it until the record arrived.
  TestTrace t;
  t.load(0, kData).load(1, kData + 64);
  t.stream(0, kLog, 3000).store(0, kData);
  t.load(1, kData, 8, 3050);
  t.fence(0, FenceKind::kCommit).fence(1, FenceKind::kCommit);
  const Outcome mc = run(t.ev, Design::kThemisMc, slow_nt_path());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stats.seq_stamped, 1u);
  EXPECT_EQ(mc.stats.seq_write_throughs, 1u) << "a numbered line that is not a clwb's is written through";
  EXPECT_EQ(mc.stats.pm_held, 1u) << "it reached the controller before the record";
  EXPECT_GT(mc.stats.pm_hold_wait.max, 0u);
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  expect_all_resolved(mc, "themis-mc");
  const Outcome broken = run(t.ev, Design::kBrokenMc, slow_nt_path());
  ASSERT_TRUE(broken.ok) << broken.why;
  EXPECT_EQ(broken.stats.seq_write_throughs, 1u);
  EXPECT_EQ(broken.order, 1u) << "written through and not held, the line persists before its record";
  const Outcome th = run(t.ev, Design::kThemis, slow_nt_path());
  EXPECT_EQ(th.stats.seq_write_throughs, 0u) << "Themis keeps the line in the LLC";
}

TEST(ThemisMcTest, TheControllerHoldsTheLineOfASlowRecordAndBrokenMcDoesNot) {
  const auto ev = slow_path_case();
  const Outcome mc = run(ev, Design::kThemisMc, slow_nt_path());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stats.wbb_wait.max, 0u);
  EXPECT_GT(mc.stats.pm_held, 0u) << "the data line beat its record to the controller and must be held";
  EXPECT_GT(mc.stats.pm_hold_wait.max, 0u);
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  EXPECT_EQ(mc.stats.version_regressions, 0u);
  expect_all_resolved(mc, "themis-mc");
  const Outcome broken = run(ev, Design::kBrokenMc, slow_nt_path());
  ASSERT_TRUE(broken.ok) << broken.why;
  EXPECT_EQ(broken.stats.seq_stamped, 1u) << "broken-mc numbers the writeback ...";
  EXPECT_EQ(broken.stats.pm_held, 0u) << "... and its controller ignores the number";
  EXPECT_GT(broken.order, 0u) << "the persist check must catch the ignored number";
}

TEST(ThemisMcTest, AFullControllerQueueKeepsAnUnheldSlotAndFinishes) {
  const Outcome mc = run(full_queue_case(), Design::kThemisMc, far_nt_path());
  ASSERT_TRUE(mc.ok) << "a held write must never keep out the record it waits for: " << mc.why;
  EXPECT_EQ(mc.stats.pm_held_max, 127u) << "at most wq - 1 entries held";
  EXPECT_GT(mc.stats.pm_held_full, 0u) << "numbered writebacks waited at the controller's input";
  EXPECT_EQ(mc.stats.seq_stamped, 200u);
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  EXPECT_EQ(mc.stats.version_regressions, 0u);
  expect_all_resolved(mc, "themis-mc");
  const Outcome broken = run(full_queue_case(), Design::kBrokenMc, far_nt_path());
  ASSERT_TRUE(broken.ok) << broken.why;
  EXPECT_EQ(broken.stats.pm_held_max, 0u);
  EXPECT_GT(broken.order, 0u);
}

TEST(ThemisMcTest, TwoCoresHeldWritesOfOneLinePersistInCoherenceOrder) {
  // A WCB link of 100 cycles per entry.  Core 0 streams 12 records, stores
  // and flushes line X: held until its 12th record arrives (~1200 cycles).
  // Core 1 then streams 4 records, stores X (newer data: it includes core
  // 0's store) and flushes it: held in an entry of its own, with a stamp
  // satisfied ~400 cycles later — long before core 0's.  Core 1's entry may
  // persist only after core 0's (else X's newer data persists before core
  // 0's records, and the older entry then persists older data).
  constexpr uint64_t kX = kData;
  TestTrace t;
  t.load(0, kX).load(1, kX + 192);  // different banks: both cores start together
  for (uint64_t i = 0; i < 12; ++i) t.stream(0, kLog + 64 * i, i == 0 ? 100 : 0);
  t.store(0, kX).flush(0, kX);
  for (uint64_t i = 0; i < 4; ++i) t.stream(1, 2 * kLog + 64 * i, i == 0 ? 300 : 0);
  t.store(1, kX).flush(1, kX);
  t.fence(0, FenceKind::kCommit).fence(1, FenceKind::kCommit);
  Config cfg;
  cfg.wcb_issue_cycles = 100;
  const Outcome mc = run(t.ev, Design::kThemisMc, cfg);
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stamped[0], 1u);
  EXPECT_EQ(mc.stamped[1], 1u);
  EXPECT_EQ(mc.stats.pm_held_max, 2u) << "the two cores' writes of X held at once, in entries of their own";
  EXPECT_EQ(mc.stats.pm_write_merges, 0u) << "another core's pending stamp is never merged";
  EXPECT_EQ(mc.stats.version_regressions, 0u) << "X persisted older data after newer";
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  expect_all_resolved(mc, "two writers of one line");
}

TEST(ThemisMcTest, TheWrapGuardStallsNumberingWhileAStampTwoGenerationsBackIsUnresolved) {
  const auto ev = wrap_case();
  const Outcome mc = run(ev, Design::kThemisMc, slow_llc_path());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_GT(mc.stats.seq_guard_stalls, 0u) << "the 33rd entry must wait for stamp 1 to be resolved";
  EXPECT_EQ(mc.stats.seq_misjudged, 0u);
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  expect_all_resolved(mc, "themis-mc");

  Config near = slow_llc_path();
  near.llc_to_pm_ns = 20;  // stamp 1 is resolved before the core numbers entry 32
  const Outcome fast = run(ev, Design::kThemisMc, near);
  ASSERT_TRUE(fast.ok) << fast.why;
  EXPECT_EQ(fast.stats.seq_guard_stalls, 0u)
      << "a stamp one generation back (entries 16-31 with 6-bit numbers) must not stall numbering";

  Config off = slow_llc_path();
  off.seq_guard = false;
  const Outcome unguarded = run(ev, Design::kThemisMc, off);
  EXPECT_EQ(unguarded.stats.seq_guard_stalls, 0u);
  EXPECT_TRUE(!unguarded.ok || unguarded.stats.seq_misjudged > 0)
      << "without the guard stamp 1 is compared with 61 modulo 64: the run must deadlock or misjudge";
  if (!unguarded.ok) {
    EXPECT_NE(unguarded.why.find("deadlocked"), std::string::npos) << unguarded.why;
  }
}

// The guard's bound, pinned: a stamp at the start of a generation (16,
// 6-bit numbers: generations of 16) may fall at most 32 behind the count; a
// guard looking three generations back would let the count reach 64, and
// the controller would read stamp 16 against 64 arrived as 16 ahead.
TEST(ThemisMcTest, TheWrapGuardHoldsAStampAtAGenerationsStartWithinHalfTheNumbers) {
  TestTrace t;
  t.load(0, kData);
  for (uint64_t i = 0; i < 15; ++i) t.stream(0, kLog + 64 * i);  // entries 0-14
  t.fence(0, FenceKind::kCommit);                                 // all ACKed
  t.stream(0, kLog + 64 * 15);                                    // entry 15, unACKed as the line leaves
  t.store(0, kData).flush(0, kData);                              // stamped 16
  for (uint64_t i = 16; i < 80; ++i) t.stream(0, kLog + 64 * i);
  t.fence(0, FenceKind::kCommit);
  const Outcome mc = run(t.ev, Design::kThemisMc, slow_llc_path());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stats.seq_stamped, 1u);
  EXPECT_GT(mc.stats.seq_guard_stalls, 0u) << "entry 48 must wait for stamp 16";
  EXPECT_EQ(mc.stats.seq_misjudged, 0u);
  EXPECT_EQ(mc.stats.seq_out_of_order, 0u);
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  expect_all_resolved(mc, "stamp 16");
}

TEST(ThemisMcTest, AFullGenerationCounterKeepsTheNumberedWritebackInTheWbb) {
  // Two lines flushed after a record, on a slow LLC-to-controller path:
  // with 1-bit guard counters the second writeback may not leave while the
  // first (same generation) is unresolved; by then the record is ACKed and
  // it needs no number.
  TestTrace t;
  t.load(0, kData).load(0, kData + 64);
  t.stream(0, kLog, 3000);
  t.store(0, kData).flush(0, kData).store(0, kData + 64).flush(0, kData + 64);
  t.fence(0, FenceKind::kCommit);
  Config one = slow_llc_path(), seven = slow_llc_path();
  one.seq_guard_bits = 1;
  const Outcome narrow = run(t.ev, Design::kThemisMc, one), wide = run(t.ev, Design::kThemisMc, seven);
  ASSERT_TRUE(narrow.ok && wide.ok) << narrow.why << wide.why;
  EXPECT_EQ(wide.stats.seq_stamped, 2u);
  EXPECT_EQ(narrow.stats.seq_stamped, 1u) << "the second writeback must wait for the first to be resolved";
  EXPECT_GT(narrow.stats.seq_wbb_guard_waits, 0u) << "and the wait is counted";
  EXPECT_EQ(wide.stats.seq_wbb_guard_waits, 0u);
  EXPECT_GT(narrow.stats.cycles, wide.stats.cycles + Config{}.cycles(1000))
      << "it waited a round trip to the controller";
  EXPECT_EQ(narrow.order + narrow.fence, 0u) << narrow.example;
  expect_all_resolved(narrow, "1-bit counters");
}

TEST(ThemisMcTest, SimulateRefusesSequenceNumbersTooNarrowForTheWcb) {
  const Program p = record_store_flush().program(true);
  ASSERT_FALSE(p.threads.empty());
  Stats s;
  std::string why;
  Config cfg;
  cfg.design = Design::kThemisMc;
  cfg.seq_bits = 5;  // 2^4 = 16 is not above 16 entries
  EXPECT_FALSE(simulate(cfg, p, {}, nullptr, &s, &why));
  EXPECT_NE(why.find("2^(bits-1) above the WCB's 16 entries"), std::string::npos) << why;
  EXPECT_NE(why.find("(5 given)"), std::string::npos) << why;
  cfg.design = Design::kBrokenMc;
  why.clear();
  EXPECT_FALSE(simulate(cfg, p, {}, nullptr, &s, &why)) << "broken-mc numbers writebacks too";
  cfg.seq_bits = 6;
  EXPECT_TRUE(simulate(cfg, p, {}, nullptr, &s, &why)) << why;
  cfg.design = Design::kThemisMc;
  cfg.seq_guard_bits = 0;
  EXPECT_FALSE(simulate(cfg, p, {}, nullptr, &s, &why)) << "guard counters of 0 bits";
  cfg.seq_guard_bits = 7;
  cfg.seq_bits = 32;
  EXPECT_FALSE(simulate(cfg, p, {}, nullptr, &s, &why)) << "at most 31 bits";
  Config themis;
  themis.seq_bits = 5;  // no numbers: no limit
  EXPECT_TRUE(simulate(themis, p, {}, nullptr, &s, &why)) << why;
}

TEST(ThemisMcTest, TwoCoresKeepTheirOwnSequences) {
  // Two threads on a slow non-temporal path, each streaming whole-line
  // records and storing and flushing a data line after each batch; thread
  // 0 streams three records per line, thread 1 one, so their counts differ.
  TestTrace t;
  for (uint8_t th = 0; th < 2; ++th) {
    for (uint64_t i = 0; i < 8; ++i) t.load(th, kData + th * 4096 + 64 * i);
  }
  for (uint64_t i = 0; i < 8; ++i) {
    for (uint8_t th = 0; th < 2; ++th) {
      const uint64_t records = th == 0 ? 3 : 1;
      for (uint64_t r = 0; r < records; ++r) {
        for (uint64_t w = 0; w < 8; ++w) t.stream(th, kLog + th * 65536 + (i * records + r) * 64 + 8 * w);
      }
      t.store(th, kData + th * 4096 + 64 * i).flush(th, kData + th * 4096 + 64 * i);
    }
  }
  for (uint8_t th = 0; th < 2; ++th) t.fence(th, FenceKind::kCommit);
  const Outcome mc = run(t.ev, Design::kThemisMc, slow_nt_path());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stamped[0], 8u) << "core 0 numbered each of its flushed lines";
  EXPECT_EQ(mc.stamped[1], 8u) << "core 1 numbered each of its flushed lines";
  EXPECT_GT(mc.stats.pm_held, 0u);
  EXPECT_EQ(mc.order + mc.fence, 0u) << mc.example;
  EXPECT_EQ(mc.stats.seq_misjudged, 0u);
  expect_all_resolved(mc, "two cores");
  const Outcome broken = run(t.ev, Design::kBrokenMc, slow_nt_path());
  ASSERT_TRUE(broken.ok) << broken.why;
  EXPECT_GT(broken.order, 0u);
}

// ------------------------------------------------------------ storage.h

TEST(ThemisMcStorageTest, ThemisAddsSevenHundredEightyOneAndAHalfBytesPerCore) {
  const Storage s = themis_storage(Config{});
  ASSERT_EQ(s.parts.size(), 4u);
  EXPECT_DOUBLE_EQ(s.parts[0].bytes_per_core(), 768.0) << "1024 L1 lines x 6-bit tail tags";
  EXPECT_EQ(s.parts[0].entries, 1024u);
  EXPECT_DOUBLE_EQ(s.parts[1].bytes_per_core(), 12.0) << "16 WBB entries x 6-bit DA pointers";
  EXPECT_DOUBLE_EQ(s.parts[2].bytes_per_core(), 0.75) << "hAck': 6 bits";
  EXPECT_DOUBLE_EQ(s.parts[3].bytes_per_core(), 0.75) << "tail, head, headACK: 2 bits each beyond 4 index bits";
  EXPECT_DOUBLE_EQ(s.total_bytes(), 781.5);
  Config c10;
  c10.tail_bits = 10;
  EXPECT_DOUBLE_EQ(themis_storage(c10).total_bytes(), 1024 * 10 / 8.0 + 16 * 10 / 8.0 + 10 / 8.0 + 3 * 6 / 8.0);
}

TEST(ThemisMcStorageTest, ThemisMcNeedsFarLessStorage) {
  const Storage s = mc_storage(Config{});
  ASSERT_EQ(s.parts.size(), 5u);
  EXPECT_DOUBLE_EQ(s.parts[0].bytes_per_core(), 16.0) << "16 WCB entries x 8-bit numbers";
  EXPECT_DOUBLE_EQ(s.parts[1].bytes_per_core(), 1.0) << "count and ACKed count: 4 bits each beyond the index";
  EXPECT_DOUBLE_EQ(s.parts[2].bytes_per_core(), 3.5) << "four 7-bit guard counters";
  EXPECT_DOUBLE_EQ(s.parts[3].bytes_per_core(), 1.0) << "arrived up to: 8 bits";
  EXPECT_EQ(s.parts[4].shared_by, 4u);
  EXPECT_DOUBLE_EQ(s.parts[4].bytes_per_core(), 44.0) << "128 queue entries x (8 + 2 + 1) bits over 4 cores";
  EXPECT_DOUBLE_EQ(s.total_bytes(), 65.5);
  EXPECT_LT(s.total_bytes() * 10, themis_storage(Config{}).total_bytes()) << "an order of magnitude less";
}

// One record, two lines stored and flushed right after it (both stamped 1,
// generation 0), then 60 more records on the slow LLC path with 6-bit
// numbers: the allocation of entry 32 waits for generation 0 once, however
// many of its stamps are resolved one by one.
TEST(ThemisMcTest, OneAllocationWaitingForTheGuardIsCountedOnce) {
  TestTrace t;
  t.load(0, kData).load(0, kData + 64);
  t.stream(0, kLog);
  t.store(0, kData).flush(0, kData).store(0, kData + 64).flush(0, kData + 64);
  for (uint64_t i = 1; i <= 60; ++i) t.stream(0, kLog + 64 * i);
  t.fence(0, FenceKind::kCommit);
  const Outcome mc = run(t.ev, Design::kThemisMc, slow_llc_path());
  ASSERT_TRUE(mc.ok) << mc.why;
  EXPECT_EQ(mc.stats.seq_stamped, 2u);
  EXPECT_EQ(mc.stats.seq_guard_stalls, 1u) << "entry 32's allocation waited once (for both stamps of generation 0)";
}

}  // namespace
}  // namespace softwrap::themis
