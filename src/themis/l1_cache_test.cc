// l1_cache_test.cc — the L1's events of Fig. 6: store tagging, eviction
// with the tag, overflow notification; and its replacement.
#include "themis/l1_cache.h"

#include <gtest/gtest.h>

namespace softwrap::themis {
namespace {

// Lines mapping to set 0 of a 64 KiB 4-way cache (256 sets).
uint64_t in_set0(int i) { return static_cast<uint64_t>(i) * 256; }

TEST(L1CacheTest, Geometry) {
  L1Cache c(64, 4);
  EXPECT_EQ(c.sets(), 256u);
  EXPECT_EQ(c.ways(), 4u);
}

TEST(L1CacheTest, IncomingStoreTagsTheLineWithTheTail) {
  L1Cache c(64, 4);
  EXPECT_FALSE(c.fill(7, true, false));
  L1Cache::Line* l = c.find(7);
  ASSERT_NE(l, nullptr);
  EXPECT_FALSE(l->dirty);
  EXPECT_EQ(c.tag(*l), kNoTag);
  c.store(*l, 5);
  EXPECT_TRUE(l->dirty);
  EXPECT_EQ(c.tag(*l), 5u);
  c.store(*l, 9);  // the tail of the *last* store
  EXPECT_EQ(c.tag(*l), 9u);
}

TEST(L1CacheTest, EvictingADirtyLineSendsItsTag) {
  L1Cache c(64, 4);
  for (int i = 0; i < 4; ++i) c.fill(in_set0(i), true, false);
  c.store(*c.find(in_set0(0)), 3);  // line 0: dirty, tag 3 ...
  for (int i = 1; i < 4; ++i) c.find(in_set0(i));  // ... and least recently used
  auto ev = c.fill(in_set0(4), true, false);
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->line, in_set0(0));
  EXPECT_TRUE(ev->dirty);
  EXPECT_EQ(ev->tag, 3u);
  EXPECT_EQ(c.peek(in_set0(0)), nullptr);
  // A clean victim leaves without a writeback.
  ev = c.fill(in_set0(5), true, false);
  ASSERT_TRUE(ev);
  EXPECT_FALSE(ev->dirty);
}

TEST(L1CacheTest, ClwbWritesBackWithTheTagAndKeepsTheLineClean) {
  L1Cache c(64, 4);
  c.fill(1, true, false);
  L1Cache::Line* l = c.find(1);
  c.store(*l, 12);
  const Writeback wb = c.clean(*l);
  EXPECT_EQ(wb.line, 1u);
  EXPECT_EQ(wb.tag, 12u);
  EXPECT_TRUE(l->valid);
  EXPECT_FALSE(l->dirty);
  EXPECT_EQ(c.tag(*l), kNoTag);
}

TEST(L1CacheTest, OverflowNotificationNullifiesEveryTag) {
  L1Cache c(64, 4);
  for (uint64_t i = 0; i < 100; ++i) {
    c.fill(i, true, false);
    c.store(*c.find(i), static_cast<uint32_t>(i % 60));
  }
  c.nullify_tags();
  for (uint64_t i = 0; i < 100; ++i) {
    const L1Cache::Line* l = c.peek(i);
    ASSERT_NE(l, nullptr);
    EXPECT_TRUE(l->dirty);  // still to be written back ...
    EXPECT_EQ(c.tag(*l), kNoTag);  // ... with no dependency left
  }
  auto wb = c.invalidate(5);
  ASSERT_TRUE(wb);
  EXPECT_EQ(wb->tag, kNoTag);
  c.store(*c.find(6), 2);  // a store after the notification is tagged again
  EXPECT_EQ(c.tag(*c.find(6)), 2u);
}

TEST(L1CacheTest, InvalidateReturnsAWritebackOnlyForDirtyLines) {
  L1Cache c(64, 4);
  c.fill(1, false, false);
  c.fill(2, true, true);  // filled dirty (taken from the LLC)
  EXPECT_FALSE(c.invalidate(1));
  EXPECT_TRUE(c.invalidate(2));
  EXPECT_FALSE(c.invalidate(3));
  EXPECT_EQ(c.victim(1), nullptr);  // the set has free ways again
}

}  // namespace
}  // namespace softwrap::themis
