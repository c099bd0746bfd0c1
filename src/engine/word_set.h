// word_set.h — the set of 8-byte words a wrap has already saved (undo).
//
// Exact, so that each word is saved once and the records of a wrap cover
// disjoint words (rollback may then apply them in any order, straight from
// the log, with no DRAM copy).  Small wraps use a flat open-addressing
// table of 1024 slots, emptied by clearing only the slots they used; a wrap
// that saves more words moves to one 512-bit map per 4 KiB page, so DRAM
// stays at about 2% of the bytes saved (or of the pool, for scattered
// words) however large the wrap.
#ifndef SOFTWRAP_ENGINE_WORD_SET_H_
#define SOFTWRAP_ENGINE_WORD_SET_H_

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/hash.h"

namespace softwrap {

class WordSet {
 public:
  WordSet() { slots_.fill(kEmpty); }

  // Adds the word at offset w (8-byte aligned); true if it was not there.
  bool insert(uint64_t w) {
    if (!big_) {
      uint32_t i = static_cast<uint32_t>(mix64(w)) & (kSlots - 1);
      for (;;) {
        if (slots_[i] == w) return false;
        if (slots_[i] == kEmpty) break;
        i = (i + 1) & (kSlots - 1);
      }
      if (used_.size() < kSlots / 2) {
        slots_[i] = w;
        used_.push_back(i);
        return true;
      }
      go_big();
    }
    return add_big(w);
  }

  void clear() {
    for (uint32_t i : used_) slots_[i] = kEmpty;
    used_.clear();
    if (big_) {
      pages_ = {};
      big_ = false;
    }
  }

 private:
  static constexpr uint32_t kSlots = 1024;
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // never a word offset (those are 8-aligned)
  using Bits = std::array<uint64_t, 8>;             // one bit per word of a 4 KiB page

  bool add_big(uint64_t w) {
    Bits& b = pages_[w >> 12];
    const uint64_t k = (w >> 3) & 511, bit = uint64_t{1} << (k & 63);
    if (b[k >> 6] & bit) return false;
    b[k >> 6] |= bit;
    return true;
  }
  void go_big() {
    big_ = true;
    for (uint32_t i : used_) {
      add_big(slots_[i]);
      slots_[i] = kEmpty;
    }
    used_.clear();
  }

  std::array<uint64_t, kSlots> slots_;
  std::vector<uint32_t> used_;
  bool big_ = false;
  std::unordered_map<uint64_t, Bits> pages_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ENGINE_WORD_SET_H_
