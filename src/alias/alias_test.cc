// alias_test.cc — the alias table (CAS insertion from many threads, hard
// limit, recycling, overlay rules) and the ring (colours, the five states,
// switches, retirement to home with the watermark persisted).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "alias/alias_ring.h"
#include "alias/alias_table.h"
#include "alias/home_writer.h"
#include "common/counters.h"
#include "medium/forwarding_medium.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {
namespace {

TEST(AliasTable, ConcurrentInsertsOfOverlappingKeysYieldOneEntryEach) {
  AliasTable t(1 << 14, 1024);
  std::vector<std::thread> ts;
  std::vector<std::vector<AliasEntry*>> got(4);
  for (int k = 0; k < 4; ++k) {
    ts.emplace_back([&, k] {
      for (uint64_t key = 8; key <= 8 * 4000; key += 8) {
        bool ins;
        got[k].push_back(t.find_or_insert(key, &ins));
      }
    });
  }
  for (auto& th : ts) th.join();
  EXPECT_EQ(t.count(), 4000u);
  for (size_t i = 0; i < got[0].size(); ++i) {
    for (int k = 1; k < 4; ++k) ASSERT_EQ(got[k][i], got[0][i]) << "same key, same entry";
  }
  EXPECT_EQ(t.find(8 * 17), got[0][16]);
  EXPECT_EQ(t.find(12345 * 8 + 8 * 5000), nullptr);
}

TEST(AliasTable, RefusesNewKeysAtItsHardLimitButUpdatesOldOnes) {
  AliasTable t(256, 1024);
  bool ins;
  uint64_t key = 8;
  while (t.find_or_insert(key, &ins)) key += 8;
  EXPECT_EQ(t.count(), t.hard_limit());
  EXPECT_NE(t.find_or_insert(8, &ins), nullptr);
  EXPECT_FALSE(ins);
  t.clear();
  EXPECT_EQ(t.count(), 0u);
  EXPECT_EQ(t.find(8), nullptr);
  EXPECT_NE(t.find_or_insert(8, &ins), nullptr);
}

TEST(AliasTable, OverlayPutsWordsOverThePageAndSkipsInvalidEntries) {
  AliasTable t(256, 64);
  bool ins;
  char* page = t.new_page();
  page_write(page, 64, 0, std::string(64, 'p').data(), 64);
  page_write(page, 64, 8, "PPPP", 4);
  AliasEntry* pe = t.find_or_insert(page_key(128), &ins);
  pe->value.store(reinterpret_cast<uintptr_t>(page));
  pe->meta.store(kMetaValid);
  t.has_pages = true;
  AliasEntry* we = t.find_or_insert(136, &ins);
  uint64_t w;
  std::memcpy(&w, "WWWWWWWW", 8);
  we->value.store(w);
  we->meta.store(kMetaValid);
  AliasEntry* dead = t.find_or_insert(144, &ins);  // aborted: not valid
  dead->value.store(0);
  t.has_words = true;
  unsigned char out[24];
  std::memset(out, '.', sizeof out);
  const uint64_t hint = AliasTable::page_hint(128);
  ASSERT_TRUE(t.may_hold(hint));
  overlay_table(t, 132, 20, 64, hint, out);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 20), "ppppWWWWWWWWpppppppp");
}

// The three filters share one block per page bucket (alias_table.h): no
// key may be missed by the filter a reader asks (a false negative hides an
// alias), whichever filter and block its bits went to, and a clear — by
// key, when few keys were inserted, or of every block — leaves no bit of
// the old keys behind.
TEST(AliasTable, FiltersNeverMissAKeyAndAClearLeavesNoneOfItsBits) {
  constexpr size_t kPage = 4096;
  for (const uint32_t keys : {8u, 3000u}) {  // 8: clear by key; 3000: clear every block
    AliasTable t(1 << 12, kPage);
    uint64_t s = 0x9E3779B97F4A7C15ull * keys;
    std::vector<uint64_t> words, pages;
    for (uint32_t k = 0; k < keys; ++k) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      const uint64_t w = (s % (uint64_t{1} << 30)) & ~uint64_t{7};
      bool ins;
      if (k % 5 == 4) {
        const uint64_t pk = page_key(w & ~uint64_t{kPage - 1});
        if (t.find_or_insert(pk, &ins) && ins) pages.push_back(pk & ~uint64_t{1});
      } else if (t.find_or_insert(w, &ins) && ins) {
        words.push_back(w);
      }
    }
    ASSERT_FALSE(words.empty());
    for (uint64_t w : words) {
      const uint64_t hint = AliasTable::page_hint(w & ~uint64_t{kPage - 1});
      ASSERT_TRUE(t.may_hold(hint)) << w;
      ASSERT_TRUE(t.may_hold_words(hint)) << w;
      ASSERT_TRUE(t.may_hold_granule(hint, w & ~uint64_t{63})) << w;
      ASSERT_NE(t.find(w), nullptr) << w;
    }
    for (uint64_t po : pages) ASSERT_TRUE(t.may_hold(AliasTable::page_hint(po))) << po;
    t.clear();
    for (uint64_t w : words) {
      const uint64_t hint = AliasTable::page_hint(w & ~uint64_t{kPage - 1});
      EXPECT_FALSE(t.may_hold(hint) || t.may_hold_words(hint) || t.may_hold_granule(hint, w & ~uint64_t{63})) << w;
    }
    for (uint64_t po : pages) EXPECT_FALSE(t.may_hold(AliasTable::page_hint(po))) << po;
  }
}

TEST(ShadowPage, OnlyWrittenBytesAreOverlaidAndRetired) {
  AliasTable t(64, 64);
  char* page = t.new_page();
  page_write(page, 64, 3, "abc", 3);
  page_write(page, 64, 16, "0123456789", 10);
  unsigned char out[64];
  std::memset(out, '.', sizeof out);
  page_overlay(page, 64, 0, 64, out);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 28), "...abc..........0123456789..");
  std::vector<std::pair<size_t, size_t>> runs;
  page_dirty_runs(page, 64, [&](size_t off, size_t len) { runs.emplace_back(off, len); });
  EXPECT_EQ(runs, (std::vector<std::pair<size_t, size_t>>{{3, 3}, {16, 10}}));
}

TEST(ShadowPage, DirtyRunsAndOverlayMatchTheMaskByteByByte) {
  // Random writes (runs crossing 64-byte mask words, a page ending dirty,
  // single bytes) against a byte-by-byte reference walk of the mask.
  constexpr size_t kPage = 1024;
  uint64_t x = 42;
  auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull, x >> 33; };
  for (int round = 0; round < 200; ++round) {
    AliasTable t(64, kPage);
    char* page = t.new_page();
    std::vector<bool> ref(kPage, false);
    const int writes = static_cast<int>(next() % 12);
    for (int w = 0; w < writes; ++w) {
      const size_t off = next() % kPage, n = 1 + next() % std::min<size_t>(200, kPage - off);
      std::string src(n, 'x');
      page_write(page, kPage, off, src.data(), n);
      for (size_t i = off; i < off + n; ++i) ref[i] = true;
    }
    if (round % 7 == 0) {  // a run that reaches the page's end
      page_write(page, kPage, kPage - 70, std::string(70, 'y').data(), 70);
      for (size_t i = kPage - 70; i < kPage; ++i) ref[i] = true;
    }
    std::vector<std::pair<size_t, size_t>> want, got;
    for (size_t i = 0; i < kPage;) {
      if (!ref[i]) { ++i; continue; }
      size_t j = i;
      while (j < kPage && ref[j]) ++j;
      want.emplace_back(i, j - i);
      i = j;
    }
    page_dirty_runs(page, kPage, [&](size_t off, size_t len) { got.emplace_back(off, len); });
    ASSERT_EQ(got, want) << "round " << round;
    // Overlay of random windows: written bytes come from the page, the
    // others stay as they were.
    for (int w = 0; w < 20; ++w) {
      const size_t off = next() % kPage, n = 1 + next() % (kPage - off);
      std::string out(n, '.');
      page_overlay(page, kPage, off, n, reinterpret_cast<unsigned char*>(out.data()));
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], ref[off + i] ? page[off + i] : '.') << "round " << round << " off " << off << " i " << i;
      }
    }
  }
}

// An open wrap's colour, in a slot of its own as a thread's wrap keeps it.
struct Held {
  explicit Held(AliasRing& r) : ring(&r) {
    r.add_slot(&slot);
    tag = r.enter(slot);
  }
  ~Held() { ring->remove_slot(&slot); }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  void leave() { ring->leave(slot, tag); }
  AliasRing* ring;
  WrapSlot slot;
  WrapTag tag{};
};

class AliasRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/sw_alias_test_" + std::to_string(getpid());
    unlink(path_.c_str());
    ResolvedConfig c;
    file_ = PoolFile::create(path_, 16 << 20, c);
    ASSERT_TRUE(file_);
    MediumOptions mo;
    mo.kind = SW_MEDIUM_X86;
    medium_ = make_medium(mo, file_->base(), file_->size());
    cfg_.alias_entries = 256;
    cfg_.retire_divisor = 8;
    cfg_.flags = SW_CONFIG_NO_RETIRE_THREAD;  // deterministic: retire inline
  }
  void TearDown() override {
    ring_.reset();
    file_.reset();
    unlink(path_.c_str());
  }
  uint64_t heap(uint64_t i) const { return file_->header().heap_offset + 8 * i; }
  // A 4 KiB shadow page for home page `po` in table t, with byte c written
  // at `at`, as sw_write would leave it.
  // Like every writer, put() and add_page() raise the alias filter first.
  void add_page(AliasTable& t, uint64_t po, size_t at, char c) {
    if (ring_) ring_->filter().raise_gen(po + at, 1, t.gen);
    t.has_pages = true;
    bool ins;
    AliasEntry* e = t.find_or_insert(page_key(po), &ins);
    ASSERT_NE(e, nullptr);
    char* page = t.new_page();
    ASSERT_NE(page, nullptr);
    page_write(page, 4096, at, &c, 1);
    e->value.store(reinterpret_cast<uintptr_t>(page));
    e->meta.store(kMetaValid);
  }
  void put(uint64_t off, uint64_t v) {
    ring_->filter().raise_gen(off, 8, ring_->active_gen());
    AliasTable& t = ring_->table(ring_->active_gen());
    t.has_words = true;
    bool ins;
    AliasEntry* e = t.find_or_insert(off, &ins);
    ASSERT_NE(e, nullptr);
    e->value.store(v);
    e->meta.store(kMetaValid);
  }

  std::string path_;
  std::unique_ptr<PoolFile> file_;
  std::unique_ptr<Medium> medium_;
  ResolvedConfig cfg_;
  std::unique_ptr<AliasRing> ring_;
};

TEST_F(AliasRingTest, TablesGoThroughTheFiveStatesAndRetireHome) {
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  EXPECT_EQ(ring_->table(0).state.load(), TableState::kActive);
  Held w1(*ring_);
  for (uint64_t i = 0; i < 40; ++i) put(heap(i), i + 1000);
  Held w2(*ring_);
  const uint64_t s2 = ring_->next_seq();
  w2.leave();
  ring_->after_commit(false);  // 40 >= 256/8: switch; w1 keeps table 0 Full
  EXPECT_EQ(ring_->active_gen(), 1u);
  EXPECT_EQ(ring_->table(0).state.load(), TableState::kFull);
  Held reader(*ring_);  // (a=1, m=0): may read table 0
  const uint64_t s1 = ring_->next_seq();
  w1.leave();
  ASSERT_TRUE(ring_->wait_retired(s2));
  // Closed, retired home — but the reader pins it: Retired, not Empty.
  EXPECT_EQ(ring_->table(0).state.load(), TableState::kRetired);
  ring_->throttle(true);  // steps the ring on as far as it can go
  EXPECT_EQ(ring_->table(0).state.load(), TableState::kRetired) << "the reader's slot still pins it";
  EXPECT_GE(ring_->retired_seq(), s2);
  EXPECT_EQ(file_->meta()->retired_seq, ring_->retired_seq()) << "watermark persisted";
  for (uint64_t i = 0; i < 40; ++i) EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(i))), i + 1000);
  EXPECT_EQ(ring_->lookup_word(heap(3)), 1003u);
  reader.leave();
  ASSERT_EQ(ring_->quiesce(), 0);
  EXPECT_EQ(ring_->table(0).state.load(), TableState::kEmpty);
  EXPECT_EQ(ring_->table(0).count(), 0u);
  EXPECT_EQ(ring_->retired_seq(), s1);
}

TEST_F(AliasRingTest, OpenWriterKeepsItsTableFromClosing) {
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  Held writer(*ring_);
  for (uint64_t i = 0; i < 40; ++i) put(heap(i), 7);
  Held other(*ring_);
  ring_->next_seq();
  other.leave();
  ring_->after_commit(false);
  EXPECT_EQ(ring_->active_gen(), 1u);
  EXPECT_EQ(ring_->table(0).state.load(), TableState::kFull) << "writer still open";
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(0))), 0u) << "home untouched before commit";
  ring_->next_seq();
  writer.leave();
  ASSERT_EQ(ring_->quiesce(), 0);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(0))), 7u);
}

// enter() tags a wrap with the generations it read, published in its
// slot, only if they have not moved since: a colour read before a switch
// must be refused, or the retirer (which read the slots after switching)
// could close a table the wrap then writes into.
TEST_F(AliasRingTest, AColourReadBeforeASwitchDoesNotHold) {
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  WrapSlot late;
  ring_->add_slot(&late);
  const WrapTag stale = ring_->colour_now();
  EXPECT_EQ(stale.active, 0u);
  {
    Held w(*ring_);
    for (uint64_t i = 0; i < 40; ++i) put(heap(i), i + 1);
    ring_->next_seq();
    w.leave();
  }
  ring_->after_commit(false);  // 40 >= 256/8: switch
  ASSERT_EQ(ring_->active_gen(), 1u);
  EXPECT_FALSE(ring_->try_enter(late, stale)) << "the active generation moved after it was read";
  const WrapTag now = ring_->enter(late);
  EXPECT_EQ(now.active, 1u);
  EXPECT_EQ(AliasRing::colour_of(late).active, 1u);
  EXPECT_EQ(AliasRing::colour_of(late).readable, now.readable);
  ring_->leave(late, now);
  EXPECT_EQ(late.word.load(), 0u) << "a closed wrap holds no colour";
  ring_->remove_slot(&late);
  ASSERT_EQ(ring_->quiesce(), 0);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(39))), 40u);
}

// A thread's copy of the active table is used only for the generation it
// was taken for: after a switch the same copy answers the new table.
TEST_F(AliasRingTest, ATableCacheAnswersOnlyForItsGeneration) {
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  TableCache c;
  EXPECT_EQ(&ring_->table(0, c), &ring_->table(0));
  {
    Held w(*ring_);
    for (uint64_t i = 0; i < 40; ++i) put(heap(i), i + 1);
    ring_->next_seq();
    w.leave();
  }
  ring_->after_commit(false, c);  // 40 >= 256/8: switch
  ASSERT_EQ(ring_->active_gen(), 1u);
  EXPECT_EQ(&ring_->table(1, c), &ring_->table(1)) << "the copy of generation 0 is not generation 1's table";
  EXPECT_NE(&ring_->table(1, c), &ring_->table(0));
  ASSERT_EQ(ring_->quiesce(), 0);
}

TEST_F(AliasRingTest, OverflowAddsTablesAndNewerValuesWin) {
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  Held w(*ring_);
  uint64_t key = 0;
  for (int round = 0; round < 3; ++round) {
    const uint64_t g = ring_->active_gen();
    AliasTable& t = ring_->table(g);
    while (t.count() < t.hard_limit()) put(heap(key++), round);
    ASSERT_TRUE(ring_->make_room(g, w.tag));
    EXPECT_EQ(ring_->active_gen(), g + 1);
  }
  put(heap(0), 99);  // newest table
  EXPECT_EQ(ring_->lookup_word(heap(0)), 99u);
  EXPECT_EQ(ring_->lookup_word(heap(key - 1)), 2u);
  EXPECT_GT(ring_->table(ring_->active_gen()).capacity(), 256u) << "overflow tables grow";
  ring_->next_seq();
  w.leave();
  ASSERT_EQ(ring_->quiesce(), 0);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(0))), 99u);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(key - 1))), 2u);
}

TEST_F(AliasRingTest, ShadowPagesPastTheBudgetForceASwitchBelowTheEntryThreshold) {
  // 4 KiB shadow pages (as the SQLite VFS uses): a few hundred entries
  // already hold megabytes of copies.  Past the budget the table switches
  // although its entry count is far below entries / retire_divisor.
  cfg_.alias_entries = 1 << 16;  // threshold 8192 entries
  cfg_.shadow_page_size = 4096;
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  AliasTable& t = ring_->table(0);
  const uint64_t base = (file_->header().heap_offset + 4095) & ~uint64_t{4095};
  uint64_t pages = 0;
  while (t.shadow_bytes() < (uint64_t{2} << 20)) {
    ASSERT_NO_FATAL_FAILURE(add_page(t, base + pages * 4096, 0, 'x'));
    ++pages;
  }
  EXPECT_LT(t.count(), 8192u / 16);
  Held w(*ring_);
  ring_->next_seq();
  w.leave();
  ring_->after_commit(false);
  EXPECT_EQ(ring_->active_gen(), 1u) << "switched at " << pages << " pages";
  ASSERT_EQ(ring_->quiesce(), 0);
  EXPECT_EQ(*file_->at(base + 4096), 'x');
}

TEST_F(AliasRingTest, SteadyStateAlternatesBetweenTwoTables) {
  // A ring of 8 slots, but only two tables in use at a time: recycled
  // tables are reused newest first, so generation after generation the
  // same two table objects (and their memory) come back.
  cfg_.max_alias_tables = 8;
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  std::set<const AliasTable*> seen;
  for (uint64_t gen = 0; gen < 20; ++gen) {
    ASSERT_EQ(ring_->active_gen(), gen);
    seen.insert(&ring_->table(gen));
    Held w(*ring_);
    for (uint64_t i = 0; i < 40; ++i) put(heap(gen * 64 + i), gen * 1000 + i);
    ring_->next_seq();
    w.leave();
    ring_->after_commit(false);  // 40 >= 256/8: switch, retire inline
  }
  EXPECT_EQ(seen.size(), 2u);
  ASSERT_EQ(ring_->quiesce(), 0);
  for (uint64_t gen = 0; gen < 20; ++gen) {
    EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(heap(gen * 64 + 39))), gen * 1000 + 39) << gen;
  }
}

TEST_F(AliasRingTest, TheShadowBudgetIsConfigurable) {
  // sw_config.shadow_budget_kib = 64: sixteen 4 KiB pages (plus masks)
  // already pass it.
  cfg_.alias_entries = 1 << 16;
  cfg_.shadow_page_size = 4096;
  cfg_.shadow_budget_kib = 64;
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), medium_.get());
  AliasTable& t = ring_->table(0);
  const uint64_t base = (file_->header().heap_offset + 4095) & ~uint64_t{4095};
  for (uint64_t p = 0; p < 15; ++p) ASSERT_NO_FATAL_FAILURE(add_page(t, base + p * 4096, 8, 'y'));
  Held w(*ring_);
  ring_->next_seq();
  w.leave();
  ring_->after_commit(false);
  EXPECT_EQ(ring_->active_gen(), 1u) << "15 pages of 4.5 KiB pass 64 KiB";
  ASSERT_EQ(ring_->quiesce(), 0);
  EXPECT_EQ(*file_->at(base + 14 * 4096 + 8), 'y');
}

// A medium that, at each home write of bytes the test aliased, asks the
// ring's alias filter whether their slot is still raised — and asks again
// at the retire fence that follows: the filter may clear a slot (readers
// then read home without looking at the tables) only after the home
// writes of every table it covered, fenced.
class FilterCheckingMedium final : public ForwardingMedium {
 public:
  FilterCheckingMedium(Medium* inner, std::function<bool(uint64_t)> watched, std::function<bool(uint64_t)> raised,
                       char* base)
      : ForwardingMedium(inner), watched_(std::move(watched)), raised_(std::move(raised)), base_(base) {}

  uint64_t home_writes() const { return home_writes_; }
  const std::vector<std::string>& violations() const { return violations_; }

 private:
  void before_fence(FenceKind kind) override {
    if (kind == FenceKind::kRetire) {
      for (uint64_t off : pending_) expect_raised(off, "at the retire fence after its home write");
      pending_.clear();
    }
  }
  void before_write(const void* dst, size_t n) override {
    const uint64_t off = static_cast<uint64_t>(static_cast<const char*>(dst) - base_);
    for (uint64_t o = off; o < off + n; ++o) {
      if (!watched_(o)) continue;
      ++home_writes_;
      expect_raised(o, "while it was written home");
      pending_.push_back(o);
    }
  }
  void expect_raised(uint64_t off, const char* when) {
    if (!raised_(off)) violations_.push_back("offset " + std::to_string(off) + ": slot clear " + when);
  }

  std::function<bool(uint64_t)> watched_, raised_;
  char* base_;
  uint64_t home_writes_ = 0;
  std::vector<uint64_t> pending_;  // written home, not yet fenced
  std::vector<std::string> violations_;
};

TEST_F(AliasRingTest, RetirementWritesHomeBeforeTheFilterClearsTheSlots) {
  // Words (put) and shadow-page bytes (add_page), each in a filter slot of
  // its own, stored one table at a time; every table is retired inline by
  // the switch that follows it.
  cfg_.shadow_page_size = 4096;  // add_page's pages
  const uint64_t granule = cfg_.filter_granule;
  const uint64_t words = (file_->header().heap_offset + granule - 1) & ~(granule - 1);
  const uint64_t pages = (words + 64 * granule + 4095) & ~uint64_t{4095};
  auto word = [&](uint64_t i) { return words + i * granule; };
  auto watched = [&](uint64_t off) {
    return (off >= words && off < word(40) && off % granule < 8) || (off >= pages && off < pages + 4 * 4096);
  };
  FilterCheckingMedium checking(
      medium_.get(), watched, [&](uint64_t off) { return !ring_->filter().clear_word(off & ~uint64_t{7}); },
      file_->base());
  ring_ = std::make_unique<AliasRing>(cfg_, file_.get(), &checking);
  for (uint64_t round = 0; round < 4; ++round) {
    const uint64_t g = ring_->active_gen();
    Held w(*ring_);
    for (uint64_t i = 0; i < 40; ++i) put(word(i), round * 1000 + i + 1);  // 40 >= 256/8: a switch at commit
    for (uint64_t p = 0; p < 4; ++p) {
      ASSERT_NO_FATAL_FAILURE(add_page(ring_->table(g), pages + p * 4096, 64 * p + round, static_cast<char>('a' + round)));
    }
    EXPECT_FALSE(ring_->filter().clear_word(word(7))) << "aliased in live generation " << g;
    ring_->next_seq();
    w.leave();
    ring_->after_commit(false);  // switch, then close and retire g inline
    ASSERT_EQ(ring_->readable_gen(), g + 1) << "round " << round << ": table " << g << " retired";
    EXPECT_TRUE(ring_->filter().clear_word(word(7))) << "retired: the slot is clear";
    EXPECT_EQ(*reinterpret_cast<uint64_t*>(file_->at(word(7))), round * 1000 + 8);
    EXPECT_EQ(*file_->at(pages + 4096 + 64 + round), static_cast<char>('a' + round));
  }
  ASSERT_EQ(ring_->quiesce(), 0);
  ring_.reset();  // before the medium it writes through
  EXPECT_GE(checking.home_writes(), 4u * 40 * 8) << "the checks ran";
  EXPECT_TRUE(checking.violations().empty()) << checking.violations().size() << " home writes after the filter "
                                             << "cleared, first: " << checking.violations().front();
}

// A 16 MiB pool file and a medium of `kind` over it (msync: with its
// descriptor; on a disk file system, where msync writes home runs with
// pwrite); the heap's first page is the test's.
class HomeWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { unlink(path_.c_str()); }
  void TearDown() override {
    medium_.reset();
    file_.reset();
    unlink(path_.c_str());
  }
  void open(sw_medium_kind kind) {
    ResolvedConfig c;
    file_ = PoolFile::create(path_, 16 << 20, c);
    ASSERT_TRUE(file_);
    MediumOptions mo;
    mo.kind = kind;
    mo.fd = file_->fd();
    medium_ = make_medium(mo, file_->base(), file_->size());
    ASSERT_TRUE(medium_);
    base_ = (file_->header().heap_offset + 4095) & ~uint64_t{4095};
  }
  const std::string path_ = "/var/tmp/sw_home_writer_test_" + std::to_string(getpid());
  std::unique_ptr<PoolFile> file_;
  std::unique_ptr<Medium> medium_;
  uint64_t base_ = 0;
};

TEST_F(HomeWriterTest, SkipsLineSegmentsThatAlreadyHoldTheValue) {
  open(SW_MEDIUM_X86);
  PoolFile* file = file_.get();
  Medium* medium = medium_.get();
  const uint64_t base = base_;
  char bytes[200];
  for (int i = 0; i < 200; ++i) bytes[i] = static_cast<char>(i);
  std::memcpy(file->at(base), bytes, sizeof bytes);  // home already holds them
  std::memset(file->at(base + 2048), 0, 16);
  bytes[150] = 'X';                                  // ...except one byte in the third line
  Counters cnt;
  {
    CountersScope scope(&cnt);
    HomeWriter plain(file, medium);
    plain.bytes(base + 1000, bytes, sizeof bytes);
    plain.finish();
    EXPECT_EQ(cnt.flushes.get(), 4u) << "without skipping: every line of the range";
    cnt.reset();
    HomeWriter skipping(file, medium, true);
    skipping.bytes(base, bytes, sizeof bytes);  // lines 0..3 of which only line 2 differs
    skipping.word(base + 2048, 0);               // home is 0 there already
    skipping.word(base + 2056, 5);               // this one changes
    EXPECT_EQ(skipping.finish(), 3u) << "values retired, skipped or not";
    EXPECT_EQ(skipping.skipped(), 4u);
    EXPECT_EQ(cnt.flushes.get(), 2u);
  }
  EXPECT_EQ(std::memcmp(file->at(base), bytes, sizeof bytes), 0);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file->at(base + 2056)), 5u);
}

// On the msync medium a comparing HomeWriter keeps what differs until
// finish() and writes it as sorted runs of contiguous bytes, one
// write_through (pwrite) each, never storing word by word through the
// mapping: three adjacent words and a byte run next to them are one write,
// a word elsewhere another, an unchanged word none.  The bytes are at home
// (and on the file) after finish() and the fence.
TEST_F(HomeWriterTest, OnMsyncChangedRunsAreWrittenWholeAtFinish) {
  open(SW_MEDIUM_MSYNC);
  PoolFile* file = file_.get();
  if (!medium_->properties().home_runs) GTEST_SKIP() << "/var/tmp is not on ext4 or XFS: no home runs";
  struct Counting final : ForwardingMedium {
    using ForwardingMedium::ForwardingMedium;
    std::vector<size_t> writes;  // sizes of write() calls (write_through comes through it)
    unsigned stores = 0;
    void store(void* dst, uint64_t v, unsigned size) override {
      ++stores;
      ForwardingMedium::store(dst, v, size);
    }
    void before_write(const void*, size_t n) override { writes.push_back(n); }
  } counting(medium_.get());
  const uint64_t base = base_;
  *reinterpret_cast<uint64_t*>(file->at(base + 512)) = 77;  // home already holds it
  char run[40];
  for (int i = 0; i < 40; ++i) run[i] = static_cast<char>(i + 1);
  {
    HomeWriter w(file, &counting, /*skip_unchanged=*/true);
    w.word(base + 16, 3);  // out of order: sorted at finish
    w.word(base, 1);
    w.word(base + 8, 2);
    w.bytes(base + 24, run, sizeof run);  // continues the words: [base, base+64)
    w.word(base + 512, 77);               // unchanged: skipped
    w.word(base + 1024, 9);
    EXPECT_TRUE(counting.writes.empty()) << "nothing written before finish";
    EXPECT_EQ(w.finish(), 6u);
  }
  EXPECT_EQ(counting.stores, 0u);
  EXPECT_EQ(counting.writes, (std::vector<size_t>{64, 8}));
  counting.fence(FenceKind::kRetire);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(*reinterpret_cast<uint64_t*>(file->at(base + 8 * i)), i + 1);
  EXPECT_EQ(std::memcmp(file->at(base + 24), run, sizeof run), 0);
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(file->at(base + 1024)), 9u);
  uint64_t on_file = 0;
  ASSERT_EQ(pread(file->fd(), &on_file, 8, static_cast<off_t>(base + 1024)), 8);
  EXPECT_EQ(on_file, 9u);
}

}  // namespace
}  // namespace softwrap
