// inline_read_test.cc — the inline reads (softwrap.h, "Inline access"):
// sw_load8/16/32/64, sw_read and sw_peek check the pool's alias filter
// through its public face (sw_pool_hot) and read the mapping themselves
// when the slot is clear.  Each test proves one promise of that order on
// every engine it applies to, and fails when the promise is broken:
//   - a wrap sees its own stores, also word stores still queued by
//     write-combined logging (the filter is raised before an alias, or a
//     queued store, exists);
//   - a value committed into a global alias table that cannot retire yet
//     (another thread's wrap holds it) is read from the table, and after
//     sw_pool_quiesce from home by the inline path itself;
//   - home is written while the slot is still raised (retirement for
//     softwrap, the commit for softwrap-local), checked by a medium that
//     wraps the real one;
//   - strict mode, SW_CONFIG_COUNT_LOADS and a medium that records loads
//     send every access to the library (each one counted);
//   - the public face describes the pool, and follows its growth;
//   - readers under the writer's locks see every committed value while
//     tables switch and retire (the stress test; TSan and ASan run it).
// sw_stats.loads counts only the accesses that reach the library, which is
// how the tests tell the inline path from the library's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_test_params.h"
#include "medium/forwarding_medium.h"
#include "medium/medium.h"
#include "medium/trace_medium.h"
#include "medium/x86_medium.h"
#include "softwrap/softwrap.h"

namespace {

using softwrap::FenceKind;
using softwrap::Medium;
using softwrap::MediumOptions;

#ifdef SOFTWRAP_SANITIZED
constexpr int kScale = 3;
#else
constexpr int kScale = 20;
#endif

const sw_pool_hot& hot(sw_pool* p) { return *reinterpret_cast<const sw_pool_hot*>(p); }

uint64_t library_loads(sw_pool* p) {
  sw_stats s{};
  EXPECT_EQ(sw_pool_stats(p, &s), 0);
  return s.loads;
}

// What the mapping holds (home), read as the inline path reads it.
uint64_t home(const void* a) { return __atomic_load_n(static_cast<const uint64_t*>(a), __ATOMIC_RELAXED); }

bool redo(sw_engine_kind e) { return e == SW_ENGINE_SOFTWRAP || e == SW_ENGINE_SOFTWRAP_LOCAL; }

using Param = softwrap::testing::EngineFlagsParam;
const softwrap::testing::EngineParamName param_name;

// A pool on /dev/shm with a region of its own: words a filter slot apart
// (slot(i): two slots per word, so no range of a test reaches the next
// word's slot), everything retired (all slots clear) when a test starts.
class InlineReadTest : public softwrap::testing::ShmPoolTest {
 protected:
  void make(sw_config c, size_t size = 16u << 20) {
    pool_ = sw_pool_create(path_.c_str(), size, &c);
    ASSERT_NE(pool_, nullptr) << sw_errormsg();
    const sw_pool_hot& h = hot(pool_);
    granule_ = h.filter_mask ? size_t{1} << h.filter_shift : 256;
    region_bytes_ = 64 * 2 * granule_;
    char* root = static_cast<char*>(sw_pool_root(pool_, region_bytes_ + granule_));
    ASSERT_NE(root, nullptr) << sw_errormsg();
    region_ = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(root) + granule_ - 1) & ~(granule_ - 1));
    // Every word starts as a value of its own; stores change only its low
    // half (write-combined logging's compare pays, so it keeps comparing).
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (size_t i = 0; i < 64; ++i) sw_store64(pool_, slot(i), old_value(i));
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    ASSERT_EQ(sw_pool_quiesce(pool_), 0) << sw_errormsg();
  }
  void make() { make(config()); }
  // One wrap of its own that stores v to *w and commits (or aborts).
  void wrap_store(uint64_t* w, uint64_t v, bool commit = true) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    sw_store64(pool_, w, v);
    ASSERT_EQ(commit ? sw_wrap_close(pool_) : sw_wrap_abort(pool_), 0) << sw_errormsg();
  }
  uint64_t* slot(size_t i) const { return reinterpret_cast<uint64_t*>(region_ + i * 2 * granule_); }
  static uint64_t old_value(size_t i) { return 0x10000000u + i * 0x00010101u; }
  static uint64_t new_value(size_t i) { return 0x5A000000u + i * 0x00010203u; }
  uint64_t uncompared() {
    sw_stats s{};
    EXPECT_EQ(sw_pool_stats(pool_, &s), 0);
    return s.wcl_words_uncompared;
  }

  size_t granule_ = 256;
  size_t region_bytes_ = 0;
  char* region_ = nullptr;
};

// Each access reads a word or range stored just before it, in a slot no
// other store of the wrap raised: the access is the first to ask the
// filter about it.  Under SW_CONFIG_WCL a redo engine's word store is then
// still queued, neither aliased nor logged, and only the raise made when it
// was queued sends the inline read to the library (which compares and
// aliases the queue first).
TEST_P(InlineReadTest, AWrapSeesItsOwnStoresThroughEveryInlineRead) {
  ASSERT_NO_FATAL_FAILURE(make());
  const sw_engine_kind e = GetParam().engine;
  unsigned char scratch[256];
  unsigned char range[3][40];
  for (int r = 0; r < 3; ++r) {
    for (size_t i = 0; i < sizeof range[r]; ++i) range[r][i] = static_cast<unsigned char>(0x30 + 7 * r + i);
  }
  const uint64_t loads0 = library_loads(pool_), uncompared0 = uncompared();
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  // Word stores, then each inline read.
  sw_store64(pool_, slot(0), new_value(0));
  EXPECT_EQ(sw_load64(pool_, slot(0)), new_value(0));
  sw_store64(pool_, slot(1), new_value(1));
  EXPECT_EQ(sw_load32(pool_, slot(1)), static_cast<uint32_t>(new_value(1)));
  sw_store64(pool_, slot(2), new_value(2));
  EXPECT_EQ(sw_load16(pool_, reinterpret_cast<char*>(slot(2)) + 2), static_cast<uint16_t>(new_value(2) >> 16));
  sw_store64(pool_, slot(3), new_value(3));
  EXPECT_EQ(sw_load8(pool_, reinterpret_cast<char*>(slot(3)) + 3), static_cast<uint8_t>(new_value(3) >> 24));
  sw_store64(pool_, slot(4), new_value(4));
  uint64_t got = 0;
  EXPECT_EQ(sw_read(pool_, &got, slot(4), 8), 0);
  EXPECT_EQ(got, new_value(4));
  sw_store64(pool_, slot(5), new_value(5));
  const void* peeked = sw_peek(pool_, reinterpret_cast<char*>(slot(5)) + 2, 4, scratch);
  ASSERT_NE(peeked, nullptr) << sw_errormsg();
  const uint64_t v5 = new_value(5);
  EXPECT_EQ(std::memcmp(peeked, reinterpret_cast<const char*>(&v5) + 2, 4), 0);
  // Narrower stores (aliased at once, also under WCL).
  sw_store32(pool_, slot(6), 0x600D600Du);
  EXPECT_EQ(sw_load64(pool_, slot(6)), (old_value(6) & ~0xFFFFFFFFull) | 0x600D600Du);
  sw_store16(pool_, reinterpret_cast<char*>(slot(7)) + 2, 0xBEEF);
  EXPECT_EQ(sw_load32(pool_, slot(7)), (static_cast<uint32_t>(old_value(7)) & 0x0000FFFFu) | 0xBEEF0000u);
  sw_store8(pool_, slot(8), 0x77);
  EXPECT_EQ(sw_load8(pool_, slot(8)), 0x77);
  // Ranges (sw_write: shadow pages), each read first by one kind of access.
  ASSERT_EQ(sw_write(pool_, slot(9), range[0], sizeof range[0]), 0) << sw_errormsg();
  uint64_t w;
  std::memcpy(&w, range[0] + 16, 8);
  EXPECT_EQ(sw_load64(pool_, slot(9) + 2), w);
  ASSERT_EQ(sw_write(pool_, slot(10), range[1], sizeof range[1]), 0) << sw_errormsg();
  unsigned char buf[40];
  EXPECT_EQ(sw_read(pool_, buf, slot(10), sizeof buf), 0);
  EXPECT_EQ(std::memcmp(buf, range[1], sizeof buf), 0);
  ASSERT_EQ(sw_write(pool_, slot(11), range[2], sizeof range[2]), 0) << sw_errormsg();
  peeked = sw_peek(pool_, slot(11), sizeof range[2], scratch);
  ASSERT_NE(peeked, nullptr) << sw_errormsg();
  EXPECT_EQ(std::memcmp(peeked, range[2], sizeof range[2]), 0);
  if (redo(e)) {
    // The premise: nothing of the wrap is home yet, so each read above had
    // to find the alias.
    for (size_t i = 0; i < 12; ++i) EXPECT_EQ(home(slot(i)), old_value(i)) << "slot " << i << " is home already";
  } else {
    EXPECT_EQ(library_loads(pool_), loads0) << "an engine that stores in place never raises its filter";
  }
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  if (GetParam().flags & SW_CONFIG_WCL) {
    EXPECT_EQ(uncompared(), uncompared0) << "the premise: every word store was compared (queued first)";
  }

  // After the commit, and after everything is retired: the same values;
  // softwrap-local's commit wrote home and lowered its counts, so its reads
  // are inline at once, as the others' are after the quiesce.
  auto check_all = [&](const char* when) {
    EXPECT_EQ(sw_load64(pool_, slot(0)), new_value(0)) << when;
    EXPECT_EQ(sw_load64(pool_, slot(5)), new_value(5)) << when;
    EXPECT_EQ(sw_load64(pool_, slot(6)), (old_value(6) & ~0xFFFFFFFFull) | 0x600D600Du) << when;
    EXPECT_EQ(sw_load8(pool_, slot(8)), 0x77) << when;
    EXPECT_EQ(sw_read(pool_, buf, slot(10), sizeof buf), 0) << when;
    EXPECT_EQ(std::memcmp(buf, range[1], sizeof buf), 0) << when;
    const void* q = sw_peek(pool_, slot(11), sizeof range[2], scratch);
    EXPECT_NE(q, nullptr) << when;
    if (q) {
      EXPECT_EQ(std::memcmp(q, range[2], sizeof range[2]), 0) << when;
    }
    return q;
  };
  uint64_t loads1 = library_loads(pool_);
  check_all("after the commit");
  if (e != SW_ENGINE_SOFTWRAP) {
    EXPECT_EQ(library_loads(pool_), loads1) << "no slot left raised after the commit";
  }
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  loads1 = library_loads(pool_);
  const void* q = check_all("after sw_pool_quiesce");
  EXPECT_EQ(q, slot(11)) << "sw_peek of a clear range returns the address itself";
  EXPECT_EQ(library_loads(pool_), loads1) << "retired: every slot clear, every read inline";
  for (size_t i : {0, 4, 5}) EXPECT_EQ(home(slot(i)), new_value(i)) << "slot " << i;
}

// The public face: its layout is fixed for SW_POOL_HOT_VERSION (compiled
// programs read it), and its fields describe the open pool.
static_assert(sizeof(void*) != 8 || (offsetof(sw_pool_hot, filter) == 0 && offsetof(sw_pool_hot, filter_mask) == 8 &&
                                     offsetof(sw_pool_hot, filter_shift) == 16 && offsetof(sw_pool_hot, live) == 20 &&
                                     offsetof(sw_pool_hot, heap) == 24 && offsetof(sw_pool_hot, span) == 32 &&
                                     offsetof(sw_pool_hot, base) == 40 && offsetof(sw_pool_hot, version) == 48 &&
                                     offsetof(sw_pool_hot, reserved) == 52 && offsetof(sw_pool_hot, reserved2) == 56 &&
                                     offsetof(sw_pool_hot, regions) == 128 &&
                                     sizeof(sw_pool_hot) == 128 + 8 * SW_HOT_REGIONS),
              "sw_pool_hot's layout changed: bump SW_POOL_HOT_VERSION");
static_assert(SW_POOL_HOT_VERSION == 2, "version 2 added the regions");

TEST_P(InlineReadTest, ThePublicFaceDescribesThePool) {
  ASSERT_NO_FATAL_FAILURE(make());
  const sw_pool_hot& h = hot(pool_);
  EXPECT_EQ(h.version, SW_POOL_HOT_VERSION);
  EXPECT_EQ(h.reserved, 0u);
  for (uint64_t r : h.reserved2) EXPECT_EQ(r, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(h.regions) % 64, 0u) << "the regions start a cache line";
  EXPECT_EQ(h.base, sw_pool_base(pool_));
  EXPECT_GT(h.heap, h.base);
  EXPECT_LE(h.heap, region_) << "the root lies in the heap";
  EXPECT_EQ(__atomic_load_n(&h.span, __ATOMIC_RELAXED), sw_pool_size(pool_) - static_cast<size_t>(h.heap - h.base));
  ASSERT_NE(h.filter, nullptr);
  const uint64_t slots = h.filter_mask + 1;
  EXPECT_EQ(slots & (slots - 1), 0u) << "a power of two";
  if (redo(GetParam().engine)) {
    EXPECT_GE(slots, 64u);
    EXPECT_GE(h.filter_shift, 6u);
    EXPECT_LE(h.filter_shift, 16u);
  } else {
    EXPECT_EQ(h.filter_mask, 0u) << "one slot";
    for (uint64_t i = 0; i < SW_HOT_REGIONS; ++i) {
      EXPECT_EQ(__atomic_load_n(&h.regions[i], __ATOMIC_ACQUIRE), 0u) << "region " << i << ": always clear";
    }
    EXPECT_EQ(__atomic_load_n(&h.live, __ATOMIC_ACQUIRE), 1u);
    EXPECT_NE(sw_hot_clear(pool_, reinterpret_cast<uintptr_t>(region_)), 0) << "always clear";
  }
  // [heap, heap + span) is what the inline range reads take: one byte
  // before or after it is the library's SW_ERANGE.
  unsigned char b;
  EXPECT_EQ(sw_read(pool_, &b, h.heap, 1), 0);
  EXPECT_EQ(sw_read(pool_, &b, h.heap + h.span - 1, 1), 0);
  EXPECT_EQ(sw_read(pool_, &b, h.heap - 1, 1), SW_ERANGE);
  EXPECT_EQ(sw_read(pool_, &b, h.heap + h.span, 1), SW_ERANGE);
}

TEST_P(InlineReadTest, InlineRangeReadsFollowThePoolsGrowth) {
  sw_config c = config();
  c.max_size = 64u << 20;
  ASSERT_NO_FATAL_FAILURE(make(c, 8u << 20));
  const sw_pool_hot& h = hot(pool_);
  char* const base = static_cast<char*>(sw_pool_base(pool_));
  const size_t initial = sw_pool_size(pool_);
  char* grown = nullptr;
  for (int i = 0; i < 32 && !grown; ++i) {
    auto* b = static_cast<char*>(sw_pmalloc(pool_, 1u << 20));
    ASSERT_NE(b, nullptr) << sw_errormsg();
    if (b >= base + initial) grown = b;
  }
  ASSERT_NE(grown, nullptr) << "no block in a grown part";
  const size_t size = sw_pool_size(pool_);
  ASSERT_GT(size, initial);
  EXPECT_EQ(__atomic_load_n(&h.span, __ATOMIC_RELAXED), size - static_cast<size_t>(h.heap - h.base))
      << "growth updates the span";
  unsigned char pattern[200], buf[200], scratch[200];
  for (size_t i = 0; i < sizeof pattern; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 1);
  char* at = grown + 4096 + 3;
  ASSERT_EQ(sw_write(pool_, at, pattern, sizeof pattern), 0) << sw_errormsg();
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  const uint64_t loads0 = library_loads(pool_);
  ASSERT_EQ(sw_read(pool_, buf, at, sizeof buf), 0) << sw_errormsg();
  EXPECT_EQ(std::memcmp(buf, pattern, sizeof buf), 0);
  EXPECT_EQ(sw_peek(pool_, at + 50, 100, scratch), at + 50);
  EXPECT_EQ(std::memcmp(at + 50, pattern + 50, 100), 0);
  EXPECT_EQ(library_loads(pool_), loads0) << "the grown part is read inline";
  // The heap ends at the pool's (grown) size: a range past it is the
  // library's SW_ERANGE.
  char* end = base + size;
  EXPECT_EQ(sw_read(pool_, buf, end - 8, 8), 0);
  EXPECT_EQ(sw_read(pool_, buf, end - 8, 16), SW_ERANGE);
  EXPECT_EQ(sw_peek(pool_, end - 8, 16, scratch), nullptr);
  EXPECT_EQ(sw_errno(), SW_ERANGE);
  EXPECT_EQ(sw_read(pool_, buf, end, 1), SW_ERANGE);
}

// ---- readers under the writer's locks (the stress test)

// One writer changes groups of words in wraps, each under its group's lock
// (closed before unlocked), through every kind of store and its own inline
// reads; small alias tables make tables switch and retire all the time and
// a periodic sw_pool_quiesce clears every slot for a moment.  Readers take
// a group's lock and read it through every inline read, against a DRAM
// oracle kept under the same lock.  Groups lie back to back (48 bytes
// each), so neighbours share 64-byte filter slots and about twenty share a
// shadow page: one group's raise and retirement moves the slots another
// group's readers check.
TEST_P(InlineReadTest, ReadersUnderTheWritersLocksSeeEveryCommittedValue) {
  sw_config c = config();
  c.alias_entries = 256;
  ASSERT_NO_FATAL_FAILURE(make(c));
  constexpr int kGroups = 32, kWords = 6, kReaders = 2;
  constexpr size_t kBytes = kWords * 8;
  const sw_engine_kind engine = GetParam().engine;
  auto group = [&](int g) { return reinterpret_cast<uint64_t*>(region_ + kBytes * g); };
  struct Group {
    std::mutex mu;
    std::array<uint64_t, kWords> want;  // GUARDED_BY(mu)
  };
  std::unique_ptr<Group[]> groups(new Group[kGroups]);
  for (int g = 0; g < kGroups; ++g) ASSERT_EQ(sw_read(pool_, groups[g].want.data(), group(g), kBytes), 0);

  const uint64_t loads0 = library_loads(pool_);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> accesses{0}, errors{0}, reads{0};
  std::mutex err_mu;
  std::string first_error;
  auto report = [&](const std::string& what) {
    if (errors.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> g(err_mu);
      first_error = what;
    }
  };
  auto expect_words = [&](const char* who, const char* how, int g, const void* got, const uint64_t* want) {
    if (std::memcmp(got, want, kBytes) == 0) return;
    uint64_t w[kWords];
    std::memcpy(w, got, kBytes);
    for (int k = 0; k < kWords; ++k) {
      if (w[k] != want[k]) {
        report(std::string(who) + " " + how + ": group " + std::to_string(g) + " word " + std::to_string(k) + " read " +
               std::to_string(w[k]) + ", committed " + std::to_string(want[k]));
        return;
      }
    }
  };

  const int wraps = 5000 * kScale;
  std::thread writer([&] {
    std::mt19937_64 rng(1);
    unsigned char scratch[kBytes];
    for (int it = 0; it < wraps; ++it) {
      // The readers keep up (a read per 32 wraps at least), however the
      // threads are scheduled: the run interleaves from start to end.
      while (reads.load(std::memory_order_relaxed) < static_cast<uint64_t>(it / 32)) std::this_thread::yield();
      const int g = static_cast<int>(rng() % kGroups);
      uint64_t* w = group(g);
      std::lock_guard<std::mutex> lock(groups[g].mu);
      std::array<uint64_t, kWords> next = groups[g].want;
      if (sw_wrap_open(pool_) != 0) report("sw_wrap_open failed");
      switch (rng() % 4) {
        case 0:  // increments, each through an inline load of the wrap
          for (int k = 0; k < kWords; ++k) {
            const uint64_t v = sw_load64(pool_, &w[k]);
            if (v != next[k]) report("writer's load: group " + std::to_string(g) + " word " + std::to_string(k));
            sw_store64(pool_, &w[k], v + 1);
            next[k] = v + 1;
          }
          accesses.fetch_add(kWords, std::memory_order_relaxed);
          break;
        case 1: {  // a range of words, low halves changed
          const int k0 = static_cast<int>(rng() % kWords), n = 1 + static_cast<int>(rng() % (kWords - k0));
          for (int k = k0; k < k0 + n; ++k) next[k] = (next[k] & ~0xFFFFFFFFull) | static_cast<uint32_t>(rng());
          if (sw_write(pool_, &w[k0], &next[k0], 8 * n) != 0) report("sw_write failed");
          uint64_t got[kWords];
          if (sw_read(pool_, got, w, kBytes) != 0) report("writer's sw_read failed");
          expect_words("writer", "sw_read in its wrap", g, got, next.data());
          accesses.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        case 2: {  // narrower stores
          const int k = static_cast<int>(rng() % kWords);
          const uint32_t x = static_cast<uint32_t>(rng());
          const uint8_t b = static_cast<uint8_t>(rng());
          const unsigned half = static_cast<unsigned>(rng() % 2), byte = static_cast<unsigned>(rng() % 8);
          sw_store32(pool_, reinterpret_cast<char*>(&w[k]) + 4 * half, x);
          std::memcpy(reinterpret_cast<char*>(&next[k]) + 4 * half, &x, 4);
          sw_store8(pool_, reinterpret_cast<char*>(&w[(k + 1) % kWords]) + byte, b);
          std::memcpy(reinterpret_cast<char*>(&next[(k + 1) % kWords]) + byte, &b, 1);
          if (sw_load64(pool_, &w[k]) != next[k]) report("writer's load after a narrow store");
          accesses.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        default: {  // word stores, then a peek of the group
          for (int k = static_cast<int>(rng() % 2); k < kWords; k += 2) {
            next[k] ^= rng() & 0xFFFFFFFFu;
            sw_store64(pool_, &w[k], next[k]);
          }
          const void* q = sw_peek(pool_, w, kBytes, scratch);
          if (!q) report("writer's sw_peek failed");
          if (q) expect_words("writer", "sw_peek in its wrap", g, q, next.data());
          accesses.fetch_add(1, std::memory_order_relaxed);
          break;
        }
      }
      if (engine != SW_ENGINE_NONATOMIC && rng() % 8 == 0) {
        if (sw_wrap_abort(pool_) != 0) report("sw_wrap_abort failed");
      } else if (sw_wrap_close(pool_) != 0) {
        report(std::string("sw_wrap_close failed: ") + sw_errormsg());
      } else {
        groups[g].want = next;
      }
      // (the lock is released here, after the close)
      if (it % 200 == 199) {
        if (sw_pool_quiesce(pool_) != 0) report("sw_pool_quiesce failed");
      }
    }
    done.store(true);
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(100 + r);
      unsigned char scratch[kBytes];
      while (!done.load()) {
        const int g = static_cast<int>(rng() % kGroups);
        const uint64_t* w = group(g);
        std::lock_guard<std::mutex> lock(groups[g].mu);
        const uint64_t* want = groups[g].want.data();
        uint64_t got[kWords];
        for (int k = 0; k < kWords; ++k) got[k] = sw_load64(pool_, &w[k]);
        expect_words("reader", "sw_load64", g, got, want);
        std::memset(got, 0, sizeof got);
        if (sw_read(pool_, got, w, kBytes) != 0) report("reader's sw_read failed");
        expect_words("reader", "sw_read", g, got, want);
        const void* q = sw_peek(pool_, w, kBytes, scratch);
        if (!q) report("reader's sw_peek failed");
        if (q) expect_words("reader", "sw_peek", g, q, want);
        const int k = static_cast<int>(rng() % kWords);
        const char* wk = reinterpret_cast<const char*>(&w[k]);
        const char* vk = reinterpret_cast<const char*>(&want[k]);
        uint32_t v32;
        uint16_t v16;
        std::memcpy(&v32, vk + 4, 4);
        std::memcpy(&v16, vk + 2, 2);
        if (sw_load32(pool_, wk + 4) != v32 || sw_load16(pool_, wk + 2) != v16 ||
            sw_load8(pool_, wk + 7) != static_cast<uint8_t>(vk[7])) {
          report("reader's narrow load: group " + std::to_string(g) + " word " + std::to_string(k));
        }
        accesses.fetch_add(kWords + 5, std::memory_order_relaxed);
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(errors.load(), 0u) << first_error;
  EXPECT_GT(reads.load(), 0u);
  // Both paths ran: the library's (raised slots) and the inline one. Each
  // access that reached the library counted one load.
  const uint64_t library = library_loads(pool_) - loads0;
  if (redo(engine)) {
    EXPECT_GT(library, 0u) << "no read found a raised slot";
    EXPECT_LT(library, accesses.load()) << "no read was served inline";
  } else {
    EXPECT_EQ(library, 0u) << "an engine that stores in place never raises its filter";
  }
  // Retired: home and the inline reads agree with the oracle.
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  for (int g = 0; g < kGroups; ++g) {
    uint64_t got[kWords];
    ASSERT_EQ(sw_read(pool_, got, group(g), kBytes), 0);
    expect_words("after the run", "sw_read", g, got, groups[g].want.data());
    expect_words("after the run", "home", g, group(g), groups[g].want.data());
  }
  EXPECT_EQ(errors.load(), 0u) << first_error;
}

INSTANTIATE_TEST_SUITE_P(Engines, InlineReadTest, ::testing::ValuesIn(softwrap::testing::engines_with_and_without_wcl()), param_name);

// ---- another thread's open wrap

// A thread that opens a wrap (storing one word in it if asked) and keeps it
// open until release(), as another thread's long wrap would.
class OpenWrap {
 public:
  OpenWrap(sw_pool* p, uint64_t* word = nullptr, uint64_t v = 0) {
    th_ = std::thread([this, p, word, v] {
      const bool ok = sw_wrap_open(p) == 0;
      if (ok && word) sw_store64(p, word, v);
      std::unique_lock<std::mutex> lk(mu_);
      opened_ = ok ? 1 : -1;
      cv_.notify_all();
      cv_.wait(lk, [&] { return release_; });
      lk.unlock();
      closed_ = ok && sw_wrap_close(p) == 0;
    });
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return opened_ != 0; });
  }
  ~OpenWrap() { release(); }
  bool opened() const { return opened_ == 1; }
  // Closes the wrap (commits it) and joins the thread; whether it closed.
  bool release() {
    if (th_.joinable()) {
      {
        std::lock_guard<std::mutex> g(mu_);
        release_ = true;
      }
      cv_.notify_all();
      th_.join();
    }
    return closed_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int opened_ = 0;
  bool release_ = false;
  bool closed_ = false;
  std::thread th_;
};

// Commits `v` to `word` in a wrap of a thread of its own; returns once that
// thread has closed the wrap and ended (the caller synchronised with it).
void commit_in_other_thread(sw_pool* p, uint64_t* word, uint64_t v) {
  std::thread t([&] {
    ASSERT_EQ(sw_wrap_open(p), 0);
    sw_store64(p, word, v);
    ASSERT_EQ(sw_wrap_close(p), 0) << sw_errormsg();
  });
  t.join();
}

class GlobalTableTest : public InlineReadTest {};

// Thread B's open wrap keeps the table it may write into from closing, so
// nothing committed into that table or a newer one can retire: a value
// thread A committed there is only in the alias table.  The main thread,
// synchronised with A, must read it (the slot raised before A's alias was
// visible sends its inline reads to the library); once B closed and
// everything retired, the slot is clear and the inline path reads it home.
TEST_P(GlobalTableTest, AValueOnlyInTheAliasTableIsReadFromItThenFromHome) {
  ASSERT_NO_FATAL_FAILURE(make());
  uint64_t* x = slot(20);
  uint64_t* beside = x + 1;  // same slot, never stored: home is its value
  const uint64_t v = new_value(20);
  // B stores (to a word of its own): a wrap holds its table from its first
  // change, not from its open (c_api.cc, open_outer).
  OpenWrap b(pool_, slot(63), new_value(63));
  ASSERT_TRUE(b.opened());
  commit_in_other_thread(pool_, x, v);
  // The retirer's idle switch (10 ms without a commit) may switch the table
  // out; it cannot close it while B is open.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_EQ(home(x), old_value(20)) << "the premise: the committed value is not home";
  const uint64_t loads0 = library_loads(pool_);
  unsigned char scratch[16];
  uint64_t pair[2] = {0, 1};
  EXPECT_EQ(sw_load64(pool_, x), v);
  EXPECT_EQ(sw_load32(pool_, x), static_cast<uint32_t>(v));
  EXPECT_EQ(sw_load8(pool_, reinterpret_cast<char*>(x) + 3), static_cast<uint8_t>(v >> 24));
  EXPECT_EQ(sw_load64(pool_, beside), 0u);
  EXPECT_EQ(sw_read(pool_, pair, x, 16), 0);
  EXPECT_EQ(pair[0], v);
  EXPECT_EQ(pair[1], 0u);
  const void* q = sw_peek(pool_, x, 16, scratch);
  ASSERT_NE(q, nullptr);
  std::memcpy(pair, q, 16);
  EXPECT_EQ(pair[0], v);
  EXPECT_EQ(pair[1], 0u);
  const sw_view view = sw_view_of(pool_);
  EXPECT_EQ(sw_view_load64(&view, x), v);
  EXPECT_EQ(sw_view_load16(&view, x), static_cast<uint16_t>(v));
  EXPECT_EQ(library_loads(pool_) - loads0, 8u) << "each read found the slot raised and asked the library";

  ASSERT_TRUE(b.release());
  ASSERT_EQ(sw_pool_quiesce(pool_), 0);
  EXPECT_EQ(home(x), v);
  const uint64_t loads1 = library_loads(pool_);
  EXPECT_EQ(sw_load64(pool_, x), v);
  EXPECT_EQ(sw_load16(pool_, x), static_cast<uint16_t>(v));
  pair[0] = pair[1] = 7;
  EXPECT_EQ(sw_read(pool_, pair, x, 16), 0);
  EXPECT_EQ(pair[0], v);
  EXPECT_EQ(sw_peek(pool_, x, 16, scratch), x);
  EXPECT_EQ(sw_view_load64(&view, x), v);
  EXPECT_EQ(sw_view_load8(&view, x), static_cast<uint8_t>(v));
  EXPECT_EQ(library_loads(pool_), loads1) << "retired: the slot is clear and the reads inline";
  const sw_pool_hot& h = hot(pool_);
  for (uint64_t i = 0; i < SW_HOT_REGIONS; ++i) {
    EXPECT_EQ(__atomic_load_n(&h.regions[i], __ATOMIC_ACQUIRE), 0u) << "retired: region " << i << " is 0";
  }
}

// A word store that raised its slot but left no entry in the table — under
// SW_CONFIG_WCL a queued store whose compare found the word unchanged, or
// one the wrap then aborted — still makes its table worth retiring: after
// a quiesce the slot is clear and the loads are inline again (they were
// not while the raised slot had no table to retire it: the quiesce and the
// idle switch passed over an empty active table).
TEST_P(GlobalTableTest, ARaiseWithoutAnEntryIsRetiredToo) {
  ASSERT_NO_FATAL_FAILURE(make());
  uint64_t* same = slot(30);
  uint64_t* aborted = slot(40);
  ASSERT_NO_FATAL_FAILURE(wrap_store(same, old_value(30)));  // unchanged: WCL drops it
  ASSERT_NO_FATAL_FAILURE(wrap_store(aborted, new_value(40), /*commit=*/false));
  ASSERT_EQ(sw_pool_quiesce(pool_), 0) << sw_errormsg();
  const uint64_t loads0 = library_loads(pool_);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(sw_load64(pool_, same), old_value(30));
    EXPECT_EQ(sw_load64(pool_, aborted), old_value(40));
  }
  EXPECT_EQ(library_loads(pool_), loads0) << "every slot clear after the quiesce: the loads were inline";
}

// A wrap that has changed nothing holds nothing: no lane, no colour, so
// the tables go home around it (open_outer).  With the engine's part taken
// at sw_wrap_open, B's open wrap would keep A's table from closing and x's
// value would never reach home while B stays open.
TEST_P(GlobalTableTest, AnOpenWrapThatChangedNothingHoldsNoTable) {
  ASSERT_NO_FATAL_FAILURE(make());
  uint64_t* x = slot(21);
  const uint64_t v = new_value(21);
  OpenWrap b(pool_);
  ASSERT_TRUE(b.opened());
  EXPECT_EQ(sw_load64(pool_, slot(22)), old_value(22));
  commit_in_other_thread(pool_, x, v);
  // The retirer's idle switch (10 ms without a commit) switches the table
  // out, and nothing keeps it from going home.
  for (int i = 0; i < 3000 && home(x) != v; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(home(x), v) << "an open wrap that changed nothing kept a table from retiring";
  ASSERT_TRUE(b.release());
}

// Under WCL a store's compare needs the value the wrap sees.  A store
// queued while its word's slot was clear compares with home (no table held
// the word); any other compares with what the tables hold.  Both stores
// below write a word back to its home value after the wrap (1) or an
// earlier, committed but unretired wrap (2) gave it another: compared with
// home, they would look unchanged, be dropped, and leave the other value.
TEST_P(GlobalTableTest, AStoreBackToTheHomeValueIsComparedWithTheWrapsView) {
  ASSERT_NO_FATAL_FAILURE(make());
  uint64_t* x = slot(50);
  uint64_t* y = slot(52);
  ASSERT_EQ(sw_wrap_open(pool_), 0);
  sw_store64(pool_, x, new_value(50));
  EXPECT_EQ(sw_load64(pool_, x), new_value(50));  // a library load: the queued store is compared now
  sw_store64(pool_, x, old_value(50));
  ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
  EXPECT_EQ(sw_load64(pool_, x), old_value(50)) << "(1) the wrap's second store was dropped";
  {
    OpenWrap b(pool_, slot(63), new_value(63));  // keeps the tables from retiring (it has changed something)
    ASSERT_TRUE(b.opened());
    ASSERT_NO_FATAL_FAILURE(wrap_store(y, new_value(52)));
    ASSERT_EQ(home(y), old_value(52)) << "the first wrap's value is only in its table";
    ASSERT_NO_FATAL_FAILURE(wrap_store(y, old_value(52)));
    EXPECT_EQ(sw_load64(pool_, y), old_value(52)) << "(2) the second wrap's store was dropped";
    ASSERT_TRUE(b.release());
  }
  ASSERT_EQ(sw_pool_quiesce(pool_), 0) << sw_errormsg();
  EXPECT_EQ(home(x), old_value(50));
  EXPECT_EQ(home(y), old_value(52));
}

const Param kGlobal[] = {{SW_ENGINE_SOFTWRAP, "softwrap", 0}, {SW_ENGINE_SOFTWRAP, "softwrap_wcl", SW_CONFIG_WCL}};
INSTANTIATE_TEST_SUITE_P(Engines, GlobalTableTest, ::testing::ValuesIn(kGlobal), param_name);

class LocalTableTest : public InlineReadTest {};

// softwrap-local: another thread's open wrap raises the slots it aliases,
// so loads of them call the library, which reads home (that wrap's stores
// are not visible before it commits); a committed wrap's values are home
// and its slots clear at once, even while another wrap is open.
TEST_P(LocalTableTest, AnotherThreadsOpenWrapSendsItsSlotsToTheLibrary) {
  ASSERT_NO_FATAL_FAILURE(make());
  uint64_t* x = slot(20);
  uint64_t* y = slot(30);
  unsigned char scratch[8];
  OpenWrap b(pool_, y, new_value(30));
  ASSERT_TRUE(b.opened());
  commit_in_other_thread(pool_, x, new_value(20));
  EXPECT_EQ(home(x), new_value(20)) << "softwrap-local writes home at commit";
  const uint64_t loads0 = library_loads(pool_);
  EXPECT_EQ(sw_load64(pool_, x), new_value(20));
  EXPECT_EQ(sw_peek(pool_, x, 8, scratch), x);
  EXPECT_EQ(library_loads(pool_), loads0) << "the committed wrap's slot is clear again";
  EXPECT_EQ(sw_load64(pool_, y), old_value(30)) << "B's store is not committed";
  uint64_t got = 0;
  EXPECT_EQ(sw_read(pool_, &got, y, 8), 0);
  EXPECT_EQ(got, old_value(30));
  EXPECT_EQ(library_loads(pool_) - loads0, 2u) << "B's open wrap raised y's slot";
  ASSERT_TRUE(b.release());
  const uint64_t loads1 = library_loads(pool_);
  EXPECT_EQ(sw_load64(pool_, y), new_value(30));
  EXPECT_EQ(sw_peek(pool_, y, 8, scratch), y);
  EXPECT_EQ(library_loads(pool_), loads1) << "B committed: its slot is clear";
}

// softwrap-local's slots count what aliases their words: a wrap that
// stores one word 100,000 times (under WCL each store is queued for its
// compare) keeps the count small, and after the wrap commits, and after
// one aborts with a store still queued, every slot it touched is exactly
// zero again (a count below
// zero would read as clear while an alias is live; one left above zero
// would send every later load to the library).
TEST_P(LocalTableTest, TheCountsStayBoundedAndReturnToZero) {
  ASSERT_NO_FATAL_FAILURE(make());
  const sw_pool_hot* h = reinterpret_cast<const sw_pool_hot*>(pool_);
  auto count = [&](const void* a) {
    return __atomic_load_n(&h->filter[(reinterpret_cast<uintptr_t>(a) >> h->filter_shift) & h->filter_mask],
                           __ATOMIC_ACQUIRE);
  };
  // A region counts the open wraps holding counts in it: one here.
  auto region = [&](const void* a) {
    return __atomic_load_n(&h->regions[(reinterpret_cast<uintptr_t>(a) >> SW_HOT_REGION_SHIFT) & (SW_HOT_REGIONS - 1)],
                           __ATOMIC_ACQUIRE);
  };
  uint64_t* x = slot(10);
  uint64_t* y = slot(11);
  for (const bool commit : {true, false}) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    uint32_t most = 0;
    uint64_t most_region = 0;
    for (uint64_t i = 1; i <= 100000; ++i) {
      sw_store64(pool_, x, new_value(10) + i);
      if (i % 1000 == 0) {
        sw_store64(pool_, y, new_value(11) + i);
        most = std::max(most, count(x));
        most_region = std::max({most_region, region(x), region(y)});
        ASSERT_EQ(sw_load64(pool_, x), new_value(10) + i) << "the wrap sees its own store";
      }
    }
    EXPECT_GE(most, 1u) << "an open wrap's word is counted";
    EXPECT_LE(most, 64u) << "one word stored 100,000 times counts (at most) its queued stores, not every store";
    EXPECT_EQ(most_region, 1u) << "a region counts the wrap once";
    sw_store64(pool_, x, new_value(10) + 100001);  // under WCL still queued when the wrap ends
    if (commit) {
      ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    } else {
      ASSERT_EQ(sw_wrap_abort(pool_), 0) << sw_errormsg();
    }
    EXPECT_EQ(count(x), 0u) << (commit ? "after the commit" : "after the abort");
    EXPECT_EQ(count(y), 0u) << (commit ? "after the commit" : "after the abort");
    EXPECT_EQ(region(x), 0u) << (commit ? "after the commit" : "after the abort");
    EXPECT_EQ(region(y), 0u) << (commit ? "after the commit" : "after the abort");
    EXPECT_EQ(sw_load64(pool_, x), new_value(10) + 100001) << "the first wrap's value (the aborted one left none)";
  }
}

const Param kLocal[] = {{SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local", 0},
                        {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local_wcl", SW_CONFIG_WCL}};
INSTANTIATE_TEST_SUITE_P(Engines, LocalTableTest, ::testing::ValuesIn(kLocal), param_name);

// ---- home is written while the slot is raised

// Wraps the pool's real medium.  Once watch() names the pool and a region,
// every store or write into the region (only the engine's home writes land
// there: retirement for softwrap, the commit for softwrap-local) must find
// each word's slot still raised — by the public face's own inline check —
// and so must the retire fence that follows it: a slot cleared before its
// word is home lets an inline read find the older value.
class WatchingMedium final : public softwrap::ForwardingMedium {
 public:
  explicit WatchingMedium(std::unique_ptr<Medium> inner) : ForwardingMedium(inner.get()), inner_(std::move(inner)) {}

  void watch(sw_pool* p, const char* lo, const char* hi) {
    lo_ = lo;
    hi_ = hi;
    pool_.store(p, std::memory_order_release);
  }
  uint64_t home_writes() {
    std::lock_guard<std::mutex> g(mu_);
    return home_writes_;
  }
  std::vector<std::string> violations() {
    std::lock_guard<std::mutex> g(mu_);
    return violations_;
  }

 private:
  void before_fence(FenceKind kind) override {
    if (kind == FenceKind::kRetire && pool_.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> g(mu_);
      const std::thread::id me = std::this_thread::get_id();
      for (size_t i = 0; i < pending_.size();) {
        if (pending_[i].first != me) {
          ++i;
          continue;
        }
        expect_raised(pending_[i].second, "at the retire fence after its home write");
        pending_[i] = pending_.back();
        pending_.pop_back();
      }
    }
  }
  void before_write(const void* dst, size_t n) override {
    if (!pool_.load(std::memory_order_acquire)) return;
    const char* a = static_cast<const char*>(dst);
    if (a + n <= lo_ || a >= hi_) return;
    std::lock_guard<std::mutex> g(mu_);
    for (const char* w = a; w < a + n; w = reinterpret_cast<const char*>((reinterpret_cast<uintptr_t>(w) | 7) + 1)) {
      ++home_writes_;
      expect_raised(w, "while it was written home");
      pending_.emplace_back(std::this_thread::get_id(), w);
    }
  }
  void expect_raised(const char* a, const char* when) {  // REQUIRES: mu_
    if (!sw_hot_clear(pool_.load(std::memory_order_acquire), reinterpret_cast<uintptr_t>(a))) return;
    violations_.push_back("offset " + std::to_string(a - lo_) + " of the region: slot clear " + when);
  }

  std::unique_ptr<Medium> inner_;  // owned; the base forwards to it
  std::atomic<sw_pool*> pool_{nullptr};
  const char* lo_ = nullptr;
  const char* hi_ = nullptr;
  std::mutex mu_;
  uint64_t home_writes_ = 0;                                      // GUARDED_BY(mu_)
  std::vector<std::pair<std::thread::id, const char*>> pending_;  // GUARDED_BY(mu_): written, not yet fenced
  std::vector<std::string> violations_;                           // GUARDED_BY(mu_)
};

std::unique_ptr<Medium> watching_factory(const MediumOptions&, void*, size_t, void* ctx) {
  auto m = std::make_unique<WatchingMedium>(std::make_unique<softwrap::X86Medium>());
  *static_cast<WatchingMedium**>(ctx) = m.get();
  return m;
}

class HomeOrderTest : public InlineReadTest {};

// Words, narrower stores and ranges, one wrap at a time; under softwrap
// each wrap's table is retired (sw_pool_quiesce) before the next wrap
// stores again, so no newer raise covers the slots while it goes home.
TEST_P(HomeOrderTest, HomeIsWrittenWhileTheSlotIsStillRaised) {
  WatchingMedium* m = nullptr;
  softwrap::set_medium_factory(&watching_factory, &m);
  make();
  softwrap::set_medium_factory(nullptr, nullptr);
  if (HasFatalFailure()) return;
  ASSERT_NE(m, nullptr);
  m->watch(pool_, region_, region_ + region_bytes_);
  unsigned char range[40];
  for (uint64_t round = 1; round <= 6; ++round) {
    ASSERT_EQ(sw_wrap_open(pool_), 0);
    for (size_t i = 0; i < 8; ++i) sw_store64(pool_, slot(i), old_value(i) + round);
    sw_store32(pool_, slot(8), static_cast<uint32_t>(round * 0x01010101u));
    for (size_t i = 0; i < sizeof range; ++i) range[i] = static_cast<unsigned char>(round * 16 + i);
    ASSERT_EQ(sw_write(pool_, slot(9), range, sizeof range), 0);
    ASSERT_EQ(sw_wrap_close(pool_), 0) << sw_errormsg();
    if (GetParam().engine == SW_ENGINE_SOFTWRAP) {
      ASSERT_EQ(sw_pool_quiesce(pool_), 0);
    }
    EXPECT_EQ(home(slot(3)), old_value(3) + round);
    EXPECT_EQ(std::memcmp(slot(9), range, sizeof range), 0);
  }
  EXPECT_GE(m->home_writes(), 6u * 10) << "the checks ran";
  const std::vector<std::string> bad = m->violations();
  EXPECT_TRUE(bad.empty()) << bad.size() << " home writes found their slot clear; first: " << bad.front();
}

const Param kRedo[] = {{SW_ENGINE_SOFTWRAP, "softwrap", 0},
                       {SW_ENGINE_SOFTWRAP, "softwrap_wcl", SW_CONFIG_WCL},
                       {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local", 0},
                       {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local_wcl", SW_CONFIG_WCL}};
INSTANTIATE_TEST_SUITE_P(Engines, HomeOrderTest, ::testing::ValuesIn(kRedo), param_name);

// ---- pools whose every access calls the library

softwrap::Trace g_trace;

std::unique_ptr<Medium> trace_factory(const MediumOptions&, void* base, size_t len, void*) {
  return std::make_unique<softwrap::TraceMedium>(base, len, &g_trace, nullptr);
}

constexpr uint32_t kTraceMedium = 0x80000000u;  // Param::flags: open on the trace medium (not a SW_CONFIG_ flag)

class LibraryPathTest : public InlineReadTest {};

// Strict mode (every check stays), SW_CONFIG_COUNT_LOADS (every load
// counted) and a medium that records loads (the Themis simulator's traces):
// the filter is a single raised slot and the span 0, so each inline read
// calls the library and counts one load.
TEST_P(LibraryPathTest, EveryInlineReadCallsTheLibraryAndCountsOneLoad) {
  sw_config c = config();
  const bool trace = (c.flags & kTraceMedium) != 0;
  c.flags &= ~kTraceMedium;
  if (trace) softwrap::set_medium_factory(&trace_factory, nullptr);
  make(c);
  if (trace) softwrap::set_medium_factory(nullptr, nullptr);
  if (HasFatalFailure()) return;
  const sw_pool_hot& h = hot(pool_);
  EXPECT_EQ(h.filter_mask, 0u);
  EXPECT_EQ(__atomic_load_n(&h.span, __ATOMIC_RELAXED), 0u) << "no inline range read";
  EXPECT_EQ(sw_hot_clear(pool_, reinterpret_cast<uintptr_t>(slot(0))), 0) << "one slot, always raised";
  for (uint64_t i = 0; i < SW_HOT_REGIONS; ++i) {
    EXPECT_EQ(__atomic_load_n(&h.regions[i], __ATOMIC_ACQUIRE), 1u) << "region " << i << ": always raised";
  }
  if (trace) g_trace.start(softwrap::TraceOptions{.loads = true});
  const uint64_t loads0 = library_loads(pool_);
  const sw_view view = sw_view_of(pool_);
  unsigned char scratch[8];
  uint64_t n = 0;
  for (size_t i = 0; i < 16; ++i) {
    const char* a = reinterpret_cast<const char*>(slot(i));
    const uint64_t v = old_value(i);
    EXPECT_EQ(sw_load64(pool_, a), v);
    EXPECT_EQ(sw_load32(pool_, a), static_cast<uint32_t>(v));
    EXPECT_EQ(sw_load16(pool_, a + 2), static_cast<uint16_t>(v >> 16));
    EXPECT_EQ(sw_load8(pool_, a + 3), static_cast<uint8_t>(v >> 24));
    uint64_t got = 0;
    EXPECT_EQ(sw_read(pool_, &got, a, 8), 0);
    EXPECT_EQ(got, v);
    const void* q = sw_peek(pool_, a, 8, scratch);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(std::memcmp(q, &v, 8), 0);
    EXPECT_EQ(sw_view_load64(&view, a), v);
    EXPECT_EQ(sw_view_load32(&view, a + 4), static_cast<uint32_t>(v >> 32));
    n += 8;
  }
  EXPECT_EQ(library_loads(pool_) - loads0, n) << "every access counted by the library";
  if (trace) {
    g_trace.stop();
    uint64_t recorded = 0;
    const uint64_t lo = static_cast<uint64_t>(region_ - static_cast<char*>(sw_pool_base(pool_)));
    for (const softwrap::TraceEvent& e : g_trace.take_events()) {
      if (e.kind == softwrap::TraceKind::kLoad && e.off >= lo && e.off < lo + region_bytes_) ++recorded;
    }
    EXPECT_GE(recorded, 16u * 7) << "the medium saw each word load and read";
  }
  if (!(c.flags & SW_CONFIG_STRICT)) {
    // The library's checks apply to the inline reads too.
    uint64_t on_stack = 5;
    EXPECT_EQ(sw_load64(pool_, &on_stack), 0u);
    EXPECT_EQ(sw_errno(), SW_ERANGE);
    EXPECT_EQ(sw_load64(pool_, reinterpret_cast<char*>(slot(0)) + 4), 0u);
    EXPECT_EQ(sw_errno(), SW_EINVAL);
    EXPECT_EQ(sw_view_load64(&view, &on_stack), 0u) << "a view's loads are checked alike";
    EXPECT_EQ(sw_errno(), SW_ERANGE);
  }
}

// A view of no pool calls the library, which refuses it as sw_load64 does.
TEST(InlineReadView, AViewOfNoPoolFailsAsSwLoad64Does) {
  uint64_t word = 7;
  const sw_view none = sw_view_of(nullptr);
  EXPECT_EQ(sw_load64(nullptr, &word), 0u);
  const int want = sw_errno();
  EXPECT_NE(want, 0);
  EXPECT_EQ(sw_view_load64(&none, &word), 0u);
  EXPECT_EQ(sw_errno(), want);
  EXPECT_EQ(sw_view_load8(&none, &word), 0u);
  EXPECT_EQ(sw_errno(), want);
  // A loop over a NULL handle the compiler cannot see (the regions an
  // inline load reads are chosen once for the loop): every load fails.
  sw_pool* volatile hidden = nullptr;
  sw_pool* const none_pool = hidden;
  const uint64_t words[4] = {1, 2, 3, 4};
  uint64_t sum = 0;
  for (const uint64_t& w : words) {
    sum += sw_load64(none_pool, &w);
    EXPECT_EQ(sw_errno(), want);
  }
  EXPECT_EQ(sum, 0u);
}

const Param kLibraryPath[] = {
    {SW_ENGINE_SOFTWRAP, "softwrap_strict", SW_CONFIG_STRICT},
    {SW_ENGINE_SOFTWRAP, "softwrap_count_loads", SW_CONFIG_COUNT_LOADS},
    {SW_ENGINE_SOFTWRAP, "softwrap_trace", kTraceMedium},
    {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local_strict", SW_CONFIG_STRICT},
    {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local_count_loads", SW_CONFIG_COUNT_LOADS},
    {SW_ENGINE_SOFTWRAP_LOCAL, "softwrap-local_trace", kTraceMedium},
    {SW_ENGINE_UNDO, "undo_strict", SW_CONFIG_STRICT},
    {SW_ENGINE_UNDO, "undo_count_loads", SW_CONFIG_COUNT_LOADS},
    {SW_ENGINE_UNDO, "undo_trace", kTraceMedium},
    {SW_ENGINE_UNDO_THEMIS, "undo-themis_count_loads", SW_CONFIG_COUNT_LOADS | SW_CONFIG_THEMIS_IDEAL},
    {SW_ENGINE_NONATOMIC, "nonatomic_strict", SW_CONFIG_STRICT},
    {SW_ENGINE_NONATOMIC, "nonatomic_count_loads", SW_CONFIG_COUNT_LOADS},
};
INSTANTIATE_TEST_SUITE_P(Modes, LibraryPathTest, ::testing::ValuesIn(kLibraryPath), param_name);

}  // namespace
