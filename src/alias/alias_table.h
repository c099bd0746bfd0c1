// alias_table.h — a DRAM key-value table from persistent offsets to their
// newest values (full paper, section IV-A).
//
// Open addressing with linear probing over a power-of-two array of 24-byte
// entries {key, value, meta}, as in the paper.  Keys are inserted with one
// compare-and-swap and never deleted; the whole table is recycled after
// retirement.  Two kinds of key share a table:
//   word  key = offset of an 8-byte-aligned word;  value = the word
//   page  key = offset of a shadow page | 1;       value = DRAM page pointer
// A shadow page holds only the bytes written to it while its table was
// active: its data is followed by a mask, one bit per byte (mask byte i
// covers the 8-byte word i of the page).  Readers take masked bytes from the
// newest table that has them, so a page never copies another wrap's
// uncommitted bytes and an abort restores only what it wrote.  Within one
// table a word entry shadows the page entry covering it (sw_write keeps
// overlapping word entries current), so retirement writes the pages' dirty
// bytes first, then words.  meta holds a valid bit and the stamp of the wrap that
// last wrote the entry (so a wrap records an entry's old value for abort
// only on its first touch).  An entry whose valid bit is clear is absent to
// readers: a word entry created by an aborted wrap, or a page entry still
// being filled by its creator.
#ifndef SOFTWRAP_ALIAS_ALIAS_TABLE_H_
#define SOFTWRAP_ALIAS_ALIAS_TABLE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "common/hash.h"

namespace softwrap {

inline constexpr uint64_t kMetaValid = 1;

// A shadow page: page_size data bytes, then page_size/8 mask bytes.
inline size_t page_alloc_size(size_t page_size) { return page_size + page_size / 8; }

struct AliasEntry {
  std::atomic<uint64_t> key{0};
  std::atomic<uint64_t> value{0};
  std::atomic<uint64_t> meta{0};
};

// Shadow pages of one table, released all at once when it is recycled.
class PageArena {
 public:
  explicit PageArena(size_t page_size) : page_size_(page_size) {}
  ~PageArena();
  char* allocate();  // thread-safe; nullptr if out of memory
  void reset();      // REQUIRES: no concurrent users

 private:
  static constexpr size_t kPagesPerBlock = 64;
  static constexpr size_t kKeepBytes = size_t{16} << 20;
  size_t page_size_;
  std::mutex mu_;
  std::vector<char*> blocks_;
  size_t current_ = 0;  // block being filled
  size_t used_in_last_ = kPagesPerBlock;  // pages used in blocks_[current_]
};

enum class TableState : int { kEmpty = 0, kActive, kFull, kClosed, kRetired };
const char* table_state_name(TableState s);

class alignas(64) AliasTable {
 public:
  // keep_base: strict mode (api/strict.h) — the table also keeps, for each
  // word key and each shadow page, the value the word or page had (through
  // older tables, else home) when the key was inserted, so retirement can
  // tell whether home was changed behind the engine's back.
  AliasTable(uint32_t capacity, size_t page_size, bool keep_base = false);

  uint32_t capacity() const { return mask_ + 1; }
  uint32_t count() const { return count_.load(std::memory_order_relaxed); }
  // New keys are refused at this fill (3/4), keeping probes short.
  uint32_t hard_limit() const { return capacity() / 4 * 3; }

  // The filter summarises pages, not keys: a word key and a page key of
  // the same shadow page set the same bit, so a reader asks once per table
  // whether anything of a page may be here (page_hint(po), computed once
  // for all tables) before it probes for words or the page.
  static uint64_t page_hint(uint64_t page_off) { return mix64(page_off); }
  bool may_hold(uint64_t hint) const { return block(hint).w[kPageWord].load(std::memory_order_acquire) & bit(hint); }
  // Whether word keys of the page may be here (a second filter, set only by
  // word keys): writers and readers of a page that has a shadow page but no
  // word entries skip probing for each of its words.
  bool may_hold_words(uint64_t hint) const {
    return block(hint).w[kWordKeyWord].load(std::memory_order_acquire) & bit(hint);
  }
  // Whether word keys of the 64-byte granule at g (64-aligned) of the page
  // whose hint is page_hint may be here (a third filter, set only by word
  // keys): a reader overlaying a range probes only the words of granules
  // that may hold some.  A B+tree node read whole (~280 bytes) shares its
  // shadow page with other nodes whose counts were stored as words;
  // without this it probed every word of it.
  static uint64_t granule_hint(uint64_t g) { return mix64(g ^ 0x5bd1e995); }
  bool may_hold_granule(uint64_t page_hint, uint64_t g) const {
    const uint64_t gb = granule_bit(g);
    return block(page_hint).w[kGranuleWord + gb / 64].load(std::memory_order_acquire) & (uint64_t{1} << (gb & 63));
  }

  // Entry for key or nullptr.  Lock-free.
  AliasEntry* find(uint64_t key) {
    const uint64_t hint = page_hint(key_page(key));
    if (!((key & 1) ? may_hold(hint) : may_hold_words(hint))) return nullptr;  // most lookups miss
    return probe(key);
  }
  // find() for a key whose page the caller already checked with may_hold().
  AliasEntry* probe(uint64_t key) {
    uint32_t i = static_cast<uint32_t>(mix64(key)) & mask_;
    for (;;) {
      AliasEntry& e = entries_[i];
      const uint64_t k = e.key.load(std::memory_order_acquire);
      if (k == key) return &e;
      if (k == 0) return nullptr;
      i = (i + 1) & mask_;
    }
  }
  // Entry for key, inserting it (meta 0 = not yet valid) if absent.
  // nullptr if the table is at its hard limit.  *inserted tells which.
  AliasEntry* find_or_insert(uint64_t key, bool* inserted);

  // Iterates the entries in insertion order (retirement, quiesce, tests).
  // REQUIRES: no concurrent inserters (the table is not Active).
  template <class F>
  void for_each(F&& f) {
    const uint32_t n = count_.load(std::memory_order_acquire);
    for (uint32_t k = 0; k < n; ++k) f(entries_[used_[k].load(std::memory_order_acquire)]);
  }
  // The k-th entry inserted, k < count() (same requirement).
  AliasEntry& inserted(uint32_t k) { return entries_[used_[k].load(std::memory_order_acquire)]; }

  // A new shadow page with nothing written (mask clear); nullptr if out of
  // memory.  Thread-safe.
  char* new_page() {
    char* p = arena_.allocate();
    if (p) {
      std::memset(p + page_size_, 0, page_size_ / 8);
      pages_.fetch_add(1, std::memory_order_relaxed);
    }
    return p;
  }
  // DRAM held by shadow pages (data and masks).
  uint64_t shadow_bytes() const {
    return uint64_t{pages_.load(std::memory_order_relaxed)} * page_alloc_size(page_size_);
  }
  size_t page_size() const { return page_size_; }
  bool keeps_base() const { return keep_base_; }
  // keep_base only: the word's value when entry e was inserted, and the
  // page_size bytes of a shadow page's base (after its mask).
  uint64_t& word_base(const AliasEntry* e) { return base_[static_cast<size_t>(e - entries_.get())]; }
  char* page_base(char* page) const { return page + page_alloc_size(page_size_); }
  // has_pages, has_words: on the table's first line (below).

  // Recycling: REQUIRES no concurrent users.
  void clear();

  // Ring bookkeeping (state, gen, seq_boundary): after the first line (below).

 private:
  // Three one-hash Bloom filters, blocked so that what one key sets lies
  // in one cache line: the page's bucket b = (page_hint >> 32) &
  // filter_mask_ (4 buckets per slot) picks the 64-byte block b / 64 and
  // bit b % 64 of its first word (pages of all keys) and of its second
  // (pages of word keys); a word key's 64-byte granule sets one of the 384
  // bits of the block's last six words.  A lookup of a page with nothing
  // aliased — the common case for loads — touches one line of a small
  // array instead of probing the large entry array, and inserting a word
  // key writes one filter line, not three (a cold wrap's misses: docs/
  // design.md, "What a wrap touches lies together").  Bits are set before
  // a key is inserted and cleared only when the table is emptied.
  static constexpr int kPageWord = 0, kWordKeyWord = 1, kGranuleWord = 2;
  static constexpr uint64_t kGranuleBits = 6 * 64;
  struct alignas(64) FilterBlock {
    std::atomic<uint64_t> w[8];
  };
  static_assert(sizeof(FilterBlock) == 64);
  uint64_t key_page(uint64_t key) const { return key & page_mask_; }
  const FilterBlock& block(uint64_t h) const { return filter_[((h >> 32) & filter_mask_) >> 6]; }
  FilterBlock& block(uint64_t h) { return filter_[((h >> 32) & filter_mask_) >> 6]; }
  static uint64_t bit(uint64_t h) { return uint64_t{1} << ((h >> 32) & 63); }
  // The hint's high 32 bits scaled to [0, 384): a multiply, not a division.
  static uint64_t granule_bit(uint64_t g) { return ((granule_hint(g) >> 32) * kGranuleBits) >> 32; }
  static void filter_set(std::atomic<uint64_t>& w, uint64_t bit) {
    if (!(w.load(std::memory_order_relaxed) & bit)) w.fetch_or(bit, std::memory_order_release);
  }
  void filter_clear_all();

  // The first line holds all a wrap reads of a table (a store's insert,
  // put_word's page test, throttle's fill): a cold wrap misses it once.
  std::atomic<uint32_t> count_{0};
  std::atomic<uint32_t> pages_{0};
  uint32_t mask_;
  bool keep_base_;

 public:
  std::atomic<bool> has_pages{false};
  std::atomic<bool> has_words{false};  // softwrap-local's shortcut; global tables use the word-key filter

 private:
  size_t page_size_;
  uint64_t page_mask_;  // clears the in-page bits of a key (and a page key's tag bit)
  uint64_t filter_mask_;
  std::unique_ptr<FilterBlock[]> filter_;  // (filter_mask_ + 1) / 64 blocks
  std::unique_ptr<AliasEntry[]> entries_;
  // Slots in insertion order: used_[i] is the slot of the i-th key, so
  // retirement and recycling visit only the keys, not the whole array.
  std::unique_ptr<std::atomic<uint32_t>[]> used_;
  // (end of the first line)

 public:
  // Ring bookkeeping (owned by AliasRing).
  std::atomic<TableState> state{TableState::kEmpty};
  uint64_t gen = 0;
  uint64_t seq_boundary = 0;  // last commit seq of wraps whose stores all land here or older

 private:
  std::unique_ptr<uint64_t[]> base_;  // keep_base only, per slot
  PageArena arena_;
};

inline uint64_t page_key(uint64_t page_off) { return page_off | 1; }

// ---- shadow pages: page_size data bytes, then page_size/8 mask bytes,
// read and updated as 64-bit words (bit j of mask word c covers data byte
// 64c + j).  Pages are 8-byte aligned and page_size is a multiple of 64,
// so the words are aligned; every access by concurrent threads is atomic.
inline uint64_t* mask_words(char* page, size_t page_size) { return reinterpret_cast<uint64_t*>(page + page_size); }
inline uint64_t mask_word(const char* page, size_t page_size, size_t chunk) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(page + page_size) + chunk, __ATOMIC_ACQUIRE);
}
// Bits of mask word `chunk` covering bytes [lo, hi) of the page.
inline uint64_t chunk_bits(size_t chunk, size_t lo, size_t hi) {
  const size_t a = std::max(lo, chunk * 64), b = std::min(hi, chunk * 64 + 64);
  if (a >= b) return 0;
  const size_t len = b - a;
  return (len == 64 ? ~uint64_t{0} : (uint64_t{1} << len) - 1) << (a - chunk * 64);
}
// Copies n bytes into the page at off and marks them written.
void page_write(char* page, size_t page_size, size_t off, const void* src, size_t n);
// Copies the written bytes of [off, off+n) to out (others untouched).
void page_overlay(const char* page, size_t page_size, size_t off, size_t n, unsigned char* out);
// Calls f(off, len) for every run of written bytes.  The mask is walked
// 64 bits (64 data bytes) at a time; REQUIRES no concurrent writers.
template <class F>
void page_dirty_runs(const char* page, size_t page_size, F&& f) {
  constexpr size_t kNone = ~size_t{0};
  size_t start = kNone;  // start of the run in progress
  for (size_t i = 0; i < page_size; i += 64) {
    const uint64_t m = mask_word(page, page_size, i / 64);  // bit j = data byte i + j
    if (m == (start == kNone ? 0 : ~uint64_t{0})) continue;
    unsigned b = 0;
    while (b < 64) {
      const uint64_t rest = (start == kNone ? m : ~m) >> b;
      if (rest == 0) break;
      b += static_cast<unsigned>(__builtin_ctzll(rest));
      if (start == kNone) {
        start = i + b;
      } else {
        f(start, i + b - start);
        start = kNone;
      }
    }
  }
  if (start != kNone) f(start, page_size - start);
}

// Overlays what table t holds for [off, off+n) (n within one shadow page)
// onto out: the page entry first, then word entries, which shadow it.
// hint = AliasTable::page_hint(the page's offset), and t.may_hold(hint).
void overlay_table(AliasTable& t, uint64_t off, size_t n, size_t page_size, uint64_t hint, unsigned char* out);

}  // namespace softwrap

#endif  // SOFTWRAP_ALIAS_ALIAS_TABLE_H_
