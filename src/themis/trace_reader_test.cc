// trace_reader_test.cc — trace events to per-core operations: one per line,
// work in cycles, long gaps capped, dropped fences, errors.
#include "themis/trace_reader.h"

#include <gtest/gtest.h>

#include "themis/test_trace.h"

namespace softwrap::themis {
namespace {

TEST(TraceReaderTest, EventsBecomeOneOperationPerLine) {
  TestTrace t;
  t.store(0, 64 + 8, 10).stream(0, 128 + 24, 5).flush(0, 192, 3).fence(0, FenceKind::kCommit).load(0, 60, 16);
  t.ev.push_back({TraceKind::kDrain, 0, 0, 0, 0, 0, "drain", 0});
  t.ev.push_back({TraceKind::kMark, 0, 0, 0, 0, 0, "mark", 7});
  t.store(0, 0);
  const Program p = t.program(false);
  ASSERT_EQ(p.threads.size(), 1u);
  const auto& o = p.threads[0];
  ASSERT_EQ(o.size(), 10u);
  EXPECT_EQ(o[0].kind, OpKind::kStore);
  EXPECT_EQ(o[0].line, 1u);
  EXPECT_EQ(o[0].work, 10u);
  EXPECT_EQ(o[1].kind, OpKind::kStream);
  EXPECT_EQ(o[1].line, 2u);
  EXPECT_EQ(o[1].word, 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(o[2 + i].kind, OpKind::kFlush);
    EXPECT_EQ(o[2 + i].line, 3u + i);
    EXPECT_EQ(o[2 + i].event, 2u);
  }
  EXPECT_EQ(o[5].kind, OpKind::kFence);
  EXPECT_EQ(o[5].fence, FenceKind::kCommit);
  EXPECT_EQ(o[6].kind, OpKind::kLoad);  // bytes 60..75: lines 0 and 1
  EXPECT_EQ(o[6].line, 0u);
  EXPECT_EQ(o[7].line, 1u);
  EXPECT_EQ(o[8].kind, OpKind::kFence);  // the drain
  EXPECT_EQ(o[9].kind, OpKind::kStore);  // the marker is gone, its work moved on
  EXPECT_EQ(o[9].work, 7u);
  EXPECT_EQ(p.footprint, 6u * 64);
  EXPECT_DOUBLE_EQ(p.work_cycles, 22);
}

TEST(TraceReaderTest, DroppedLogOrderFencesPassTheirWorkOn) {
  TestTrace t;
  t.stream(0, 0).fence(0, FenceKind::kLogOrder, 30).store(0, 64, 12).fence(0, FenceKind::kCommit);
  const Program keep = t.program(false), drop = t.program(true);
  EXPECT_EQ(keep.threads[0].size(), 4u);
  ASSERT_EQ(drop.threads[0].size(), 3u);
  EXPECT_EQ(drop.dropped_fences, 1u);
  EXPECT_EQ(drop.threads[0][1].kind, OpKind::kStore);
  EXPECT_EQ(drop.threads[0][1].work, 42u);
  EXPECT_EQ(drop.threads[0][2].fence, FenceKind::kCommit);
}

TEST(TraceReaderTest, WorkIsConvertedAndLongGapsAreCapped) {
  std::vector<TraceEvent> ev = {{TraceKind::kStore, 0, 0, 0, ~0ull, 1, "s", 2000},
                                {TraceKind::kStore, 0, 0, 8, ~0ull, 1, "s", 2'000'000}};
  ReadOptions o;
  o.ticks_per_ns = 2.0;  // a 2 GHz TSC
  o.max_work_ns = 10000;
  o.cycles_per_tick = 1.5;
  Program p;
  std::string why;
  ASSERT_TRUE(read_trace(ev, o, 4, &p, &why));
  EXPECT_EQ(p.threads[0][0].work, 3000u);
  EXPECT_EQ(p.threads[0][1].work, 30000u);  // 1 ms cut to 10 us: 20000 ticks
  EXPECT_EQ(p.capped_gaps, 1u);
  o.ticks_per_ns = 0;  // a trace without work
  ASSERT_TRUE(read_trace(ev, o, 4, &p, &why));
  EXPECT_EQ(p.threads[0][0].work, 0u);
}

TEST(TraceReaderTest, ThreadsMapToCoresAndTooManyAreRefused) {
  TestTrace t;
  t.store(0, 0).store(2, 64);
  Program p;
  std::string why;
  ReadOptions o;
  ASSERT_TRUE(read_trace(t.ev, o, 4, &p, &why));
  EXPECT_EQ(p.threads.size(), 3u);
  EXPECT_TRUE(p.threads[1].empty());
  EXPECT_FALSE(read_trace(t.ev, o, 2, &p, &why));
  EXPECT_NE(why.find("more threads than the machine has cores"), std::string::npos);
}

}  // namespace
}  // namespace softwrap::themis
