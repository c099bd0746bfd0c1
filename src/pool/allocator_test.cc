// allocator_test.cc — the persistent heap against a std::map oracle.
//
// FakeTx stands in for an engine: it applies stores to pool memory at once,
// remembers old values so a test can abort (restore them, run the on_abort
// actions) or commit (run the on_commit actions), and, through a shared
// WriteSets registry, fails the test if two open wraps ever store to the
// same 8-byte word.  The allocator's persistent state is then checked by
// Allocator::check and by re-running Allocator::open on the same mapping.
#include "pool/allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {
namespace {

// Which open wrap has stored to which word.
class WriteSets {
 public:
  bool claim(uint64_t off, const void* tx) {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = owner_.emplace(off, tx);
    return inserted || it->second == tx;
  }
  void release(const std::vector<uint64_t>& offs, const void* tx) {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t off : offs) {
      auto it = owner_.find(off);
      if (it != owner_.end() && it->second == tx) owner_.erase(it);
    }
  }

 private:
  std::mutex mu_;
  std::unordered_map<uint64_t, const void*> owner_;
};

class FakeTx final : public TxAccess {
 public:
  explicit FakeTx(PoolFile* pool, WriteSets* ws = nullptr) : pool_(pool), ws_(ws) {}

  void begin() { open_ = true; }
  void commit() {
    open_ = false;
    finish();
    run(commits_);
  }
  void abort() {
    open_ = false;
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) std::memcpy(pool_->at(it->first), &it->second, 8);
    finish();
    run(aborts_);
  }
  size_t stores() const { return undo_.size(); }

  bool in_wrap() override { return open_; }
  void store64(uint64_t off, uint64_t v) override {
    EXPECT_TRUE(open_) << "store outside a wrap";
    EXPECT_EQ(off % 8, 0u);
    EXPECT_TRUE(off > pool_->header().meta_offset + 16 && pool_->home_range_ok(off, 8))
        << "allocator stored outside the chunk heads and chunks of the zones: " << off;
    if (ws_ != nullptr) {
      EXPECT_TRUE(ws_->claim(off, this)) << "two open wraps store to word " << off;
    }
    uint64_t old;
    std::memcpy(&old, pool_->at(off), 8);
    undo_.emplace_back(off, old);
    std::memcpy(pool_->at(off), &v, 8);
  }
  void on_commit(Action fn, void* self, uint64_t a, uint64_t b) override { commits_.push_back({fn, self, a, b}); }
  void on_abort(Action fn, void* self, uint64_t a, uint64_t b) override { aborts_.push_back({fn, self, a, b}); }

 private:
  struct Deferred {
    Action fn;
    void* self;
    uint64_t a, b;
  };
  void finish() {
    if (ws_ != nullptr) {
      std::vector<uint64_t> offs;
      for (const auto& u : undo_) offs.push_back(u.first);
      ws_->release(offs, this);
    }
    undo_.clear();
  }
  void run(std::vector<Deferred>& actions) {
    std::vector<Deferred> todo;
    todo.swap(actions);
    commits_.clear();
    aborts_.clear();
    for (const Deferred& d : todo) d.fn(d.self, d.a, d.b);
  }

  PoolFile* pool_;
  WriteSets* ws_;
  bool open_ = false;
  std::vector<std::pair<uint64_t, uint64_t>> undo_;
  std::vector<Deferred> commits_, aborts_;
};

struct Live {
  size_t requested;
  size_t usable;
  uint64_t tag;
};
using Oracle = std::map<uint64_t, Live>;

size_t random_size(std::mt19937_64& rng) {
  const unsigned r = rng() % 100;
  if (r < 70) return 1 + rng() % 512;
  if (r < 92) return 513 + rng() % 65024;
  if (r < 99) return 65537 + rng() % (1 << 20);
  return 1 + rng() % (4 << 20);
}

class AllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/softwrap_alloc_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    alloc_.reset();
    pool_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string path() const { return dir_ + "/pool"; }

  void make(size_t size, uint32_t lanes = 1) {
    ResolvedConfig cfg;
    cfg.lanes = lanes;
    pool_ = PoolFile::create(path(), size, cfg);
    ASSERT_NE(pool_, nullptr) << last_error_message();
    ASSERT_EQ(Allocator::open(pool_.get(), &alloc_), 0) << last_error_message();
  }
  // Zone 0's heap (the tests below grow a pool only where they say so).
  uint64_t heap_begin() const { return pool_->header().heap_offset; }
  uint64_t heap_end() const { return heap_begin() + pool_->header().chunk_count * kChunkSize; }
  uint64_t chunks() const { return pool_->chunk_count(); }

  // A pool of `size` bytes that may grow to `max`, with a medium to grow by.
  void make_growable(size_t size, uint64_t max) {
    ResolvedConfig cfg;
    cfg.lanes = 1;
    cfg.max_size = max;
    pool_ = PoolFile::create(path(), size, cfg);
    ASSERT_NE(pool_, nullptr) << last_error_message();
    MediumOptions mo;
    mo.kind = SW_MEDIUM_MSYNC;
    medium_ = make_medium(mo, pool_->base(), pool_->size());
    ASSERT_NE(medium_, nullptr) << last_error_message();
    ASSERT_EQ(pool_->bind(medium_.get()), 0) << last_error_message();
    ASSERT_EQ(Allocator::open(pool_.get(), &alloc_), 0) << last_error_message();
  }

  uint64_t alloc1(size_t n) {
    FakeTx tx(pool_.get());
    tx.begin();
    const uint64_t off = alloc_->alloc(tx, n);
    tx.commit();
    return off;
  }
  void free1(uint64_t off) {
    FakeTx tx(pool_.get());
    tx.begin();
    EXPECT_EQ(alloc_->free(tx, off), 0) << last_error_message();
    tx.commit();
  }
  size_t usable(uint64_t off) {
    FakeTx tx(pool_.get());
    return alloc_->usable_size(tx, off);
  }

  void put_tags(uint64_t off, const Live& l) {
    std::memcpy(pool_->at(off), &l.tag, 8);
    std::memcpy(pool_->at(off + l.usable - 8), &l.tag, 8);
  }
  void expect_tags(const Oracle& live) {
    for (const auto& [off, l] : live) {
      uint64_t a, b;
      std::memcpy(&a, pool_->at(off), 8);
      std::memcpy(&b, pool_->at(off + l.usable - 8), 8);
      ASSERT_EQ(a, l.tag) << "block at " << off << " was overwritten";
      ASSERT_EQ(b, l.tag) << "block at " << off << " was overwritten";
    }
  }
  // No overlap, and a small block's 16-byte header is in nobody's range.
  // Each allocation lies in the chunks of one zone.
  void expect_disjoint(const Oracle& live) {
    uint64_t prev_end = heap_begin();
    for (const auto& [off, l] : live) {
      ASSERT_EQ(off % 16, 0u);
      uint32_t c = 0;
      ASSERT_TRUE(pool_->chunk_at(off, &c)) << off;
      ASSERT_TRUE(pool_->heap_contains(off, l.usable)) << "allocation at " << off << " leaves its zone's heap";
      const uint64_t header = off == pool_->chunk_offset(c) ? 0 : 16;
      ASSERT_LE(prev_end, off - header) << "allocation at " << off << " overlaps its predecessor";
      prev_end = off + l.usable;
    }
  }
  void expect_consistent(const Oracle& live) {
    AllocatorStats st;
    ASSERT_EQ(Allocator::check(*pool_, &st), 0) << last_error_message();
    EXPECT_EQ(st.allocated_blocks + st.allocated_extents, live.size());
    uint64_t bytes = 0;
    for (const auto& [off, l] : live) bytes += l.usable;
    EXPECT_EQ(st.allocated_bytes, bytes);
    const AllocatorStats dram = alloc_->stats();
    EXPECT_EQ(dram.allocated_blocks, st.allocated_blocks);
    EXPECT_EQ(dram.allocated_extents, st.allocated_extents);
    EXPECT_EQ(dram.allocated_bytes, st.allocated_bytes);
    EXPECT_EQ(dram.free_chunks, st.free_chunks);
    EXPECT_EQ(dram.heap_bytes, chunks() * kChunkSize);
  }

  // Random wraps of allocs and frees; aborts one wrap in five.
  void random_rounds(std::mt19937_64& rng, int rounds, Oracle* live) {
    for (int round = 0; round < rounds; ++round) {
      FakeTx tx(pool_.get());
      tx.begin();
      Oracle added;
      std::vector<uint64_t> freed;
      for (int op = 0, n = 1 + static_cast<int>(rng() % 6); op < n; ++op) {
        if (live->empty() || rng() % 100 < 55) {
          const size_t n = random_size(rng);
          const uint64_t off = alloc_->alloc(tx, n);
          if (off == 0) {
            ASSERT_EQ(last_error(), SW_ENOSPC) << last_error_message();
            continue;
          }
          Live l{n, alloc_->usable_size(tx, off), rng()};
          ASSERT_GE(l.usable, n);
          put_tags(off, l);
          added.emplace(off, l);
        } else {
          auto it = live->begin();
          std::advance(it, rng() % live->size());
          if (std::find(freed.begin(), freed.end(), it->first) != freed.end()) {
            ASSERT_EQ(alloc_->free(tx, it->first), SW_EINVAL) << "double free in one wrap accepted";
            continue;
          }
          ASSERT_EQ(alloc_->free(tx, it->first), 0) << last_error_message();
          freed.push_back(it->first);
        }
      }
      if (rng() % 5 == 0) {
        tx.abort();
        for (const auto& [off, l] : added) ASSERT_EQ(usable(off), 0u) << "aborted allocation survived";
        for (uint64_t off : freed) ASSERT_EQ(usable(off), live->at(off).usable) << "aborted free happened";
      } else {
        tx.commit();
        for (uint64_t off : freed) {
          live->erase(off);
          ASSERT_EQ(usable(off), 0u) << "committed free did not happen";
        }
        live->insert(added.begin(), added.end());
      }
    }
  }

  std::string dir_;
  std::unique_ptr<Medium> medium_;
  std::unique_ptr<PoolFile> pool_;
  std::unique_ptr<Allocator> alloc_;
};

TEST_F(AllocatorTest, RandomAllocFreeAgainstOracle) {
  make(64ull << 20);
  std::mt19937_64 rng(42);
  Oracle live;
  for (int batch = 0; batch < 30; ++batch) {
    random_rounds(rng, 100, &live);
    expect_disjoint(live);
    expect_tags(live);
    expect_consistent(live);
  }
  EXPECT_GT(live.size(), 10u);
}

TEST_F(AllocatorTest, UsableSizeCoversRequest) {
  make(32ull << 20);
  for (size_t n : {1, 15, 16, 17, 100, 128, 129, 160, 1000, 4096, 40000, 65535, 65536, 65537, 262144, 262145}) {
    const uint64_t off = alloc1(n);
    ASSERT_NE(off, 0u) << n << ": " << last_error_message();
    const size_t u = usable(off);
    EXPECT_GE(u, n);
    if (n <= 65536) {
      EXPECT_LE(u, std::max<size_t>(16, n + n / 4 + 16)) << n;  // classes are ~25% apart
    } else {
      EXPECT_EQ(u % kChunkSize, 0u);
      EXPECT_LT(u - n, kChunkSize);
    }
    EXPECT_EQ(off % 16, 0u);
    EXPECT_EQ(usable(off + 16), 0u);
    EXPECT_EQ(usable(off - 16), 0u);
  }
  EXPECT_EQ(usable(0), 0u);
  EXPECT_EQ(usable(heap_end()), 0u);
  EXPECT_EQ(usable(heap_begin() + 8), 0u);
}

TEST_F(AllocatorTest, MisuseIsRefused) {
  make(16ull << 20);
  FakeTx outside(pool_.get());
  EXPECT_EQ(alloc_->alloc(outside, 16), 0u);
  EXPECT_EQ(last_error(), SW_ENOWRAP);
  EXPECT_EQ(alloc_->free(outside, heap_begin() + 16), SW_ENOWRAP);

  const uint64_t small = alloc1(40);
  const uint64_t big = alloc1(300000);
  ASSERT_TRUE(small && big);
  FakeTx tx(pool_.get());
  tx.begin();
  EXPECT_EQ(alloc_->alloc(tx, 0), 0u);
  EXPECT_EQ(last_error(), SW_EINVAL);
  EXPECT_EQ(alloc_->free(tx, small + 64), SW_EINVAL);  // the next, never-allocated block
  EXPECT_EQ(alloc_->free(tx, small + 8), SW_EINVAL);   // inside a block
  EXPECT_EQ(alloc_->free(tx, big + 4096), SW_EINVAL);  // inside an extent
  EXPECT_EQ(alloc_->free(tx, 64), SW_EINVAL);          // not in the heap
  EXPECT_EQ(alloc_->free(tx, heap_end()), SW_EINVAL);
  EXPECT_EQ(alloc_->free(tx, heap_end() - kChunkSize), SW_EINVAL);  // free chunk
  EXPECT_EQ(alloc_->free(tx, small), 0);
  EXPECT_EQ(alloc_->free(tx, small), SW_EINVAL);  // twice in one wrap
  EXPECT_NE(std::strstr(last_error_message(), "double free"), nullptr) << last_error_message();
  EXPECT_EQ(alloc_->free(tx, big), 0);
  EXPECT_EQ(alloc_->free(tx, big), SW_EINVAL);
  tx.commit();
  tx.begin();
  EXPECT_EQ(alloc_->free(tx, small), SW_EINVAL);  // freed by a committed wrap
  EXPECT_EQ(alloc_->free(tx, big), SW_EINVAL);
  tx.commit();
  EXPECT_EQ(Allocator::check(*pool_, nullptr), 0);
}

// free() checks the DRAM state alone (no head or header is loaded): a
// block of a run another open wrap formatted, which no committed wrap has
// seen, is not this wrap's to free.
TEST_F(AllocatorTest, ABlockOfARunAnotherOpenWrapFormattedIsNotFreed) {
  make(16ull << 20);
  FakeTx a(pool_.get()), b(pool_.get());
  a.begin();
  const uint64_t x = alloc_->alloc(a, 4000);  // the first block of its class: a new run, private to a
  ASSERT_NE(x, 0u);
  b.begin();
  EXPECT_EQ(alloc_->free(b, x), SW_EINVAL);
  EXPECT_NE(std::strstr(last_error_message(), "another open wrap"), nullptr) << last_error_message();
  b.commit();
  a.commit();
  b.begin();
  EXPECT_EQ(alloc_->free(b, x), 0) << "committed: anyone's to free";
  b.commit();
  EXPECT_EQ(Allocator::check(*pool_, nullptr), 0);
}

TEST_F(AllocatorTest, AllocAndFreeInOneWrap) {
  make(16ull << 20);
  for (bool commit : {false, true}) {
    FakeTx tx(pool_.get());
    tx.begin();
    const uint64_t a = alloc_->alloc(tx, 24);
    const uint64_t e = alloc_->alloc(tx, 1 << 20);
    ASSERT_TRUE(a && e);
    EXPECT_EQ(alloc_->free(tx, a), 0);
    EXPECT_EQ(alloc_->free(tx, e), 0);
    EXPECT_EQ(usable(a), 0u);
    commit ? tx.commit() : tx.abort();
    EXPECT_EQ(usable(a), 0u);
    EXPECT_EQ(usable(e), 0u);
    expect_consistent({});
    // Commit keeps the (now empty) run; abort also undoes its formatting.
    EXPECT_EQ(alloc_->stats().free_chunks, commit ? chunks() - 1 : chunks());
  }
}

TEST_F(AllocatorTest, AbortLeavesNoTrace) {
  make(16ull << 20);
  const uint64_t keep = alloc1(100);
  const uint64_t keep_big = alloc1(500000);
  const std::string before(pool_->at(heap_begin() - kPageSize), pool_->size() - heap_begin() + kPageSize);
  const AllocatorStats st0 = alloc_->stats();

  FakeTx tx(pool_.get());
  tx.begin();
  std::vector<uint64_t> offs;
  for (size_t n : {100, 100, 3000, 70000, 2000000}) offs.push_back(alloc_->alloc(tx, n));
  EXPECT_EQ(alloc_->free(tx, keep), 0);
  EXPECT_EQ(alloc_->free(tx, keep_big), 0);
  EXPECT_GT(tx.stores(), 0u);
  tx.abort();

  const std::string after(pool_->at(heap_begin() - kPageSize), pool_->size() - heap_begin() + kPageSize);
  EXPECT_TRUE(before == after) << "abort left persistent changes";
  for (uint64_t off : offs) EXPECT_EQ(usable(off), 0u);
  EXPECT_EQ(usable(keep), 112u);
  EXPECT_EQ(usable(keep_big), 2 * kChunkSize);
  const AllocatorStats st1 = alloc_->stats();
  EXPECT_EQ(st1.allocated_blocks, st0.allocated_blocks);
  EXPECT_EQ(st1.free_chunks, st0.free_chunks);
  // The same space is handed out again.
  const uint64_t again = alloc1(100);
  EXPECT_EQ(again, offs[0]);
  free1(keep);
  free1(keep_big);
  free1(again);
  expect_consistent({});
}

TEST_F(AllocatorTest, EnospcThenSpaceComesBack) {
  make(8ull << 20);  // one lane: about 31 chunks of heap
  std::vector<uint64_t> offs;
  for (;;) {
    const uint64_t off = alloc1(65536);
    if (off == 0) break;
    offs.push_back(off);
  }
  EXPECT_EQ(last_error(), SW_ENOSPC);
  EXPECT_NE(std::strstr(last_error_message(), "pool heap full: 65536 bytes requested"), nullptr)
      << last_error_message();
  EXPECT_EQ(offs.size(), chunks() * (kChunkSize / (65536 + 16)));
  EXPECT_EQ(alloc1(chunks() * kChunkSize), 0u);
  EXPECT_EQ(last_error(), SW_ENOSPC);
  EXPECT_EQ(alloc1(chunks() * kChunkSize + 1), 0u);

  FakeTx tx(pool_.get());
  tx.begin();
  for (uint64_t off : offs) ASSERT_EQ(alloc_->free(tx, off), 0);
  tx.commit();
  const std::string empty_runs(pool_->at(pool_->header().chunk_table_offset), chunks() * 8);

  // The whole heap as one extent: every empty run is reclaimed.  Abort first.
  tx.begin();
  EXPECT_NE(alloc_->alloc(tx, chunks() * kChunkSize), 0u) << last_error_message();
  tx.abort();
  EXPECT_EQ(std::string(pool_->at(pool_->header().chunk_table_offset), chunks() * 8), empty_runs);
  EXPECT_EQ(alloc_->stats().free_chunks, 0u) << "aborted reclaim must restore the runs";
  expect_consistent({});

  const uint64_t whole = alloc1(chunks() * kChunkSize);
  ASSERT_NE(whole, 0u) << last_error_message();
  EXPECT_EQ(whole, heap_begin());
  expect_consistent({{whole, {0, chunks() * kChunkSize, 0}}});
  EXPECT_EQ(alloc1(16), 0u);
  EXPECT_EQ(last_error(), SW_ENOSPC);
  free1(whole);
  expect_consistent({});
  EXPECT_EQ(alloc_->stats().free_chunks, chunks());
  EXPECT_NE(alloc1(16), 0u);
}

TEST_F(AllocatorTest, ReclaimedRunCanBecomeARunOfAnotherClass) {
  make(8ull << 20);
  std::vector<uint64_t> offs;
  for (uint64_t off; (off = alloc1(65536)) != 0;) offs.push_back(off);
  FakeTx tx(pool_.get());
  tx.begin();
  for (uint64_t off : offs) ASSERT_EQ(alloc_->free(tx, off), 0);
  tx.commit();
  // Every chunk is an empty 64 KiB run; a 16-byte request reclaims one.
  Oracle live;
  for (int i = 0; i < 100; ++i) {
    const uint64_t off = alloc1(16);
    ASSERT_NE(off, 0u) << last_error_message();
    live[off] = {16, 16, 0};
  }
  expect_disjoint(live);
  expect_consistent(live);
  EXPECT_EQ(alloc_->stats().free_chunks, 0u);
}

TEST_F(AllocatorTest, OneGigabyteExtent) {
  ResolvedConfig cfg;
  cfg.lanes = 4;
  pool_ = PoolFile::create(path(), 1200ull << 20, cfg);
  ASSERT_NE(pool_, nullptr) << last_error_message();
  ASSERT_EQ(Allocator::open(pool_.get(), &alloc_), 0);
  const uint64_t off = alloc1(1ull << 30);
  ASSERT_NE(off, 0u) << last_error_message();
  EXPECT_EQ(usable(off), 1ull << 30);
  pool_->at(off)[0] = 1;
  pool_->at(off)[(1ull << 30) - 1] = 2;
  expect_consistent({{off, {1ull << 30, 1ull << 30, 0}}});
  EXPECT_EQ(alloc1(1ull << 30), 0u);
  EXPECT_EQ(last_error(), SW_ENOSPC);

  std::unique_ptr<Allocator> again;
  ASSERT_EQ(Allocator::open(pool_.get(), &again), 0);
  FakeTx tx(pool_.get());
  EXPECT_EQ(again->usable_size(tx, off), 1ull << 30);
  alloc_ = std::move(again);
  free1(off);
  expect_consistent({});
}

TEST_F(AllocatorTest, ReopenReproducesLiveSet) {
  make(64ull << 20);
  std::mt19937_64 rng(9);
  Oracle live;
  random_rounds(rng, 1500, &live);
  const AllocatorStats st = alloc_->stats();
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {  // and through a fresh mapping of the file
      alloc_.reset();
      pool_.reset();
      pool_ = PoolFile::open(path());
      ASSERT_NE(pool_, nullptr) << last_error_message();
    }
    ASSERT_EQ(Allocator::open(pool_.get(), &alloc_), 0) << last_error_message();
    const AllocatorStats st2 = alloc_->stats();
    EXPECT_EQ(st2.allocated_blocks, st.allocated_blocks);
    EXPECT_EQ(st2.allocated_extents, st.allocated_extents);
    EXPECT_EQ(st2.allocated_bytes, st.allocated_bytes);
    EXPECT_EQ(st2.free_chunks, st.free_chunks);
    for (const auto& [off, l] : live) ASSERT_EQ(usable(off), l.usable) << off;
    expect_tags(live);
    expect_consistent(live);
  }
  random_rounds(rng, 300, &live);  // the rebuilt state allocates correctly
  expect_disjoint(live);
  expect_tags(live);
  expect_consistent(live);
}

TEST_F(AllocatorTest, FreedBlockIsNotReusedBeforeCommit) {
  make(16ull << 20);
  const uint64_t x = alloc1(64);
  FakeTx freer(pool_.get()), other(pool_.get());
  freer.begin();
  ASSERT_EQ(alloc_->free(freer, x), 0);
  other.begin();
  std::vector<uint64_t> got;
  for (int i = 0; i < 50; ++i) {
    got.push_back(alloc_->alloc(other, 64));
    ASSERT_NE(got.back(), x) << "a block freed by an open wrap was handed out";
  }
  freer.commit();
  other.commit();
  bool reused = false;
  for (int i = 0; i < 5000 && !reused; ++i) reused = alloc1(64) == x;
  EXPECT_TRUE(reused);
}

TEST_F(AllocatorTest, NewRunIsPrivateUntilCommit) {
  make(16ull << 20);
  FakeTx a(pool_.get()), b(pool_.get());
  a.begin();
  b.begin();
  const uint64_t x = alloc_->alloc(a, 48);
  const uint64_t y = alloc_->alloc(b, 48);
  ASSERT_TRUE(x && y);
  EXPECT_NE((x - heap_begin()) / kChunkSize, (y - heap_begin()) / kChunkSize);
  a.abort();
  b.commit();
  expect_consistent({{y, {48, 48, 0}}});
  const uint64_t z = alloc1(48);
  EXPECT_EQ((z - heap_begin()) / kChunkSize, (y - heap_begin()) / kChunkSize) << "b's run was published";
}

TEST_F(AllocatorTest, ConcurrentWrapsNeverShareAWord) {
  make(64ull << 20, 2);
  WriteSets ws;
  constexpr int kThreads = 8;
  std::vector<Oracle> lives(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      FakeTx tx(pool_.get(), &ws);
      Oracle& live = lives[t];
      for (int round = 0; round < 400; ++round) {
        tx.begin();
        Oracle added;
        std::vector<uint64_t> freed;
        for (int op = 0, n = 1 + static_cast<int>(rng() % 4); op < n; ++op) {
          if (live.empty() || rng() % 100 < 60) {
            const size_t n = rng() % 50 == 0 ? 100000 + rng() % 500000 : 1 + rng() % 2048;
            const uint64_t off = alloc_->alloc(tx, n);
            if (off == 0) continue;
            Live l{n, alloc_->usable_size(tx, off), rng()};
            std::memcpy(pool_->at(off), &l.tag, 8);
            added.emplace(off, l);
          } else {
            auto it = live.begin();
            std::advance(it, rng() % live.size());
            if (std::find(freed.begin(), freed.end(), it->first) != freed.end()) continue;
            if (alloc_->free(tx, it->first) != 0) ++failures;
            freed.push_back(it->first);
          }
        }
        if (rng() % 10 == 0) {
          tx.abort();
        } else {
          tx.commit();
          for (uint64_t off : freed) live.erase(off);
          live.insert(added.begin(), added.end());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  Oracle all;
  for (const Oracle& l : lives) all.insert(l.begin(), l.end());
  size_t total = 0;
  for (const Oracle& l : lives) total += l.size();
  ASSERT_EQ(all.size(), total) << "two threads own the same offset";
  for (const auto& [off, l] : all) {
    uint64_t tag;
    std::memcpy(&tag, pool_->at(off), 8);
    ASSERT_EQ(tag, l.tag);
  }
  expect_disjoint(all);
  expect_consistent(all);
}

TEST_F(AllocatorTest, CheckDetectsCorruption) {
  make(16ull << 20);
  const uint64_t blk = alloc1(200);
  const uint64_t ext = alloc1(600000);  // 3 chunks
  ASSERT_TRUE(blk && ext);
  ASSERT_EQ(Allocator::check(*pool_, nullptr), 0);
  auto* heads = reinterpret_cast<uint64_t*>(pool_->at(pool_->head_offset(0)));
  const uint64_t ext_chunk = (ext - heap_begin()) / kChunkSize;
  const uint64_t free_chunk = chunks() - 1;
  auto* hdr = reinterpret_cast<uint64_t*>(pool_->at(blk - 16));
  struct Case {
    const char* name;
    uint64_t* word;
    uint64_t value;
    const char* msg;
  } cases[] = {
      {"garbage head", &heads[free_chunk], 0x1234, "invalid head"},
      {"extent past end", &heads[ext_chunk], heads[ext_chunk] + chunks(), "past the end of its zone"},
      {"head inside extent", &heads[ext_chunk + 1], heads[ext_chunk], "inside the extent"},
      {"zero-length extent", &heads[ext_chunk], heads[ext_chunk] & ~0xFFFFFFFFull, "invalid head"},
      {"block class", &hdr[0], hdr[0] ^ (1ull << 40), "header"},
      {"block state", &hdr[0], hdr[0] ^ (4ull << 48), "header"},
      {"block size", &hdr[1], 0, "records size"},
      {"block size", &hdr[1], 100000, "records size"},
  };
  for (const Case& c : cases) {
    const uint64_t saved = *c.word;
    *c.word = c.value;
    EXPECT_EQ(Allocator::check(*pool_, nullptr), SW_ECORRUPT) << c.name;
    EXPECT_NE(std::strstr(last_error_message(), c.msg), nullptr) << c.name << ": " << last_error_message();
    std::unique_ptr<Allocator> a;
    EXPECT_EQ(Allocator::open(pool_.get(), &a), SW_ECORRUPT) << c.name;
    *c.word = saved;
  }
  // A header with a foreign nonce is stale data, not corruption.
  hdr[0] ^= 1;
  EXPECT_EQ(Allocator::check(*pool_, nullptr), 0);
  hdr[0] ^= 1;
  expect_consistent({{blk, {200, 224, 0}}, {ext, {600000, 3 * kChunkSize, 0}}});
}

// ------------------------------------------------------------------ growth

TEST_F(AllocatorTest, RandomAllocFreeAcrossZones) {
  make_growable(8ull << 20, 48ull << 20);
  std::mt19937_64 rng(9);
  Oracle live;
  for (int batch = 0; batch < 20; ++batch) {
    random_rounds(rng, 60, &live);
    expect_disjoint(live);
    expect_tags(live);
    expect_consistent(live);
  }
  EXPECT_GE(pool_->zone_count(), 3u) << "the pool did not grow";
  EXPECT_LE(pool_->size(), 48ull << 20);
  // The persistent heap alone rebuilds the same state.
  const AllocatorStats dram = alloc_->stats();
  alloc_.reset();
  medium_.reset();
  pool_.reset();
  pool_ = PoolFile::open(path());
  ASSERT_NE(pool_, nullptr) << last_error_message();
  ASSERT_EQ(Allocator::open(pool_.get(), &alloc_), 0) << last_error_message();
  const AllocatorStats again = alloc_->stats();
  EXPECT_EQ(again.allocated_bytes, dram.allocated_bytes);
  EXPECT_EQ(again.free_chunks, dram.free_chunks);
  EXPECT_EQ(again.heap_bytes, dram.heap_bytes);
  expect_tags(live);
}

TEST_F(AllocatorTest, ExtentsNeverSpanZones) {
  make_growable(8ull << 20, 64ull << 20);
  const uint64_t zone0 = chunks();  // about 31
  const uint64_t head = alloc1((zone0 - 4) * kChunkSize);  // 4 chunks left at zone 0's end
  ASSERT_NE(head, 0u) << last_error_message();
  const uint64_t grown = alloc1(6 * kChunkSize);  // does not fit there: grows
  ASSERT_NE(grown, 0u) << last_error_message();
  ASSERT_EQ(pool_->zone_count(), 2u);
  EXPECT_EQ(grown, pool_->zone(1).heap) << "the first extent of a new zone starts at its first chunk";
  free1(grown);
  // 4 free chunks end zone 0 and all of zone 1's start it: they are
  // numbered one after the other, yet 8 chunks must not straddle them.
  const uint64_t eight = alloc1(8 * kChunkSize);
  ASSERT_NE(eight, 0u);
  EXPECT_TRUE(pool_->heap_contains(eight, 8 * kChunkSize));
  EXPECT_EQ(eight, pool_->zone(1).heap);
  free1(eight);
  free1(head);
  expect_consistent({});
  EXPECT_EQ(alloc_->stats().free_chunks, chunks());
}

TEST_F(AllocatorTest, GrowthStopsAtTheMaximumWithAMessageNamingIt) {
  make_growable(8ull << 20, 16ull << 20);
  uint64_t n = 0;
  while (alloc1(1ull << 20) != 0) ++n;
  EXPECT_EQ(last_error(), SW_ENOSPC);
  EXPECT_NE(std::strstr(last_error_message(), "pool heap full: 1048576 bytes requested"), nullptr)
      << last_error_message();
  EXPECT_NE(std::strstr(last_error_message(), "maximum size of 16777216 bytes"), nullptr) << last_error_message();
  EXPECT_EQ(pool_->size(), 16ull << 20);
  EXPECT_EQ(pool_->zone_count(), 2u);
  EXPECT_EQ(n, pool_->zone(0).chunks / 4 + pool_->zone(1).chunks / 4);
  // A pool without a maximum says it does not grow.
  alloc_.reset();
  medium_.reset();
  pool_.reset();
  std::filesystem::remove(path());
  make(8ull << 20);
  while (alloc1(1ull << 20) != 0) {
  }
  EXPECT_NE(std::strstr(last_error_message(), "does not grow"), nullptr) << last_error_message();
}

TEST_F(AllocatorTest, ReserveLogChunksGrowsThePool) {
  make_growable(8ull << 20, 64ull << 20);
  const uint64_t zone0 = chunks();
  const uint64_t off = alloc_->reserve_log_chunks(static_cast<uint32_t>(zone0 + 8));  // more than zone 0 holds
  ASSERT_NE(off, 0u) << last_error_message();
  EXPECT_GE(pool_->zone_count(), 2u);
  EXPECT_TRUE(pool_->heap_contains(off, (zone0 + 8) * kChunkSize));
  EXPECT_EQ(alloc_->log_chunks(), zone0 + 8);
  // Reserved chunks keep head 0: the persistent heap calls them free.
  AllocatorStats st;
  ASSERT_EQ(Allocator::check(*pool_, &st), 0);
  EXPECT_EQ(st.free_chunks, chunks());
  EXPECT_EQ(alloc_->stats().free_chunks, chunks() - zone0 - 8);
  const size_t size = pool_->size();
  alloc_->release_log_chunks(off, static_cast<uint32_t>(zone0 + 8));
  EXPECT_EQ(alloc_->log_chunks(), 0u);
  EXPECT_EQ(alloc_->stats().free_chunks, chunks());
  EXPECT_EQ(alloc1((zone0 + 8) * kChunkSize), off) << "released log chunks are reused";
  EXPECT_EQ(pool_->size(), size) << "no growth needed for them";
}

}  // namespace
}  // namespace softwrap
