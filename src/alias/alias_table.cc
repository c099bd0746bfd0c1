// alias_table.cc — insertion by compare-and-swap, recycling, page arena.
#include "alias/alias_table.h"

#include <cstddef>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/relaxed_copy.h"

namespace softwrap {

const char* table_state_name(TableState s) {
  switch (s) {
    case TableState::kEmpty: return "Empty";
    case TableState::kActive: return "Active";
    case TableState::kFull: return "Full";
    case TableState::kClosed: return "Closed";
    case TableState::kRetired: return "Retired";
  }
  return "?";
}

PageArena::~PageArena() {
  for (char* b : blocks_) std::free(b);
}

char* PageArena::allocate() {
  std::lock_guard<std::mutex> g(mu_);
  if (used_in_last_ == kPagesPerBlock) {
    if (current_ + 1 < blocks_.size()) {
      ++current_;  // a block kept from an earlier generation
    } else {
      char* b = static_cast<char*>(std::aligned_alloc(64, page_size_ * kPagesPerBlock));
      if (!b) return nullptr;
      blocks_.push_back(b);
      current_ = blocks_.size() - 1;
    }
    used_in_last_ = 0;
  }
  return blocks_[current_] + page_size_ * used_in_last_++;
}

void PageArena::reset() {
  // Keep the blocks for the next generation (a table refills to about the
  // same size, and fresh memory costs a page fault per 4 KiB), up to a
  // bound, so one outsized generation does not pin its memory.
  std::lock_guard<std::mutex> g(mu_);
  const size_t keep = std::max<size_t>(1, kKeepBytes / (page_size_ * kPagesPerBlock));
  while (blocks_.size() > keep) {
    std::free(blocks_.back());
    blocks_.pop_back();
  }
  current_ = 0;
  used_in_last_ = blocks_.empty() ? kPagesPerBlock : 0;
}

AliasTable::AliasTable(uint32_t capacity, size_t page_size, bool keep_base)
    : mask_(capacity - 1),
      keep_base_(keep_base),
      page_size_(page_size),
      page_mask_(~(uint64_t{page_size} - 1)),
      filter_mask_(std::max<uint64_t>(uint64_t{capacity} * 4, 4096) - 1),
      filter_(new FilterBlock[(filter_mask_ + 1) / 64]),
      entries_(new AliasEntry[capacity]),
      used_(new std::atomic<uint32_t>[capacity]),
      base_(keep_base ? new uint64_t[capacity] : nullptr),
      arena_(page_alloc_size(page_size) + (keep_base ? page_size : 0)) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(offsetof(AliasTable, used_) + sizeof(used_) <= 64 && offsetof(AliasTable, count_) == 0,
                "what a wrap reads of a table lies on its first line");
#pragma GCC diagnostic pop
  filter_clear_all();
}

void AliasTable::filter_clear_all() {
  for (uint64_t i = 0; i < (filter_mask_ + 1) / 64; ++i) {
    for (std::atomic<uint64_t>& w : filter_[i].w) w.store(0, std::memory_order_relaxed);
  }
}

AliasEntry* AliasTable::find_or_insert(uint64_t key, bool* inserted) {
  uint32_t i = static_cast<uint32_t>(mix64(key)) & mask_;
  bool filtered = false;
  for (;;) {
    AliasEntry& e = entries_[i];
    uint64_t k = e.key.load(std::memory_order_acquire);
    if (k == key) {
      *inserted = false;
      return &e;
    }
    if (k == 0) {
      if (count_.load(std::memory_order_relaxed) >= hard_limit()) return nullptr;
      if (!filtered) {
        // Before the key is visible, so find() never skips it.
        const uint64_t hint = page_hint(key_page(key));
        FilterBlock& b = block(hint);
        filter_set(b.w[kPageWord], bit(hint));
        if (!(key & 1)) {
          filter_set(b.w[kWordKeyWord], bit(hint));
          const uint64_t gb = granule_bit(key & ~uint64_t{63});
          filter_set(b.w[kGranuleWord + gb / 64], uint64_t{1} << (gb & 63));
        }
        filtered = true;
      }
      if (e.key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) {
        // Every successful CAS claims a distinct slot, so the index stays
        // below the capacity even when racing inserters pass the limit.
        used_[count_.fetch_add(1, std::memory_order_acq_rel)].store(i, std::memory_order_release);
        *inserted = true;
        return &e;
      }
      if (k == key) {  // lost the race to the same key
        *inserted = false;
        return &e;
      }
    }
    i = (i + 1) & mask_;
  }
}

void AliasTable::clear() {
  const uint32_t n = count_.load(std::memory_order_relaxed);
  const uint64_t filter_blocks = (filter_mask_ + 1) / 64;
  if (n > mask_ / 4) {
    for (uint32_t i = 0; i <= mask_; ++i) {
      AliasEntry& e = entries_[i];
      e.key.store(0, std::memory_order_relaxed);
      e.value.store(0, std::memory_order_relaxed);
      e.meta.store(0, std::memory_order_relaxed);
    }
  } else {
    // Few keys (softwrap-local clears its table after every wrap): visit
    // only them, and clear only their filter blocks if that is less work.
    const bool by_key = uint64_t{n} * 4 < filter_blocks;
    for (uint32_t k = 0; k < n; ++k) {
      AliasEntry& e = entries_[used_[k].load(std::memory_order_relaxed)];
      if (by_key) {
        const uint64_t key = e.key.load(std::memory_order_relaxed);
        // Only keys set bits, and every bit of a block is set by a key
        // whose page falls in it.
        for (std::atomic<uint64_t>& w : block(page_hint(key_page(key))).w) w.store(0, std::memory_order_relaxed);
      }
      e.key.store(0, std::memory_order_relaxed);
      e.value.store(0, std::memory_order_relaxed);
      e.meta.store(0, std::memory_order_relaxed);
    }
    if (!by_key) filter_clear_all();
  }
  if (n > mask_ / 4) filter_clear_all();
  count_.store(0, std::memory_order_relaxed);
  pages_.store(0, std::memory_order_relaxed);
  has_pages.store(false, std::memory_order_relaxed);
  has_words.store(false, std::memory_order_relaxed);
  arena_.reset();
  seq_boundary = 0;
}

void page_write(char* page, size_t page_size, size_t off, const void* src, size_t n) {
  relaxed_copy(page + off, src, n);
  uint64_t* mask = mask_words(page, page_size);
  for (size_t c = off / 64; c * 64 < off + n; ++c) {
    const uint64_t bits = chunk_bits(c, off, off + n);
    if (bits == ~uint64_t{0}) {
      __atomic_store_n(mask + c, bits, __ATOMIC_RELEASE);
    } else if ((__atomic_load_n(mask + c, __ATOMIC_RELAXED) & bits) != bits) {
      __atomic_fetch_or(mask + c, bits, __ATOMIC_RELEASE);
    }
  }
}

void page_overlay(const char* page, size_t page_size, size_t off, size_t n, unsigned char* out) {
  // 64 data bytes (one 8-byte mask word) at a time: most of a page is
  // either untouched (skip) or wholly written (one copy).
  const size_t end = off + n;
  size_t i = off;
  while (i < end) {
    const size_t chunk = i & ~size_t{63};
    const size_t stop = std::min(end, chunk + 64);
    const uint64_t range = chunk_bits(chunk / 64, i, stop);
    uint64_t m = mask_word(page, page_size, chunk / 64) & range;
    if (m == 0) {
      i = stop;
      continue;
    }
    if (m == range) {
      relaxed_copy(out + (i - off), page + i, stop - i);
      i = stop;
      continue;
    }
    while (m) {  // runs of set bits
      const unsigned b = static_cast<unsigned>(__builtin_ctzll(m));
      const uint64_t from_b = m >> b;
      const unsigned len = ~from_b == 0 ? 64 - b : static_cast<unsigned>(__builtin_ctzll(~from_b));
      relaxed_copy(out + (chunk + b - off), page + chunk + b, len);
      m &= len + b >= 64 ? 0 : ~uint64_t{0} << (b + len);
    }
    i = stop;
  }
}

void overlay_table(AliasTable& t, uint64_t off, size_t n, size_t page_size, uint64_t hint, unsigned char* out) {
  const uint64_t po = off & ~(uint64_t{page_size} - 1);
  if (t.has_pages.load(std::memory_order_acquire)) {
    if (AliasEntry* e = t.probe(page_key(po)); e && (e->meta.load(std::memory_order_acquire) & kMetaValid)) {
      page_overlay(reinterpret_cast<const char*>(e->value.load(std::memory_order_relaxed)), page_size, off - po, n, out);
    }
  }
  if (t.may_hold_words(hint)) {
    for (uint64_t g = off & ~uint64_t{63}; g < off + n; g += 64) {
      if (!t.may_hold_granule(hint, g)) continue;
      for (uint64_t w = std::max(g, off & ~uint64_t{7}); w < std::min(g + 64, off + n); w += 8) {
        AliasEntry* e = t.probe(w);
        if (!e || !(e->meta.load(std::memory_order_acquire) & kMetaValid)) continue;
        const uint64_t v = e->value.load(std::memory_order_relaxed);
        const uint64_t lo = std::max(w, off), hi = std::min(w + 8, off + n);
        std::memcpy(out + (lo - off), reinterpret_cast<const char*>(&v) + (lo - w), hi - lo);
      }
    }
  }
}

}  // namespace softwrap
