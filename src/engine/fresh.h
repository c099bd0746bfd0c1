// fresh.h — the blocks an open wrap allocated, which it writes in place.
//
// No committed state can reach a block the open wrap allocated, so nothing
// has to be undone or redone for its bytes: they only have to be durable
// before the wrap's commit record is, and free again if the wrap does not
// commit (the allocation itself is logged like any store, so an abort or
// a crash before the commit undoes it).  Such a block is *fresh* until the
// wrap ends.  The API layer (c_api.cc) sends every store, sw_write and
// zero-fill of fresh bytes straight home through the medium — temporal
// stores, each line flushed as the wrap moves on (WriteBehind; fresh.cc
// says why not streamed) — and never to the engine; the engine's commit
// flushes the last line and orders the bytes before its commit record
// (redo: FreshSet::before_commit, a fence or, for a few bytes, range
// records in the frame) or its commit mark (undo: FreshSet::flush, then
// the data fence it has anyway).
//
// Which allocations are fresh is decided at allocation (alloc_fresh() in
// c_api.cc): the block must be one no replayable log frame and no alias
// table may still hold bytes of (Engine::reuse_safe).  A block that is not
// safe yet is written through the engine for the whole wrap, as before.
//
// Cost on a store to old data: one compare when the wrap has no fresh
// block; else a bounds compare, and a map lookup only for an address
// between the lowest and the highest fresh byte (the last hit is cached).
#ifndef SOFTWRAP_ENGINE_FRESH_H_
#define SOFTWRAP_ENGINE_FRESH_H_

#include <cstddef>
#include <cstdint>
#include <map>

#include "engine/write_behind.h"
#include "pool/pool.h"

namespace softwrap {

class Medium;
class RedoWriter;

class FreshSet {
 public:
  // Whether [off, off+n) lies inside one fresh block (n >= 1).
  bool contains(uint64_t off, uint64_t n) const {
    if (off < lo_ || off + n > hi_) return false;  // also: no fresh block (hi_ == 0)
    if (off >= last_lo_ && off + n <= last_hi_) return true;
    return lookup(off, n);
  }
  // Pool offsets of a fresh range that begins at or after off and its
  // end, for splitting a range write: the first fresh range that overlaps
  // [off, end); false if none.
  bool first_overlap(uint64_t off, uint64_t end, uint64_t* lo, uint64_t* hi) const;

  bool empty() const { return hi_ == 0; }
  void add(uint64_t lo, uint64_t hi);
  // The block at lo is no longer fresh (freed in the wrap).
  void remove(uint64_t lo);
  // The wrap ended: nothing is fresh, nothing pending.
  void clear();

  // The in-place writes (through m), each counted as one store; src
  // nullptr writes zeros.
  void store(Medium& m, void* dst, uint64_t v, unsigned size);
  void write(Medium& m, void* dst, const void* src, size_t n);
  // Before the commit fence: flushes what is pending (the undo engines'
  // data fence then orders it; the redo engines call before_commit()).
  void flush(Medium& m);

  // Redo engines, before the commit record: makes the wrap's fresh bytes
  // recoverable once the record is durable, with no fence of its own (on a
  // file every fence is a device flush; on x86 a fence waits for the
  // flushed lines):
  //   * blocks of at most kLogMax bytes in all are logged in the frame —
  //     one range record each, replayed like any record and never aliased
  //     — and their lines flushed for the commit fence to order;
  //   * larger ones (up to kVouchMax) are vouched for: one FRESH record per
  //     block with a hash of its bytes, and all their lines flushed for the
  //     commit fence (also those the wrap did not write: the hash covers
  //     them).  The trailer and the bytes then become durable with
  //     the same fence, in no order; recovery takes the frame as committed
  //     only if home holds the bytes vouched for (drop_unvouched in
  //     redo_log.h, which also says why a later wrap's changes to the
  //     block do not unseat it), and the wrap is acknowledged only after
  //     the fence, so a frame left out was never acknowledged;
  //   * beyond kVouchMax, or when !vouch (a wrap that spilled: recovery
  //     decides whether to keep its in-place writes from its trailer
  //     alone), they are flushed and fenced (kDataOrder) — hashing more
  //     costs more than a fence.
  // Replay rewrites bytes home already holds, and cannot reach a block
  // freed since (Engine::reuse_safe keeps such a block out of fresh reuse
  // until no replayable frame holds it).  False if the log is full.
  static constexpr uint64_t kLogMax = 256;
  static constexpr uint64_t kVouchMax = uint64_t{1} << 20;
  //   (Only in a version-3 pool: a version-2 pool stays so while another
  //   handle, maybe of an older release, has it open: pool_growth.cc.)
  bool before_commit(Medium& m, RedoWriter& log, const PoolFile& pool, bool vouch) {
    return !written_ || order_written(m, log, pool, vouch);  // the common wrap wrote nothing fresh
  }

  // Crash-simulator controls (ResolvedConfig::fresh_control): nothing is
  // flushed; a small wrap's blocks are not logged; they are logged but
  // their last line is not flushed; larger blocks are neither vouched for
  // nor fenced (kSkipVouch) — broken variants.  (kSkipVouchCheck is
  // recovery's.)
  FreshControl control = FreshControl::kNone;
  // SW_CONFIG_WCL: words equal to what home holds are not written (a block
  // freed and allocated again often gets much the same bytes: a SQLite
  // journal's pages).  No log or alias is involved: the compare reads home.
  bool compare = false;

 private:
  bool lookup(uint64_t off, uint64_t n) const;
  bool order_written(Medium& m, RedoWriter& log, const PoolFile& pool, bool vouch);
  void put(Medium& m, unsigned char* dst, const unsigned char* src, size_t n);
  void wrote(Medium& m, const void* p, size_t n);

  std::map<uint64_t, uint64_t> ranges_;  // lo -> hi, disjoint
  uint64_t bytes_ = 0;                   // their sizes
  uint64_t lo_ = ~uint64_t{0}, hi_ = 0;   // bounds of all ranges
  mutable uint64_t last_lo_ = 1, last_hi_ = 0;  // last hit (empty)
  WriteBehind dirty_;
  bool written_ = false;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ENGINE_FRESH_H_
