// pm_controller_test.cc — write/read queues (128/64), merging, read
// forwarding, bank timing (500 ns writes, 346 ns reads, reads first).
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

}  // namespace
}  // namespace softwrap::themis
