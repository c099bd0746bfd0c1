// allocator.cc — the crash-consistent persistent heap (docs/pool-format.md).
//
// Approach.  Persistent state is one head word per 256 KiB chunk and a
// 16-byte header per small block; every change is a tx.store64() in the
// caller's wrap, so the engine makes it atomic with the caller's own stores
// (the API layer hands the words to the engine when the wrap commits:
// nothing here reads them back while the pool is open — the DRAM state
// below answers every question, free()'s validation included).
// Small requests (<= 64 KiB) are served from runs: chunks cut into equal
// blocks of one of 44 size classes.  A run is formatted by a single store
// (its head, with a fresh random 40-bit nonce); a block is live exactly when
// its header word is ALLOCATED with the run's class and nonce, so stale
// headers from an earlier life of the chunk never parse as live and
// formatting costs no per-block stores.  Larger requests take whole chunks
// (an extent: one head store; inner heads stay 0).
//
// DRAM state (rebuilt from the heap at open) is guarded by one mutex: a
// per-chunk slot array, per-run availability bitmaps, a coalesced free-chunk
// map (by start and by length, for best fit) and per-class sets of runs with
// available blocks.  Every DRAM change made on behalf of a wrap is journaled
// in the wrap's context; one on_commit and one on_abort action per wrap then
// apply the journal forwards (publish new runs, make freed blocks/chunks
// available) or undo it backwards (return allocations).  Because the
// journal, not the engine's action order, defines the sequence, alloc and
// free may be mixed freely in one wrap.  Blocks and chunks freed by a wrap,
// and runs it formats, stay out of everyone else's reach until it commits,
// so no two open wraps ever store to the same word.  Stores and loads
// through TxAccess are made outside the mutex.
//
// Empty runs stay runs (their blocks serve their class) until chunks run
// out: then a wrap needing chunks reclaims empty runs by storing their
// heads back to 0, in the same wrap.  When that is not enough either, the
// pool grows (PoolFile::grow, under the mutex, so one thread grows while
// the others wait for its chunks): a new zone's chunks join the free map.
//
// Chunks are numbered across zones (the PoolFile maps a number to its head
// and its bytes); free ranges never merge across a zone boundary, so an
// extent never spans two zones.
#include "pool/allocator.h"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cinttypes>
#include <ctime>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/error.h"
#include "pool/pool.h"

namespace softwrap {
namespace {

// ------------------------------------------------------------ on-media words

constexpr uint64_t kNonceMask = (1ull << 40) - 1;
constexpr uint64_t kHeadExtentTag = 0xE1;
constexpr uint64_t kHeadRunTag = 0xA1;
constexpr uint64_t kBlockMagic = 0xB1;
constexpr uint64_t kBlockAllocated = 0x01;
constexpr uint64_t kBlockFree = 0x02;
constexpr uint64_t kBlockHeaderSize = 16;

// Size classes (usable bytes): 16..128 in steps of 16, then four steps per
// power of two (25% spacing) up to 64 KiB.  Part of the on-media format:
// heads and headers store the class index.
constexpr int kNumClasses = 44;
constexpr std::array<uint32_t, kNumClasses> make_classes() {
  std::array<uint32_t, kNumClasses> c{};
  int i = 0;
  for (uint32_t s = 16; s <= 128; s += 16) c[i++] = s;
  for (uint32_t p = 128; p < 65536; p *= 2) {
    for (uint32_t q = 1; q <= 4; ++q) c[i++] = p + p / 4 * q;
  }
  return c;
}
constexpr std::array<uint32_t, kNumClasses> kClassSize = make_classes();
constexpr uint64_t kMaxSmallSize = kClassSize[kNumClasses - 1];
static_assert(kMaxSmallSize == 65536);

constexpr uint64_t class_stride(unsigned cls) { return kClassSize[cls] + kBlockHeaderSize; }
constexpr uint32_t class_blocks(unsigned cls) { return static_cast<uint32_t>(kChunkSize / class_stride(cls)); }

unsigned class_for(uint64_t n) {
  return static_cast<unsigned>(std::lower_bound(kClassSize.begin(), kClassSize.end(), n) - kClassSize.begin());
}

uint64_t extent_head(uint32_t nchunks) { return kHeadExtentTag << 56 | nchunks; }
uint64_t run_head(unsigned cls, uint64_t nonce) { return kHeadRunTag << 56 | uint64_t{cls} << 40 | nonce; }
uint64_t block_word(uint64_t state, unsigned cls, uint64_t nonce) {
  return kBlockMagic << 56 | state << 48 | uint64_t{cls} << 40 | nonce;
}

struct Head {
  enum Kind { kFree, kExtent, kRun, kInvalid } kind;
  uint32_t nchunks = 0;
  unsigned cls = 0;
  uint64_t nonce = 0;
};

Head parse_head(uint64_t h) {
  if (h == 0) return {Head::kFree};
  const uint64_t tag = h >> 56;
  if (tag == kHeadExtentTag && ((h >> 32) & 0xFFFFFF) == 0 && (h & 0xFFFFFFFF) != 0) {
    return {Head::kExtent, static_cast<uint32_t>(h)};
  }
  if (tag == kHeadRunTag && ((h >> 48) & 0xFF) == 0 && ((h >> 40) & 0xFF) < kNumClasses && (h & kNonceMask) != 0) {
    return {Head::kRun, 0, static_cast<unsigned>((h >> 40) & 0xFF), h & kNonceMask};
  }
  return {Head::kInvalid};
}

// ------------------------------------------------------------ heap scan

struct RunImage {
  uint32_t chunk;
  unsigned cls;
  uint64_t nonce;
  std::vector<uint64_t> allocated;  // bit per block
  uint32_t nallocated = 0;
};
struct HeapImage {
  std::vector<std::pair<uint32_t, uint32_t>> free_ranges;  // (start, length)
  std::vector<std::pair<uint32_t, uint32_t>> extents;      // (start, length)
  std::vector<RunImage> runs;
};

// Parses and verifies one zone's chunks, reading home locations directly.
int scan_zone(const PoolFile& pool, const Zone& z, HeapImage* img) {
  const auto* heads = reinterpret_cast<const uint64_t*>(pool.at(z.table));
  const uint32_t count = z.chunks;
  uint32_t i = 0;
  while (i < count) {
    const uint32_t c = z.first_chunk + i;
    const uint64_t hw = heads[i];
    const Head h = parse_head(hw);
    switch (h.kind) {
      case Head::kFree: {
        uint32_t e = i + 1;
        while (e < count && heads[e] == 0) ++e;
        img->free_ranges.emplace_back(c, e - i);
        i = e;
        break;
      }
      case Head::kExtent: {
        if (h.nchunks > count - i) {
          return set_error(SW_ECORRUPT, "heap: extent at chunk %u of %u chunks runs past the end of its zone (chunk "
                           "%u)", c, h.nchunks, z.first_chunk + count);
        }
        for (uint32_t k = i + 1; k < i + h.nchunks; ++k) {
          if (heads[k] != 0) {
            return set_error(SW_ECORRUPT, "heap: chunk %u inside the extent at chunk %u has head 0x%016" PRIx64
                             " (must be 0)", z.first_chunk + k, c, heads[k]);
          }
        }
        img->extents.emplace_back(c, h.nchunks);
        i += h.nchunks;
        break;
      }
      case Head::kRun: {
        RunImage r{c, h.cls, h.nonce, std::vector<uint64_t>((class_blocks(h.cls) + 63) / 64, 0)};
        const char* base = pool.at(z.heap) + uint64_t{i} * kChunkSize;
        for (uint32_t b = 0; b < class_blocks(h.cls); ++b) {
          const auto* hdr = reinterpret_cast<const uint64_t*>(base + b * class_stride(h.cls));
          const uint64_t w = hdr[0];
          if (w >> 56 != kBlockMagic || (w & kNonceMask) != h.nonce) continue;  // never used in this run
          const uint64_t state = (w >> 48) & 0xFF;
          if (((w >> 40) & 0xFF) != h.cls || (state != kBlockAllocated && state != kBlockFree)) {
            return set_error(SW_ECORRUPT, "heap: block %u of the run at chunk %u has header 0x%016" PRIx64
                             " (run class %u, nonce 0x%" PRIx64 ")", b, c, w, h.cls, h.nonce);
          }
          if (state == kBlockAllocated) {
            if (hdr[1] == 0 || hdr[1] > kClassSize[h.cls]) {
              return set_error(SW_ECORRUPT, "heap: block %u of the run at chunk %u records size %" PRIu64
                               " outside [1, %u]", b, c, hdr[1], kClassSize[h.cls]);
            }
            r.allocated[b / 64] |= 1ull << (b % 64);
            ++r.nallocated;
          }
        }
        img->runs.push_back(std::move(r));
        ++i;
        break;
      }
      case Head::kInvalid:
        return set_error(SW_ECORRUPT, "heap: chunk %u has an invalid head 0x%016" PRIx64, c, hw);
    }
  }
  return 0;
}

int scan_heap(const PoolFile& pool, HeapImage* img) {
  for (uint32_t zi = 0; zi < pool.zone_count(); ++zi) {
    if (int rc = scan_zone(pool, pool.zone(zi), img)) return rc;
  }
  return 0;
}

// ------------------------------------------------------------ DRAM state

struct WrapCtx;

struct Run {
  uint32_t chunk = 0;
  unsigned cls = 0;
  uint64_t nonce = 0;
  uint32_t nblocks = 0;
  uint32_t navail = 0;        // blocks free and available to alloc
  WrapCtx* owner = nullptr;   // set while private to the wrap that formatted it
  std::vector<uint64_t> avail;    // bit set: available
  std::vector<uint64_t> freeing;  // bit set: freed by an uncommitted wrap
  uint32_t hint = 0;              // no available bit in words below this
  // Blocks from this index on were never handed out since the run was
  // formatted on a chunk of zeros: their usable bytes hold zeros.
  uint32_t zero_from;

  Run(uint32_t c, unsigned k, uint64_t n, bool zero = false)
      : chunk(c), cls(k), nonce(n), nblocks(class_blocks(k)), zero_from(zero ? 0 : nblocks) {
    avail.assign((nblocks + 63) / 64, 0);
    freeing.assign(avail.size(), 0);
    for (uint32_t b = 0; b < nblocks; ++b) avail[b / 64] |= 1ull << (b % 64);
    navail = nblocks;
  }
  bool is_avail(uint32_t b) const { return avail[b / 64] >> (b % 64) & 1; }
  bool is_freeing(uint32_t b) const { return freeing[b / 64] >> (b % 64) & 1; }
  void make_avail(uint32_t b) {
    avail[b / 64] |= 1ull << (b % 64);
    ++navail;
    hint = std::min(hint, b / 64);
  }
  uint32_t take() {  // REQUIRES: navail > 0
    while (avail[hint] == 0) ++hint;
    const auto bit = static_cast<uint32_t>(__builtin_ctzll(avail[hint]));
    avail[hint] &= avail[hint] - 1;
    --navail;
    return hint * 64 + bit;
  }
};

enum class ChunkState : uint8_t {
  kFree,        // in the global free map
  kReclaimed,   // a wrap stored its head to 0 and has not reused it (abort only)
  kExtent,      // first chunk of an extent
  kExtentBody,  // other chunks of an extent
  kRun,
  kLog,         // reserved as log space (reserve_log_chunks); head stays 0
};

struct Slot {
  ChunkState state = ChunkState::kFree;
  bool freeing = false;  // extent freed by an uncommitted wrap
  bool zero = false;     // free, and every byte of the chunk holds zero
  // The newest commit that freed bytes of the chunk (AllocInfo::reuse_seq).
  uint64_t reuse_seq = 0;
  uint32_t len = 0;      // extent length in chunks
  std::unique_ptr<Run> run;
};

// What a wrap did to DRAM state, replayed at commit or undone at abort.
struct Op {
  enum Kind : uint8_t { kAllocBlock, kFreeBlock, kFormatRun, kAllocExtent, kFreeExtent, kReclaimRun } kind;
  uint32_t chunk;
  uint32_t arg;  // block index or extent length
};

struct WrapCtx {
  TxAccess* tx = nullptr;
  std::vector<Op> ops;
  std::vector<Run*> private_runs;
  std::unordered_map<uint32_t, std::unique_ptr<Run>> reclaimed;  // chunk -> its former empty run
  // Allocations of this wrap that it freed again (fresh blocks: free(...,
  // same_wrap)): its own to take again until it ends, then free.
  std::vector<std::pair<uint32_t, uint32_t>> returned_blocks;   // (chunk, block)
  std::vector<std::pair<uint32_t, uint32_t>> returned_extents;  // (first chunk, chunks)
};

// Stores decided under the mutex and issued after it is released.
class StoreList {
 public:
  void add(uint64_t off, uint64_t v) {
    if (n_ < inline_.size()) {
      inline_[n_++] = {off, v};
    } else {
      more_.emplace_back(off, v);
    }
  }
  void issue(TxAccess& tx) const {
    for (size_t i = 0; i < n_; ++i) tx.store64(inline_[i].first, inline_[i].second);
    for (const auto& s : more_) tx.store64(s.first, s.second);
  }

 private:
  std::array<std::pair<uint64_t, uint64_t>, 3> inline_{};
  size_t n_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> more_;
};

class HeapAllocator final : public Allocator {
 public:
  explicit HeapAllocator(PoolFile* pool) : pool_(pool), slots_(pool->chunk_count()) {
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != sizeof seed) {
      seed = static_cast<uint64_t>(time(nullptr)) ^ reinterpret_cast<uintptr_t>(this);
    }
    rng_.seed(seed);
  }

  void load(const HeapImage& img) {
    for (const auto& [s, n] : img.free_ranges) {
      insert_free(s, n);
      for (uint32_t i = s; i < s + n; ++i) slots_[i].zero = pool_->heap_zero_at_open();
    }
    for (const auto& [s, n] : img.extents) mark_extent(s, n);
    for (const RunImage& ri : img.runs) {
      auto run = std::make_unique<Run>(ri.chunk, ri.cls, ri.nonce);
      for (size_t w = 0; w < run->avail.size(); ++w) run->avail[w] &= ~ri.allocated[w];
      run->navail = run->nblocks - ri.nallocated;
      if (run->navail > 0) avail_runs_[ri.cls].insert(ri.chunk);
      slots_[ri.chunk].state = ChunkState::kRun;
      slots_[ri.chunk].run = std::move(run);
    }
  }

  uint64_t alloc(TxAccess& tx, size_t n, AllocInfo* info) override;
  int free(TxAccess& tx, uint64_t offset, bool same_wrap) override;
  size_t usable_size(TxAccess& tx, uint64_t offset) override;
  AllocatorStats stats() const override;
  uint64_t reserve_log_chunks(uint32_t n) override;
  void release_log_chunks(uint64_t offset, uint32_t n) override;
  uint64_t log_chunks() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return log_chunks_;
  }
  int reload() override;
  uint64_t heap_changes() const override { return changes_.load(std::memory_order_acquire); }
  void forget_zero_chunks() override {
    std::lock_guard<std::mutex> lock(mu_);
    for (Slot& s : slots_) s.zero = false;
  }

 private:
  uint64_t head_off(uint32_t c) const { return pool_->head_offset(c); }
  uint64_t chunk_off(uint32_t c) const { return pool_->chunk_offset(c); }

  WrapCtx* context(TxAccess& tx);
  uint64_t alloc_block(WrapCtx* ctx, unsigned cls, uint64_t n, StoreList* stores, AllocInfo* info);
  uint64_t hand_out(WrapCtx* ctx, Run* r, uint32_t b, uint64_t n, bool zero, StoreList* stores, AllocInfo* info);
  uint64_t alloc_extent(WrapCtx* ctx, uint64_t n, StoreList* stores, AllocInfo* info);
  // The chunks' reuse_seq rises to seq (a commit freed bytes of them).
  void freed_at(uint32_t start, uint32_t n, uint64_t seq) {
    for (uint32_t i = start; i < start + n; ++i) slots_[i].reuse_seq = std::max(slots_[i].reuse_seq, seq);
  }
  bool take_chunks(WrapCtx* ctx, uint32_t n, uint64_t requested, StoreList* stores, uint32_t* start);
  bool grow(uint32_t n);
  void reclaim_run(WrapCtx* ctx, uint32_t c, StoreList* stores);
  void release_chunks(WrapCtx* ctx, uint32_t start, uint32_t n);
  void insert_free(uint32_t start, uint32_t n);
  void erase_free(uint32_t start, uint32_t n);
  void mark_extent(uint32_t start, uint32_t n);
  void publish_if_avail(Run* run) {
    if (run->owner == nullptr && run->navail > 0) avail_runs_[run->cls].insert(run->chunk);
  }
  void finish(WrapCtx* ctx, bool commit);
  // Removes the wrap's journal entry for an allocation it now frees again
  // (newest first); false if the wrap did not make that allocation.
  static bool take_back(WrapCtx* ctx, Op::Kind kind, uint32_t chunk, uint32_t arg) {
    for (size_t i = ctx->ops.size(); i-- > 0;) {
      const Op& op = ctx->ops[i];
      if (op.kind == kind && op.chunk == chunk && op.arg == arg) {
        ctx->ops.erase(ctx->ops.begin() + static_cast<ptrdiff_t>(i));
        return true;
      }
    }
    return false;
  }
  static void commit_action(void* self, uint64_t ctx, uint64_t) {
    static_cast<HeapAllocator*>(self)->finish(reinterpret_cast<WrapCtx*>(ctx), true);
  }
  static void abort_action(void* self, uint64_t ctx, uint64_t) {
    static_cast<HeapAllocator*>(self)->finish(reinterpret_cast<WrapCtx*>(ctx), false);
  }

  PoolFile* const pool_;

  mutable std::mutex mu_;
  std::vector<Slot> slots_;                            // one per chunk; GUARDED_BY(mu_)
  std::map<uint32_t, uint32_t> free_by_start_;         // GUARDED_BY(mu_)
  std::set<std::pair<uint32_t, uint32_t>> free_by_len_;  // (length, start) GUARDED_BY(mu_)
  uint64_t free_chunks_ = 0;                           // GUARDED_BY(mu_)
  uint64_t log_chunks_ = 0;                            // GUARDED_BY(mu_)
  std::array<std::set<uint32_t>, kNumClasses> avail_runs_;  // published runs with blocks; GUARDED_BY(mu_)
  std::unordered_map<TxAccess*, std::unique_ptr<WrapCtx>> ctxs_;  // GUARDED_BY(mu_)
  std::mt19937_64 rng_;                                // GUARDED_BY(mu_)
  std::atomic<uint64_t> changes_{0};                   // heap_changes()
};

// ------------------------------------------------------------ free chunk map

void HeapAllocator::insert_free(uint32_t start, uint32_t n) {
  for (uint32_t i = start; i < start + n; ++i) {
    slots_[i].state = ChunkState::kFree;
    slots_[i].len = 0;
    slots_[i].freeing = false;
  }
  free_chunks_ += n;
  auto next = free_by_start_.lower_bound(start);
  if (next != free_by_start_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start && !pool_->zone_starts_at(start)) {
      start = prev->first;
      n += prev->second;
      free_by_len_.erase({prev->second, prev->first});
      free_by_start_.erase(prev);
    }
  }
  if (next != free_by_start_.end() && next->first == start + n && !pool_->zone_starts_at(start + n)) {
    n += next->second;
    free_by_len_.erase({next->second, next->first});
    free_by_start_.erase(next);
  }
  free_by_start_.emplace(start, n);
  free_by_len_.emplace(n, start);
}

// REQUIRES: [start, start+n) lies inside one free range.
void HeapAllocator::erase_free(uint32_t start, uint32_t n) {
  auto it = std::prev(free_by_start_.upper_bound(start));
  const uint32_t rs = it->first, rn = it->second;
  free_by_len_.erase({rn, rs});
  free_by_start_.erase(it);
  if (start > rs) {
    free_by_start_.emplace(rs, start - rs);
    free_by_len_.emplace(start - rs, rs);
  }
  if (start + n < rs + rn) {
    free_by_start_.emplace(start + n, rs + rn - start - n);
    free_by_len_.emplace(rs + rn - start - n, start + n);
  }
  free_chunks_ -= n;
}

void HeapAllocator::mark_extent(uint32_t start, uint32_t n) {
  slots_[start].state = ChunkState::kExtent;
  slots_[start].len = n;
  slots_[start].freeing = false;
  for (uint32_t i = start + 1; i < start + n; ++i) slots_[i].state = ChunkState::kExtentBody;
}

// Chunks a wrap took return to where they came from: its reclaimed set (to
// be turned back into runs further down the undo) or the global free map.
void HeapAllocator::release_chunks(WrapCtx* ctx, uint32_t start, uint32_t n) {
  uint32_t i = start;
  while (i < start + n) {
    if (ctx->reclaimed.count(i)) {
      slots_[i].state = ChunkState::kReclaimed;
      ++i;
      continue;
    }
    uint32_t e = i + 1;
    while (e < start + n && !ctx->reclaimed.count(e)) ++e;
    insert_free(i, e - i);
    i = e;
  }
}

void HeapAllocator::reclaim_run(WrapCtx* ctx, uint32_t c, StoreList* stores) {
  Slot& s = slots_[c];
  avail_runs_[s.run->cls].erase(c);
  ctx->reclaimed[c] = std::move(s.run);
  s.state = ChunkState::kReclaimed;
  ctx->ops.push_back({Op::kReclaimRun, c, 0});
  stores->add(head_off(c), 0);
}

// Adds a zone of at least n chunks to the pool and its chunks to the free
// map; false with the thread error set if the pool cannot grow.
bool HeapAllocator::grow(uint32_t n) {
  Zone z;
  if (pool_->grow(n, &z) != 0) return false;
  slots_.resize(uint64_t{z.first_chunk} + z.chunks);
  insert_free(z.first_chunk, z.chunks);
  for (uint32_t i = z.first_chunk; i < z.first_chunk + z.chunks; ++i) slots_[i].zero = pool_->grows_zeroed();
  changes_.fetch_add(1, std::memory_order_release);
  return true;
}

// Finds n contiguous chunks for ctx: best fit in the free map, else best fit
// over free chunks and empty runs (which are reclaimed), else in a zone
// the pool grows by.  The chunks are removed from the free map; the caller
// sets their slots.
bool HeapAllocator::take_chunks(WrapCtx* ctx, uint32_t n, uint64_t requested, StoreList* stores, uint32_t* start) {
  auto fit = free_by_len_.lower_bound({n, 0});
  if (fit != free_by_len_.end()) {
    *start = fit->second;
    erase_free(*start, n);
    return true;
  }
  // Slow path: pieces of free map and empty published runs, merged.
  std::vector<std::pair<uint32_t, uint32_t>> pieces(free_by_start_.begin(), free_by_start_.end());
  for (const auto& set : avail_runs_) {
    for (uint32_t c : set) {
      const Run* r = slots_[c].run.get();
      if (r->owner == nullptr && r->navail == r->nblocks) pieces.emplace_back(c, 1);
    }
  }
  std::sort(pieces.begin(), pieces.end());
  uint64_t best_start = 0, best_len = UINT64_MAX, largest = 0;
  for (size_t i = 0; i < pieces.size();) {
    const uint64_t ws = pieces[i].first;
    uint64_t we = ws + pieces[i].second;
    for (++i; i < pieces.size() && pieces[i].first == we && !pool_->zone_starts_at(pieces[i].first); ++i) {
      we += pieces[i].second;
    }
    largest = std::max(largest, we - ws);
    if (we - ws >= n && we - ws < best_len) {
      best_start = ws;
      best_len = we - ws;
    }
  }
  if (best_len == UINT64_MAX) {
    if (grow(n)) {
      *start = free_by_len_.lower_bound({n, 0})->second;  // the new zone has n free chunks
      erase_free(*start, n);
      return true;
    }
    const int code = last_error();
    const std::string why = last_error_message();
    set_error(code, "pool heap full: %" PRIu64 " bytes requested, %" PRIu64 " bytes free (largest contiguous %" PRIu64
              " bytes, including empty runs), and %s", requested, free_chunks_ * kChunkSize, largest * kChunkSize,
              why.c_str());
    return false;
  }
  const auto s = static_cast<uint32_t>(best_start);
  uint32_t i = s;
  while (i < s + n) {
    if (slots_[i].state == ChunkState::kRun) {
      reclaim_run(ctx, i, stores);
      ++i;
      continue;
    }
    uint32_t e = i + 1;
    while (e < s + n && slots_[e].state == ChunkState::kFree) ++e;
    erase_free(i, e - i);
    i = e;
  }
  *start = s;
  return true;
}

// ------------------------------------------------------------ alloc / free

WrapCtx* HeapAllocator::context(TxAccess& tx) {
  auto it = ctxs_.find(&tx);
  if (it != ctxs_.end()) return it->second.get();
  auto ctx = std::make_unique<WrapCtx>();
  ctx->tx = &tx;
  WrapCtx* p = ctx.get();
  ctxs_.emplace(&tx, std::move(ctx));
  tx.on_commit(&HeapAllocator::commit_action, this, reinterpret_cast<uint64_t>(p), 0);
  tx.on_abort(&HeapAllocator::abort_action, this, reinterpret_cast<uint64_t>(p), 0);
  return p;
}

uint64_t HeapAllocator::alloc_block(WrapCtx* ctx, unsigned cls, uint64_t n, StoreList* stores, AllocInfo* info) {
  // A block of this class the wrap allocated and freed again comes first.
  for (size_t i = ctx->returned_blocks.size(); i-- > 0;) {
    const auto [c, b] = ctx->returned_blocks[i];
    Run* r = slots_[c].run.get();
    if (r->cls != cls) continue;
    ctx->returned_blocks.erase(ctx->returned_blocks.begin() + static_cast<ptrdiff_t>(i));
    r->freeing[b / 64] &= ~(1ull << (b % 64));
    return hand_out(ctx, r, b, n, false, stores, info);
  }
  Run* run = nullptr;
  for (Run* r : ctx->private_runs) {
    if (r->cls == cls && r->navail > 0) {
      run = r;
      break;
    }
  }
  if (run == nullptr && !avail_runs_[cls].empty()) run = slots_[*avail_runs_[cls].begin()].run.get();
  if (run == nullptr) {
    uint32_t c = 0;
    if (!take_chunks(ctx, 1, n, stores, &c)) return 0;
    uint64_t nonce = 0;
    while (nonce == 0) nonce = rng_() & kNonceMask;
    slots_[c].state = ChunkState::kRun;
    slots_[c].run = std::make_unique<Run>(c, cls, nonce, slots_[c].zero);
    slots_[c].zero = false;
    run = slots_[c].run.get();
    run->owner = ctx;  // private until the wrap commits
    ctx->private_runs.push_back(run);
    ctx->ops.push_back({Op::kFormatRun, c, 0});
    stores->add(head_off(c), run_head(cls, nonce));
  }
  const uint32_t b = run->take();
  if (run->navail == 0 && run->owner == nullptr) avail_runs_[cls].erase(run->chunk);
  const bool zero = b >= run->zero_from;
  if (zero) run->zero_from = b + 1;  // it may be written now, and stays so if the wrap aborts
  return hand_out(ctx, run, b, n, zero, stores, info);
}

// Block b of run r becomes the wrap's allocation of n bytes: journaled, its
// header stores queued, described in *info.
uint64_t HeapAllocator::hand_out(WrapCtx* ctx, Run* r, uint32_t b, uint64_t n, bool zero, StoreList* stores,
                                 AllocInfo* info) {
  ctx->ops.push_back({Op::kAllocBlock, r->chunk, b});
  const uint64_t hdr = chunk_off(r->chunk) + b * class_stride(r->cls);
  stores->add(hdr, block_word(kBlockAllocated, r->cls, r->nonce));
  stores->add(hdr + 8, n);
  *info = {kClassSize[r->cls], slots_[r->chunk].reuse_seq, zero};
  return hdr + kBlockHeaderSize;
}

uint64_t HeapAllocator::alloc_extent(WrapCtx* ctx, uint64_t n, StoreList* stores, AllocInfo* info) {
  const uint64_t want = n / kChunkSize + (n % kChunkSize != 0);
  if (want > UINT32_MAX) {
    set_error(SW_ENOSPC, "allocation of %" PRIu64 " bytes: larger than any pool can be", n);
    return 0;
  }
  const auto nchunks = static_cast<uint32_t>(want);
  uint32_t s = 0;
  // An extent the wrap allocated and freed again comes first (the front of
  // the smallest that fits; the rest stays the wrap's).
  size_t best = ctx->returned_extents.size();
  for (size_t i = 0; i < ctx->returned_extents.size(); ++i) {
    const uint32_t len = ctx->returned_extents[i].second;
    if (len >= nchunks && (best == ctx->returned_extents.size() || len < ctx->returned_extents[best].second)) best = i;
  }
  if (best < ctx->returned_extents.size()) {
    auto& [start, len] = ctx->returned_extents[best];
    s = start;
    if (len == nchunks) {
      ctx->returned_extents.erase(ctx->returned_extents.begin() + static_cast<ptrdiff_t>(best));
    } else {
      start += nchunks;
      len -= nchunks;
      slots_[start].state = ChunkState::kExtent;  // the rest: a private extent without a head
      slots_[start].len = len;
      slots_[start].freeing = true;
    }
  } else if (!take_chunks(ctx, nchunks, n, stores, &s)) {
    return 0;
  }
  info->usable = uint64_t{nchunks} * kChunkSize;
  info->reuse_seq = 0;
  info->zero = true;
  for (uint32_t i = s; i < s + nchunks; ++i) {
    info->reuse_seq = std::max(info->reuse_seq, slots_[i].reuse_seq);
    info->zero = info->zero && slots_[i].zero;
    slots_[i].zero = false;
  }
  mark_extent(s, nchunks);
  ctx->ops.push_back({Op::kAllocExtent, s, nchunks});
  stores->add(head_off(s), extent_head(nchunks));
  return chunk_off(s);
}

uint64_t HeapAllocator::alloc(TxAccess& tx, size_t n, AllocInfo* info) {
  AllocInfo ignored;
  if (info == nullptr) info = &ignored;
  if (!tx.in_wrap()) {
    set_error(SW_ENOWRAP, "allocation needs an open wrap");
    return 0;
  }
  if (n == 0) {
    set_error(SW_EINVAL, "allocation of 0 bytes");
    return 0;
  }
  StoreList stores;
  uint64_t off;
  {
    std::lock_guard<std::mutex> lock(mu_);
    WrapCtx* ctx = context(tx);
    off = n <= kMaxSmallSize ? alloc_block(ctx, class_for(n), n, &stores, info) : alloc_extent(ctx, n, &stores, info);
  }
  stores.issue(tx);
  return off;
}

int HeapAllocator::free(TxAccess& tx, uint64_t offset, bool same_wrap) {
  if (!tx.in_wrap()) return set_error(SW_ENOWRAP, "free needs an open wrap");
  uint32_t c = 0;
  if (!pool_->chunk_at(offset, &c)) {
    return set_error(SW_EINVAL, "free: offset 0x%" PRIx64 " is not in the heap (no zone's chunks hold it)", offset);
  }
  // Checked against the DRAM state alone (it says what every committed
  // wrap and this one did to the heap): no load of a head or header
  // through the engine, which on a redo engine is a lookup through its
  // alias tables.
  uint64_t word_off, word;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& s = slots_[c];
    if (s.state == ChunkState::kExtent) {
      if (offset != chunk_off(c)) {
        return set_error(SW_EINVAL, "free: offset 0x%" PRIx64 " points inside the extent at 0x%" PRIx64, offset,
                         chunk_off(c));
      }
      if (s.freeing) {
        return set_error(SW_EINVAL, "free: the extent at 0x%" PRIx64 " is not live (double free?)", offset);
      }
      s.freeing = true;
      WrapCtx* ctx = context(tx);
      if (!same_wrap || !take_back(ctx, Op::kAllocExtent, c, s.len)) {
        ctx->ops.push_back({Op::kFreeExtent, c, s.len});
      } else {
        ctx->returned_extents.emplace_back(c, s.len);
      }
      word_off = head_off(c);
      word = 0;
    } else if (s.state == ChunkState::kRun && (s.run->owner == nullptr || s.run->owner->tx == &tx)) {
      Run* r = s.run.get();
      const uint64_t rel = offset - chunk_off(c);
      const uint64_t stride = class_stride(r->cls);
      if (rel < kBlockHeaderSize || (rel - kBlockHeaderSize) % stride != 0 ||
          (rel - kBlockHeaderSize) / stride >= r->nblocks) {
        return set_error(SW_EINVAL, "free: offset 0x%" PRIx64 " is not the start of a block (class %u bytes)",
                         offset, kClassSize[r->cls]);
      }
      const auto b = static_cast<uint32_t>((rel - kBlockHeaderSize) / stride);
      if (r->is_avail(b) || r->is_freeing(b)) {
        return set_error(SW_EINVAL, "free: the block at 0x%" PRIx64 " is not live (double free?)", offset);
      }
      r->freeing[b / 64] |= 1ull << (b % 64);
      WrapCtx* ctx = context(tx);
      if (!same_wrap || !take_back(ctx, Op::kAllocBlock, c, b)) {
        ctx->ops.push_back({Op::kFreeBlock, c, b});
      } else {
        ctx->returned_blocks.emplace_back(c, b);
      }
      word_off = offset - kBlockHeaderSize;
      word = block_word(kBlockFree, r->cls, r->nonce);
    } else {
      static constexpr const char* kWhat[] = {"free", "free", "an extent's", "inside an extent", "a run",
                                              "log space"};
      return set_error(SW_EINVAL, "free: offset 0x%" PRIx64 " is not a live allocation (chunk %u is %s%s)", offset,
                       c, kWhat[static_cast<int>(s.state)],
                       s.state == ChunkState::kRun ? " another open wrap formatted" : "");
    }
  }
  tx.store64(word_off, word);
  return 0;
}

size_t HeapAllocator::usable_size(TxAccess&, uint64_t offset) {
  uint32_t c = 0;
  if (!pool_->chunk_at(offset, &c)) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  const Slot& s = slots_[c];
  if (s.state == ChunkState::kExtent) {
    return offset == chunk_off(c) && !s.freeing ? uint64_t{s.len} * kChunkSize : 0;
  }
  if (s.state != ChunkState::kRun) return 0;
  const uint64_t rel = offset - chunk_off(c);
  const uint64_t stride = class_stride(s.run->cls);
  if (rel < kBlockHeaderSize || (rel - kBlockHeaderSize) % stride != 0) return 0;
  const uint64_t b = (rel - kBlockHeaderSize) / stride;
  if (b >= s.run->nblocks) return 0;
  const auto bi = static_cast<uint32_t>(b);
  return s.run->is_avail(bi) || s.run->is_freeing(bi) ? 0 : kClassSize[s.run->cls];
}

// ------------------------------------------------------------ commit / abort

void HeapAllocator::finish(WrapCtx* ctx, bool commit) {
  // Blocks and extents the wrap allocated and freed again are free after
  // it either way.  (Their bytes were written in place, or through this
  // wrap's log: a later wrap writes them in place only past this commit.)
  const uint64_t seq = commit ? ctx->tx->commit_seq() : 0;
  if (commit && (!ctx->ops.empty() || !ctx->returned_blocks.empty() || !ctx->returned_extents.empty())) {
    changes_.fetch_add(1, std::memory_order_release);
  }
  std::lock_guard<std::mutex> lock(mu_);
  const auto free_returned_blocks = [&] {
    for (const auto& [c, b] : ctx->returned_blocks) {
      Run* r = slots_[c].run.get();
      r->freeing[b / 64] &= ~(1ull << (b % 64));
      r->make_avail(b);
      publish_if_avail(r);
      freed_at(c, 1, seq);
    }
  };
  if (!commit) {
    // Before the journal is undone: a private run they belong to is
    // dropped by it, and reclaimed chunks inside an extent go back to the
    // reclaimed state that undoes the reclaim.
    for (const auto& [start, len] : ctx->returned_extents) release_chunks(ctx, start, len);
    free_returned_blocks();
  }
  if (commit) {
    for (const Op& op : ctx->ops) {
      Slot& s = slots_[op.chunk];
      switch (op.kind) {
        case Op::kAllocBlock:
        case Op::kAllocExtent:
          break;
        case Op::kFormatRun:
          s.run->owner = nullptr;
          publish_if_avail(s.run.get());
          break;
        case Op::kFreeBlock:
          s.run->freeing[op.arg / 64] &= ~(1ull << (op.arg % 64));
          s.run->make_avail(op.arg);
          publish_if_avail(s.run.get());
          freed_at(op.chunk, 1, seq);
          break;
        case Op::kFreeExtent:
          insert_free(op.chunk, op.arg);
          freed_at(op.chunk, op.arg, seq);
          break;
        case Op::kReclaimRun:
          if (s.state == ChunkState::kReclaimed) insert_free(op.chunk, 1);
          break;
      }
    }
    free_returned_blocks();
    for (const auto& [start, len] : ctx->returned_extents) {
      insert_free(start, len);
      freed_at(start, len, seq);
    }
  } else {
    for (auto it = ctx->ops.rbegin(); it != ctx->ops.rend(); ++it) {
      const Op& op = *it;
      Slot& s = slots_[op.chunk];
      switch (op.kind) {
        case Op::kAllocBlock:
          s.run->make_avail(op.arg);
          publish_if_avail(s.run.get());
          break;
        case Op::kFreeBlock:
          s.run->freeing[op.arg / 64] &= ~(1ull << (op.arg % 64));
          break;
        case Op::kFormatRun:
          s.run.reset();
          release_chunks(ctx, op.chunk, 1);
          break;
        case Op::kAllocExtent:
          release_chunks(ctx, op.chunk, op.arg);
          break;
        case Op::kFreeExtent:
          s.freeing = false;
          break;
        case Op::kReclaimRun:
          s.state = ChunkState::kRun;
          s.run = std::move(ctx->reclaimed[op.chunk]);
          publish_if_avail(s.run.get());
          break;
      }
    }
  }
  ctxs_.erase(ctx->tx);  // destroys ctx
}

uint64_t HeapAllocator::reserve_log_chunks(uint32_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (n == 0) return 0;
  auto fit = free_by_len_.lower_bound({n, 0});
  if (fit == free_by_len_.end()) {
    if (!grow(n)) return 0;
    fit = free_by_len_.lower_bound({n, 0});
  }
  // Best fit over free chunks only: empty runs would need stores (a wrap)
  // to become free chunks.
  const uint32_t start = fit->second;
  erase_free(start, n);
  for (uint32_t i = start; i < start + n; ++i) {
    slots_[i].state = ChunkState::kLog;
    slots_[i].zero = false;  // log records go there
  }
  log_chunks_ += n;
  return chunk_off(start);
}

void HeapAllocator::release_log_chunks(uint64_t offset, uint32_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t start = 0;
  if (!pool_->chunk_at(offset, &start)) return;  // not ours: nothing was reserved there
  insert_free(start, n);
  log_chunks_ -= n;
}

AllocatorStats HeapAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  AllocatorStats st;
  st.heap_bytes = uint64_t{slots_.size()} * kChunkSize;
  st.free_chunks = free_chunks_;
  for (const Slot& s : slots_) {
    if (s.state == ChunkState::kExtent) {
      ++st.allocated_extents;
      st.allocated_bytes += uint64_t{s.len} * kChunkSize;
    } else if (s.state == ChunkState::kRun) {
      const uint64_t live = s.run->nblocks - s.run->navail;
      st.allocated_blocks += live;
      st.allocated_bytes += live * kClassSize[s.run->cls];
    }
  }
  return st;
}

}  // namespace

int HeapAllocator::reload() {
  HeapImage img;
  if (int rc = scan_heap(*pool_, &img)) return rc;
  std::lock_guard<std::mutex> lock(mu_);
  if (!ctxs_.empty() || log_chunks_ != 0) {
    return set_error(SW_EBUSY, "allocator: cannot reload the heap while wraps are open or log space is reserved");
  }
  slots_.clear();
  slots_.resize(pool_->chunk_count());
  free_by_start_.clear();
  free_by_len_.clear();
  free_chunks_ = 0;
  for (auto& s : avail_runs_) s.clear();
  load(img);  // zero flags follow heap_zero_at_open(), which the caller cleared
  return 0;
}

int Allocator::open(PoolFile* pool, std::unique_ptr<Allocator>* out) {
  HeapImage img;
  if (int rc = scan_heap(*pool, &img)) return rc;
  auto a = std::make_unique<HeapAllocator>(pool);
  a->load(img);
  *out = std::move(a);
  return 0;
}

int Allocator::check(const PoolFile& pool, AllocatorStats* stats) {
  HeapImage img;
  if (int rc = scan_heap(pool, &img)) return rc;
  if (stats != nullptr) {
    AllocatorStats st;
    st.heap_bytes = uint64_t{pool.chunk_count()} * kChunkSize;
    for (const auto& fr : img.free_ranges) st.free_chunks += fr.second;
    for (const auto& ex : img.extents) {
      ++st.allocated_extents;
      st.allocated_bytes += uint64_t{ex.second} * kChunkSize;
    }
    for (const RunImage& r : img.runs) {
      st.allocated_blocks += r.nallocated;
      st.allocated_bytes += uint64_t{r.nallocated} * kClassSize[r.cls];
    }
    *stats = st;
  }
  return 0;
}

}  // namespace softwrap
