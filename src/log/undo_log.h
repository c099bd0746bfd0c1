// undo_log.h — the undo log: old values saved before a wrap overwrites them.
//
// Each wrap of the undo engine owns its lane from position 0 and a
// generation number gen = LaneHeader::undo_committed_gen + 1.  A record is
//   RECORD: (offset << 8 | kUndoRecord), (length | gen << 32),
//           ceil(len/8) words of old data, checksum
//   LINK:   (extent offset << 8 | kUndoLink), (extent bytes | gen << 32),
//           checksum — the records continue at the extent's first word
// packed back to back at 8-byte alignment.  The checksum (seeded with the
// pool UUID, the lane, the record's position — in the lane, or its pool
// offset in an extent — and gen) makes each record self-validating, so
// recovery reads records from position 0 while they validate for the
// lane's open generation, rolls them back, and then marks the generation
// done by persisting undo_committed_gen = gen.  Commit persists the same
// word after the new data is flushed and fenced.  A record never straddles
// a link (a long range is saved as several records) and a link always
// fits: the writer keeps room for one at the end of every segment.
// Extents are free heap chunks reserved in DRAM (Allocator::
// reserve_log_chunks), released after the generation is marked done.
#ifndef SOFTWRAP_LOG_UNDO_LOG_H_
#define SOFTWRAP_LOG_UNDO_LOG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "log/lanes.h"
#include "log/redo_log.h"

namespace softwrap {

class Allocator;
class Medium;
class PoolFile;

inline constexpr uint64_t kUndoRecord = 0x5;
inline constexpr uint64_t kUndoLink = 0x6;

class UndoWriter {
 public:
  UndoWriter(const PoolFile* pool, Medium* medium, Allocator* alloc)
      : pool_(pool), medium_(medium), pool_seed_(pool_seed(*pool)), extents_(alloc) {}
  void begin(Lane& lane);
  // As begin, but the records start in a log extent of one chunk (a redo
  // wrap that spills: its lane holds its redo frame).  Returns the
  // extent's offset, for LaneHeader::spill_head, or 0 (no free chunk).
  uint64_t begin_in_extent(Lane& lane);
  // Streams records of the current bytes at [off, off+n) (no fence).
  // False if the pool has no free chunk for an extent.
  bool append(uint64_t off, size_t n);
  // Marks the generation finished: store + flush of the lane header word
  // (the caller fences, then calls release_extents).  Advances
  // lane.undo_gen.
  void finish();
  // Returns the generation's extents to the heap.  REQUIRES: finish() and
  // the fence after it.
  void release_extents() { extents_.release_all(); }
  // Bytes of records written in this generation.
  uint64_t used() const { return used_; }

 private:
  bool link();

  const PoolFile* pool_;
  Medium* medium_;
  uint64_t pool_seed_;  // pool_seed(*pool_): every record's checksum seed starts with it
  ExtentSource extents_;
  Lane* lane_ = nullptr;
  char* seg_ = nullptr;     // lane base, or the current extent
  uint64_t seg_id_ = 0;     // checksum position of seg_'s first byte
  uint64_t seg_size_ = 0;
  uint64_t pos_ = 0;        // in the segment
  uint64_t used_ = 0;
  std::vector<uint64_t> buf_;
};

// Calls visit(ctx, offset, old bytes, n) for each valid record of the
// lane's open generation, in log order, from the lane's start (or from
// LaneHeader::spill_head, a one-chunk extent, when it is set), following
// links.  Returns the number of records.
using UndoVisit = void (*)(void* ctx, uint64_t offset, const unsigned char* old, size_t n);
uint64_t visit_undo(const PoolFile& pool, uint32_t lane, UndoVisit visit, void* ctx);

}  // namespace softwrap

#endif  // SOFTWRAP_LOG_UNDO_LOG_H_
