// lru.h — the replacement choice the L1 and the LLC share.
#ifndef SOFTWRAP_THEMIS_LRU_H_
#define SOFTWRAP_THEMIS_LRU_H_

namespace softwrap::themis {

// The way of a set to fill: the first invalid one, else the least recently
// used (smallest `used` stamp).  Line needs `valid` and `used`.
template <class Line>
Line* lru_way(Line* set, unsigned ways) {
  Line* v = &set[0];
  for (unsigned w = 0; w < ways; ++w) {
    if (!set[w].valid) return &set[w];
    if (set[w].used < v->used) v = &set[w];
  }
  return v;
}

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_LRU_H_
