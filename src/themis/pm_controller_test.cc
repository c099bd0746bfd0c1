// pm_controller_test.cc — write/read queues (128/64), merging, read
// forwarding, bank timing (500 ns writes, 346 ns reads, reads first); and
// themis-mc's holding (Design::kThemisMc): a stamped write held until its
// core's entries below the stamp arrived, per-line order of held entries,
// the modulo-2^seq_bits comparison and its misjudgements, and the queue's
// last slot never held.
#include "themis/pm_controller.h"

#include <gtest/gtest.h>

namespace softwrap::themis {
namespace {

using Accept = PmController::Accept;

TEST(PmControllerTest, TheWriteQueueAcceptsMergesAndFillsUp) {
  Config cfg;
  PmController pm(cfg);
  for (uint64_t l = 0; l < 128; ++l) ASSERT_EQ(pm.write(l), Accept::kQueued);
  EXPECT_EQ(pm.write(5), Accept::kMerged);  // still queued: the newer data merges
  EXPECT_EQ(pm.write(1000), Accept::kFull);
  EXPECT_EQ(pm.writes(), 128u);
}

TEST(PmControllerTest, BanksWriteInWriteLatencyAndFreeTheSlotAfter) {
  Config cfg;
  PmController pm(cfg);
  for (uint64_t l = 0; l < 128; ++l) pm.write(l);
  std::vector<PmController::Started> s;
  pm.start(100, &s);
  ASSERT_EQ(s.size(), 16u);  // one operation per bank
  EXPECT_EQ(s[0].done, 100 + cfg.cycles(500));
  EXPECT_EQ(pm.write(1000), Accept::kFull);  // in progress: still holding slots
  EXPECT_FALSE(pm.finish(s[1].bank).read);
  EXPECT_EQ(pm.writes(), 127u);
  EXPECT_EQ(pm.write(0), Accept::kQueued);  // line 0 is being written: no merge
  EXPECT_EQ(pm.write(1000), Accept::kFull);
}

TEST(PmControllerTest, ReadsAreForwardedFromTheWriteQueueOrTakeTheReadLatency) {
  Config cfg;
  PmController pm(cfg);
  pm.write(3);
  EXPECT_EQ(pm.read(3, 1), PmController::Read::kForwarded);
  EXPECT_EQ(pm.read(4, 2), PmController::Read::kQueued);
  std::vector<PmController::Started> s;
  pm.start(0, &s);
  ASSERT_EQ(s.size(), 2u);  // banks 3 and 4
  for (const auto& x : s) {
    if (x.bank == 4) {
      EXPECT_EQ(x.done, cfg.cycles(346));
      const auto f = pm.finish(4);
      EXPECT_TRUE(f.read);
      EXPECT_EQ(f.id, 2u);
    }
  }
}

TEST(PmControllerTest, ABankTakesReadsBeforeWrites) {
  Config cfg;
  PmController pm(cfg);
  pm.write(16);     // bank 0
  pm.read(32, 7);   // bank 0
  std::vector<PmController::Started> s;
  pm.start(0, &s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].done, cfg.cycles(346));
  EXPECT_TRUE(pm.finish(0).read);
  s.clear();
  pm.start(2000, &s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].done, 2000 + cfg.cycles(500));
}

TEST(PmControllerTest, TheReadQueueHolds64) {
  Config cfg;
  PmController pm(cfg);
  for (uint64_t i = 0; i < 64; ++i) ASSERT_EQ(pm.read(i, i), PmController::Read::kQueued);
  EXPECT_EQ(pm.read(999, 999), PmController::Read::kFull);
}

// ---------------------------------------------------------------- themis-mc

Config mc_config() {
  Config cfg;
  cfg.design = Design::kThemisMc;
  return cfg;
}

Stamp stamp(uint8_t core, uint32_t seq) { return Stamp{true, core, seq}; }

void arrive(PmController& pm, unsigned core, unsigned n, std::vector<PmController::Released>* released = nullptr) {
  std::vector<PmController::Released> r;
  for (unsigned i = 0; i < n; ++i) pm.stream_arrived(core, released ? released : &r);
}

TEST(PmControllerTest, McHoldsAStampedWriteUntilItsCoresEntriesBelowTheStampArrive) {
  PmController pm(mc_config());
  ASSERT_EQ(pm.write(3, stamp(0, 2)), Accept::kHeld) << "core 0 has 0 of the 2 entries it waits for";
  const uint64_t id = pm.held_id();
  EXPECT_EQ(pm.held(), 1u);
  EXPECT_EQ(pm.writes(), 1u) << "a held write takes a queue slot";
  std::vector<PmController::Started> s;
  pm.start(0, &s);
  EXPECT_TRUE(s.empty()) << "no bank may start a held write: it is not in the persistence domain";
  EXPECT_EQ(pm.read(3, 9), PmController::Read::kForwarded) << "its data is still the newest for a read";

  std::vector<PmController::Released> released;
  pm.stream_arrived(1, &released);  // another core's entry: core 0's count does not move
  EXPECT_TRUE(released.empty());
  EXPECT_EQ(pm.arrived(0), 0u);
  EXPECT_EQ(pm.arrived(1), 1u);
  pm.stream_arrived(0, &released);  // 1 of 2
  EXPECT_TRUE(released.empty()) << "released with one of its two entries missing";
  EXPECT_EQ(pm.held(), 1u);
  pm.stream_arrived(0, &released);  // 2 of 2
  ASSERT_EQ(released.size(), 1u) << "the second entry arrived: the write must be released";
  EXPECT_EQ(released[0].id, id);
  EXPECT_EQ(pm.held(), 0u);
  pm.start(100, &s);
  ASSERT_EQ(s.size(), 1u) << "released: its bank writes it";
  EXPECT_EQ(s[0].bank, 3u);
  EXPECT_EQ(s[0].done, 100 + Config{}.cycles(500));
}

TEST(PmControllerTest, McQueuesUnstampedWritesAndStampsAlreadySatisfied) {
  PmController pm(mc_config());
  arrive(pm, 0, 2);
  EXPECT_EQ(pm.write(1), Accept::kQueued) << "no stamp: nothing to wait for";
  EXPECT_EQ(pm.write(2, stamp(0, 2)), Accept::kQueued) << "both entries below 2 have arrived";
  EXPECT_EQ(pm.write(4, stamp(0, 1)), Accept::kQueued) << "a stamp behind the arrived count";
  EXPECT_EQ(pm.write(5, stamp(1, 1)), Accept::kHeld) << "core 1's count is its own (0)";
  EXPECT_EQ(pm.write(6, stamp(0, 3)), Accept::kHeld) << "the third entry has not arrived";
  EXPECT_FALSE(pm.pending(stamp(0, 2)));
  EXPECT_TRUE(pm.pending(stamp(0, 3)));
  EXPECT_FALSE(pm.pending(Stamp{false, 0, 3})) << "a stamp that is not on is no stamp";
  EXPECT_EQ(pm.held(), 2u);
  std::vector<PmController::Started> s;
  pm.start(0, &s);
  EXPECT_EQ(s.size(), 3u) << "the three queued writes start, the two held do not";
}

TEST(PmControllerTest, OnlyThemisMcHoldsStampedWrites) {
  for (Design d : {Design::kBaseline, Design::kThemis, Design::kIdeal, Design::kBrokenWbb, Design::kBrokenMc}) {
    Config cfg;
    cfg.design = d;
    PmController pm(cfg);
    EXPECT_FALSE(pm.pending(stamp(0, 5))) << design_name(d);
    EXPECT_EQ(pm.write(3, stamp(0, 5)), Accept::kQueued) << design_name(d) << " ignores numbers";
    EXPECT_EQ(pm.held(), 0u) << design_name(d);
    std::vector<PmController::Started> s;
    pm.start(0, &s);
    EXPECT_EQ(s.size(), 1u) << design_name(d);
  }
}

TEST(PmControllerTest, McNewerWritesOfAHeldLineMergeIntoItAndASameCoreStampReplacesTheOlder) {
  PmController pm(mc_config());
  ASSERT_EQ(pm.write(3, stamp(0, 2)), Accept::kHeld);
  const uint64_t id = pm.held_id();
  EXPECT_EQ(pm.write(3), Accept::kMergedHeld) << "newer data of a held line waits with it";
  EXPECT_EQ(pm.held_id(), id);
  EXPECT_FALSE(pm.dropped().on) << "an unnumbered write drops no number";
  EXPECT_EQ(pm.write(3, stamp(0, 4)), Accept::kMergedHeld) << "a later stamp of the same core";
  EXPECT_EQ(pm.held_id(), id);
  // The entry keeps one number: the older is done with, its core may count it resolved.
  EXPECT_TRUE(pm.dropped().on);
  EXPECT_EQ(pm.dropped().seq, 2u);
  EXPECT_EQ(pm.writes(), 1u) << "merges take no slot";
  EXPECT_EQ(pm.held(), 1u);
  EXPECT_EQ(pm.write(3, {}, /*stream=*/true), Accept::kQueued) << "a non-temporal entry is never merged or held";
  EXPECT_EQ(pm.writes(), 2u);
  std::vector<PmController::Released> released;
  arrive(pm, 0, 2, &released);
  EXPECT_TRUE(released.empty()) << "released at the old stamp (2): the merged stamp 4 must replace it";
  arrive(pm, 0, 1, &released);
  EXPECT_TRUE(released.empty());
  arrive(pm, 0, 1, &released);
  ASSERT_EQ(released.size(), 1u) << "4 entries arrived: released";
  EXPECT_EQ(released[0].id, id);
}

TEST(PmControllerTest, McANumberAlreadySatisfiedMergedIntoAHeldEntryIsDroppedAtOnce) {
  PmController pm(mc_config());
  ASSERT_EQ(pm.write(3, stamp(0, 2)), Accept::kHeld);
  arrive(pm, 1, 1);  // core 1's first entry: its stamp 1 is satisfied
  EXPECT_EQ(pm.write(3, stamp(1, 1)), Accept::kMergedHeld) << "newer data waits with the held line";
  EXPECT_TRUE(pm.dropped().on) << "core 1's number is not the entry's: resolved now, not at release";
  EXPECT_EQ(pm.dropped().core, 1u);
}

TEST(PmControllerTest, McAnotherCoresStampTakesItsOwnEntryReleasedOnlyAfterTheOlderOne) {
  PmController pm(mc_config());
  ASSERT_EQ(pm.write(3, stamp(0, 3)), Accept::kHeld);
  const uint64_t older = pm.held_id();
  ASSERT_EQ(pm.write(3, stamp(1, 1)), Accept::kHeld)
      << "core 1's stamp may not be merged into core 0's entry (one entry keeps one stamp)";
  const uint64_t newer = pm.held_id();
  EXPECT_NE(newer, older);
  EXPECT_EQ(pm.held(), 2u);
  EXPECT_EQ(pm.writes(), 2u);
  EXPECT_EQ(pm.write(3), Accept::kMergedHeld) << "unstamped newer data goes to the newest held entry";
  EXPECT_EQ(pm.held_id(), newer);

  std::vector<PmController::Released> released;
  pm.stream_arrived(1, &released);
  EXPECT_TRUE(released.empty()) << "core 1's entry arrived, but the line's older held entry must persist first";
  EXPECT_EQ(pm.held(), 2u);
  arrive(pm, 0, 2, &released);
  EXPECT_TRUE(released.empty());
  arrive(pm, 0, 1, &released);
  ASSERT_EQ(released.size(), 2u) << "core 0's last entry releases both, oldest first";
  EXPECT_EQ(released[0].id, older);
  EXPECT_EQ(released[1].id, newer);
  EXPECT_EQ(pm.held(), 0u);
  std::vector<PmController::Started> s;
  pm.start(0, &s);
  ASSERT_EQ(s.size(), 1u) << "one bank (3), the older entry first";
}

TEST(PmControllerTest, McComparesNumbersModuloTwoToTheSeqBitsAcrossTheWrap) {
  Config cfg = mc_config();
  cfg.seq_bits = 6;  // numbers 0..63, 16 WCB entries
  PmController pm(cfg);
  arrive(pm, 0, 70);  // the count wrapped: the hardware's is 70 mod 64 = 6
  ASSERT_EQ(pm.arrived(0), 70u);
  EXPECT_TRUE(pm.pending(stamp(0, 72))) << "72 = 8 (mod 64) is 2 ahead of 6";
  EXPECT_TRUE(pm.pending(stamp(0, 86))) << "a whole WCB (16) ahead";
  EXPECT_FALSE(pm.pending(stamp(0, 70))) << "equal: every entry below arrived";
  EXPECT_FALSE(pm.pending(stamp(0, 65))) << "65 = 1 (mod 64), numerically below 6 and truly behind";
  EXPECT_FALSE(pm.pending(stamp(0, 62))) << "62 is numerically above 6 but behind across the wrap";
  EXPECT_FALSE(pm.pending(stamp(0, 23))) << "47 behind: (23 - 70) mod 64 = 17, beyond the window";
  EXPECT_EQ(pm.misjudged(), 0u) << "every stamp within the guard's bound is judged right";
  EXPECT_EQ(pm.write(5, stamp(0, 72)), Accept::kHeld);
  EXPECT_EQ(pm.write(6, stamp(0, 65)), Accept::kQueued);
  EXPECT_EQ(pm.misjudged(), 0u);

  // Past the bound (what the core's wrap guard prevents): 48 behind looks
  // like 16 ahead, and the write would be held for entries long arrived.
  EXPECT_TRUE(pm.pending(stamp(0, 22))) << "(22 - 70) mod 64 = 16: the hardware thinks it is ahead";
  EXPECT_EQ(pm.misjudged(), 1u) << "a comparison that disagrees with the true counts must be counted";
  EXPECT_TRUE(pm.pending(stamp(0, 10))) << "60 behind looks 4 ahead";
  EXPECT_EQ(pm.misjudged(), 2u);
  EXPECT_FALSE(pm.pending(stamp(0, 87))) << "17 ahead looks behind (no core has 17 entries unACKed)";
  EXPECT_EQ(pm.misjudged(), 3u);
}

TEST(PmControllerTest, McHoldsAtMostAllButOneSlotAndTheLastGoesToStreamsAndUnstampedWrites) {
  PmController pm(mc_config());
  for (uint64_t l = 0; l < 127; ++l) ASSERT_EQ(pm.write(l, stamp(0, 1)), Accept::kHeld) << "line " << l;
  EXPECT_EQ(pm.held(), 127u);
  EXPECT_EQ(pm.write(127, stamp(0, 1)), Accept::kFull)
      << "a 128th held entry would fill the queue with writes no bank can start";
  EXPECT_EQ(pm.write(127, stamp(1, 1)), Accept::kFull) << "whichever core it is";
  EXPECT_EQ(pm.write(5, stamp(0, 1)), Accept::kMergedHeld) << "a merge needs no slot";
  EXPECT_EQ(pm.write(200, {}, /*stream=*/true), Accept::kQueued) << "the last slot is a stream's";
  EXPECT_EQ(pm.writes(), 128u);
  EXPECT_EQ(pm.write(300), Accept::kFull) << "now the queue is full";
  std::vector<PmController::Started> s;
  pm.start(0, &s);
  ASSERT_EQ(s.size(), 1u) << "only the stream's bank (200 % 16 = 8) has a startable write";
  EXPECT_EQ(s[0].bank, 8u);
  pm.finish(8);
  EXPECT_EQ(pm.write(301), Accept::kQueued) << "the freed slot takes an unstamped write";
  EXPECT_EQ(pm.held(), 127u);

  std::vector<PmController::Released> released;
  pm.stream_arrived(0, &released);
  EXPECT_EQ(released.size(), 127u) << "core 0's entry arrived: every held entry may persist";
  EXPECT_EQ(pm.held(), 0u);
  s.clear();
  pm.start(1000, &s);
  EXPECT_EQ(s.size(), 16u) << "every bank has released writes to start";
  EXPECT_EQ(pm.write(400, stamp(0, 2)), Accept::kFull) << "the queue itself is still full (128 writes)";
  pm.finish(0);
  EXPECT_EQ(pm.write(400, stamp(0, 2)), Accept::kHeld) << "a slot freed and nothing is held";
}

}  // namespace
}  // namespace softwrap::themis
