// lanes.cc — lane acquisition.
#include "log/lanes.h"

#include <sched.h>

#include "pool/pool.h"

namespace softwrap {

// Full (or no buffer yet): twice the room, the marks in order from 0.
void Lane::grow_and_push(FrameMark m) {
  const uint32_t cap = frames_ ? uint32_t{1} << frames_log2_ : 0;
  const uint8_t log2 = frames_ ? frames_log2_ + 1 : 6;
  auto* grown = new FrameMark[size_t{1} << log2];
  for (uint32_t k = 0; k < frames_count_; ++k) grown[k] = frames_[(frames_head_ + k) & (cap - 1)];
  delete[] frames_;
  frames_ = grown;
  frames_log2_ = log2;
  frames_head_ = 0;
  push_frame(m);
}

void Lane::reclaim_slow(uint64_t retired) {
  while (frames_count_ != 0 && oldest_frame().seq <= retired) {
    reclaimed = oldest_frame().end;
    pop_frame();
  }
}

LaneSet::LaneSet(PoolFile* pool) {
  const PoolHeader& h = pool->header();
  count_ = h.lanes;
  lanes_ = std::make_unique<Lane[]>(count_);
  for (uint32_t i = 0; i < count_; ++i) {
    Lane& l = lanes_[i];
    l.index = i;
    l.base = pool->lane_base(i);
    l.size = h.lane_size;
  }
}

uint32_t LaneSet::acquire(uint32_t hint, UsableFn usable, void* ctx) {
  const uint32_t n = count();
  uint32_t i = hint < n ? hint : 0;
  for (unsigned spins = 0;; ++spins) {
    uint32_t fallback = n;  // a free lane `usable` refused, kept if nothing better turns up
    for (uint32_t k = 0; k < n; ++k) {
      Lane& l = lanes_[i];
      bool expected = false;
      if (!l.busy.load(std::memory_order_relaxed) &&
          l.busy.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
        if (usable == nullptr || usable(ctx, l)) {
          if (fallback != n) release(fallback);
          return i;
        }
        if (fallback == n) {
          fallback = i;
        } else {
          release(i);
        }
      }
      i = (i + 1 == n) ? 0 : i + 1;
    }
    if (fallback != n) return fallback;
    if (spins > 16) sched_yield();
  }
}

void LaneSet::release(uint32_t i) { lanes_[i].busy.store(false, std::memory_order_release); }

}  // namespace softwrap
