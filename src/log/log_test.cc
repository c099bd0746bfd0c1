// log_test.cc — redo frames and undo records on a real pool file: what the
// writer streams the scanner finds (across the lane's wrap-around and into
// log extents taken from the heap), and nothing else — not abandoned
// frames, not frames at or below the watermark, not a frame with any word
// damaged, in its lane or in an extent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/counters.h"
#include "log/lanes.h"
#include "log/redo_log.h"
#include "log/undo_log.h"
#include "medium/medium.h"
#include "pool/allocator.h"
#include "pool/pool.h"

namespace softwrap {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_log_test_" + std::to_string(getpid());
    unlink(path_.c_str());
    ResolvedConfig cfg;
    cfg.lanes = 4;
    cfg.lane_size = 64 << 10;
    file_ = PoolFile::create(path_, 16 << 20, cfg);
    ASSERT_TRUE(file_);
    MediumOptions mo;
    mo.kind = SW_MEDIUM_X86;
    medium_ = make_medium(mo, file_->base(), file_->size());
    lanes_ = std::make_unique<LaneSet>(file_.get());
    ASSERT_EQ(Allocator::open(file_.get(), &alloc_), 0);
  }
  void TearDown() override {
    alloc_.reset();
    file_.reset();
    unlink(path_.c_str());
  }
  uint64_t heap(uint64_t i) const { return file_->header().heap_offset + 8 * i; }
  std::vector<RedoFrame> scan(uint32_t lane, uint64_t min_seq, uint64_t* torn = nullptr) {
    std::vector<RedoFrame> out;
    uint64_t t = 0;
    scan_lane(*file_, lane, min_seq, &out, torn ? torn : &t);
    return out;
  }
  // Grants room by forgetting committed frames (what retirement does).
  static void reclaim_all(void*, Lane& l) {
    l.reclaim_through(~uint64_t{0} - 1);
  }
  // Retirement that never frees anything.
  static void reclaim_none(void*, Lane&) {}
  RedoWriter writer(RedoWriter::RoomFn room = &reclaim_all) {
    return RedoWriter(file_.get(), medium_.get(), alloc_.get(), room, nullptr);
  }
  std::vector<uint64_t> words(const RedoFrame& f) { return frame_entry_words(*file_, f); }

  std::string path_;
  std::unique_ptr<PoolFile> file_;
  std::unique_ptr<Medium> medium_;
  std::unique_ptr<LaneSet> lanes_;
  std::unique_ptr<Allocator> alloc_;
};

// A lane's queue of committed frames: oldest first through growth and
// wrap-around, and its oldest_seq() — the only word reclaim_through() reads
// while no frame has retired — always the oldest frame's seq (~0 when
// empty).  A stale oldest_seq() above the oldest frame would keep retired
// space from ever being reclaimed; the checks after each step catch it.
TEST(LaneFramesTest, QueueKeepsOrderAndItsOldestSeqThroughGrowthAndWrapAround) {
  Lane l;
  l.size = 1 << 20;
  EXPECT_TRUE(l.frames_empty());
  EXPECT_EQ(l.oldest_seq(), ~uint64_t{0});
  uint64_t next = 1, oldest = 1;
  // 64 marks fit the first buffer: push past it twice while popping, so
  // that the ring wraps and grows with its head in the middle.
  for (int round = 0; round < 6; ++round) {
    for (int k = 0; k < 50; ++k, ++next) l.push_frame({next * 64, next});
    for (int k = 0; k < 30; ++k, ++oldest) {
      ASSERT_EQ(l.oldest_seq(), oldest);
      ASSERT_EQ(l.oldest_frame().seq, oldest);
      ASSERT_EQ(l.oldest_frame().end, oldest * 64);
      l.pop_frame();
    }
    ASSERT_EQ(l.frames(), next - oldest);
  }
  l.clear_frames();
  EXPECT_TRUE(l.frames_empty());
  EXPECT_EQ(l.oldest_seq(), ~uint64_t{0});
  l.push_frame({64, 500});
  EXPECT_EQ(l.oldest_seq(), 500u) << "the first frame after a clear sets the summary";
}

TEST(LaneFramesTest, ReclaimThroughFreesExactlyTheRetiredFrames) {
  Lane l;
  l.size = 1 << 20;
  for (uint64_t s = 1; s <= 10; ++s) l.push_frame({s * 128, s});
  l.reclaim_through(0);
  EXPECT_EQ(l.reclaimed, 0u);
  EXPECT_EQ(l.frames(), 10u);
  l.reclaim_through(4);
  EXPECT_EQ(l.reclaimed, 4u * 128);
  EXPECT_EQ(l.oldest_seq(), 5u);
  l.reclaim_through(4);  // nothing more retired: the summary alone answers
  EXPECT_EQ(l.frames(), 6u);
  l.reclaim_through(10);
  EXPECT_EQ(l.reclaimed, 10u * 128);
  EXPECT_TRUE(l.frames_empty());
  EXPECT_EQ(l.oldest_seq(), ~uint64_t{0});
  // A frame pushed into the emptied queue is reclaimed once it retires.
  l.push_frame({11 * 128, 11});
  l.reclaim_through(10);
  EXPECT_EQ(l.frames(), 1u);
  l.reclaim_through(11);
  EXPECT_EQ(l.reclaimed, 11u * 128);
  EXPECT_TRUE(l.frames_empty());
}

TEST_F(LogTest, CommittedFrameIsFoundWithEveryEntry) {
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(1);
  w.begin(lane);
  ASSERT_TRUE(w.append_store(heap(0), 0x1111, 8));
  const char text[] = "seventeen bytes!!";
  ASSERT_TRUE(w.append_range(heap(10) + 3, text, 17));
  ASSERT_TRUE(w.commit(42));
  EXPECT_EQ(lane.tail % kCacheLine, 0u);
  auto frames = scan(1, 0);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].seq, 42u);
  const std::vector<uint64_t> ws = words(frames[0]);
  ASSERT_EQ(ws.size(), 7u);
  EXPECT_EQ(ws[0], heap(0) << 8 | 3 << 4 | kStore);
  EXPECT_EQ(ws[1], 0x1111u);
  EXPECT_EQ(ws[3], 17u);
  EXPECT_EQ(0, std::memcmp(&ws[4], text, 17));
  EXPECT_TRUE(scan(0, 0).empty());
  EXPECT_TRUE(scan(1, 42).empty()) << "at the watermark: already home";
  apply_frame(*file_, *medium_, frames[0]);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(0))), 0x1111u);
  EXPECT_EQ(0, std::memcmp(file_->at(heap(10) + 3), text, 17));
}

TEST_F(LogTest, AbandonedAndUncommittedFramesAreNotFound) {
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(0);
  w.begin(lane);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(w.append_store(heap(i), i, 8));
  w.abandon();
  EXPECT_EQ(lane.tail, 0u);
  w.begin(lane);
  ASSERT_TRUE(w.append_store(heap(1), 7, 8));
  ASSERT_TRUE(w.commit(5));
  w.begin(lane);  // open, never committed
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(w.append_store(heap(i), 99, 8));
  uint64_t torn = 0;
  auto frames = scan(0, 0, &torn);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].seq, 5u);
  EXPECT_GE(torn, 1u);
}

TEST_F(LogTest, AnyDamagedWordInvalidatesTheFrame) {
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(2);
  w.begin(lane);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(w.append_store(heap(i), i * 3, 8));
  ASSERT_TRUE(w.commit(9));
  const uint64_t frame_bytes = (1 + 20 * 2 + 3) * 8;  // header, entries, trailer (then zero padding)
  ASSERT_EQ(scan(2, 0).size(), 1u);
  for (uint64_t b = 0; b < frame_bytes; b += 8) {
    char* p = file_->lane_base(2) + b;
    const char saved = *p;
    *p ^= 0x04;
    EXPECT_TRUE(scan(2, 0).empty()) << "flipped byte " << b;
    *p = saved;
  }
  EXPECT_EQ(scan(2, 0).size(), 1u);
}

// Layout version 4: a frame of at most six entry words goes out as one
// line (header with the seq, entries, zero words, checksum); a seventh word
// makes it a classic frame of two lines.  Every kind an entry can be in a
// line reads back and replays the same either way.
TEST_F(LogTest, AFrameOfUpToSixEntryWordsIsOneLine) {
  ASSERT_EQ(file_->header().layout_version, kLayoutVersion);
  RedoWriter w = writer();
  ASSERT_TRUE(w.one_line_frames());
  Lane& lane = lanes_->lane(1);
  const char text[] = "fourteen bytes";
  struct Case {
    const char* what;
    int stores;       // word stores of 0x1000 + i at heap(i)
    bool range;       // and a 14-byte range at heap(20) + 1 (4 words)
    bool pair;        // and a PAIR of half-changed words at heap(30), heap(31) (3 words)
    uint64_t lines;   // lines the frame takes
  };
  const Case cases[] = {{"one store", 1, false, false, 1},     {"two stores", 2, false, false, 1},
                        {"three stores", 3, false, false, 1},  {"four stores", 4, false, false, 2},
                        {"a range and a store", 1, true, false, 1}, {"a pair and a store", 1, false, true, 1},
                        {"a pair and two stores", 2, false, true, 2}, {"a range", 0, true, false, 1}};
  uint64_t seq = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const uint64_t start = lane.tail;
    w.begin(lane);
    for (int i = 0; i < c.stores; ++i) ASSERT_TRUE(w.append_store(heap(i), 0x1000 + i, 8));
    if (c.range) ASSERT_TRUE(w.append_range(heap(20) + 1, text, 14));
    if (c.pair) {
      ASSERT_TRUE(w.append_word(heap(30), 0x11111111'00000005, 0x11111111'00000000));
      ASSERT_TRUE(w.append_word(heap(31), 0x00000007'22222222, 0x00000000'22222222));
    }
    ASSERT_TRUE(w.commit(++seq));
    EXPECT_EQ(lane.tail - start, 64 * c.lines);
    uint64_t head;
    std::memcpy(&head, file_->lane_base(1) + start % lane.size, 8);
    EXPECT_EQ(head, c.lines == 1 ? kOneLineTag << 48 | seq : kFrameMagic);
    std::memset(file_->at(heap(0)), 0, 8 * 40);
    const std::vector<RedoFrame> frames = scan(1, seq - 1);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].seq, seq);
    EXPECT_EQ(frames[0].phys_pos, start % lane.size);
    EXPECT_EQ(frames[0].entries, uint32_t(c.stores + (c.range ? 1 : 0) + (c.pair ? 2 : 0)));
    apply_frame(*file_, *medium_, frames[0]);
    for (int i = 0; i < c.stores; ++i) EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(i))), uint64_t(0x1000 + i));
    if (c.range) EXPECT_EQ(0, std::memcmp(file_->at(heap(20) + 1), text, 14));
    if (c.pair) {
      EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(30))), 5u) << "the low half only, onto zeros";
      EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(31))), uint64_t{7} << 32);
    }
  }
  // A seq beyond the header's 48 bits: a classic frame.
  w.begin(lane);
  const uint64_t start = lane.tail;
  ASSERT_TRUE(w.append_store(heap(0), 1, 8));
  ASSERT_TRUE(w.commit(kOneLineSeqMax + 1));
  EXPECT_EQ(lane.tail - start, 64u);
  uint64_t head;
  std::memcpy(&head, file_->lane_base(1) + start % lane.size, 8);
  EXPECT_EQ(head, kFrameMagic);
  const std::vector<RedoFrame> frames = scan(1, kOneLineSeqMax);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].seq, kOneLineSeqMax + 1);
}

// Every word of a one-line frame counts: the header (tag and seq), each
// entry word, the zero words after the entries and the checksum.  Moved to
// another line of the lane, the frame is not found either.
TEST_F(LogTest, AnyDamagedWordInvalidatesAOneLineFrame) {
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(2);
  w.begin(lane);
  ASSERT_TRUE(w.append_store(heap(3), 0xABCD, 8));
  ASSERT_TRUE(w.commit(9));
  ASSERT_EQ(lane.tail, 64u);
  ASSERT_EQ(scan(2, 0).size(), 1u);
  char* line = file_->lane_base(2);
  for (uint64_t b = 0; b < 64; b += 4) {
    const char saved = line[b];
    line[b] ^= 0x04;
    uint64_t torn = 0;
    EXPECT_TRUE(scan(2, 0, &torn).empty()) << "flipped byte " << b;
    line[b] = saved;
  }
  // The checksum as log-format.md gives it: the seed, kFrameMagic, words
  // 1-6, then the header.  Redone over a word after the first zero word,
  // the line still is no frame: entries end at the first zero word.
  uint64_t wd[8];
  std::memcpy(wd, line, 64);
  auto sum = [&] {
    uint64_t h = hash_word(frame_seed(*file_, 2, 0), kFrameMagic);
    for (int i = 1; i <= 6; ++i) h = hash_word(h, wd[i]);
    return hash_finish(hash_word(h, wd[0]));
  };
  ASSERT_EQ(sum(), wd[7]);
  wd[4] = heap(4) << 8 | 3 << 4 | kStore;
  wd[7] = sum();
  std::memcpy(line, wd, 64);
  EXPECT_TRUE(scan(2, 0).empty()) << "a word after the padding began";
  wd[3] = wd[4];  // the same entry right after the first: a valid frame of two stores
  wd[4] = 0;
  wd[7] = sum();
  std::memcpy(line, wd, 64);
  ASSERT_EQ(scan(2, 0).size(), 1u);
  EXPECT_EQ(scan(2, 0)[0].entries, 2u);
  std::memcpy(line + 64, line, 64);  // the same line one line further on
  std::memset(line, 0, 64);
  uint64_t torn = 0;
  EXPECT_TRUE(scan(2, 0, &torn).empty());
  EXPECT_EQ(torn, 1u) << "the moved line is a candidate whose checksum fails";
}

// A pool still at version 3 (an older release shares it, so it was not
// upgraded) gets classic frames only: a version-3 reader finds them.
TEST_F(LogTest, AVersion3PoolGetsClassicFramesOnly) {
  PoolHeader& h = const_cast<PoolHeader&>(file_->header());
  h.layout_version = kLayoutVersionV3;
  RedoWriter w = writer();
  EXPECT_FALSE(w.one_line_frames());
  Lane& lane = lanes_->lane(0);
  w.begin(lane);
  ASSERT_TRUE(w.append_store(heap(0), 5, 8));
  ASSERT_TRUE(w.commit(3));
  uint64_t head;
  std::memcpy(&head, file_->lane_base(0), 8);
  EXPECT_EQ(head, kFrameMagic);
  EXPECT_EQ(lane.tail, 64u);
  w.begin(lane);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.append_store(heap(i), 6, 8));
  ASSERT_TRUE(w.commit(4));
  EXPECT_EQ(lane.tail, 64u + 128u) << "three stores: header, 6 words, trailer: two lines";
  EXPECT_EQ(scan(0, 0).size(), 2u);
  h.layout_version = kLayoutVersion;
}

TEST_F(LogTest, FramesWrapAroundTheLaneAndOldOnesAreOverwritten) {
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(3);
  std::mt19937_64 rng(3);
  uint64_t seq = 0;
  for (int f = 0; f < 400; ++f) {  // ~400 x 1 KiB through a 64 KiB lane
    w.begin(lane);
    for (int i = 0; i < 60; ++i) ASSERT_TRUE(w.append_store(heap(rng() % 1000), rng(), 8));
    ASSERT_TRUE(w.commit(++seq));
  }
  EXPECT_GT(lane.tail, lane.size * 4);
  auto frames = scan(3, 0);
  ASSERT_FALSE(frames.empty());
  uint64_t max_seq = 0;
  for (auto& fr : frames) max_seq = std::max(max_seq, fr.seq);
  EXPECT_EQ(max_seq, seq) << "the newest frame is intact, even across the lane end";
  EXPECT_LT(frames.size(), 70u) << "overwritten frames are gone";
}

TEST_F(LogTest, LargeRangesStreamedAcrossTheLaneEndReadBackExactly) {
  // Ranges of several lines go out in bulk from the caller's buffer; with
  // odd offsets and lengths and a 64 KiB lane, many of those bulk streams
  // meet the lane's physical end.  The newest frames must read back word
  // for word.
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(2);
  std::mt19937_64 rng(11);
  uint64_t seq = 0;
  std::vector<uint64_t> expect;  // the last frame's entry words
  for (int f = 0; f < 120; ++f) {
    w.begin(lane);
    expect.clear();
    const int ranges = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < ranges; ++r) {
      const size_t n = 1 + rng() % 3000;
      std::vector<unsigned char> data(n);
      for (auto& b : data) b = static_cast<unsigned char>(rng());
      const uint64_t off = heap(rng() % 1000) + rng() % 8;
      if (rng() % 2) {  // a store first, so the range starts mid-line
        const uint64_t v = rng();
        ASSERT_TRUE(w.append_store(heap(5000), v, 8));
        expect.push_back(heap(5000) << 8 | 3 << 4 | kStore);
        expect.push_back(v);
      }
      ASSERT_TRUE(w.append_range(off, data.data(), n));
      expect.push_back(off << 8 | kRange);
      expect.push_back(n);
      for (size_t i = 0; i < n; i += 8) {
        uint64_t word = 0;
        std::memcpy(&word, data.data() + i, std::min<size_t>(8, n - i));
        expect.push_back(word);
      }
    }
    ASSERT_TRUE(w.commit(++seq));
  }
  EXPECT_GT(lane.tail, lane.size * 4);
  auto frames = scan(2, 0);
  ASSERT_FALSE(frames.empty());
  const RedoFrame* last = nullptr;
  for (auto& fr : frames) {
    if (!last || fr.seq > last->seq) last = &fr;
  }
  ASSERT_EQ(last->seq, seq);
  EXPECT_EQ(words(*last), expect);
}

TEST_F(LogTest, FrameLargerThanItsLaneContinuesInExtents) {
  // 70 KiB through a 64 KiB lane, then 3 MiB: the frame links to extents
  // of 1, 2, 4, ... chunks and reads back word for word.
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(0);
  // Home bytes the extents must not overlap (in a pool, homes are
  // allocations): 16 chunks held aside.
  const uint64_t data = alloc_->reserve_log_chunks(16);
  ASSERT_NE(data, 0u);
  auto home = [&](uint64_t i) { return data + 8 * i; };
  std::mt19937_64 rng(5);
  std::vector<unsigned char> a(70 << 10), b(3 << 20);
  for (auto& c : a) c = static_cast<unsigned char>(rng());
  for (auto& c : b) c = static_cast<unsigned char>(rng());
  w.begin(lane);
  ASSERT_TRUE(w.append_range(home(0), a.data(), a.size()));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(w.append_store(home(20000 + i), rng(), 8));
  ASSERT_TRUE(w.append_range(home(30000) + 5, b.data(), b.size()));
  ASSERT_TRUE(w.commit(7));
  const std::vector<LogExtent> ex = w.take_extents();
  ASSERT_GE(ex.size(), 3u);
  EXPECT_EQ(ex[0].chunks, 1u);
  EXPECT_EQ(ex[1].chunks, 2u);
  EXPECT_LT(lane.tail, lane.size) << "the lane holds only the frame's first part";
  auto frames = scan(0, 0);
  ASSERT_EQ(frames.size(), 1u);
  apply_frame(*file_, *medium_, frames[0]);
  EXPECT_EQ(0, std::memcmp(file_->at(home(0)), a.data(), a.size()));
  EXPECT_EQ(0, std::memcmp(file_->at(home(30000) + 5), b.data(), b.size()));
  // A damaged word in an extent invalidates the frame.
  char* p = static_cast<char*>(file_->at(ex[1].offset)) + 4096;
  *p ^= 1;
  EXPECT_TRUE(scan(0, 0).empty());
  *p ^= 1;
  EXPECT_EQ(scan(0, 0).size(), 1u);
  ExtentSource::release(alloc_.get(), ex);
  alloc_->release_log_chunks(data, 16);
  EXPECT_EQ(alloc_->log_chunks(), 0u);
}

TEST_F(LogTest, FullLaneLinksAtOnceInsteadOfWaiting) {
  // Retirement frees nothing: once the lane's space is taken by committed
  // frames, a new frame keeps its first line in the lane and goes on in an
  // extent at once.
  RedoWriter w = writer(&reclaim_none);
  Lane& lane = lanes_->lane(1);
  uint64_t seq = 0;
  while (RedoWriter::lane_free_lines(lane) >= 2) {
    w.begin(lane);
    ASSERT_TRUE(w.append_store(heap(1), seq, 8));
    ASSERT_TRUE(w.commit(++seq));
    ASSERT_TRUE(w.take_extents().empty());
  }
  w.begin(lane);
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(w.append_store(heap(i), 1000 + i, 8));
  ASSERT_TRUE(w.commit(++seq));
  const std::vector<LogExtent> ex = w.take_extents();
  EXPECT_EQ(ex.size(), 1u);
  auto frames = scan(1, seq - 1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(words(frames[0]).size(), 1000u);
  ExtentSource::release(alloc_.get(), ex);
}

TEST_F(LogTest, FrameFailsCleanlyWhenTheHeapHasNoFreeChunk) {
  std::vector<uint64_t> taken;
  while (const uint64_t off = alloc_->reserve_log_chunks(1)) taken.push_back(off);
  RedoWriter w = writer();
  Lane& lane = lanes_->lane(0);
  w.begin(lane);
  std::vector<char> big(70 << 10, 'x');
  EXPECT_FALSE(w.append_range(heap(0), big.data(), big.size()));
  w.abandon();
  EXPECT_EQ(lane.tail, 0u);
  w.begin(lane);
  ASSERT_TRUE(w.append_store(heap(0), 1, 8));
  EXPECT_TRUE(w.commit(1)) << "the lane is usable afterwards";
  for (uint64_t off : taken) alloc_->release_log_chunks(off, 1);
}

struct Seen {
  std::vector<uint64_t> offs;
  std::vector<std::string> old;
};
void collect(void* ctx, uint64_t off, const unsigned char* old, size_t n) {
  auto* s = static_cast<Seen*>(ctx);
  s->offs.push_back(off);
  s->old.emplace_back(reinterpret_cast<const char*>(old), n);
}

TEST_F(LogTest, UndoRecordsOfTheOpenGenerationAreFoundInOrder) {
  Lane& lane = lanes_->lane(1);
  lane.undo_gen = file_->lane_header(1)->undo_committed_gen + 1;
  UndoWriter u(file_.get(), medium_.get(), alloc_.get());
  *reinterpret_cast<uint64_t*>(file_->at(heap(0))) = 0xAAAA;
  std::memcpy(file_->at(heap(4)), "old text", 8);
  u.begin(lane);
  ASSERT_TRUE(u.append(heap(0), 8));
  ASSERT_TRUE(u.append(heap(4), 5));
  Seen s;
  ASSERT_EQ(visit_undo(*file_, 1, collect, &s), 2u);
  EXPECT_EQ(s.offs[0], heap(0));
  EXPECT_EQ(*reinterpret_cast<const uint64_t*>(s.old[0].data()), 0xAAAAu);
  EXPECT_EQ(s.old[1], "old t");
  u.finish();  // generation committed: nothing to roll back
  EXPECT_EQ(visit_undo(*file_, 1, collect, &s), 0u);
}

TEST_F(LogTest, UndoRecordsLargerThanTheLaneContinueInExtents) {
  Lane& lane = lanes_->lane(2);
  lane.undo_gen = file_->lane_header(2)->undo_committed_gen + 1;
  UndoWriter u(file_.get(), medium_.get(), alloc_.get());
  std::mt19937_64 rng(9);
  const uint64_t data = alloc_->reserve_log_chunks(4);  // home bytes, apart from the extents
  ASSERT_NE(data, 0u);
  auto* home = reinterpret_cast<unsigned char*>(file_->at(data));
  std::vector<unsigned char> before(1 << 20);
  for (auto& c : before) c = static_cast<unsigned char>(rng());
  std::memcpy(home, before.data(), before.size());
  u.begin(lane);
  ASSERT_TRUE(u.append(data, 100));                       // in the lane
  ASSERT_TRUE(u.append(data + 100, before.size() - 100));  // split across extents
  Seen s;
  const uint64_t n = visit_undo(*file_, 2, collect, &s);
  ASSERT_GE(n, 3u);
  std::string all;
  for (size_t i = 0; i < s.offs.size(); ++i) {
    EXPECT_EQ(s.offs[i], data + all.size()) << "records in order, back to back";
    all += s.old[i];
  }
  EXPECT_EQ(all, std::string(before.begin(), before.end()));
  EXPECT_GT(alloc_->log_chunks(), 0u);
  u.finish();
  u.release_extents();
  EXPECT_EQ(alloc_->log_chunks(), 4u);
  alloc_->release_log_chunks(data, 4);
  EXPECT_EQ(visit_undo(*file_, 2, collect, &s), 0u);
}

}  // namespace
}  // namespace softwrap

// ------------------------------------------------------------ FRESH records

namespace softwrap {
namespace {

class FreshVouchTest : public LogTest {
 protected:
  // A committed frame on `lane` with seq `seq`: a STORE at store_off (if
  // nonzero) and a FRESH record for [lo, lo+n) as home holds it now.
  void frame(uint32_t lane, uint64_t seq, uint64_t lo, uint64_t n, uint64_t store_off = 0) {
    RedoWriter w = writer();
    w.begin(lanes_->lane(lane));
    if (store_off != 0) {
      ASSERT_TRUE(w.append_store(store_off, seq, 8));
    }
    if (n != 0) {
      ASSERT_TRUE(w.append_fresh(lo, n, fresh_hash(file_->at(lo), lo, n)));
    }
    ASSERT_TRUE(w.commit(seq));
    medium_->fence(FenceKind::kCommit);
  }
  std::vector<RedoFrame> all() {
    std::vector<RedoFrame> out;
    for (uint32_t i = 0; i < 4; ++i) {
      std::vector<RedoFrame> l = scan(i, 0);
      out.insert(out.end(), l.begin(), l.end());
    }
    return out;
  }
  void fill(uint64_t off, size_t n, unsigned char b) { std::memset(file_->at(off), b, n); }
};

TEST_F(FreshVouchTest, FrameVouchingForTheBytesHomeHoldsIsKept) {
  fill(heap(64), 1024, 0xAB);
  frame(1, 5, heap(64), 1024);
  std::vector<RedoFrame> f = all();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].vouches);
  EXPECT_EQ(f[0].entries, 1u);
  std::vector<uint64_t> w = words(f[0]);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0] & 0xF, kFresh);
  EXPECT_EQ(w[0] >> 8, heap(64));
  EXPECT_EQ(w[1], 1024u);
  uint64_t top = 0;
  EXPECT_EQ(drop_unvouched(*file_, &f, &top), 0u);
  EXPECT_EQ(f.size(), 1u);
  EXPECT_EQ(top, 5u);
  // Replay writes nothing for a FRESH record, but flushes the block (a
  // recovering process may have found it only in the page cache).
  const uint64_t flushes = counters().flushes.get();
  EXPECT_EQ(apply_frame(*file_, *medium_, f[0]), 0u);
  EXPECT_EQ(counters().flushes.get() - flushes, 1024u / 64);
}

TEST_F(FreshVouchTest, FrameWhoseFreshBytesDidNotPersistIsDropped) {
  fill(heap(64), 1024, 0xAB);
  frame(1, 5, heap(64), 1024, heap(1));
  fill(heap(64) + 512, 8, 0x00);  // one word of the block never reached home
  std::vector<RedoFrame> f = all();
  ASSERT_EQ(f.size(), 1u);
  uint64_t top = 0;
  EXPECT_EQ(drop_unvouched(*file_, &f, &top), 1u);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(top, 5u);  // the watermark must still pass it
}

TEST_F(FreshVouchTest, LaterFrameWritingTheBlockKeepsTheFrame) {
  // Frame 5 vouches for a block; frame 7 (committed later, another lane)
  // wrote into it and its table went home before the watermark moved: home
  // no longer matches frame 5, yet frame 5 had committed.
  fill(heap(64), 1024, 0xAB);
  frame(1, 5, heap(64), 1024);
  frame(2, 7, 0, 0, heap(64) + 256);
  std::memset(file_->at(heap(64) + 256), 0x77, 8);
  // An unrelated frame 6 whose fresh bytes are torn is dropped all the same.
  fill(heap(400), 512, 0xCD);
  frame(3, 6, heap(400), 512);
  fill(heap(400), 8, 0);
  std::vector<RedoFrame> f = all();
  ASSERT_EQ(f.size(), 3u);
  uint64_t top = 0;
  EXPECT_EQ(drop_unvouched(*file_, &f, &top), 1u);
  ASSERT_EQ(f.size(), 2u);
  std::vector<uint64_t> seqs{f[0].seq, f[1].seq};
  std::sort(seqs.begin(), seqs.end());
  EXPECT_EQ(seqs, (std::vector<uint64_t>{5, 7}));
  EXPECT_EQ(top, 7u);
}

TEST_F(FreshVouchTest, OnlyAKeptLaterFrameCounts) {
  // Frame 7 writes into frame 5's block but is itself dropped (its own
  // fresh bytes are torn): it was never acknowledged, so it cannot vouch
  // that frame 5 had committed.
  fill(heap(64), 1024, 0xAB);
  frame(1, 5, heap(64), 1024);
  fill(heap(400), 512, 0xCD);
  {
    RedoWriter w = writer();
    w.begin(lanes_->lane(2));
    ASSERT_TRUE(w.append_store(heap(64) + 256, 1, 8));
    ASSERT_TRUE(w.append_fresh(heap(400), 512, fresh_hash(file_->at(heap(400)), heap(400), 512)));
    ASSERT_TRUE(w.commit(7));
    medium_->fence(FenceKind::kCommit);
  }
  fill(heap(400), 8, 0);                           // frame 7's fresh bytes torn
  std::memset(file_->at(heap(64) + 256), 0x77, 8);  // frame 5's block changed
  std::vector<RedoFrame> f = all();
  ASSERT_EQ(f.size(), 2u);
  uint64_t top = 0;
  EXPECT_EQ(drop_unvouched(*file_, &f, &top), 2u);
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(top, 7u);
}

TEST_F(FreshVouchTest, DamagedFreshRecordInvalidatesTheFrame) {
  fill(heap(64), 1024, 0xAB);
  frame(1, 5, heap(64), 1024);
  std::vector<RedoFrame> f = all();
  ASSERT_EQ(f.size(), 1u);
  // The record's hash word flipped: the frame's checksum catches it.
  char* rec = file_->lane_base(1) + f[0].phys_pos + 8;
  rec[16] ^= 1;
  uint64_t torn = 0;
  EXPECT_TRUE(scan(1, 0, &torn).empty());
  EXPECT_EQ(torn, 1u);
}

}  // namespace
}  // namespace softwrap
