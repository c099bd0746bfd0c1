// alias_filter_test.cc — the alias filter (alias_filter.h): slots by
// address, raising to a generation with a compare-and-swap to the larger
// value, clearing by publishing the oldest live generation, the serial
// comparison across 2^32 kept sound by the sweep, counts, the conservative
// answer for long ranges, the regions (the coarse level: raised with
// every slot, lowered when their newest raise retires or their last wrap
// ends), and the header's inline check and views agreeing with the
// filter's own.  The concurrent test holds the invariant the inline reads
// rely on: a slot raised at a generation that is still live is never seen
// clear, whatever the publisher and the sweep do meanwhile.
#include "alias/alias_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.h"

namespace softwrap {
namespace {

constexpr uint32_t kGranule = 256;
constexpr uint64_t kPeriod = AliasFilter::kSweepPeriod;
// A mapping address: the filter only computes with it.
const void* const kBase = reinterpret_cast<const void*>(uintptr_t{0x7f1234500000});

#ifdef SOFTWRAP_SANITIZED
constexpr int kScale = 1;
#else
constexpr int kScale = 8;
#endif

bool raised_at(const AliasFilter& f, uint64_t off) { return AliasFilter::raised(f.slot_of(off), f.live()); }

// Publishes oldest generations up to `target` in steps the serial
// comparison allows (each well below 2^31, crossing sweep boundaries as the
// ring's one-at-a-time steps would), as a long-running pool would have.
void advance_to(AliasFilter& f, uint64_t* oldest, uint64_t target) {
  while (*oldest < target) {
    *oldest = std::min(target, *oldest + 3 * kPeriod + 12345);
    f.publish_oldest(*oldest);
  }
}

TEST(AliasFilter, SizesItsSlotsToTheSpanWithinBounds) {
  AliasFilter small(kBase, 1000, kGranule, nullptr);
  EXPECT_EQ(small.mask(), 63u) << "at least 64 slots";
  EXPECT_EQ(small.shift(), 8u);
  AliasFilter mid(kBase, (uint64_t{1} << 20) + 1, kGranule, nullptr);
  EXPECT_EQ(mid.mask(), 8191u) << "4097 slots' worth, rounded up to a power of two";
  AliasFilter big(kBase, uint64_t{1} << 40, kGranule, nullptr);
  EXPECT_EQ(big.mask(), (1u << AliasFilter::kMaxSlotsLog2) - 1) << "at most 2^kMaxSlotsLog2 slots";
  AliasFilter coarse(kBase, uint64_t{1} << 30, 65536, nullptr);
  EXPECT_EQ(coarse.shift(), 16u);
  EXPECT_EQ(coarse.mask(), 16383u);
  EXPECT_EQ(small.live(), 1u);
  for (uint64_t i = 0; i <= small.mask(); ++i) EXPECT_EQ(small.slots()[i], 0u) << "all clear at start";
}

TEST(AliasFilter, PublishesItsLiveWordWhereItIsTold) {
  uint32_t live = 77;
  AliasFilter f(kBase, 1 << 20, kGranule, &live);
  EXPECT_EQ(__atomic_load_n(&live, __ATOMIC_ACQUIRE), 1u) << "the constructor publishes live = 1";
  f.publish_oldest(41);
  EXPECT_EQ(__atomic_load_n(&live, __ATOMIC_ACQUIRE), 42u);
  EXPECT_EQ(f.live(), 42u);
}

TEST(AliasFilter, ASlotIsTheAddressesGranuleModuloTheFilter) {
  AliasFilter f(kBase, 64 * kGranule, kGranule, nullptr);  // 64 slots
  const uint64_t wrap = (uint64_t{f.mask()} + 1) * kGranule;
  const uintptr_t base = reinterpret_cast<uintptr_t>(kBase);
  f.raise_gen(3 * kGranule + 40, 8, 0);
  // Exactly the slot the inline check computes from the address is raised.
  for (uint64_t i = 0; i <= f.mask(); ++i) {
    EXPECT_EQ(f.slots()[i] != 0, i == (((base + 3 * kGranule) >> f.shift()) & f.mask())) << "slot " << i;
  }
  EXPECT_TRUE(raised_at(f, 3 * kGranule));
  EXPECT_TRUE(raised_at(f, 3 * kGranule + kGranule - 1)) << "same granule";
  EXPECT_FALSE(raised_at(f, 3 * kGranule - 1));
  EXPECT_FALSE(raised_at(f, 4 * kGranule));
  EXPECT_TRUE(raised_at(f, 3 * kGranule + wrap)) << "mask+1 slots apart: the same slot";
  EXPECT_TRUE(raised_at(f, 3 * kGranule + 5 * wrap + 17));
  EXPECT_FALSE(f.clear_word(3 * kGranule + wrap));
  EXPECT_FALSE(f.clear(3 * kGranule + 7 * wrap + 100, 1));
  EXPECT_TRUE(f.clear(4 * kGranule + wrap, kGranule));

  // The mapping's address decides, not the pool offset: with a base half a
  // granule past a granule boundary, offsets 127 and 128 fall in two slots.
  AliasFilter odd(reinterpret_cast<const void*>(base + kGranule / 2), 64 * kGranule, kGranule, nullptr);
  odd.raise_gen(kGranule / 2, 1, 0);  // address base + granule: a slot's first byte
  EXPECT_TRUE(raised_at(odd, kGranule / 2));
  EXPECT_TRUE(raised_at(odd, kGranule / 2 + kGranule - 1));
  EXPECT_FALSE(raised_at(odd, kGranule / 2 - 1));
  EXPECT_FALSE(raised_at(odd, kGranule / 2 + kGranule));
}

TEST(AliasFilter, ARaisedSlotClearsWhenItsGenerationIsRetired) {
  AliasFilter f(kBase, 1 << 20, kGranule, nullptr);
  f.raise_gen(1024, 8, 0);
  EXPECT_FALSE(f.clear_word(1024));
  EXPECT_FALSE(f.clear(1000, 100));
  EXPECT_TRUE(f.clear_word(1024 + kGranule)) << "its neighbour";
  f.publish_oldest(1);  // table 0 retired
  EXPECT_TRUE(f.clear_word(1024));
  EXPECT_TRUE(f.clear(1000, 100));

  f.raise_gen(4096, 8, 5);  // a table several generations ahead of the oldest
  f.raise_gen(8192, 8, 1);
  for (uint64_t oldest = 2; oldest <= 5; ++oldest) {
    f.publish_oldest(oldest);
    EXPECT_FALSE(f.clear_word(4096)) << "generation 5 is live while the oldest is " << oldest;
    EXPECT_TRUE(f.clear_word(8192)) << "generation 1 retired, oldest " << oldest;
  }
  f.publish_oldest(6);
  EXPECT_TRUE(f.clear_word(4096));
}

TEST(AliasFilter, ARaiseWithAnOlderGenerationNeverLowersANewerOne) {
  AliasFilter f(kBase, 1 << 20, kGranule, nullptr);
  f.raise_gen(512, 8, 10);
  EXPECT_EQ(f.slot_of(512), 11u);
  f.raise_gen(512, 8, 3);  // a raiser that read an older active generation
  EXPECT_EQ(f.slot_of(512), 11u);
  f.publish_oldest(4);
  EXPECT_FALSE(f.clear_word(512)) << "generation 10 is still live";
  f.raise_gen(512, 8, 12);
  EXPECT_EQ(f.slot_of(512), 13u) << "a newer one raises";
  f.publish_oldest(11);
  EXPECT_FALSE(f.clear_word(512));
  f.publish_oldest(13);
  EXPECT_TRUE(f.clear_word(512));
}

// Generations are 64-bit, slots and live their low 32 bits compared as
// serial numbers: across 2^32, and over more than 2^31 generations in all
// (which the sweep makes sound), a retired raise reads clear and a live
// one raised, before and after each sweep.
TEST(AliasFilter, SerialComparisonHoldsAcrossTheWrapAroundAndTheSweeps) {
  AliasFilter f(kBase, 64 * kGranule, kGranule, nullptr);
  const uint64_t old_slot = 1 * kGranule, live_slot = 2 * kGranule, never = 3 * kGranule;
  f.raise_gen(old_slot, 8, 0);
  uint64_t oldest = 0;
  f.publish_oldest(++oldest);
  ASSERT_TRUE(f.clear_word(old_slot));

  // Jumps of about three sweep periods, to far past 2^31 generations: the
  // slot raised long ago stays clear (without the sweep its value would
  // look 2^31 ahead of live after nine periods).
  for (int jump = 0; jump < 12; ++jump) {
    // A live generation raised before the jump, retired only after it.
    const uint64_t g = oldest + 3 * kPeriod + 100;
    f.raise_gen(live_slot, 8, g);
    advance_to(f, &oldest, oldest + 3 * kPeriod + 7);  // crosses at least two boundaries: sweeps
    ASSERT_LE(oldest, g);
    EXPECT_TRUE(f.clear_word(old_slot)) << "raised long ago, oldest now " << oldest;
    EXPECT_TRUE(f.clear_word(never)) << "never raised, oldest " << oldest;
    EXPECT_FALSE(f.clear_word(live_slot)) << "generation " << g << " is live, oldest " << oldest;
    EXPECT_EQ(f.slot_of(live_slot), static_cast<uint32_t>(g + 1)) << "the sweep leaves raised slots alone";
    f.sweep();  // an extra sweep changes nothing either
    EXPECT_FALSE(f.clear_word(live_slot));
    EXPECT_TRUE(f.clear_word(old_slot));
    advance_to(f, &oldest, g + 1);
    EXPECT_TRUE(f.clear_word(live_slot)) << "generation " << g << " retired";
  }
  ASSERT_GT(oldest, uint64_t{1} << 33) << "past 2^32 several times";

  // Step by step across a multiple of 2^32: values 0xFFFFFFFF, 0 and 1.
  const uint64_t edge = (oldest | 0xFFFFFFFFull) + 1;  // the next multiple of 2^32
  advance_to(f, &oldest, edge - 3);
  const uint64_t a = 4 * kGranule, b = 5 * kGranule, c = 6 * kGranule;
  f.raise_gen(a, 8, edge - 2);  // value 0xFFFFFFFF
  f.raise_gen(b, 8, edge - 1);  // value 0
  f.raise_gen(c, 8, edge);      // value 1
  EXPECT_EQ(f.slot_of(b), 0u);
  EXPECT_FALSE(f.clear_word(a));
  EXPECT_FALSE(f.clear_word(b));
  EXPECT_FALSE(f.clear_word(c));
  f.publish_oldest(oldest = edge - 1);  // live 0
  EXPECT_TRUE(f.clear_word(a));
  EXPECT_FALSE(f.clear_word(b));
  EXPECT_FALSE(f.clear_word(c));
  f.publish_oldest(oldest = edge);  // live 1
  EXPECT_TRUE(f.clear_word(b));
  EXPECT_FALSE(f.clear_word(c));
  f.publish_oldest(oldest = edge + 1);
  EXPECT_TRUE(f.clear_word(c));
  EXPECT_TRUE(f.clear_word(old_slot));
  EXPECT_TRUE(f.clear_word(never));
}

TEST(AliasFilter, TheSweepMovesClearedSlotsToJustBelowLive) {
  AliasFilter f(kBase, 64 * kGranule, kGranule, nullptr);
  f.raise_gen(0, 8, 0);
  uint64_t oldest = 0;
  advance_to(f, &oldest, kPeriod - 1);  // live = kPeriod: crossed the first boundary
  const uint32_t l = f.live();
  for (uint64_t i = 0; i <= f.mask(); ++i) EXPECT_EQ(f.slots()[i], l - 1) << "slot " << i;
}

TEST(AliasFilter, CountsAddAndSubtractOncePerSlotEvenForRangesLongerThanTheFilter) {
  AliasFilter f(kBase, 64 * kGranule, kGranule, nullptr);  // live stays 1: a count >= 1 is raised
  const uint64_t filter_bytes = 64 * kGranule;
  AliasFilter::CoarseMarks m, m2;
  f.add(100, 10 * filter_bytes + 3, m);  // starts mid-slot, covers the filter ten times over
  for (uint64_t i = 0; i <= f.mask(); ++i) EXPECT_EQ(f.slots()[i], 1u) << "slot " << i << " counted once";
  f.add(5000, 300, m);  // two slots
  EXPECT_EQ(f.slot_of(5000), 2u);
  EXPECT_EQ(f.slot_of(5299), 2u);
  EXPECT_EQ(f.slot_of(4863), 1u);
  EXPECT_EQ(f.slot_of(5376), 1u);
  f.sub(100, 10 * filter_bytes + 3);
  EXPECT_FALSE(f.clear_word(5000 & ~uint64_t{7}));
  EXPECT_TRUE(f.clear_word(5400 & ~uint64_t{7}));
  f.sub(5000, 300);
  for (uint64_t i = 0; i <= f.mask(); ++i) EXPECT_EQ(f.slots()[i], 0u) << "slot " << i;
  EXPECT_TRUE(f.clear(0, 63 * kGranule));
  // Two keys of one slot (two open wraps of softwrap-local): clear only
  // after both ended.
  f.release(m);
  for (uint64_t i = 0; i < AliasFilter::kCoarseSlots; ++i) EXPECT_EQ(f.regions()[i], 0u) << "region " << i;
  f.add(8, 8, m);
  f.add(16, 8, m2);
  f.sub(8, 8);
  f.release(m);
  EXPECT_FALSE(f.clear_word(8));
  EXPECT_EQ(f.region_of(8), 1u) << "the other wrap still counts in the region";
  f.sub(16, 8);
  f.release(m2);
  EXPECT_TRUE(f.clear_word(8));
  EXPECT_EQ(f.region_of(8), 0u);
}

// The regions (the coarse level): 2 MiB of address each, wrapping around
// every kCoarseSlots of them, like the slots.
TEST(AliasFilter, ARegionIsTwoMiBOfAddress) {
  AliasFilter f(kBase, 1 << 30, kGranule, nullptr);
  // Regions go by address: r0, the offset of a region's first byte.
  const uint64_t mb2 = uint64_t{1} << AliasFilter::kCoarseShift;
  ASSERT_EQ(mb2, 2u << 20);
  const uint64_t r0 = 5 * mb2 + (mb2 - (reinterpret_cast<uintptr_t>(kBase) & (mb2 - 1))) % mb2;
  f.raise_word(r0, 0);
  EXPECT_NE(f.region_of(r0 + mb2 - 8), 0u) << "the same region";
  EXPECT_EQ(f.region_of(r0 - 8), 0u) << "the one before";
  EXPECT_EQ(f.region_of(r0 + mb2), 0u) << "the next one";
  EXPECT_NE(f.region_of(r0 + AliasFilter::kCoarseSlots * mb2), 0u) << "a GiB on: wrapped around";
}

// Generations: a region holds 1 + the newest generation that raised it and
// reads 0 again only once that generation is retired; an older raise never
// lowers it.
TEST(AliasFilter, ARegionIsLoweredOnlyWhenItsNewestRaiseIsRetired) {
  AliasFilter f(kBase, 64 << 20, kGranule, nullptr);
  const uint64_t r = uint64_t{1} << AliasFilter::kCoarseShift;
  const uint64_t b = (r - (reinterpret_cast<uintptr_t>(kBase) & (r - 1))) % r;  // a region's first byte
  f.raise_word(b, 3);
  EXPECT_EQ(f.region_of(b), 4u);
  f.raise_gen(b + 8, 16, 1);  // an older generation's raise (a raiser that read it late)
  EXPECT_EQ(f.region_of(b), 4u) << "never lowered by a raise";
  f.raise_word_was_clear(b + r + 64, 2);
  f.raise_gen(b + 2 * r - 8, 16, 5);  // two regions
  EXPECT_EQ(f.region_of(b + r), 6u);
  EXPECT_EQ(f.region_of(b + 2 * r), 6u);
  f.publish_oldest(3);  // 0..2 retired
  EXPECT_EQ(f.region_of(b), 4u) << "generation 3 is live";
  EXPECT_EQ(f.region_of(b + r), 6u);
  EXPECT_TRUE(f.clear_word(b + r + 64)) << "its slot (generation 2) is clear";
  f.publish_oldest(4);
  EXPECT_EQ(f.region_of(b), 0u) << "generation 3 retired";
  EXPECT_NE(f.region_of(b + r), 0u);
  f.publish_oldest(6);
  for (uint64_t i = 0; i < AliasFilter::kCoarseSlots; ++i) EXPECT_EQ(f.regions()[i], 0u) << "region " << i;
  // A region raised while a slot of it was raised before: both again.
  f.raise_word(b, 6);
  EXPECT_EQ(f.region_of(b), 7u);
  EXPECT_FALSE(f.clear_word(b));
}

// Whatever raises a slot raises its region: after any mix of raises and
// publishes, the region of every byte raised at a generation not yet
// retired is not 0 (the inline check trusts a 0 region without reading
// the slot), and its slot is raised.
TEST(AliasFilter, ARaisedBytesRegionIsNeverClear) {
  AliasFilter f(kBase, 4 << 20, 64, nullptr);  // 65536 slots of 64 bytes: they wrap every 4 MiB
  std::mt19937_64 rng(5);
  struct Raise {
    uint64_t off, n, gen;
  };
  std::vector<Raise> raises;
  uint64_t gen = 0, oldest = 0;
  for (int it = 0; it < 5000 * kScale; ++it) {
    const uint64_t off = rng() % (uint64_t{3} << 30), r = rng() % 16;  // the regions wrap every GiB
    if (r < 6) {
      f.raise_word(off & ~uint64_t{7}, gen);
      raises.push_back({off & ~uint64_t{7}, 8, gen});
    } else if (r < 9) {
      f.raise_word_was_clear(off & ~uint64_t{7}, gen);
      raises.push_back({off & ~uint64_t{7}, 8, gen});
    } else if (r < 12) {
      const uint64_t n = 1 + rng() % 20000;
      f.raise_gen(off, n, gen);
      raises.push_back({off, n, gen});
    } else if (r < 14) {
      ++gen;
    } else if (oldest < gen) {
      f.publish_oldest(oldest += 1 + rng() % (gen - oldest));
      std::erase_if(raises, [&](const Raise& x) { return x.gen < oldest; });
    }
    for (const Raise& x : raises) {
      for (uint64_t o : {x.off, x.off + x.n / 2, x.off + x.n - 1}) {
        ASSERT_NE(f.region_of(o), 0u) << "offset " << o << " raised at " << x.gen << ", oldest " << oldest;
        ASSERT_FALSE(f.clear_word(o & ~uint64_t{7})) << "offset " << o;
      }
    }
  }
  EXPECT_GT(oldest, 10u);
}

// The inline reads (softwrap.h) compute the slot and the comparison
// themselves, from sw_pool_hot: they must agree with the filter.
TEST(AliasFilter, TheHeadersInlineCheckAgreesWithTheFilter) {
  sw_pool_hot hot{};
  AliasFilter f(kBase, 64 * kGranule, kGranule, &hot.live, hot.regions);
  hot.filter = f.slots();
  hot.filter_mask = f.mask();
  hot.filter_shift = f.shift();
  hot.base = static_cast<char*>(const_cast<void*>(kBase));
  hot.heap = hot.base + 4 * kGranule;
  hot.span = 40 * kGranule;
  hot.version = SW_POOL_HOT_VERSION;
  auto* pool = reinterpret_cast<sw_pool*>(&hot);
  const uintptr_t base = reinterpret_cast<uintptr_t>(kBase);
  const sw_view view = sw_view_of(pool);
  auto agree = [&](const std::string& when) {
    for (uint64_t off = 0; off < 2 * 64 * kGranule; off += kGranule / 2) {
      // Clear where the region is 0 (a slot's raise may belong to a
      // byte a filter's span away) or the slot is clear.
      const bool clear = f.region_of(off) == 0 || f.clear_word(off & ~uint64_t{7});
      ASSERT_EQ(sw_hot_clear(pool, base + off) != 0, clear) << when << ", offset " << off;
      ASSERT_EQ(sw_view_clear(&view, base + off) != 0, clear) << when << ", offset " << off << " (the view)";
    }
  };
  agree("fresh");
  uint64_t oldest = 0;
  f.raise_gen(5 * kGranule, 8, 0);
  f.raise_gen(9 * kGranule, 8, 3);
  agree("raised at 0 and 3");
  EXPECT_EQ(sw_hot_clear(pool, base + 5 * kGranule), 0);
  // The same slot (the slots wrap every 16 KiB) in the next region, which
  // no raise touched: clear by its region alone.
  const uint64_t next = (((base + 5 * kGranule) >> SW_HOT_REGION_SHIFT) + 1) << SW_HOT_REGION_SHIFT;
  const uint64_t same_slot = next + ((base + 5 * kGranule) & (64 * kGranule - 1));
  ASSERT_FALSE(f.clear_word(same_slot - base)) << "the premise: its slot is raised";
  EXPECT_NE(sw_hot_clear(pool, same_slot), 0) << "its region is 0: clear without the slot";
  EXPECT_NE(sw_view_clear(&view, same_slot), 0) << "the view too";
  f.publish_oldest(oldest = 1);
  agree("oldest 1");
  EXPECT_NE(sw_hot_clear(pool, base + 5 * kGranule), 0) << "retired: clear inline too";
  EXPECT_EQ(sw_hot_clear(pool, base + 9 * kGranule), 0);
  advance_to(f, &oldest, (uint64_t{1} << 32) - 1);
  f.raise_gen(7 * kGranule, 8, oldest + 1);  // value 1 past the wrap-around, live 0
  agree("at the wrap-around");
  EXPECT_EQ(sw_hot_clear(pool, base + 7 * kGranule), 0);

  // Ranges: inside [heap, heap + span), at most SW_HOT_RANGE_SLOTS slots,
  // all clear.
  const char* heap = hot.heap;
  EXPECT_NE(sw_hot_range(pool, heap, 8), 0);
  const char* clear4 = heap + 4 * kGranule;  // slots 8..11: clear (9 was raised at a retired generation)
  EXPECT_NE(sw_hot_range(pool, clear4 + kGranule - 1, SW_HOT_RANGE_SLOTS * kGranule - kGranule + 1), 0);
  EXPECT_NE(sw_hot_range(pool, clear4, SW_HOT_RANGE_SLOTS * kGranule), 0);
  EXPECT_EQ(sw_hot_range(pool, clear4, SW_HOT_RANGE_SLOTS * kGranule + 1), 0) << "too many slots: the library";
  EXPECT_EQ(sw_hot_range(pool, heap + 3 * kGranule - 8, 16), 0) << "touches the raised slot 7";
  EXPECT_EQ(sw_hot_range(pool, heap - 1, 2), 0) << "starts before the heap";
  EXPECT_EQ(sw_hot_range(pool, heap + hot.span - 4, 8), 0) << "ends past the span";
  EXPECT_NE(sw_hot_range(pool, heap + hot.span - 8, 8), 0);
  hot.span = 0;
  EXPECT_EQ(sw_hot_range(pool, heap, 1), 0) << "span 0: every range read calls the library";
}

// Raisers pin the generation they raise at the way open wraps hold their
// table (enter(): read the active generation, pin it, read it again); a
// publisher moves the active generation (also in large jumps, across sweep
// boundaries and 2^32) and publishes the oldest one no raiser pins, and
// sweeps.  While a raiser's generation is pinned, the slots it raised must
// never read clear, nor their regions 0.
TEST(AliasFilterConcurrency, ASlotRaisedAtALiveGenerationIsNeverSeenClear) {
  constexpr int kRaisers = 3;
  constexpr uint64_t kNoPin = ~uint64_t{0};
  AliasFilter f(kBase, 64 * kGranule, kGranule, nullptr);  // 64 slots: raisers share them
  uint64_t published = 0;
  advance_to(f, &published, (uint64_t{1} << 32) - kPeriod / 2);  // wrap-around ahead
  std::atomic<uint64_t> active{published};
  std::atomic<uint64_t> pins[kRaisers];
  for (auto& p : pins) p.store(kNoPin);
  std::atomic<bool> stop{false}, crossed{false};
  std::atomic<uint64_t> violations{0}, checks{0};
  std::atomic<uint64_t> first_bad_gen{0};
  std::atomic<uint64_t> first_bad_oldest{0};

  std::vector<std::thread> ts;
  for (int i = 0; i < kRaisers; ++i) {
    ts.emplace_back([&, i] {
      std::mt19937_64 rng(7 + i);
      // At least the iterations and a quarter of a second (the threads
      // overlap however a loaded machine schedules them), and until the
      // publisher crossed 2^32.
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
      for (int it = 0; it < 50000 * kScale || !crossed.load() || std::chrono::steady_clock::now() < until; ++it) {
        uint64_t g;
        for (;;) {
          g = active.load();
          pins[i].store(g);
          if (active.load() == g) break;
        }
        const uint64_t off = rng() % (64 * kGranule), n = 1 + rng() % (3 * kGranule);
        f.raise_gen(off, n, g);
        for (int k = 0; k < 3; ++k) {
          checks.fetch_add(1, std::memory_order_relaxed);
          if (f.clear(off, n) || f.clear_word((off + n - 1) & ~uint64_t{7}) || f.region_of(off) == 0 ||
              f.region_of(off + n - 1) == 0) {
            if (violations.fetch_add(1) == 0) {
              first_bad_gen.store(g);
              first_bad_oldest.store(f.live() - 1);
            }
          }
        }
        pins[i].store(kNoPin);
      }
    });
  }
  std::thread publisher([&] {
    std::mt19937_64 rng(99);
    uint64_t gap = 0;  // active - oldest at the last publish
    while (!stop.load()) {
      const uint64_t r = rng() % 64;
      // Mostly one generation at a time, sometimes a jump of up to half a
      // sweep period, so the run crosses sweep boundaries and 2^32.  Live
      // generations stay within 2^31 of the oldest (the ring keeps them
      // within 64): no jump while a pinned raiser holds the oldest back.
      uint64_t step = r == 0 ? kPeriod / 2 - rng() % 1000 : r < 16 ? 1 : 0;
      if (gap > kPeriod) step = 0;
      const uint64_t a = active.fetch_add(step) + step;
      uint64_t oldest = a;
      for (auto& p : pins) oldest = std::min(oldest, p.load());
      gap = a - oldest;
      if (oldest > published) {
        f.publish_oldest(oldest);
        published = oldest;
        if (published > (uint64_t{1} << 32) + kPeriod) crossed.store(true);
      }
      if (r == 1) f.sweep();
    }
  });
  for (auto& t : ts) t.join();
  stop.store(true);
  publisher.join();
  EXPECT_EQ(violations.load(), 0u) << "a slot raised at generation " << first_bad_gen.load()
                                   << " read clear with the oldest live generation at " << first_bad_oldest.load();
  EXPECT_GT(checks.load(), 0u);
  EXPECT_GT(published, uint64_t{1} << 32) << "the run crossed 2^32";
  // Every raise is retired once the oldest passes the active generation.
  f.publish_oldest(active.load() + 1);
  for (uint64_t i = 0; i <= f.mask(); ++i) {
    EXPECT_FALSE(AliasFilter::raised(f.slots()[i], f.live())) << "slot " << i << " value " << f.slots()[i];
  }  for (uint64_t i = 0; i < AliasFilter::kCoarseSlots; ++i) EXPECT_EQ(f.regions()[i], 0u) << "region " << i;
}

}  // namespace
}  // namespace softwrap
