// llc_test.cc — the shared LLC: dirty versions, clwb, replacement.
#include "themis/llc.h"

#include <gtest/gtest.h>

namespace softwrap::themis {
namespace {

TEST(LlcTest, WritebacksMakeLinesDirtyWithTheirVersion) {
  Llc c(2048, 16);
  EXPECT_EQ(c.lines(), 2048u * 1024 / 64);
  EXPECT_FALSE(c.write(5, 3));
  EXPECT_TRUE(c.present(5));
  EXPECT_TRUE(c.dirty(5));
  c.write(5, 7);
  auto w = c.clean(5);  // clwb
  ASSERT_TRUE(w);
  EXPECT_EQ(w->version, 7u);
  EXPECT_FALSE(c.dirty(5));
  EXPECT_FALSE(c.clean(5));  // nothing more to write
}

TEST(LlcTest, ADirtyVictimGoesToMemory) {
  Llc c(16, 2);  // 128 sets of 2 ways
  const uint64_t sets = 16 * 1024 / 64 / 2;
  c.write(0, 4);
  EXPECT_FALSE(c.fill(sets));  // second way
  c.present(sets);            // line 0 is now least recently used
  auto v = c.fill(2 * sets);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->line, 0u);
  EXPECT_EQ(v->version, 4u);
  EXPECT_FALSE(c.fill(3 * sets));  // a clean victim: nothing to write
}

TEST(LlcTest, AnL1TakingALineToWriteTakesItsDirtiness) {
  Llc c(2048, 16);
  c.write(9, 2);
  EXPECT_TRUE(c.take_dirty(9));
  EXPECT_FALSE(c.dirty(9));
  EXPECT_TRUE(c.present(9));
  EXPECT_FALSE(c.take_dirty(9));
}

}  // namespace
}  // namespace softwrap::themis
