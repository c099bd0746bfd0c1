// lanes.cc — lane acquisition.
#include "log/lanes.h"

#include <sched.h>

#include "pool/pool.h"

namespace softwrap {

LaneSet::LaneSet(PoolFile* pool) {
  const PoolHeader& h = pool->header();
  lanes_.reserve(h.lanes);
  for (uint32_t i = 0; i < h.lanes; ++i) {
    auto l = std::make_unique<Lane>();
    l->index = i;
    l->base = pool->lane_base(i);
    l->size = h.lane_size;
    lanes_.push_back(std::move(l));
  }
}

uint32_t LaneSet::acquire(uint32_t hint, UsableFn usable, void* ctx) {
  const uint32_t n = count();
  uint32_t i = hint < n ? hint : 0;
  for (unsigned spins = 0;; ++spins) {
    uint32_t fallback = n;  // a free lane `usable` refused, kept if nothing better turns up
    for (uint32_t k = 0; k < n; ++k) {
      Lane& l = *lanes_[i];
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

void LaneSet::release(uint32_t i) { lanes_[i]->busy.store(false, std::memory_order_release); }

}  // namespace softwrap
