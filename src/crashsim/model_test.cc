// model_test.cc — the persistency model on hand-built traces: durable
// prefixes, flush/fence per thread, streams, tearing, Themis, the page
// cache (whole pages or sectors synced per thread), enumeration counts and
// the stratified sample.
#include "crashsim/model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

namespace softwrap::crashsim {
namespace {

constexpr size_t kSize = 4096;

struct Fixture {
  explicit Fixture(size_t size = kSize) : mem(size, 0) {}
  std::vector<char> mem;
  std::vector<TraceEvent> ev;
  void store(uint8_t t, uint64_t off, uint64_t v, uint64_t mask = ~uint64_t{0}) {
    ev.push_back({TraceKind::kStore, t, 0, off, mask, v, "store"});
  }
  void stream(uint8_t t, uint64_t off, uint64_t v) {
    ev.push_back({TraceKind::kStream, t, 0, off, ~uint64_t{0}, v, "stream"});
  }
  void flush(uint8_t t, uint64_t line, uint32_t n = 1) { ev.push_back({TraceKind::kFlush, t, n, line, 0, 0, "flush"}); }
  void fence(uint8_t t) { ev.push_back({TraceKind::kFence, t, 0, 0, 0, 0, "fence"}); }
  // Replays everything; returns the model's snapshot.
  CrashState run(Model& m) {
    for (size_t i = 0; i < ev.size(); ++i) m.step(ev[i], i);
    CrashState cs;
    m.snapshot(&cs);
    return cs;
  }
  uint64_t word(uint64_t off) const {
    uint64_t v;
    std::memcpy(&v, mem.data() + off, 8);
    return v;
  }
};

uint64_t count_images(const CrashState& cs, Persistency p) {
  Rng rng(1);
  uint64_t n = 0;
  EnumOptions o;
  o.max_exhaustive = uint64_t{1} << 20;
  EXPECT_TRUE(enumerate(cs, p, o, rng, [&](const Choice&) {
    ++n;
    return true;
  }));
  return n;
}

TEST(ModelTest, UnflushedStoresStayPendingAsLinePrefixes) {
  Fixture f;
  f.store(0, 0, 1);
  f.store(0, 8, 2);
  f.store(0, 64, 3);
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.line_units.size(), 2u);
  EXPECT_EQ(cs.line_off[0], 0u);
  EXPECT_EQ(cs.line_units[0].size(), 2u);
  EXPECT_EQ(cs.line_units[1].size(), 1u);
  EXPECT_EQ(choice_count(cs), 3u * 2u);  // prefixes 0..2 of line 0, 0..1 of line 1
  EXPECT_EQ(count_images(cs, Persistency::kX86), 6u);
  EXPECT_EQ(f.word(0), 0u);  // nothing durable yet
}

TEST(ModelTest, FlushThenFenceMakesThePrefixAtFlushTimeDurable) {
  Fixture f;
  f.store(0, 0, 1);
  f.flush(0, 0);
  f.store(0, 8, 2);  // after the flush: not covered
  f.fence(0);
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_EQ(f.word(0), 1u);
  EXPECT_EQ(f.word(8), 0u);
  ASSERT_EQ(cs.line_units.size(), 1u);
  EXPECT_EQ(cs.line_units[0].size(), 1u);
  EXPECT_EQ(cs.line_units[0][0].word, 8u);
}

TEST(ModelTest, AFenceOrdersOnlyItsOwnThreadsFlushes) {
  Fixture f;
  f.store(0, 0, 1);
  f.flush(0, 0);
  f.fence(1);  // another thread's fence
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_EQ(f.word(0), 0u);
  EXPECT_EQ(cs.line_units.size(), 1u);
  // A flush by thread 1 covers thread 0's earlier store to the line.
  Fixture g;
  g.store(0, 0, 1);
  g.flush(1, 0);
  g.fence(1);
  Model m2(g.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs2 = g.run(m2);
  EXPECT_EQ(g.word(0), 1u);
  EXPECT_TRUE(cs2.line_units.empty());
}

TEST(ModelTest, StreamsArePendingPerWordUntilTheThreadsFence) {
  Fixture f;
  f.stream(0, 0, 5);
  f.stream(0, 8, 6);
  f.stream(1, 16, 7);
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_EQ(cs.streams.size(), 3u);
  EXPECT_EQ(count_images(cs, Persistency::kX86), 8u);
  f.fence(0);
  Model m2(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs2 = f.run(m2);
  EXPECT_EQ(f.word(0), 5u);
  EXPECT_EQ(f.word(8), 6u);
  ASSERT_EQ(cs2.streams.size(), 1u);  // thread 1's word still pending
  EXPECT_EQ(cs2.streams[0].word, 16u);
}

TEST(ModelTest, LargeWritesTearAtWordBoundariesInAddressOrder) {
  // A 24-byte write is three units of one line: 4 images (prefixes 0..3),
  // never the third word without the first two.
  Fixture f;
  f.store(0, 0, 1);
  f.store(0, 8, 2);
  f.store(0, 16, 3);
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(m);
  std::set<std::vector<uint64_t>> images;
  Rng rng(1);
  enumerate(cs, Persistency::kX86, EnumOptions{}, rng, [&](const Choice& c) {
    WordJournal j;
    apply_choice(cs, c, f.mem.data(), &j);
    images.insert({f.word(0), f.word(8), f.word(16)});
    j.revert(f.mem.data());
    return true;
  });
  const std::set<std::vector<uint64_t>> want = {{0, 0, 0}, {1, 0, 0}, {1, 2, 0}, {1, 2, 3}};
  EXPECT_EQ(images, want);
  EXPECT_EQ(f.word(0), 0u);  // reverted
}

TEST(ModelTest, SubWordStoresMergeIntoTheirWord) {
  Fixture f;
  f.store(0, 0, 0xAB00, 0xFF00);
  f.flush(0, 0);
  f.fence(0);
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  f.run(m);
  EXPECT_EQ(f.word(0), 0xAB00u);
}

TEST(ModelTest, ThemisRequiresEarlierStreamsOfTheSameThread) {
  // Thread 0 streams a log word, then stores data (no fence between): under
  // x86 the data may persist alone; under Themis not.
  Fixture f;
  f.stream(0, 128, 9);
  f.store(0, 0, 1);
  Model mx(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(mx);
  EXPECT_EQ(count_images(cs, Persistency::kX86), 4u);
  EXPECT_EQ(count_images(cs, Persistency::kThemis), 3u);  // not: data without log
  Choice bad(cs.dims(), 0);
  bad[0] = 1;  // the line's store, stream excluded
  EXPECT_FALSE(themis_legal(cs, bad));
  Choice up = bad, down = bad;
  themis_repair_up(cs, &up);
  themis_repair_down(cs, &down);
  EXPECT_TRUE(themis_legal(cs, up));
  EXPECT_EQ(up[1], 1u);
  EXPECT_TRUE(themis_legal(cs, down));
  EXPECT_EQ(down[0], 0u);
  // Another thread's stream is not constrained.
  Fixture g;
  g.stream(1, 128, 9);
  g.store(0, 0, 1);
  Model mg(g.mem.data(), kSize, Persistency::kThemis, 0, nullptr);
  CrashState cg = g.run(mg);
  EXPECT_EQ(count_images(cg, Persistency::kThemis), 4u);
}

TEST(ModelTest, ThemisDurableStoreMakesEarlierStreamsDurable) {
  Fixture f;
  f.stream(0, 128, 9);
  f.store(0, 0, 1);
  f.flush(1, 0);  // thread 1 writes the line back
  f.fence(1);
  Model m(f.mem.data(), kSize, Persistency::kThemis, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_EQ(f.word(0), 1u);
  EXPECT_EQ(f.word(128), 9u);
  EXPECT_TRUE(cs.streams.empty());
}

TEST(ModelTest, StreamsThatCannotChangeTheImageAreLeftOut) {
  Fixture f;
  f.stream(0, 0, 0);  // zero over zero
  f.stream(0, 8, 1);
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.streams.size(), 1u);
  EXPECT_EQ(cs.streams[0].word, 8u);
}

TEST(ModelTest, SamplingCoversTheStrataAndStaysLegal) {
  Fixture f;
  for (int i = 0; i < 40; ++i) f.stream(0, 1024 + i * 8, i + 1);
  for (int i = 0; i < 8; ++i) f.store(0, i * 64, i + 1);
  Model m(f.mem.data(), kSize, Persistency::kThemis, 0, nullptr);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.dims(), 48u);
  EnumOptions o;
  o.max_exhaustive = 1024;
  Rng rng(7);
  bool saw_none = false, saw_all = false;
  uint64_t n = 0;
  const bool exhaustive = enumerate(cs, Persistency::kThemis, o, rng, [&](const Choice& c) {
    ++n;
    EXPECT_TRUE(themis_legal(cs, c));
    size_t on = 0;
    for (uint32_t x : c) on += x > 0;
    saw_none |= on == 0;
    saw_all |= on == c.size();
    return true;
  });
  EXPECT_FALSE(exhaustive);
  EXPECT_TRUE(saw_none);
  EXPECT_TRUE(saw_all);
  EXPECT_EQ(n, 2u + 2u * o.flips + o.prefixes + o.random);
}

TEST(ModelTest, ImageHashIsTheXorOfChangedWords) {
  Fixture f;
  f.store(0, 0, 7);
  Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  CrashState cs = f.run(m);
  WordJournal j;
  Choice c{1};
  apply_choice(cs, c, f.mem.data(), &j);
  EXPECT_EQ(j.delta_hash(f.mem.data(), 0), word_hash(0, 0) ^ word_hash(0, 7));
  j.revert(f.mem.data());
  EXPECT_EQ(f.word(0), 0u);
}

// Persist-order checking: what the rules require of reported persists.
constexpr uint64_t kNone = ~uint64_t{0};
struct Required {
  std::vector<std::pair<uint64_t, uint64_t>> calls;  // (required seq, cause seq or ~0)
  void attach(Model& m) {
    m.set_observer([this](const Unit& u, const Unit* cause) { calls.emplace_back(u.seq, cause ? cause->seq : kNone); });
  }
};

// Replays f's events into a model of persistency p that reports to r.
Model replay(Fixture& f, Persistency p, Required& r) {
  Model m(f.mem.data(), kSize, p, 0, nullptr);
  r.attach(m);
  for (size_t i = 0; i < f.ev.size(); ++i) m.step(f.ev[i], i);
  return m;
}

TEST(ModelCheckTest, ThemisRequiresEarlierStreamsOfATemporalStoreThatPersists) {
  Fixture f;
  f.stream(0, 128, 1);  // seq 0
  f.stream(1, 256, 2);  // seq 1: another thread's, not required
  f.store(0, 0, 3);     // seq 2
  Required r;
  Model m = replay(f, Persistency::kThemis, r);
  m.persist_line(0, 1);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0], std::make_pair(uint64_t{0}, uint64_t{2}));
  EXPECT_EQ(f.word(0), 3u);
  EXPECT_EQ(f.word(128), 1u);  // made durable, reported once
  m.persist_stream(0, 0);      // late report: nothing more
  EXPECT_EQ(r.calls.size(), 1u);
}

TEST(ModelCheckTest, ThemisIsKeptWhenTheStreamPersistsFirst) {
  Fixture f;
  f.stream(0, 128, 1);
  f.store(0, 0, 3);
  Required r;
  Model m = replay(f, Persistency::kThemis, r);
  m.persist_stream(0, 0);
  m.persist_line(0, 1);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(f.word(128), 1u);
  EXPECT_EQ(f.word(0), 3u);
}

TEST(ModelCheckTest, X86RequiresNothingOfATemporalStoreWithoutFence) {
  Fixture f;
  f.stream(0, 128, 1);
  f.store(0, 0, 3);
  Required r;
  Model m = replay(f, Persistency::kX86, r);
  m.persist_line(0, 1);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(f.word(128), 0u);  // still pending
}

TEST(ModelCheckTest, AFenceRequiresItsThreadsStreamsAndFlushedPrefixes) {
  for (bool reported : {false, true}) {
    Fixture f;
    f.stream(0, 128, 1);  // 0
    f.store(0, 0, 3);     // 1
    f.flush(0, 0);        // 2
    f.store(0, 8, 4);     // 3: after the flush, not required
    f.fence(0);           // 4
    Model m(f.mem.data(), kSize, Persistency::kX86, 0, nullptr);
    Required r;
    r.attach(m);
    for (size_t i = 0; i < 4; ++i) m.step(f.ev[i], i);
    if (reported) {
      m.persist_stream(0, 0);
      m.persist_line(0, 1);
    }
    m.step(f.ev[4], 4);
    if (reported) {
      EXPECT_TRUE(r.calls.empty());
    } else {
      ASSERT_EQ(r.calls.size(), 2u);
      EXPECT_EQ(r.calls[0], std::make_pair(uint64_t{0}, kNone));
      EXPECT_EQ(r.calls[1], std::make_pair(uint64_t{1}, kNone));
    }
    EXPECT_EQ(f.word(0), 3u);
    EXPECT_EQ(f.word(8), 0u);
  }
}

TEST(ModelCheckTest, LoadsAreIgnored) {
  Fixture f;
  f.ev.push_back({TraceKind::kLoad, 0, 8, 0, 0, 0, "load"});
  Model m(f.mem.data(), kSize, Persistency::kThemis, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_EQ(cs.dims(), 0u);
}


// ------------------------------------------------------------ page cache

constexpr size_t kPages = 4;  // the page cache tests' memory, in 4 KiB pages

// All images of cs, as the values of `words` in each.
std::set<std::vector<uint64_t>> images_of(Fixture& f, const CrashState& cs, const std::vector<uint64_t>& words) {
  std::set<std::vector<uint64_t>> out;
  Rng rng(1);
  EnumOptions o;
  o.max_exhaustive = uint64_t{1} << 20;
  EXPECT_TRUE(enumerate(cs, Persistency::kPageCache, o, rng, [&](const Choice& c) {
    WordJournal j;
    apply_choice(cs, c, f.mem.data(), &j);
    std::vector<uint64_t> img;
    for (uint64_t w : words) img.push_back(f.word(w));
    out.insert(img);
    j.revert(f.mem.data());
    return true;
  }));
  return out;
}

Model page_model(Fixture& f, uint32_t unit = kSyncPage) {
  return Model(f.mem.data(), f.mem.size(), Persistency::kPageCache, 0, nullptr, unit);
}

TEST(PageCacheModelTest, NamesParse) {
  for (Persistency p : {Persistency::kX86, Persistency::kThemis, Persistency::kPageCache}) {
    Persistency q = Persistency::kX86;
    ASSERT_TRUE(parse_persistency(persistency_name(p), &q)) << persistency_name(p);
    EXPECT_EQ(q, p);
  }
  EXPECT_STREQ(persistency_name(Persistency::kPageCache), "page-cache");
  Persistency q;
  EXPECT_FALSE(parse_persistency("pagecache", &q));
  EXPECT_TRUE(valid_writeback_unit(512));
  EXPECT_TRUE(valid_writeback_unit(4096));
  EXPECT_FALSE(valid_writeback_unit(64));
  EXPECT_FALSE(valid_writeback_unit(1000));
  EXPECT_FALSE(valid_writeback_unit(8192));
}

TEST(PageCacheModelTest, AStoreNotSyncedMayOrMayNotPersist) {
  Fixture f(kPages * kSyncPage);
  f.store(0, 0, 1);
  f.flush(0, 0);  // flushed but not fenced: still pending
  Model m = page_model(f);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.line_units.size(), 1u);
  EXPECT_EQ(cs.line_off[0], 0u);
  EXPECT_TRUE(cs.streams.empty());
  EXPECT_EQ(images_of(f, cs, {0}), (std::set<std::vector<uint64_t>>{{0}, {1}}));
  EXPECT_EQ(f.word(0), 0u);  // nothing durable
}

TEST(PageCacheModelTest, WithinAPageALaterStorePersistingImpliesTheEarlierOnes) {
  // Coherence order, not address order: 2048, then 0, then 1024 — and
  // stores in different cache lines of one page, which x86 would let
  // persist independently.
  Fixture f(kPages * kSyncPage);
  f.store(0, 2048, 1);
  f.store(0, 0, 2);
  f.store(0, 1024, 3);
  Model m = page_model(f);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.line_units.size(), 1u);
  EXPECT_EQ(cs.line_units[0].size(), 3u);
  const std::set<std::vector<uint64_t>> want = {{0, 0, 0}, {1, 0, 0}, {1, 2, 0}, {1, 2, 3}};
  EXPECT_EQ(images_of(f, cs, {2048, 0, 1024}), want);
  // The same trace under x86: three lines, eight images.
  Fixture g;
  g.ev = f.ev;
  Model mx(g.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  EXPECT_EQ(count_images(g.run(mx), Persistency::kX86), 8u);
}

TEST(PageCacheModelTest, TwoPagesAreIndependent) {
  Fixture f(kPages * kSyncPage);
  f.store(0, 0, 1);
  f.store(0, kSyncPage, 2);
  f.store(0, 8, 3);
  Model m = page_model(f);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.line_units.size(), 2u);
  EXPECT_EQ(cs.line_off[1], kSyncPage);
  const std::set<std::vector<uint64_t>> want = {{0, 0, 0}, {1, 0, 0}, {1, 0, 3}, {0, 2, 0},
                                                {1, 2, 0}, {1, 2, 3}};
  EXPECT_EQ(images_of(f, cs, {0, kSyncPage, 8}), want);
}

TEST(PageCacheModelTest, FlushAndFenceSyncTheWholePageWithStoresAfterTheFlush) {
  Fixture f(kPages * kSyncPage);
  f.store(0, 0, 1);
  f.flush(0, 0);
  f.store(0, 8, 2);     // same line, after the flush
  f.store(0, 4000, 3);  // same page, another line, never flushed
  f.store(0, kSyncPage, 4);  // another page: not synced
  f.fence(0);
  Model m = page_model(f);
  CrashState cs = f.run(m);
  EXPECT_EQ(f.word(0), 1u);
  EXPECT_EQ(f.word(8), 2u);
  EXPECT_EQ(f.word(4000), 3u);
  EXPECT_EQ(f.word(kSyncPage), 0u);
  ASSERT_EQ(cs.line_units.size(), 1u);
  EXPECT_EQ(cs.line_off[0], kSyncPage);
  // A page flushed before any store to it is synced at the fence all the
  // same (msync syncs what the page holds then).
  Fixture g(kPages * kSyncPage);
  g.flush(0, 64);
  g.store(0, 0, 5);
  g.fence(0);
  Model mg = page_model(g);
  EXPECT_EQ(g.run(mg).dims(), 0u);
  EXPECT_EQ(g.word(0), 5u);
}

TEST(PageCacheModelTest, AFenceDoesNotSyncPagesAnotherThreadFlushed) {
  Fixture f(kPages * kSyncPage);
  f.store(0, 0, 1);
  f.flush(1, 0);  // thread 1 notes the page
  f.fence(0);     // thread 0's fence: its own list is empty
  Model m = page_model(f);
  CrashState cs = f.run(m);
  EXPECT_EQ(f.word(0), 0u);
  ASSERT_EQ(cs.line_units.size(), 1u);
  // Thread 1's fence syncs the page, thread 0's store included.
  Fixture g(kPages * kSyncPage);
  g.ev = f.ev;
  g.fence(1);
  Model mg = page_model(g);
  EXPECT_EQ(g.run(mg).dims(), 0u);
  EXPECT_EQ(g.word(0), 1u);
}

TEST(PageCacheModelTest, StreamsAreStoresInTheirPage) {
  Fixture f(kPages * kSyncPage);
  f.stream(0, 0, 5);
  f.store(0, 8, 6);
  f.stream(0, kSyncPage, 7);
  Model m = page_model(f);
  CrashState cs = f.run(m);
  EXPECT_TRUE(cs.streams.empty());
  ASSERT_EQ(cs.line_units.size(), 2u);
  EXPECT_EQ(cs.line_units[0].size(), 2u);
  // A prefix of the page: never the store without the stream before it.
  const std::set<std::vector<uint64_t>> want = {{0, 0, 0}, {5, 0, 0}, {5, 6, 0}, {0, 0, 7}, {5, 0, 7}, {5, 6, 7}};
  EXPECT_EQ(images_of(f, cs, {0, 8, kSyncPage}), want);
  // A stream notes its page: the thread's fence syncs it, with the store
  // that came after the stream.  Another thread's fence does not.
  Fixture g(kPages * kSyncPage);
  g.stream(0, 0, 5);
  g.store(0, 8, 6);
  g.fence(1);
  Model mg = page_model(g);
  EXPECT_EQ(g.run(mg).line_units.size(), 1u);
  g.fence(0);
  Model mg2 = page_model(g);
  EXPECT_EQ(g.run(mg2).dims(), 0u);
  EXPECT_EQ(g.word(0), 5u);
  EXPECT_EQ(g.word(8), 6u);
}

TEST(PageCacheModelTest, DrainMakesEveryPageDurable) {
  Fixture f(kPages * kSyncPage);
  f.store(0, 0, 1);
  f.store(1, kSyncPage, 2);
  f.stream(1, 2 * kSyncPage, 3);
  f.flush(1, 3 * kSyncPage);  // noted by thread 1, still noted after thread 0's drain
  f.ev.push_back({TraceKind::kDrain, 0, 0, 0, 0, 0, "drain"});
  Model m = page_model(f);
  CrashState cs = f.run(m);
  EXPECT_EQ(cs.dims(), 0u);
  EXPECT_EQ(f.word(0), 1u);
  EXPECT_EQ(f.word(kSyncPage), 2u);
  EXPECT_EQ(f.word(2 * kSyncPage), 3u);
  Fixture g(kPages * kSyncPage);
  g.ev = f.ev;
  g.store(0, 3 * kSyncPage, 4);
  g.fence(1);  // syncs the page thread 1 noted before the drain
  Model mg = page_model(g);
  EXPECT_EQ(g.run(mg).dims(), 0u);
  EXPECT_EQ(g.word(3 * kSyncPage), 4u);
}

TEST(PageCacheModelTest, SectorUnitsTearAPageThePageUnitKeepsWhole) {
  // Two stores into one page, in two sectors: a page written back whole
  // holds the second only with the first; sectors may tear apart.
  Fixture f(kPages * kSyncPage);
  f.store(0, 0, 1);
  f.store(0, 512, 2);
  Model page = page_model(f);
  CrashState cp = f.run(page);
  const std::set<std::vector<uint64_t>> whole = {{0, 0}, {1, 0}, {1, 2}};
  EXPECT_EQ(images_of(f, cp, {0, 512}), whole);
  Model sector = page_model(f, kSectorUnit);
  CrashState cs = f.run(sector);
  ASSERT_EQ(cs.line_units.size(), 2u);
  EXPECT_EQ(cs.line_off[1], 512u);
  const std::set<std::vector<uint64_t>> torn = {{0, 0}, {1, 0}, {0, 2}, {1, 2}};
  EXPECT_EQ(images_of(f, cs, {0, 512}), torn);
  // msync still syncs the whole page: a flush of the first sector's line
  // and a fence make every sector of its page durable.
  f.flush(0, 0);
  f.fence(0);
  Model synced = page_model(f, kSectorUnit);
  EXPECT_EQ(f.run(synced).dims(), 0u);
  EXPECT_EQ(f.word(512), 2u);
}

TEST(PageCacheModelTest, APageOfManyStoresIsSampledAsPrefixes) {
  // 600 stores over every line of a page (more than a cache line's eight
  // words, some words stored twice), plus a page whose stores change
  // nothing (left out).
  Fixture f(kPages * kSyncPage);
  for (uint64_t i = 0; i < 600; ++i) f.store(0, (i * 8) % kSyncPage, i + 1);
  f.store(0, 2 * kSyncPage, 0);  // zero over zero
  Model m = page_model(f);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.line_units.size(), 1u);
  ASSERT_EQ(cs.line_units[0].size(), 600u);
  EXPECT_EQ(choice_count(cs), 601u);
  EXPECT_EQ(count_images(cs, Persistency::kPageCache), 601u);
  // Applying a prefix writes exactly the stores of that prefix.
  for (uint32_t k : {0u, 1u, 512u, 513u, 600u}) {
    WordJournal j;
    apply_choice(cs, Choice{k}, f.mem.data(), &j);
    for (uint64_t w = 0; w < kSyncPage; w += 8) {
      uint64_t want = 0;
      for (uint64_t i = 0; i < k; ++i) {
        if ((i * 8) % kSyncPage == w) want = i + 1;
      }
      ASSERT_EQ(f.word(w), want) << "prefix " << k << " word " << w;
    }
    j.revert(f.mem.data());
  }
  // Sampled when the product is large: every sample is a prefix per page.
  for (uint64_t p = 1; p < kPages; ++p) f.store(0, p * kSyncPage + 8, p);
  Model m2 = page_model(f);
  CrashState cs2 = f.run(m2);
  ASSERT_EQ(cs2.dims(), 4u);
  EnumOptions o;
  o.max_exhaustive = 1024;
  Rng rng(3);
  uint64_t n = 0;
  bool saw_partial = false;
  EXPECT_FALSE(enumerate(cs2, Persistency::kPageCache, o, rng, [&](const Choice& c) {
    ++n;
    for (size_t d = 0; d < cs2.dims(); ++d) EXPECT_LE(c[d], cs2.max(d));
    saw_partial |= c[0] > 0 && c[0] < 600;
    return true;
  }));
  EXPECT_GT(n, 10u);
  EXPECT_TRUE(saw_partial);
}

// ------------------------------------------------------------ eADR

// Stores on different lines, of two threads, unflushed: what persists is a
// prefix of the trace's order (one dimension), never a later store without
// an earlier one; a fence makes all of them durable, flushes do nothing.
TEST(ModelTest, EadrPersistsAPrefixOfTheVisibleStoresInTraceOrder) {
  Fixture f;
  f.store(0, 0, 1);
  f.store(1, 128, 2);
  f.store(0, 256, 3);
  Model m(f.mem.data(), kSize, Persistency::kEadr, 0, nullptr);
  CrashState cs = f.run(m);
  ASSERT_EQ(cs.line_units.size(), 1u);
  EXPECT_EQ(cs.line_off[0], 0u);
  ASSERT_EQ(cs.line_units[0].size(), 3u);
  EXPECT_EQ(cs.line_units[0][1].word, 128u);
  EXPECT_TRUE(cs.streams.empty());
  EXPECT_EQ(count_images(cs, Persistency::kEadr), 4u);  // 0..3 of them, not 2^3
  EXPECT_EQ(f.word(0), 0u);
  // The same stores under x86: every line independently.
  Fixture g;
  g.store(0, 0, 1);
  g.store(1, 128, 2);
  g.store(0, 256, 3);
  Model x(g.mem.data(), kSize, Persistency::kX86, 0, nullptr);
  EXPECT_EQ(count_images(g.run(x), Persistency::kX86), 8u);
}

TEST(ModelTest, EadrFlushesAreNoOpsAndAFenceOfAnyThreadMakesVisibleStoresDurable) {
  Fixture f;
  f.store(0, 0, 1);
  f.flush(0, 0);
  Model m(f.mem.data(), kSize, Persistency::kEadr, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_EQ(f.word(0), 0u);  // the flush did not make it durable
  EXPECT_EQ(cs.line_units.size(), 1u);
  Fixture g;
  g.store(0, 0, 1);
  g.store(0, 64, 2);
  g.fence(1);  // visible stores are durable whoever fences (the next crash point)
  g.store(0, 8, 3);
  Model m2(g.mem.data(), kSize, Persistency::kEadr, 0, nullptr);
  CrashState cs2 = g.run(m2);
  EXPECT_EQ(g.word(0), 1u);
  EXPECT_EQ(g.word(64), 2u);
  EXPECT_EQ(g.word(8), 0u);
  ASSERT_EQ(cs2.line_units.size(), 1u);
  ASSERT_EQ(cs2.line_units[0].size(), 1u);
  EXPECT_EQ(cs2.line_units[0][0].word, 8u);
}

// Non-temporal stores leave the cache domain: each is pending on its own
// until its thread's fence, unordered against later temporal stores.
TEST(ModelTest, EadrStreamsStayPendingPerWordUntilTheirThreadsFence) {
  Fixture f;
  f.stream(0, 0, 5);
  f.store(0, 64, 6);  // visible after the stream: may persist without it
  f.fence(1);         // another thread's fence: the stream is still pending
  Model m(f.mem.data(), kSize, Persistency::kEadr, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_EQ(f.word(64), 6u);
  EXPECT_EQ(f.word(0), 0u);
  ASSERT_EQ(cs.streams.size(), 1u);
  EXPECT_TRUE(cs.line_units.empty());
  Fixture g;
  g.stream(0, 0, 5);
  g.fence(0);
  Model m2(g.mem.data(), kSize, Persistency::kEadr, 0, nullptr);
  CrashState cs2 = g.run(m2);
  EXPECT_EQ(g.word(0), 5u);
  EXPECT_TRUE(cs2.streams.empty());
}

// Visible stores that would not change the image make no dimension.
TEST(ModelTest, EadrVisibleStoresOfUnchangedValuesAreNoDimension) {
  Fixture f;
  f.store(0, 0, 0);
  Model m(f.mem.data(), kSize, Persistency::kEadr, 0, nullptr);
  CrashState cs = f.run(m);
  EXPECT_TRUE(cs.line_units.empty());
  EXPECT_EQ(choice_count(cs), 1u);
}

TEST(ModelTest, EadrHasAName) {
  Persistency p;
  ASSERT_TRUE(parse_persistency("eadr", &p));
  EXPECT_EQ(p, Persistency::kEadr);
  EXPECT_STREQ(persistency_name(Persistency::kEadr), "eadr");
}

}  // namespace
}  // namespace softwrap::crashsim
