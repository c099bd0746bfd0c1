// alias_filter.cc — sizing, publishing and sweeping the alias filter.
#include "alias/alias_filter.h"

#include <bit>

namespace softwrap {

AliasFilter::AliasFilter(const void* base, uint64_t span, uint32_t granule, uint32_t* live, uint64_t* regions)
    : base_(reinterpret_cast<uintptr_t>(base)),
      shift_(static_cast<uint32_t>(std::countr_zero(granule))), live_(live ? live : &own_live_), regions_(regions) {
  if (!regions_) {
    own_regions_.reset(new uint64_t[kCoarseSlots]());
    regions_ = own_regions_.get();
  }
  for (uint64_t i = 0; i < kCoarseSlots; ++i) __atomic_store_n(&regions_[i], 0, __ATOMIC_RELAXED);
  uint64_t want = (span + granule - 1) >> shift_;
  want = std::bit_ceil(want < 64 ? uint64_t{64} : want);
  if (want > (uint64_t{1} << kMaxSlotsLog2)) want = uint64_t{1} << kMaxSlotsLog2;
  mask_ = static_cast<uint32_t>(want - 1);
  slots_.reset(new uint32_t[want]());  // all 0: clear for live = 1
  __atomic_store_n(live_, 1u, __ATOMIC_RELEASE);
}

void AliasFilter::publish_oldest(uint64_t oldest) {
  __atomic_store_n(live_, static_cast<uint32_t>(oldest + 1), __ATOMIC_RELEASE);
  // Lower the regions whose newest raise is retired now (the home writes
  // came before, so the release CAS publishes them to a reader that finds
  // the region 0); a raise since the load wins the CAS.
  for (uint64_t i = 0; i < kCoarseSlots; ++i) {
    uint64_t cur = __atomic_load_n(&regions_[i], __ATOMIC_RELAXED);
    if (cur != 0 && cur <= oldest) {
      __atomic_compare_exchange_n(&regions_[i], &cur, 0, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    }
  }
  const bool crossed = (oldest + 1) / kSweepPeriod != (published_ + 1) / kSweepPeriod;
  published_ = oldest;
  if (crossed) sweep();
}

void AliasFilter::release(CoarseMarks& m) {
  for (unsigned words = m.words_; words; words &= words - 1) {
    const unsigned w = static_cast<unsigned>(std::countr_zero(words));
    for (uint64_t bits = m.bits_[w]; bits; bits &= bits - 1) {
      [[maybe_unused]] const uint64_t was =
          __atomic_fetch_sub(&regions_[w * 64 + static_cast<uint64_t>(std::countr_zero(bits))], 1, __ATOMIC_RELEASE);
      assert(was > 0 && "alias filter: a region's count went below zero (it would read as clear)");
    }
    m.bits_[w] = 0;
  }
  m.words_ = 0;
}

void AliasFilter::sweep() {
  const uint32_t l = live();
  for (uint64_t i = 0; i <= mask_; ++i) {
    uint32_t cur = __atomic_load_n(&slots_[i], __ATOMIC_RELAXED);
    // A raiser that got in first leaves the slot raised: nothing to move.
    if (raised(cur, l) || cur == l - 1) continue;
    __atomic_compare_exchange_n(&slots_[i], &cur, l - 1, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
  }
}

}  // namespace softwrap
