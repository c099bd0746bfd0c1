// machine_test.cc — the core and the machine on hand-built programs:
// fence, miss and clwb latencies against Table I, Themis' WBB waits and
// WCB overflows, Baseline/Themis/Ideal on an undo-logging pattern, and a
// random multi-core stress (every run finishes, no line ever persists
// older data after newer).
#include "themis/machine.h"

#include <gtest/gtest.h>

#include "crashsim/model.h"
#include "themis/persist_check.h"
#include "themis/test_trace.h"

namespace softwrap::themis {
namespace {

Stats run(const TestTrace& t, Design d, Config cfg = {}) {
  cfg.design = d;
  const Program p = t.program(!keeps_log_order_fences(d), cfg.cores);
  EXPECT_FALSE(p.threads.empty());
  Stats s;
  std::string why;
  EXPECT_TRUE(simulate(cfg, p, {}, nullptr, &s, &why)) << why;
  return s;
}

const Config kCfg;
const Cycle kLink = kCfg.cycles(20), kAck = kCfg.cycles(20), kLlc = kCfg.cycles(20);
const Cycle kPmRead = kCfg.cycles(346);

TEST(MachineTest, AFenceWaitsForTheWcbEntryToBeAcked) {
  TestTrace t;
  t.stream(0, 4096).fence(0, FenceKind::kCommit);
  const Stats s = run(t, Design::kBaseline);
  // Issue (1), the fence forces the partial entry out: 20 ns there, 20 ns back.
  EXPECT_GE(s.cycles, kLink + kAck);
  EXPECT_LE(s.cycles, kLink + kAck + 5);
  EXPECT_EQ(s.cores[0].fences, 1u);
  EXPECT_GE(s.cores[0].fence_stall, kLink + kAck - 2);
  EXPECT_EQ(s.pm_writes, 1u);
}

TEST(MachineTest, ALoadMissGoesThroughTheLlcToPm) {
  TestTrace t;
  t.load(0, 1 << 20).load(0, (1 << 20) + 8);
  const Stats s = run(t, Design::kBaseline);
  const Cycle miss = kLlc + 2 * kCfg.cycles(20) + kPmRead;
  EXPECT_GE(s.cycles, miss);
  EXPECT_LE(s.cycles, miss + 3);  // the second load hits
  EXPECT_EQ(s.llc_misses, 1u);
  EXPECT_EQ(s.pm_reads, 1u);
  EXPECT_EQ(s.cores[0].l1_misses, 1u);
}

TEST(MachineTest, AClwbCompletesWhenTheControllerHasTheLine) {
  TestTrace t;
  t.load(0, 0).store(0, 0, 2000).flush(0, 0).fence(0, FenceKind::kCommit);
  const Stats warm = run(TestTrace{}.load(0, 0), Design::kBaseline);
  const Stats s = run(t, Design::kBaseline);
  // Store hit, then WBB -> LLC (20 ns) -> controller (20 ns) -> ACK (20 ns).
  const Cycle after = s.cycles - warm.cycles - 2000;
  EXPECT_GE(after, kLlc + kLink + kAck);
  EXPECT_LE(after, kLlc + kLink + kAck + 6);
  EXPECT_EQ(s.writebacks, 1u);
  EXPECT_EQ(s.pm_writes, 1u);
}

// The constructed case's shape: a non-temporal store still in the WCB when
// the next store's line is flushed.
TestTrace nt_then_flush(uint32_t work_after = 0) {
  TestTrace t;
  t.load(0, 1 << 16);                              // the data line is cached
  t.stream(0, 4096, 3000);                         // an undo record's word: a partial entry
  t.store(0, 1 << 16).flush(0, 1 << 16);           // its data store, flushed at once
  t.store(0, (1 << 16) + 64, work_after);          // more work before the fence
  t.fence(0, FenceKind::kCommit);
  return t;
}

TEST(MachineTest, ThemisHoldsTheWritebackUntilTheWcbEntryIsAcked) {
  const Stats th = run(nt_then_flush(), Design::kThemis);
  const Stats id = run(nt_then_flush(), Design::kIdeal);
  EXPECT_EQ(th.writebacks, 1u);
  EXPECT_EQ(th.wbb_wait.total, 1u);
  // It waited for the entry to drain (asked for by the tagged store, one
  // cycle before the clwb) and for the ACK.
  EXPECT_GE(th.wbb_wait.max, kLink + kAck - 4);
  EXPECT_LE(th.wbb_wait.max, kLink + kAck);
  EXPECT_EQ(th.wcb_drain_requests, 1u);
  EXPECT_EQ(id.wbb_wait.max, 0u);
  EXPECT_GE(th.cycles, id.cycles);
}

TEST(MachineTest, TailWidthSetsHowOftenTheWcbOverflows) {
  TestTrace t;
  for (int i = 0; i < 40; ++i) t.stream(0, 4096 + 64 * i);
  t.fence(0, FenceKind::kCommit);
  Config c4;
  c4.tail_bits = 4;
  EXPECT_EQ(run(t, Design::kThemis, c4).wcb_overflows, 2u);  // at allocations 16 and 32
  EXPECT_EQ(run(t, Design::kThemis).wcb_overflows, 0u);      // 6 bits: at 64
  Config c4b = c4;
  EXPECT_EQ(run(t, Design::kIdeal, c4b).wcb_overflows, 0u);  // no Themis pointers
}

TEST(MachineTest, OverflowNullifiesTheTagsSoOldLinesNeedNotWait) {
  TestTrace t;
  t.load(0, 1 << 16);
  t.stream(0, 4096);
  t.store(0, 1 << 16);  // tagged 1
  for (int i = 1; i < 16; ++i) t.stream(0, 4096 + 64 * i);
  t.fence(0, FenceKind::kCommit, 0);  // drains and ACKs all: the 4-bit WCB resets
  t.flush(0, 1 << 16, 1, 100);
  t.fence(0, FenceKind::kCommit);
  Config c4;
  c4.tail_bits = 4;
  const Stats s = run(t, Design::kThemis, c4);
  EXPECT_EQ(s.wcb_overflows, 1u);
  EXPECT_EQ(s.wbb_wait.max, 0u);  // tag nullified: drainable at once
}

// An undo-logging pattern: per store a streamed record (4 words), the
// removable fence, the data store; at commit the data lines are flushed
// and fenced, the commit word stored, flushed and fenced.
TestTrace undo_pattern(int wraps, int stores, uint32_t work) {
  TestTrace t;
  uint64_t rng = 42;
  for (int w = 0; w < wraps; ++w) {
    uint64_t log = 1 << 20;
    std::vector<uint64_t> lines;
    for (int s = 0; s < stores; ++s) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t data = (2u << 20) + (rng >> 40) % 256 * 64;
      t.load(0, data, 8, work);
      for (int k = 0; k < 4; ++k) t.stream(0, log + 8 * k);
      log += 32;
      t.fence(0, FenceKind::kLogOrder);
      t.store(0, data, work / 4);
      lines.push_back(data);
    }
    for (uint64_t l : lines) t.flush(0, l);
    t.fence(0, FenceKind::kCommit);
    t.store(0, 512, work).flush(0, 512).fence(0, FenceKind::kCommit);
  }
  return t;
}

TEST(MachineTest, ThemisIsFasterThanBaselineAndCloseToIdeal) {
  const TestTrace t = undo_pattern(300, 8, 200);
  const Stats b = run(t, Design::kBaseline), th = run(t, Design::kThemis), id = run(t, Design::kIdeal);
  EXPECT_GT(static_cast<double>(b.cycles) / th.cycles, 1.2);
  EXPECT_LE(th.cycles, id.cycles * 1.05);
  EXPECT_GE(th.cycles, id.cycles);
  EXPECT_EQ(b.version_regressions + th.version_regressions + id.version_regressions, 0u);
}

// Four cores storing to shared lines, streaming to their own, flushing and
// fencing at random: every design finishes, persists lines in version
// order, and Themis keeps Eq. 1-4 (the persist check).
TestTrace random_program(uint64_t seed, unsigned threads, int ops) {
  TestTrace t;
  uint64_t x = seed;
  auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull, x >> 33; };
  for (int i = 0; i < ops; ++i) {
    const uint8_t th = static_cast<uint8_t>(next() % threads);
    const uint64_t shared = (1u << 16) + next() % 24 * 64 + next() % 8 * 8;
    const uint32_t work = static_cast<uint32_t>(next() % 50);
    switch (next() % 8) {
      case 0: case 1: t.store(th, shared, work); break;
      case 2: case 3: t.stream(th, (1u << 20) + th * 4096 + next() % 32 * 8, work); break;
      case 4: t.flush(th, shared, 1, work); break;
      case 5: t.load(th, shared, 8, work); break;
      case 6: t.fence(th, next() % 2 ? FenceKind::kLogOrder : FenceKind::kCommit, work); break;
      default: t.store(th, (3u << 20) + next() % 20000 * 64, work); break;  // misses, evictions
    }
  }
  for (uint8_t th = 0; th < threads; ++th) t.fence(th, FenceKind::kCommit);
  return t;
}

TEST(MachineTest, RandomMultiCoreProgramsFinishInOrderAndKeepThemis) {
  uint64_t ideal = 0, broken = 0, themis_waits = 0, broken_mc = 0, mc_holds = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const TestTrace t = random_program(seed, 4, 6000);
    for (Design d : {Design::kBaseline, Design::kThemis, Design::kIdeal, Design::kBrokenWbb, Design::kThemisMc,
                     Design::kBrokenMc}) {
      for (unsigned bits : {4u, 6u}) {
        Config cfg;
        cfg.design = d;
        cfg.tail_bits = bits;
        cfg.seq_bits = bits + 2;  // themis-mc: 6 and 8-bit numbers
        cfg.llc_kib_per_core = 64;  // small: LLC evictions to PM happen too
        cfg.wcb_to_pm_ns = bits == 4 ? 100 : 20;    // a slow non-temporal path, or
        cfg.wcb_idle_ns = bits == 4 ? 1 : 1000;     // a WCB that holds partial lines
        const Program p = t.program(!keeps_log_order_fences(d));
        PersistCheck check(t.ev, p.footprint,
                           d == Design::kBaseline ? crashsim::Persistency::kX86 : crashsim::Persistency::kThemis);
        Stats s;
        std::string why;
        ASSERT_TRUE(simulate(cfg, p, {}, &check, &s, &why)) << why << " seed " << seed;
        EXPECT_EQ(s.version_regressions, 0u) << design_name(d) << " seed " << seed;
        EXPECT_EQ(check.fence_violations(), 0u) << design_name(d) << " seed " << seed;
        EXPECT_EQ(s.seq_misjudged, 0u) << design_name(d) << " seed " << seed;
        if (d == Design::kThemisMc) {
          EXPECT_EQ(check.order_violations(), 0u)
              << "seed " << seed << ": " << (check.examples().empty() ? "" : check.examples()[0]);
          mc_holds += s.pm_held;
        }
        if (d == Design::kBrokenMc) broken_mc += check.order_violations();
        if (d == Design::kThemis) {
          EXPECT_EQ(check.order_violations(), 0u)
              << "seed " << seed << ": " << (check.examples().empty() ? "" : check.examples()[0]);
          themis_waits += s.wbb_wait.total - s.wbb_wait.counts[0];
        }
        if (d == Design::kBaseline) {
          EXPECT_EQ(s.wbb_wait.max, 0u);
        }
        if (d == Design::kIdeal) ideal += check.order_violations();
        if (d == Design::kBrokenWbb) broken += check.order_violations();
      }
    }
  }
  // Without enforcement the order is broken now and then; Themis had to wait.
  EXPECT_GT(ideal, 0u);
  EXPECT_GT(broken, 0u);
  EXPECT_GT(themis_waits, 0u);
  // themis-mc's controller had to hold writebacks; ignoring the numbers breaks the order.
  EXPECT_GT(mc_holds, 0u);
  EXPECT_GT(broken_mc, 0u);
}

}  // namespace
}  // namespace softwrap::themis
