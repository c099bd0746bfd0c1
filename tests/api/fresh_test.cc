// fresh_test.cc — blocks a wrap allocated are written in place
// (engine/fresh.h), on every engine, with and without write-combined
// logging.  Each test proves one promise and fails when it is broken:
//   - a fresh block's stores and sw_write go home with no log record and
//     no alias (the log grows by the allocation's few words only), are
//     read back by the wrap (inline and through the library) and are
//     durable after a commit and a reopen;
//   - an aborted wrap frees its fresh blocks; a fresh block freed in the
//     same wrap is returned at once (the next allocation of its size gets
//     it, fresh again);
//   - a block whose old values a committed wrap logged is written in place
//     only once no alias table can still hold them: until then it goes
//     through the engine, and a load sees the newest value (the test that
//     fails when Engine::reuse_safe is bypassed);
//   - sw_pzalloc and a new root zero in place, and not at all where the
//     bytes are known to be zero (a new pool's chunks, a growth's zone);
//     a root as large as the heap's free space succeeds on every engine;
//   - write-combined logging does not compare fresh words.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "api/runtime.h"
#include "engine/fresh.h"
#include "engine/engine_test_params.h"
#include "pool/heap_check_test_util.h"
#include "softwrap/softwrap.h"

namespace {

// nonatomic cannot abort, and writes every store home in place already:
// it keeps no fresh blocks apart (Engine::writes_fresh_apart), it only
// skips zeroing known zeros.
bool logs(sw_engine_kind e) { return e != SW_ENGINE_NONATOMIC; }

sw_stats stats(sw_pool* p) {
  sw_stats s{};
  EXPECT_EQ(sw_pool_stats(p, &s), 0);
  return s;
}

uint64_t value(uint64_t i, uint64_t salt) { return (i + 1) * 0x9E3779B97F4A7C15ull ^ salt; }

class FreshTest : public softwrap::testing::ShmPoolTest {
 protected:
  sw_config config(uint64_t max_size = 0) const {
    sw_config c = ShmPoolTest::config();
    c.max_size = max_size;
    return c;
  }
  void make(size_t size = 32u << 20, uint64_t max_size = 0) {
    const sw_config c = config(max_size);
    pool_ = sw_pool_create(path_.c_str(), size, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    root_ = static_cast<uint64_t*>(sw_pool_root(pool_, 4096));
    ASSERT_NE(root_, nullptr) << sw_errormsg();
  }
  void reopen() {
    ASSERT_EQ(sw_pool_close(pool_), 0) << sw_errormsg();
    const sw_config c = config();
    pool_ = sw_pool_open(path_.c_str(), &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    root_ = static_cast<uint64_t*>(sw_pool_root(pool_, 4096));
    ASSERT_NE(root_, nullptr) << sw_errormsg();
  }
  softwrap::AllocatorStats heap() const { return pool_->alloc->stats(); }
  // Fills n words of the block with value(i, salt): word stores, then an
  // sw_write of the second half.
  void fill(uint64_t* b, size_t n, uint64_t salt) {
    for (size_t i = 0; i < n / 2; ++i) sw_store64(pool_, b + i, value(i, salt));
    std::vector<uint64_t> rest(n - n / 2);
    for (size_t i = n / 2; i < n; ++i) rest[i - n / 2] = value(i, salt);
    ASSERT_EQ(sw_write(pool_, b + n / 2, rest.data(), rest.size() * 8), 0) << sw_errormsg();
  }
  void expect_filled(uint64_t* b, size_t n, uint64_t salt) {
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(sw_load64(pool_, b + i), value(i, salt)) << "word " << i;
    }
    std::vector<uint64_t> got(n);
    ASSERT_EQ(sw_read(pool_, got.data(), b, n * 8), 0);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], value(i, salt)) << "word " << i << " (sw_read)";
  }

  uint64_t* root_ = nullptr;
};

// A block allocated and filled in one wrap: no log record of its bytes,
// read back, durable.  Blocks larger than FreshSet::kLogMax and an extent
// (> 64 KiB); smaller ones are the next test's.
TEST_P(FreshTest, FreshBlocksGoHomeWithoutLogRecords) {
  make();
  for (const size_t words : {size_t{40}, size_t{1000}, size_t{40000}}) {
    ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    auto* b = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, root_, words * 8));
    ASSERT_NE(b, nullptr) << sw_errormsg();
    fill(b, words, words);
    expect_filled(b, words, words);  // the wrap reads its fresh bytes
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    const sw_stats s = stats(pool_);
    const bool fresh = logs(GetParam().engine);
    EXPECT_EQ(s.fresh_blocks, fresh ? 1u : 0u);
    EXPECT_GE(s.fresh_words, fresh ? words : 0u);
    // The allocation (header, size, the slot) is logged; the block is not.
    EXPECT_LT(s.log_bytes, 512u) << words << " words";
    // Under WCL the allocation's words (header, size, slot) are compared;
    // the block's words are not (nothing to compare against).
    EXPECT_LE(s.wcl_words_eliminated + s.wcl_words_full + s.wcl_words_half, 4u);
    expect_filled(b, words, words);
  }
  const uint64_t off = sw_load64(pool_, root_);
  reopen();
  ASSERT_EQ(sw_load64(pool_, root_), off);
  expect_filled(static_cast<uint64_t*>(sw_pool_ptr(pool_, off)), 40000, 40000);
}

// An aborted wrap frees its fresh blocks.
TEST_P(FreshTest, AbortFreesFreshBlocks) {
  if (!logs(GetParam().engine)) GTEST_SKIP() << "nonatomic cannot abort";
  make();
  const uint64_t blocks = heap().allocated_blocks, extents = heap().allocated_extents;
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* a = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, root_, 256));
  auto* e = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, root_ + 1, 1u << 20));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(e, nullptr);
  fill(a, 32, 1);
  fill(e, 1u << 17, 2);
  ASSERT_EQ(sw_wrap_abort(pool_), 0) << sw_errormsg();
  EXPECT_EQ(sw_load64(pool_, root_), 0u);
  EXPECT_EQ(sw_load64(pool_, root_ + 1), 0u);
  EXPECT_EQ(heap().allocated_blocks, blocks);
  EXPECT_EQ(heap().allocated_extents, extents);
  EXPECT_EQ(sw_pusable_size(pool_, a), 0u);
  EXPECT_EQ(sw_pusable_size(pool_, e), 0u);
  // The same sizes again: free, and zeroed by sw_pzalloc (the aborted
  // wrap's bytes are never exposed).
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* a2 = static_cast<uint64_t*>(sw_pzalloc(pool_, 256));
  auto* e2 = static_cast<uint64_t*>(sw_pzalloc(pool_, 1u << 20));
  ASSERT_NE(a2, nullptr);
  ASSERT_NE(e2, nullptr);
  for (size_t i = 0; i < 32; ++i) ASSERT_EQ(sw_load64(pool_, a2 + i), 0u) << i;
  for (size_t i = 0; i < (1u << 17); i += 97) ASSERT_EQ(sw_load64(pool_, e2 + i), 0u) << i;
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
}

// Freeing a fresh block in its own wrap returns it at once: the next
// allocation of its size is the same block, fresh again.
TEST_P(FreshTest, FreeingAFreshBlockReturnsItAtOnce) {
  make();
  ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
  const uint64_t blocks = heap().allocated_blocks, extents = heap().allocated_extents;
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  void* a = sw_pmalloc(pool_, 200);
  void* e = sw_pmalloc(pool_, 300u << 10);
  fill(static_cast<uint64_t*>(a), 25, 3);
  ASSERT_EQ(sw_pfree(pool_, a), 0) << sw_errormsg();
  ASSERT_EQ(sw_pfree(pool_, e), 0) << sw_errormsg();
  EXPECT_EQ(sw_pfree(pool_, a), SW_EINVAL) << "a double free is still refused";
  void* b = sw_pmalloc_slot(pool_, root_, 200);
  void* f = sw_pmalloc_slot(pool_, root_ + 1, 256u << 10);  // the front of the freed extent
  if (logs(GetParam().engine)) {
    EXPECT_EQ(b, a);
    EXPECT_EQ(f, e);
  }
  fill(static_cast<uint64_t*>(b), 25, 4);
  fill(static_cast<uint64_t*>(f), 32768, 5);
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  EXPECT_EQ(stats(pool_).fresh_blocks, logs(GetParam().engine) ? 4u : 0u);
  EXPECT_EQ(heap().allocated_blocks, blocks + 1);
  EXPECT_EQ(heap().allocated_extents, extents + 1);
  reopen();
  expect_filled(static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, root_))), 25, 4);
  expect_filled(static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, root_ + 1))), 32768, 5);
  const softwrap::AllocatorStats h = heap();
  EXPECT_EQ(h.allocated_blocks, blocks + 1);
  EXPECT_EQ(h.allocated_extents, extents + 1);
}

// Old values of a block in an alias table that has not retired: a block
// freed and allocated again is written through the engine until they are
// home, so a load sees the newest value and retirement writes nothing old
// over it.  Bypassing Engine::reuse_safe fails this on softwrap.
TEST_P(FreshTest, ReusedBlockWaitsForItsOldValuesToRetire) {
  make();
  auto* b = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, root_, 64));
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  ASSERT_EQ(sw_wrap_open(pool_), 0);  // old data now: logged, aliased
  for (size_t i = 0; i < 8; ++i) sw_store64(pool_, b + i, value(i, 10));
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  ASSERT_EQ(sw_pfree_slot(pool_, root_), 0);
  ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* c = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, root_, 64));
  ASSERT_EQ(c, b) << "the freed block is the next of its class";
  for (size_t i = 0; i < 8; ++i) sw_store64(pool_, c + i, value(i, 11));
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  for (size_t i = 0; i < 8; ++i) ASSERT_EQ(sw_load64(pool_, c + i), value(i, 11)) << i;
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  for (size_t i = 0; i < 8; ++i) ASSERT_EQ(sw_load64(pool_, c + i), value(i, 11)) << i << " after retirement";
  // Once retired, a block freed by a committed wrap is fresh again.
  ASSERT_EQ(sw_pfree_slot(pool_, root_), 0);
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* d = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, root_, 64));
  ASSERT_EQ(d, b);
  for (size_t i = 0; i < 8; ++i) sw_store64(pool_, d + i, value(i, 12));
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  EXPECT_EQ(stats(pool_).fresh_blocks, logs(GetParam().engine) ? 1u : 0u);
  reopen();
  expect_filled(static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, root_))), 8, 12);
}

// The redo engines log a wrap's fresh blocks of at most FreshSet::kLogMax
// bytes in all in its frame, which saves the data fence that orders larger
// ones before the commit record; either way the bytes go home in place
// (fresh_words), are read back and survive a reopen.  The undo engines
// order fresh bytes with the data fence they have anyway.
// A wrap's fresh bytes become durable with its commit fence alone: a few
// are logged in the frame, more are vouched for by a FRESH record (a hash
// recovery checks, redo_log.h); only beyond FreshSet::kVouchMax are they
// fenced before the commit record.
TEST_P(FreshTest, SmallFreshWrapsAreLoggedLargerOnesVouchedForTheLargestFenced) {
  make();
  const sw_engine_kind e = GetParam().engine;
  const bool redo = e == SW_ENGINE_SOFTWRAP || e == SW_ENGINE_SOFTWRAP_LOCAL;
  struct Case {
    std::vector<size_t> words;  // the blocks one wrap allocates and fills
  };
  const size_t huge = softwrap::FreshSet::kVouchMax / 8 + 1;
  const Case cases[] = {{{2}}, {{5, 15}}, {{32}}, {{33}}, {{20, 20}}, {{512}}, {{huge}}};
  uint64_t salt = 100;
  bool saw_small = false, saw_large = false, saw_huge = false;
  for (const Case& k : cases) {
    ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    std::vector<uint64_t*> blocks;
    size_t bytes = 0;
    for (const size_t words : k.words) {
      auto* b = static_cast<uint64_t*>(sw_pmalloc_slot(pool_, root_ + blocks.size(), words * 8));
      ASSERT_NE(b, nullptr) << sw_errormsg();
      bytes += sw_pusable_size(pool_, b);
      fill(b, words, salt + blocks.size());
      blocks.push_back(b);
    }
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    const sw_stats s = stats(pool_);
    const bool small = bytes <= softwrap::FreshSet::kLogMax;
    const bool huge_wrap = bytes > softwrap::FreshSet::kVouchMax;
    (small ? saw_small : huge_wrap ? saw_huge : saw_large) = true;
    if (redo) {
      EXPECT_EQ(s.fresh_blocks, k.words.size());
      EXPECT_EQ(s.fences_data, huge_wrap ? 1u : 0u) << bytes << " fresh bytes";
      EXPECT_EQ(s.fences_commit, 1u);
      if (small) {
        EXPECT_GE(s.log_bytes, bytes) << "the blocks are in the frame";
      } else {
        EXPECT_LT(s.log_bytes, 512u) << "the blocks are not in the frame";
      }
    }
    for (size_t i = 0; i < blocks.size(); ++i) expect_filled(blocks[i], k.words[i], salt + i);
    ASSERT_EQ(sw_pool_quiesce(pool_), 0);
    reopen();
    for (size_t i = 0; i < blocks.size(); ++i) {
      expect_filled(static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, root_ + i))), k.words[i], salt + i);
    }
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (size_t i = 0; i < blocks.size(); ++i) ASSERT_EQ(sw_pfree_slot(pool_, root_ + i), 0) << sw_errormsg();
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    salt += 10;
  }
  EXPECT_TRUE(saw_small && saw_large && saw_huge);
}

// sw_pzalloc zeroes in place, and not at all where the bytes are known to
// be zero: a new pool's chunks and a growth's zone.
TEST_P(FreshTest, ZeroAllocationsWriteOnlyWhatIsNotZero) {
  make(32u << 20, 256u << 20);
  ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
  auto* z = static_cast<uint64_t*>(sw_pzalloc_slot(pool_, root_, 8u << 20));
  ASSERT_NE(z, nullptr) << sw_errormsg();
  sw_stats s = stats(pool_);
  EXPECT_EQ(s.fresh_words, 0u) << "a new pool's chunks are zero: nothing to write";
  EXPECT_LT(s.log_bytes, 512u);
  for (size_t i = 0; i < (1u << 20); i += 61) ASSERT_EQ(sw_load64(pool_, z + i), 0u);
  // More than the pool has: a growth, whose zone is zero too.
  const size_t before = sw_pool_size(pool_);
  auto* g = static_cast<uint64_t*>(sw_pzalloc_slot(pool_, root_ + 1, 40u << 20));
  ASSERT_NE(g, nullptr) << sw_errormsg();
  EXPECT_GT(sw_pool_size(pool_), before);
  EXPECT_EQ(stats(pool_).fresh_words, 0u);
  for (size_t i = 0; i < (5u << 20); i += 4093) ASSERT_EQ(sw_load64(pool_, g + i), 0u);
  // Small blocks: zero until handed out once.  Write, free, take again.
  auto* a = static_cast<uint64_t*>(sw_pzalloc_slot(pool_, root_ + 2, 512));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(stats(pool_).fresh_words, 0u);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  fill(a, 64, 7);  // old data now (logged)
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  ASSERT_EQ(sw_pfree_slot(pool_, root_ + 2), 0);
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
  auto* a2 = static_cast<uint64_t*>(sw_pzalloc_slot(pool_, root_ + 2, 512));
  ASSERT_EQ(a2, a);
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(sw_load64(pool_, a2 + i), 0u) << i;
  EXPECT_EQ(stats(pool_).fresh_words, logs(GetParam().engine) ? 64u : 0u) << "zeroed in place";
  reopen();
  auto* a3 = static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, root_ + 2)));
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(sw_load64(pool_, a3 + i), 0u) << i;
}

// A root as large as the heap's free space, in a pool that cannot grow.
TEST_P(FreshTest, RootAsLargeAsTheFreeSpace) {
  const sw_config c = config();
  pool_ = sw_pool_create(path_.c_str(), 64u << 20, &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  const uint64_t free_bytes = heap().free_chunks * (256u << 10);
  ASSERT_GT(free_bytes, 32u << 20);
  auto* r = static_cast<unsigned char*>(sw_pool_root(pool_, free_bytes));
  ASSERT_NE(r, nullptr) << sw_errormsg();
  for (size_t i = 0; i < free_bytes; i += 4096 - 8) ASSERT_EQ(r[i], 0) << i;
  // Old data now: an ordinary wrap on it still works.
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store64(pool_, r + 4096, 42);
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  reopen();
  root_ = nullptr;
  auto* r2 = static_cast<unsigned char*>(sw_pool_root(pool_, 0));
  ASSERT_NE(r2, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_load64(pool_, r2 + 4096), 42u);
  EXPECT_EQ(sw_load64(pool_, r2 + 8192), 0u);
}

// A root whose chunks are not known to be zero (written and freed before)
// is zeroed in place, and only its bytes.
TEST_P(FreshTest, RootOverUsedChunksIsZeroedInPlace) {
  const sw_config c = config();
  pool_ = sw_pool_create(path_.c_str(), 32u << 20, &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  // Scribble over 4 MiB, commit, free it, and let it retire.
  uint64_t slot_holder = 0;
  (void)slot_holder;
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  auto* junk = static_cast<unsigned char*>(sw_pmalloc(pool_, 4u << 20));
  ASSERT_NE(junk, nullptr);
  std::vector<unsigned char> ones(4u << 20, 0xA5);
  ASSERT_EQ(sw_write(pool_, junk, ones.data(), ones.size()), 0);
  ASSERT_EQ(sw_wrap_close(pool_), 0);
  ASSERT_EQ(sw_pfree(pool_, junk), 0);
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
  auto* r = static_cast<unsigned char*>(sw_pool_root(pool_, 4u << 20));
  ASSERT_EQ(r, junk) << "best fit takes the freed extent";
  for (size_t i = 0; i < (4u << 20); i += 511) ASSERT_EQ(r[i], 0) << i;
  const sw_stats s = stats(pool_);
  EXPECT_EQ(s.fresh_words, logs(GetParam().engine) ? (4u << 20) / 8 : 0u);
  EXPECT_LT(s.log_bytes, 512u);
}

// The allocator's words (block headers, run heads) wait in the thread's
// context and reach the engine when the wrap commits (ThreadCtx::
// heap_words, Engine::write_words); an abort drops them unseen.  The undo
// engines save them with one ordering fence for the whole wrap, not one
// per word.  nonatomic, which cannot take stores back, gets them as they
// are made.
TEST_P(FreshTest, TheAllocatorsWordsReachTheEngineWithTheCommit) {
  make();
  const sw_engine_kind e = GetParam().engine;
  ASSERT_NE(sw_pmalloc_slot(pool_, root_, 64), nullptr) << sw_errormsg();  // the class's run exists
  const uint64_t base = heap().allocated_blocks;
  for (bool abort : {false, true}) {
    const softwrap::AllocatorStats h0 = heap();
    const sw_stats s0 = stats(pool_);
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    void* b[3];
    for (void*& x : b) ASSERT_NE(x = sw_pmalloc(pool_, 64), nullptr) << sw_errormsg();
    ASSERT_EQ(sw_pfree(pool_, b[1]), 0) << sw_errormsg();  // its header twice in the wrap
    const sw_stats s1 = stats(pool_);
    if (logs(e)) {
      EXPECT_EQ(s1.stores, s0.stores) << "no allocator word reached the engine before the close";
    } else {
      EXPECT_EQ(s1.stores - s0.stores, 7u) << "nonatomic: each word as it is made";
    }
    if (abort) {
      if (logs(e)) {
        ASSERT_EQ(sw_wrap_abort(pool_), 0) << sw_errormsg();
        EXPECT_EQ(stats(pool_).stores, s0.stores) << "an abort drops the words unseen";
        EXPECT_EQ(heap().allocated_blocks, h0.allocated_blocks);
      } else {
        EXPECT_EQ(sw_wrap_abort(pool_), SW_ENOTSUP);
        EXPECT_EQ(heap().allocated_blocks, h0.allocated_blocks + 2);
      }
      continue;
    }
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    const sw_stats s2 = stats(pool_);
    EXPECT_EQ(s2.stores - s0.stores, 7u) << "two header words per allocation, one per free";
    if (e == SW_ENGINE_UNDO) {
      EXPECT_EQ(s2.fences_log - s0.fences_log, 1u) << "one ordering fence for all the wrap's allocator words";
    }
    EXPECT_EQ(heap().allocated_blocks, h0.allocated_blocks + 2);
    ASSERT_EQ(sw_pfree(pool_, b[0]), 0) << sw_errormsg();
    ASSERT_EQ(sw_pfree(pool_, b[2]), 0) << sw_errormsg();
    EXPECT_EQ(sw_pfree(pool_, b[1]), SW_EINVAL) << "freed by the committed wrap";
  }
  reopen();
  EXPECT_EQ(heap().allocated_blocks, base + (logs(e) ? 0 : 2)) << "nonatomic keeps an aborted wrap's allocations";
  const uint64_t live = heap().allocated_blocks + heap().allocated_extents;
  ASSERT_EQ(sw_pool_close(pool_), 0);
  pool_ = nullptr;
  EXPECT_EQ(softwrap::testing::checked_live_allocations(path_), live) << "the heap checker agrees";
}

// On scm-emu, where the committing thread pays Tw for each home line it
// writes, the redo engines alias and log a fresh block of at most 1 KiB
// (retirement writes it home, kFreshAliasedMax) and keep larger ones in
// place; the undo engines write every fresh block in place (their home
// writes are in the foreground anyway).  Either way the bytes are read
// back in the wrap and after a reopen.
TEST_P(FreshTest, OnScmEmuTheRedoEnginesAliasSmallFreshBlocks) {
  sw_config c = config();
  c.medium = SW_MEDIUM_SCM_EMU;
  c.scm_write_ns = 10;
  pool_ = sw_pool_create(path_.c_str(), 32u << 20, &c);
  ASSERT_NE(pool_, nullptr) << sw_errormsg();
  root_ = static_cast<uint64_t*>(sw_pool_root(pool_, 4096));
  ASSERT_NE(root_, nullptr) << sw_errormsg();
  const sw_engine_kind e = GetParam().engine;
  const bool redo = e == SW_ENGINE_SOFTWRAP || e == SW_ENGINE_SOFTWRAP_LOCAL;
  const size_t sizes[] = {32, 128, 129, 512};  // words: 256 B, 1 KiB, 1032 B, 4 KiB
  for (size_t k = 0; k < 4; ++k) {
    const size_t words = sizes[k];
    ASSERT_EQ(sw_pool_stats_reset(pool_), 0);
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    auto* b = static_cast<uint64_t*>(sw_pmalloc(pool_, words * 8));
    ASSERT_NE(b, nullptr) << sw_errormsg();
    fill(b, words, words);
    expect_filled(b, words, words);
    sw_store64(pool_, &root_[k], sw_pool_offset(pool_, b));
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    const sw_stats s = stats(pool_);
    const bool aliased = redo && words * 8 <= 1024;
    EXPECT_EQ(s.fresh_blocks, aliased || !logs(e) ? 0u : 1u) << words * 8 << " bytes";
    if (aliased) {
      EXPECT_GT(s.log_bytes, words * 8) << "the block's bytes are in the log";
    }
    expect_filled(b, words, words);
  }
  reopen();
  for (size_t k = 0; k < 4; ++k) {
    expect_filled(static_cast<uint64_t*>(sw_pool_ptr(pool_, sw_load64(pool_, &root_[k]))), sizes[k], sizes[k]);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, FreshTest, ::testing::ValuesIn(softwrap::testing::engines_with_and_without_wcl()),
                         softwrap::testing::EngineParamName());

// On a file not on DAX (the msync medium syncs pages) small blocks go
// through the engine, logged with the wrap's other stores, and only blocks
// of at least kFreshInPlaceMin (16 KiB) are written in place: a commit
// syncs the lane's contiguous pages, not a page per scattered small block.
// Their bytes survive a reopen either way.
TEST(FreshOnFiles, SmallBlocksAreLoggedLargeOnesWrittenInPlace) {
  char dir[] = "/var/tmp/sw_fresh_files_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/pool";
  sw_config c{};
  c.medium = SW_MEDIUM_MSYNC;
  sw_pool* p = sw_pool_create(path.c_str(), 32u << 20, &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  auto* root = static_cast<uint64_t*>(sw_pool_root(p, 64));
  ASSERT_NE(root, nullptr) << sw_errormsg();
  struct Case {
    size_t bytes;
    uint64_t fresh;
  } cases[] = {{64, 0}, {4000, 0}, {16u << 10, 1}, {1u << 20, 1}};
  for (size_t i = 0; i < std::size(cases); ++i) {
    SCOPED_TRACE(cases[i].bytes);
    ASSERT_EQ(sw_pool_stats_reset(p), 0);
    ASSERT_EQ(sw_wrap_open(p), 0);
    auto* b = static_cast<uint64_t*>(sw_pmalloc_slot(p, root + i, cases[i].bytes));
    ASSERT_NE(b, nullptr) << sw_errormsg();
    for (size_t w = 0; w < cases[i].bytes / 8; w += 7) sw_store64(p, b + w, value(w, i));
    ASSERT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
    EXPECT_EQ(stats(p).fresh_blocks, cases[i].fresh);
  }
  ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
  p = sw_pool_open(path.c_str(), &c);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  root = static_cast<uint64_t*>(sw_pool_root(p, 64));
  for (size_t i = 0; i < std::size(cases); ++i) {
    auto* b = static_cast<uint64_t*>(sw_pool_ptr(p, sw_load64(p, root + i)));
    ASSERT_NE(b, nullptr);
    for (size_t w = 0; w < cases[i].bytes / 8; w += 7) ASSERT_EQ(sw_load64(p, b + w), value(w, i)) << i << " " << w;
  }
  ASSERT_EQ(sw_pool_close(p), 0) << sw_errormsg();
  std::remove(path.c_str());
  rmdir(dir);
}

}  // namespace
