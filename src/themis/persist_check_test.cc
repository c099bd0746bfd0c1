// persist_check_test.cc — the persist order of runs checked by the crash
// simulator's persistency model: the constructed case (a non-temporal
// store still held in the WCB while the next store's line is flushed)
// makes Ideal and the broken WBB violate Eq. 3 and leaves Themis and
// Baseline clean.
#include "themis/persist_check.h"

#include <gtest/gtest.h>

#include "themis/test_trace.h"

namespace softwrap::themis {
namespace {

struct Outcome {
  Stats stats;
  uint64_t order = 0, fence = 0;
  std::vector<std::string> examples;
};

Outcome check(const TestTrace& t, Design d, crashsim::Persistency p, Config cfg = {}) {
  cfg.design = d;
  const Program prog = t.program(!keeps_log_order_fences(d));
  PersistCheck c(t.ev, prog.footprint, p);
  Outcome o;
  std::string why;
  EXPECT_TRUE(simulate(cfg, prog, {}, &c, &o.stats, &why)) << why;
  o.order = c.order_violations();
  o.fence = c.fence_violations();
  o.examples = c.examples();
  return o;
}

// The undo record's word is streamed into a WCB that holds partial lines
// for combining (as x86's do: 1 us here), the protected data line is
// stored and flushed, and the program works on for 5000 cycles before its
// next fence.
Config holding_wcb() {
  Config c;
  c.wcb_idle_ns = 1000;
  return c;
}

TestTrace constructed_case() {
  TestTrace t;
  t.load(0, 1 << 16);
  t.stream(0, 4096, 100);
  t.fence(0, FenceKind::kLogOrder);  // Baseline keeps it; the others drop it
  t.store(0, 1 << 16).flush(0, 1 << 16);
  t.store(0, (1 << 16) + 128, 5000);
  t.fence(0, FenceKind::kCommit);
  return t;
}

TEST(PersistCheckTest, IdealViolatesTheConstructedCaseAndThemisDoesNot) {
  const TestTrace t = constructed_case();
  const Outcome ideal = check(t, Design::kIdeal, crashsim::Persistency::kThemis, holding_wcb());
  EXPECT_EQ(ideal.order, 1u);
  EXPECT_EQ(ideal.fence, 0u);
  ASSERT_FALSE(ideal.examples.empty());
  EXPECT_NE(ideal.examples[0].find("persisted before its earlier non-temporal store"), std::string::npos);
  const Outcome themis = check(t, Design::kThemis, crashsim::Persistency::kThemis, holding_wcb());
  EXPECT_EQ(themis.order + themis.fence, 0u);
  EXPECT_GT(themis.stats.wbb_wait.max, 0u);  // it held the line back
  for (auto p : {crashsim::Persistency::kX86, crashsim::Persistency::kThemis}) {
    const Outcome base = check(t, Design::kBaseline, p, holding_wcb());
    EXPECT_EQ(base.order + base.fence, 0u);
  }
}

// The uncommon case the mechanism exists for: the non-temporal path is
// slow (100 ns to the controller), so even a record the WCB drains at once
// arrives after the data line's writeback unless the WBB holds it back.
TEST(PersistCheckTest, TheBrokenWriteBackBufferIsCaughtWhenTheNonTemporalPathIsSlow) {
  TestTrace t;
  t.load(0, 1 << 16);
  for (int k = 0; k < 8; ++k) t.stream(0, 4096 + 8 * k);  // a whole line: drains at once
  t.store(0, 1 << 16).flush(0, 1 << 16).fence(0, FenceKind::kCommit);
  Config slow;
  slow.wcb_to_pm_ns = 100;
  const Outcome broken = check(t, Design::kBrokenWbb, crashsim::Persistency::kThemis, slow);
  EXPECT_EQ(broken.order, 8u);  // each word of the record is one violation
  EXPECT_EQ(broken.stats.wbb_wait.max, 0u);  // it never waited
  const Outcome themis = check(t, Design::kThemis, crashsim::Persistency::kThemis, slow);
  EXPECT_EQ(themis.order + themis.fence, 0u);
  EXPECT_GE(themis.stats.wbb_wait.max, slow.cycles(100));
  const Outcome ideal = check(t, Design::kIdeal, crashsim::Persistency::kThemis, slow);
  EXPECT_EQ(ideal.order, 8u);
}

TEST(PersistCheckTest, TheBrokenWriteBackBufferPassesTheConstructedCaseByLuck) {
  // Its store asks the WCB to drain the record at once, and the fast
  // non-temporal path wins the race: the check is only as strong as the
  // traces that exercise it.
  const Outcome broken = check(constructed_case(), Design::kBrokenWbb, crashsim::Persistency::kThemis, holding_wcb());
  EXPECT_EQ(broken.order, 0u);
}

TEST(PersistCheckTest, IdealIsCleanWhenTheRecordLeavesTheWcbFirst) {
  // A WCB that does not hold the record (the default) sends it at once,
  // and it beats the data line's writeback: the fast path Themis relies on.
  const Outcome eager = check(constructed_case(), Design::kIdeal, crashsim::Persistency::kThemis);
  EXPECT_EQ(eager.order + eager.fence, 0u);
  // So does a whole-line record in a holding WCB (complete: it leaves).
  TestTrace t;
  t.load(0, 1 << 16);
  for (int k = 0; k < 8; ++k) t.stream(0, 4096 + 8 * k);
  t.store(0, 1 << 16).flush(0, 1 << 16).fence(0, FenceKind::kCommit);
  const Outcome ideal = check(t, Design::kIdeal, crashsim::Persistency::kThemis, holding_wcb());
  EXPECT_EQ(ideal.order + ideal.fence, 0u);
}

TEST(PersistCheckTest, AFenceThatDidNotWaitWouldBeCaught) {
  // The check itself: report a stream as persisted only after its fence.
  TestTrace t;
  t.stream(0, 64).fence(0, FenceKind::kCommit);
  const Program p = t.program(false);
  PersistCheck c(t.ev, p.footprint, crashsim::Persistency::kX86);
  c.performed(p.threads[0][0]);
  c.performed(p.threads[0][1]);  // the fence completes ...
  c.persisted_stream(0);         // ... before the stream persisted
  EXPECT_EQ(c.fence_violations(), 1u);
  EXPECT_EQ(c.order_violations(), 0u);
  ASSERT_EQ(c.examples().size(), 1u);
  EXPECT_NE(c.examples()[0].find("a fence completed before"), std::string::npos);
}

}  // namespace
}  // namespace softwrap::themis
