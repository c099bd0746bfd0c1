// persist_check_test.cc — the persist order of runs checked by the crash
// simulator's persistency model: the constructed case (a non-temporal
// store still held in the WCB while the next store's line is flushed)
// makes Ideal violate Eq. 3 and leaves Themis and Baseline clean; a slow
// non-temporal path catches the broken WBB.
#include "themis/persist_check.h"

#include <gtest/gtest.h>

#include "themis/cases.h"
#include "themis/test_trace.h"

namespace softwrap::themis {
namespace {

using Outcome = Checked;

Outcome check(const std::vector<TraceEvent>& ev, Design d, crashsim::Persistency p, Config cfg = {}) {
  cfg.design = d;
  Outcome out = run_checked(ev, cfg, p, 1);
  EXPECT_TRUE(out.ok) << out.why;
  return out;
}

TEST(PersistCheckTest, IdealViolatesTheConstructedCaseAndThemisDoesNot) {
  const auto ev = held_record_case();
  const Outcome ideal = check(ev, Design::kIdeal, crashsim::Persistency::kThemis, holding_wcb());
  EXPECT_EQ(ideal.order, 1u);
  EXPECT_EQ(ideal.fence, 0u);
  ASSERT_FALSE(ideal.examples.empty());
  EXPECT_NE(ideal.examples[0].find("persisted before its earlier non-temporal store"), std::string::npos);
  const Outcome themis = check(ev, Design::kThemis, crashsim::Persistency::kThemis, holding_wcb());
  EXPECT_EQ(themis.order + themis.fence, 0u);
  EXPECT_GT(themis.stats.wbb_wait.max, 0u);  // it held the line back
  for (auto p : {crashsim::Persistency::kX86, crashsim::Persistency::kThemis}) {
    const Outcome base = check(ev, Design::kBaseline, p, holding_wcb());
    EXPECT_EQ(base.order + base.fence, 0u);
  }
}

TEST(PersistCheckTest, AWcbThatDoesNotHoldTheRecordKeepsIdealInOrder) {
  // The default WCB sends the record when its burst ends, and the fast
  // non-temporal path beats the data line's writeback: the common case
  // Themis relies on.
  const Outcome ideal = check(held_record_case(), Design::kIdeal, crashsim::Persistency::kThemis);
  EXPECT_EQ(ideal.order + ideal.fence, 0u);
}

TEST(PersistCheckTest, TheBrokenWriteBackBufferIsCaughtWhenTheNonTemporalPathIsSlow) {
  const auto ev = slow_path_case();
  const Outcome broken = check(ev, Design::kBrokenWbb, crashsim::Persistency::kThemis, slow_nt_path());
  EXPECT_EQ(broken.order, 8u);  // each word of the record is one violation
  EXPECT_EQ(broken.stats.wbb_wait.max, 0u);  // it never waited
  const Outcome themis = check(ev, Design::kThemis, crashsim::Persistency::kThemis, slow_nt_path());
  EXPECT_EQ(themis.order + themis.fence, 0u);
  EXPECT_GE(themis.stats.wbb_wait.max, Config{}.cycles(100));
  const Outcome ideal = check(ev, Design::kIdeal, crashsim::Persistency::kThemis, slow_nt_path());
  EXPECT_EQ(ideal.order, 8u);
  const Outcome fast = check(ev, Design::kBrokenWbb, crashsim::Persistency::kThemis);
  EXPECT_EQ(fast.order, 0u);  // the check is only as strong as the runs it sees
}

TEST(PersistCheckTest, TheBrokenWriteBackBufferPassesTheHeldRecordByLuck) {
  // Its tagged store asks the WCB to send the record at once, and the fast
  // non-temporal path wins the race.
  const Outcome broken = check(held_record_case(), Design::kBrokenWbb, crashsim::Persistency::kThemis, holding_wcb());
  EXPECT_EQ(broken.order, 0u);
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
