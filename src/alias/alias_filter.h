// alias_filter.h — which parts of a pool may have a live alias: the one
// check an inline load makes (softwrap.h, "Inline access") before it reads
// home, and the first check of the engines' own read paths.
//
// Approach.  A direct-mapped array of 32-bit slots; the byte at address a
// belongs to slot (a >> shift) & mask (the address, not the pool offset:
// the inline check then needs no subtraction), so a slot covers `granule`
// bytes of every mask+1-th stretch of the pool (far apart lines share a
// slot: a raised slot sends their loads to the library too, which is only
// slower).  The filter takes pool offsets and adds the mapping's address.  A slot
// is *raised* when (int32_t)(value - live) >= 0, where live is a word of the
// pool's public face (sw_pool_hot::live).  Two ways to use it:
//
//   generations (the softwrap engine's global tables): before an alias of
//   a word in table generation g becomes visible, raise_gen() lifts the
//   slot to at least g + 1 (a compare-and-swap to the larger value, so a
//   raiser that read an older generation never lowers a newer raise); the
//   ring publishes live = 1 + the oldest generation not yet retired, after
//   the retired tables' values are home.  Nothing is ever lowered slot by
//   slot: retiring a table clears every slot whose newest raise was in it
//   or older.  Values are generations modulo 2^32 compared as serial
//   numbers, so an old value must never fall 2^31 generations behind:
//   whenever live crosses a multiple of kSweepPeriod, sweep() moves every
//   cleared slot up to live - 1 (still clear).
//
//   counts (softwrap-local's per-thread tables; live stays 1): each alias
//   key a thread's open wrap creates adds 1 to its slots, and the wrap's
//   end subtracts what it added, after its values are home.
//
// The coarse level.  Beside the slots, kCoarseSlots 64-bit *regions*
// (4 KiB in all: they stay in the first-level cache, where the fine slots
// of a big pool, up to 256 KiB, do not): region (a >> kCoarseShift) &
// (kCoarseSlots - 1), 2 MiB of address each, so a GiB of the pool before
// they wrap around (as the slots do).  Both are constants, which the
// header's inline check compiles in (SW_HOT_REGION_SHIFT, SW_HOT_REGIONS):
// the check is then a shift, a mask and a compare of one cache-resident
// word with 0 (no live word).  The regions live in the pool's public face
// (sw_pool_hot::regions, a constant offset from the handle) where the pool
// has one.  A region is 0 when no live alias touches it; only a load of a
// nonzero region reads its fine slot.  Whatever raises a slot raises its
// region first, and a region is lowered to 0 only when every slot raise it
// covers is over:
//   generations: the region holds 1 + the newest generation that raised
//   anything in it (64-bit: never wraps, no sweep); publish_oldest() sets
//   to 0, with a CAS from the value it read, every region whose value is
//   below the new live (a concurrent raise wins the CAS);
//   counts: a region counts the open wraps (not the keys) that hold counts
//   in it — each wrap keeps a CoarseMarks (one bit per region) and adds 1
//   to a region the first time it counts a slot there; release(), at the
//   wrap's end and after its slots' counts are subtracted, subtracts its
//   regions' ones.
//
// Memory order.  Raises are release (a CAS), the published live is a
// release store after the home writes it covers, a region's lowering is a
// release CAS after the live store (and a count's release subtraction
// after the slots'), and readers load the region, live and the slot with
// acquire: a reader that finds a region 0 or a slot clear and then reads
// home sees the values of every table the lowering or the live word says
// is retired.  The argument in full is in docs/design.md ("The alias
// filter").
#ifndef SOFTWRAP_ALIAS_ALIAS_FILTER_H_
#define SOFTWRAP_ALIAS_ALIAS_FILTER_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace softwrap {

class AliasFilter {
 public:
  static constexpr unsigned kMaxSlotsLog2 = 16;  // 256 KiB of slots at most
  static constexpr uint64_t kSweepPeriod = uint64_t{1} << 28;
  // Ranges that cover more slots than this are "maybe aliased" to clear()
  // (a caller then takes its overlaying path).
  static constexpr uint64_t kMaxCheckSlots = 64;
  static constexpr unsigned kCoarseSlotsLog2 = 9;  // 512 regions of 8 bytes: 4 KiB
  static constexpr uint64_t kCoarseSlots = uint64_t{1} << kCoarseSlotsLog2;
  static constexpr unsigned kCoarseShift = 21;  // 2 MiB a region (at least a slot: a granule is at most 64 KiB)

  // Counts mode: the regions one wrap has counted in (add*() sets a bit,
  // release() subtracts and clears them).  One per thread's wrap.
  class CoarseMarks {
   public:
    bool any() const { return words_ != 0; }

   private:
    friend class AliasFilter;
    static_assert(kCoarseSlots / 64 <= 8, "words_ has a bit per word of bits_");
    uint64_t bits_[kCoarseSlots / 64] = {};
    uint8_t words_ = 0;  // which words of bits_ are not 0 (release() visits only those)
  };

  // A filter for the pool mapped at `base`, offsets below `span` (its
  // maximum size), at `granule` bytes (a power of two, 64..65536) a slot:
  // as many slots as the span needs, a power of two from 64 up to
  // 2^kMaxSlotsLog2.  `live` is where the live word is published (the
  // pool's sw_pool_hot::live), or nullptr for a word of the filter's own;
  // `regions` likewise (sw_pool_hot::regions, kCoarseSlots of them, 0).
  AliasFilter(const void* base, uint64_t span, uint32_t granule, uint32_t* live, uint64_t* regions = nullptr);
  AliasFilter(const AliasFilter&) = delete;
  AliasFilter& operator=(const AliasFilter&) = delete;

  const uint32_t* slots() const { return slots_.get(); }
  uint32_t shift() const { return shift_; }
  uint32_t mask() const { return mask_; }
  uint32_t live() const { return __atomic_load_n(live_, __ATOMIC_ACQUIRE); }
  const uint64_t* regions() const { return regions_; }
  // The value of the region covering offset o (0: no live alias in it).
  uint64_t region_of(uint64_t o) const { return __atomic_load_n(region_at(o), __ATOMIC_ACQUIRE); }

  static bool raised(uint32_t value, uint32_t live) { return static_cast<int32_t>(value - live) >= 0; }

  // Whether no slot of [off, off+n) (n > 0) is raised.
  bool clear(uint64_t off, size_t n) const {
    const uint64_t first = (base_ + off) >> shift_, last = (base_ + off + n - 1) >> shift_;
    if (last - first >= kMaxCheckSlots) return false;
    const uint32_t l = live();
    for (uint64_t i = first; i <= last; ++i) {
      if (raised(__atomic_load_n(&slots_[i & mask_], __ATOMIC_ACQUIRE), l)) return false;
    }
    return true;
  }
  bool clear_word(uint64_t w) const { return !raised(__atomic_load_n(slot_at(w), __ATOMIC_ACQUIRE), live()); }

  // ---- generations
  // Raises the slots of [off, off+n) to at least gen + 1 (serially).
  void raise_gen(uint64_t off, size_t n, uint64_t gen) {
    for_regions(off, n, [&](uint64_t* r) { raise_region(r, gen); });
    for_slots(off, n, [&](uint32_t* s) { raise_slot(s, gen, __atomic_load_n(s, __ATOMIC_RELAXED)); });
  }
  // The same for the naturally aligned word at w (one slot: a granule is
  // at least 64 bytes).  A store's common case: one load and compare (the
  // slot is raised already in this generation), else one CAS.
  void raise_word(uint64_t w, uint64_t gen) {
    raise_region(region_at(w), gen);
    uint32_t* s = slot_at(w);
    raise_slot(s, gen, __atomic_load_n(s, __ATOMIC_RELAXED));
  }
  // raise_word, and whether the slot was clear before it (clear_word): one
  // look at the slot for both (a WCL-queued store's).
  bool raise_word_was_clear(uint64_t w, uint64_t gen) {
    raise_region(region_at(w), gen);
    uint32_t* s = slot_at(w);
    const uint32_t cur = __atomic_load_n(s, __ATOMIC_ACQUIRE);
    const bool was_clear = !raised(cur, live());
    raise_slot(s, gen, cur);
    return was_clear;
  }
  // 1 + the newest generation that raised a slot (0: none yet); a hint for
  // the ring, which must retire a table that raised slots even when it
  // holds no entry (a WCL-queued store that turned out unchanged, or was
  // aborted, raised its slot and left nothing in the table).
  uint64_t newest_raise() const { return newest_.load(std::memory_order_relaxed); }
  // Publishes live = oldest + 1, oldest being the oldest generation not
  // retired (every older table's values are home), lowers the regions
  // whose newest raise is retired now, and sweeps when live crossed a
  // multiple of kSweepPeriod.  One publisher at a time.
  void publish_oldest(uint64_t oldest);
  // Moves every cleared slot to live - 1 (still clear), so that no value
  // falls 2^31 behind live.  Concurrent raisers are safe (each move is a
  // compare-and-swap from a cleared value).
  void sweep();

  // ---- counts
  // A wrap's counts: add marks the range's regions in `m` (counting the
  // wrap in each region the first time) before it counts the slots; sub
  // counts the slots down, and release(m), after the wrap's last sub,
  // counts the wrap out of its regions.
  void add(uint64_t off, size_t n, CoarseMarks& m) {
    for_regions(off, n, [&](uint64_t* r) { mark_region(r, m); });
    for_slots(off, n, count_up);
  }
  void sub(uint64_t off, size_t n) { for_slots(off, n, count_down); }
  // The same for the naturally aligned word at w (one slot).
  void add_word(uint64_t w, CoarseMarks& m) {
    mark_region(region_at(w), m);
    count_up(slot_at(w));
  }
  void sub_word(uint64_t w) { count_down(slot_at(w)); }
  void release(CoarseMarks& m);

  // The value of the slot covering offset o (tests).
  uint32_t slot_of(uint64_t o) const {
    return __atomic_load_n(slot_at(o), __ATOMIC_ACQUIRE);
  }

 private:
  // The slot of the byte at offset o.
  uint32_t* slot_at(uint64_t o) const { return &slots_[((base_ + o) >> shift_) & mask_]; }
  // The region of the byte at offset o.
  uint64_t* region_at(uint64_t o) const { return &regions_[((base_ + o) >> kCoarseShift) & (kCoarseSlots - 1)]; }
  // Raises region *r to at least gen + 1 (a store's common case: one load
  // and compare, the region is raised already in this generation).
  static void raise_region(uint64_t* r, uint64_t gen) {
    uint64_t cur = __atomic_load_n(r, __ATOMIC_RELAXED);
    while (cur < gen + 1) {
      if (__atomic_compare_exchange_n(r, &cur, gen + 1, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) return;
    }
  }
  // Counts the wrap of `m` in region *r, once.
  void mark_region(uint64_t* r, CoarseMarks& m) const {
    const uint64_t i = static_cast<uint64_t>(r - regions_);
    uint64_t& bits = m.bits_[i / 64];
    if (bits & (uint64_t{1} << (i % 64))) return;
    bits |= uint64_t{1} << (i % 64);
    m.words_ = static_cast<uint8_t>(m.words_ | (1u << (i / 64)));
    __atomic_fetch_add(r, 1, __ATOMIC_RELEASE);
  }
  // Raises *s (whose value was cur) to at least gen + 1.
  void raise_slot(uint32_t* s, uint64_t gen, uint32_t cur) {
    const uint32_t v = static_cast<uint32_t>(gen + 1);
    while (static_cast<int32_t>(cur - v) < 0) {
      if (__atomic_compare_exchange_n(s, &cur, v, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
        // The hint only moves up: two raisers of different generations
        // must not leave the older one's (a separate load and store could,
        // and a table that raised slots without an entry would then be
        // skipped by quiesce and the idle switch).
        uint64_t h = newest_.load(std::memory_order_relaxed);
        while (h < gen + 1 && !newest_.compare_exchange_weak(h, gen + 1, std::memory_order_relaxed)) {
        }
        return;
      }
    }
  }
  static void count_up(uint32_t* s) { __atomic_fetch_add(s, 1, __ATOMIC_RELEASE); }
  static void count_down(uint32_t* s) {
    [[maybe_unused]] const uint32_t was = __atomic_fetch_sub(s, 1, __ATOMIC_RELEASE);
    assert(was > 0 && "alias filter: a count went below zero (it would read as clear)");
  }
  // f(slot) once for each slot [off, off+n) maps to (a range longer than
  // the filter visits each slot once).
  template <class F>
  void for_slots(uint64_t off, size_t n, F&& f) {
    const uint64_t first = (base_ + off) >> shift_, last = (base_ + off + n - 1) >> shift_;
    const uint64_t count = last - first + 1 > uint64_t{mask_} + 1 ? uint64_t{mask_} + 1 : last - first + 1;
    for (uint64_t i = 0; i < count; ++i) f(&slots_[(first + i) & mask_]);
  }
  // f(region) once for each region [off, off+n) maps to.
  template <class F>
  void for_regions(uint64_t off, size_t n, F&& f) {
    const uint64_t first = (base_ + off) >> kCoarseShift, last = (base_ + off + n - 1) >> kCoarseShift;
    const uint64_t count = last - first + 1 > kCoarseSlots ? kCoarseSlots : last - first + 1;
    for (uint64_t i = 0; i < count; ++i) f(&regions_[(first + i) & (kCoarseSlots - 1)]);
  }

  // Read by every raise and check: a cache line of their own, which no
  // thread writes (the retirer's and the raisers' words below are in lines
  // of their own, so neither makes the other's reads miss).
  alignas(64) std::unique_ptr<uint32_t[]> slots_;
  uint64_t base_;  // the mapping's address
  uint32_t shift_;
  uint32_t mask_;
  uint32_t* live_;
  // The regions (the pool's face's, or own_regions_): written by raisers
  // and the publisher, in lines of their own.
  uint64_t* regions_;
  std::unique_ptr<uint64_t[]> own_regions_;
  alignas(64) uint32_t own_live_ = 1;
  uint64_t published_ = 0;  // the last oldest generation published (the retirer's)
  alignas(64) std::atomic<uint64_t> newest_{0};  // the raisers'
};

}  // namespace softwrap

#endif  // SOFTWRAP_ALIAS_ALIAS_FILTER_H_
