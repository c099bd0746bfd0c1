// write_combining_buffer_test.cc — the WCB's events of Fig. 5: incoming
// non-temporal store, drain, ACK, overflow.
#include "themis/write_combining_buffer.h"

#include <gtest/gtest.h>

namespace softwrap::themis {
namespace {

using Put = WriteCombiningBuffer::Put;

TEST(WcbTest, IncomingStoreIsAllocatedAtTheTailOrCoalesced) {
  WriteCombiningBuffer w(16, 6);
  EXPECT_EQ(w.store(100, 0, 1, 0), Put::kAllocated);
  EXPECT_EQ(w.tail(), 1u);
  EXPECT_EQ(w.store(100, 3, 2, 5), Put::kCoalesced);  // same line: no new entry
  EXPECT_EQ(w.tail(), 1u);
  EXPECT_EQ(w.entry(0).words, 0b1001);
  EXPECT_EQ(w.entry(0).units, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(w.entry(0).last_write, 5u);
  EXPECT_EQ(w.store(101, 0, 3, 6), Put::kAllocated);
  EXPECT_EQ(w.tail(), 2u);
  EXPECT_EQ(w.head(), 0u);
  EXPECT_EQ(w.head_ack(), 0u);
  for (unsigned b = 0; b < 8; ++b) w.store(102, b, 10 + b, 7);
  EXPECT_TRUE(w.entry(2).complete());
  EXPECT_FALSE(w.entry(0).complete());
}

TEST(WcbTest, AFullWcbRefusesANewLine) {
  WriteCombiningBuffer w(16, 6);
  for (uint64_t l = 0; l < 16; ++l) ASSERT_EQ(w.store(l, 0, 0, 0), Put::kAllocated);
  EXPECT_TRUE(w.full());
  EXPECT_EQ(w.store(99, 0, 0, 0), Put::kFull);
  EXPECT_EQ(w.store(7, 1, 0, 0), Put::kCoalesced);  // coalescing still works
}

TEST(WcbTest, DrainMovesHeadAndEndsCoalescing) {
  WriteCombiningBuffer w(16, 6);
  w.store(5, 0, 0, 0);
  w.store(6, 0, 0, 0);
  EXPECT_EQ(w.drain(), 0u);
  EXPECT_EQ(w.head(), 1u);
  EXPECT_TRUE(w.entry(0).drained);
  EXPECT_EQ(w.store(5, 1, 0, 0), Put::kAllocated);  // line 5 left: a new entry
  EXPECT_EQ(w.tail(), 3u);
  EXPECT_EQ(w.store(6, 1, 0, 0), Put::kCoalesced);  // line 6 has not
}

TEST(WcbTest, AckMovesHeadAckOverAckedEntriesOnly) {
  WriteCombiningBuffer w(16, 6);
  for (uint64_t l = 0; l < 3; ++l) w.store(l, 0, 0, 0);
  for (int i = 0; i < 3; ++i) w.drain();
  auto r = w.ack(1);  // out of order: the ACK bit is set, headACK waits
  EXPECT_FALSE(r.head_ack_moved);
  EXPECT_EQ(w.head_ack(), 0u);
  EXPECT_TRUE(w.entry(1).acked);
  r = w.ack(0);
  EXPECT_TRUE(r.head_ack_moved);
  EXPECT_EQ(w.head_ack(), 2u);
  EXPECT_FALSE(w.all_acked());
  w.ack(2);
  EXPECT_EQ(w.head_ack(), 3u);
  EXPECT_TRUE(w.all_acked());
  EXPECT_FALSE(r.reset);
}

TEST(WcbTest, ASlotIsReusedOnlyAfterItsAck) {
  WriteCombiningBuffer w(16, 8);
  for (uint64_t l = 0; l < 16; ++l) w.store(l, 0, 0, 0);
  for (int i = 0; i < 16; ++i) w.drain();
  EXPECT_TRUE(w.full());  // drained but not ACKed
  EXPECT_EQ(w.store(50, 0, 0, 0), Put::kFull);
  w.ack(0);
  EXPECT_EQ(w.store(50, 0, 0, 0), Put::kAllocated);
  EXPECT_EQ(w.entry(16).line, 50u);  // ring slot 0 again
}

TEST(WcbTest, OverflowForceDrainsThenResetsAllPointers) {
  WriteCombiningBuffer w(16, 4);  // 4-bit pointers: the tail counts to 16
  EXPECT_EQ(w.limit(), 16u);
  for (uint64_t l = 0; l < 16; ++l) ASSERT_EQ(w.store(l, 0, 0, 0), Put::kAllocated);
  EXPECT_TRUE(w.overflowing());
  EXPECT_EQ(w.tail(), 16u);
  EXPECT_EQ(w.store(3, 1, 0, 0), Put::kCoalesced);      // undrained entries still combine
  EXPECT_EQ(w.store(77, 0, 0, 0), Put::kOverflowing);  // no allocation until the reset
  for (int i = 0; i < 16; ++i) w.drain();
  for (uint32_t p = 0; p < 15; ++p) EXPECT_FALSE(w.ack(p).reset);
  EXPECT_EQ(w.head_ack(), 15u);
  const auto r = w.ack(15);
  EXPECT_TRUE(r.reset);  // notify the core
  EXPECT_EQ(w.tail(), 0u);
  EXPECT_EQ(w.head(), 0u);
  EXPECT_EQ(w.head_ack(), 0u);
  EXPECT_FALSE(w.overflowing());
  EXPECT_EQ(w.overflows(), 1u);
  EXPECT_EQ(w.store(77, 0, 0, 0), Put::kAllocated);
}

TEST(WcbTest, SixBitPointersOverflowAfterFourFullUses) {
  WriteCombiningBuffer w(16, 6);
  uint64_t line = 0;
  for (int use = 0; use < 4; ++use) {
    for (int i = 0; i < 16; ++i) ASSERT_EQ(w.store(line++, 0, 0, 0), Put::kAllocated);
    EXPECT_EQ(w.overflowing(), use == 3);
    for (int i = 0; i < 16; ++i) w.ack(w.drain());
  }
  EXPECT_EQ(w.overflows(), 1u);
  EXPECT_EQ(w.tail(), 0u);
}

TEST(WcbTest, WithoutPointerWidthItNeverOverflows) {
  WriteCombiningBuffer w(16, 0);
  for (uint64_t l = 0; l < 5000; ++l) {
    ASSERT_EQ(w.store(l, 0, 0, 0), Put::kAllocated);
    w.ack(w.drain());
  }
  EXPECT_EQ(w.overflows(), 0u);
  EXPECT_EQ(w.tail(), 5000u);
}

}  // namespace
}  // namespace softwrap::themis
