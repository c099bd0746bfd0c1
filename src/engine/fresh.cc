// fresh.cc — the blocks an open wrap allocated, written in place (fresh.h).
#include "engine/fresh.h"

#include <algorithm>
#include <cstring>

#include "common/counters.h"
#include "common/relaxed_copy.h"
#include "log/redo_log.h"
#include "medium/medium.h"
#include "pool/pool_format.h"

namespace softwrap {

// Fresh bytes go home with temporal stores, each line flushed as the wrap
// moves on, never streamed.  Streaming large ranges measured faster on x86
// (a 60 MiB zero-fill at 0.44x-0.62x of memset + flush, against about 1x),
// but a wrap may store to a line temporally and then stream over it (a
// block freed and allocated again in one wrap, a range written twice):
// both pending at once on one word is what the crash simulator's model
// cannot order (model.h), so those paths could not be checked.  Temporal
// stores also keep the lines cached for the reads that usually follow (a
// new B+tree node is read by the next insert).

bool FreshSet::lookup(uint64_t off, uint64_t n) const {
  auto it = ranges_.upper_bound(off);
  if (it == ranges_.begin()) return false;
  --it;
  if (off + n > it->second) return false;
  last_lo_ = it->first;
  last_hi_ = it->second;
  return true;
}

bool FreshSet::first_overlap(uint64_t off, uint64_t end, uint64_t* lo, uint64_t* hi) const {
  if (end <= lo_ || off >= hi_) return false;
  auto it = ranges_.upper_bound(off);
  if (it != ranges_.begin() && std::prev(it)->second > off) --it;
  if (it == ranges_.end() || it->first >= end) return false;
  *lo = it->first;
  *hi = it->second;
  return true;
}

void FreshSet::add(uint64_t lo, uint64_t hi) {
  uint64_t& end = ranges_[lo];
  bytes_ += (hi - lo) - (end ? end - lo : 0);
  end = hi;
  lo_ = std::min(lo_, lo);
  hi_ = std::max(hi_, hi);
}

void FreshSet::remove(uint64_t lo) {
  auto it = ranges_.find(lo);
  if (it == ranges_.end()) return;
  if (last_lo_ == it->first) last_lo_ = 1, last_hi_ = 0;
  bytes_ -= it->second - it->first;
  ranges_.erase(it);
  if (ranges_.empty()) {
    lo_ = ~uint64_t{0};
    hi_ = 0;
  }
  // Otherwise the bounds stay (wider than needed, still correct).
}

void FreshSet::clear() {
  if (hi_ == 0 && !written_) return;  // the common wrap: nothing was fresh
  ranges_.clear();
  bytes_ = 0;
  lo_ = ~uint64_t{0};
  hi_ = 0;
  last_lo_ = 1;
  last_hi_ = 0;
  dirty_.clear();
  written_ = false;
}

void FreshSet::store(Medium& m, void* dst, uint64_t v, unsigned size) {
  counters().stores.add();
  if (compare) {
    m.load(dst, size);  // a medium that records loads sees the compare's read
    if (holds_value(dst, v, size)) return counters().wcl_eliminated.add();
  }
  m.store(dst, v, size);
  wrote(m, dst, size);
}

void FreshSet::write(Medium& m, void* dst, const void* src, size_t n) {
  counters().stores.add();
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (!compare) return put(m, d, s, n);
  m.load(d, n);
  // Runs of words that differ from home; a word equal to home is skipped.
  static constexpr unsigned char kZeroWord[8] = {};
  size_t run = 0;
  bool open = false;
  for (size_t i = 0; i < n;) {
    const size_t len = std::min<size_t>(n - i, 8 - (reinterpret_cast<uintptr_t>(d + i) & 7));
    if (std::memcmp(d + i, s ? s + i : kZeroWord, len) == 0) {
      counters().wcl_eliminated.add();
      if (open) put(m, d + run, s ? s + run : nullptr, i - run);
      open = false;
    } else if (!open) {
      run = i;
      open = true;
    }
    i += len;
  }
  if (open) put(m, d + run, s ? s + run : nullptr, n - run);
}

void FreshSet::put(Medium& m, unsigned char* dst, const unsigned char* src, size_t n) {
  if (src) {
    m.write(dst, src, n);
  } else {
    m.zero(dst, n);
  }
  wrote(m, dst, n);
}

void FreshSet::wrote(Medium& m, const void* p, size_t n) {
  written_ = true;
  counters().fresh_words.add(words_touched(p, n));
  if (control != FreshControl::kSkipFlush) dirty_.add(m, p, n);  // every line but the last flushed now
}

void FreshSet::flush(Medium& m) {
  if (control != FreshControl::kSkipFlush) dirty_.flush(m);
  dirty_.clear();
}

bool FreshSet::order_written(Medium& m, RedoWriter& log, const PoolFile& pool, bool vouch) {
  if (bytes_ <= kLogMax) {
    if (control != FreshControl::kSkipLog) {
      for (const auto& [lo, hi] : ranges_) {
        if (!log.append_range(lo, pool.at(lo), hi - lo)) return false;
      }
    }
    if (control == FreshControl::kSkipLoggedFlush) dirty_.clear();  // the last line stays unflushed
    flush(m);
    return true;
  }
  if (!vouch || bytes_ > kVouchMax || pool.header().layout_version < kLayoutVersionV3) {
    flush(m);
    m.fence(FenceKind::kDataOrder);
    return true;
  }
  if (control != FreshControl::kSkipVouch) {
    for (const auto& [lo, hi] : ranges_) {
      const void* p = pool.at(lo);
      m.load(p, hi - lo);  // a medium that records loads sees the hash's read
      if (!log.append_fresh(lo, hi - lo, fresh_hash(p, lo, hi - lo))) return false;
    }
  }
  // Every line the hashes cover, not only those this wrap wrote: the bytes
  // it did not write are vouched for as well, and they may be dirty and
  // unflushed (an aborted wrap's, written into the same block and dropped
  // at abort), or equal to home only in the cache.
  if (control != FreshControl::kSkipFlush) {
    for (const auto& [lo, hi] : ranges_) m.flush(pool.at(lo), hi - lo);
  }
  dirty_.clear();
  return true;
}

}  // namespace softwrap
