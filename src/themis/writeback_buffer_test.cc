// writeback_buffer_test.cc — the WBB's events of Fig. 7: writeback with a
// tail above hAck', at or below it, headACK update; and the overflow
// reset, merging, the waits of Fig. 11 and the broken variant.
#include "themis/writeback_buffer.h"

#include <gtest/gtest.h>

namespace softwrap::themis {
namespace {

TEST(WbbTest, WritebackWithTailAboveHackWaitsForIt) {
  WritebackBuffer b(16, true);
  EXPECT_TRUE(b.insert({10, 3}, 1, false, 0));  // hAck' = 0 < 3
  EXPECT_FALSE(b.has_drainable());
  EXPECT_FALSE(b.pop_drainable());
  EXPECT_EQ(b.find(10)->da, 3u);
  EXPECT_EQ(b.max_waiting_da(), 3u);
}

TEST(WbbTest, WritebackWithTailAtOrBelowHackIsDrainableAtOnce) {
  WritebackBuffer b(16, true);
  b.head_ack(3, 0);
  EXPECT_FALSE(b.insert({10, 3}, 1, false, 0));
  EXPECT_FALSE(b.insert({11, 1}, 1, false, 0));
  EXPECT_FALSE(b.insert({12, kNoTag}, 1, false, 0));  // untagged / nullified
  EXPECT_EQ(b.pop_drainable()->line, 10u);  // oldest first
  EXPECT_EQ(b.pop_drainable()->line, 11u);
  EXPECT_EQ(b.pop_drainable()->line, 12u);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.waits().total, 3u);
  EXPECT_EQ(b.waits().counts[0], 3u);
}

TEST(WbbTest, HeadAckUpdateReleasesEntriesAtOrBelowIt) {
  WritebackBuffer b(16, true);
  b.insert({1, 5}, 1, false, 10);
  b.insert({2, 2}, 1, false, 10);
  b.insert({3, 7}, 1, false, 20);
  EXPECT_EQ(b.head_ack(2, 30), 1u);
  EXPECT_EQ(b.head_ack_copy(), 2u);
  auto e = b.pop_drainable();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->line, 2u);  // the one that may go, although not the oldest
  EXPECT_FALSE(b.pop_drainable());
  EXPECT_EQ(b.head_ack(6, 48), 1u);
  EXPECT_EQ(b.pop_drainable()->line, 1u);
  EXPECT_EQ(b.head_ack(7, 58), 1u);
  // Fig. 11: waits of 20, 38 and 38 cycles.
  EXPECT_EQ(b.waits().total, 3u);
  EXPECT_EQ(b.waits().counts[20], 1u);
  EXPECT_EQ(b.waits().counts[38], 2u);
  EXPECT_EQ(b.waits().max, 38u);
}

TEST(WbbTest, OverflowResetReleasesEverythingAndRestartsHack) {
  WritebackBuffer b(16, true);
  b.insert({1, 60}, 1, false, 0);
  b.head_ack(40, 5);
  b.overflow_reset(9);
  EXPECT_EQ(b.head_ack_copy(), 0u);
  ASSERT_TRUE(b.has_drainable());
  EXPECT_EQ(b.find(1)->da, kNoTag);
  // A tag of the new epoch compares with the new hAck'.
  EXPECT_TRUE(b.insert({2, 1}, 1, false, 10));
  EXPECT_FALSE(b.insert({3, 0}, 1, false, 10));
}

TEST(WbbTest, ASecondWritebackOfALineMergesIntoItsEntry) {
  WritebackBuffer b(2, true);
  b.head_ack(4, 0);
  EXPECT_FALSE(b.insert({1, 2}, 3, false, 0));
  EXPECT_TRUE(b.insert({1, 6}, 5, true, 1));  // newer data, later tag: now it waits
  EXPECT_EQ(b.size(), 1u);
  const WritebackBuffer::Entry* e = b.find(1);
  EXPECT_EQ(e->version, 5u);
  EXPECT_EQ(e->da, 6u);
  EXPECT_TRUE(e->flush);
  EXPECT_FALSE(b.insert({2, kNoTag}, 1, false, 1));
  EXPECT_TRUE(b.full());
  EXPECT_TRUE(b.insert({1, 5}, 6, false, 2));  // merges although full
  EXPECT_EQ(b.find(1)->da, 6u);
}

TEST(WbbTest, TheBrokenVariantIgnoresDrainableAfterPointers) {
  WritebackBuffer b(16, false);
  EXPECT_FALSE(b.insert({10, 40}, 1, false, 0));
  EXPECT_TRUE(b.has_drainable());
  EXPECT_EQ(b.max_waiting_da(), kNoTag);
}

TEST(HistogramTest, QuantilesAndMerge) {
  Histogram h, g;
  for (Cycle c : {0, 0, 0, 10, 40}) h.add(c);
  g.add(5000);
  h.merge(g);
  EXPECT_EQ(h.total, 6u);
  EXPECT_EQ(h.quantile(0.5), 0u);
  EXPECT_EQ(h.quantile(0.6), 10u);
  EXPECT_EQ(h.quantile(0.8), 40u);
  EXPECT_EQ(h.quantile(1.0), Histogram::kExact);
  EXPECT_EQ(h.max, 5000u);
}

}  // namespace
}  // namespace softwrap::themis
