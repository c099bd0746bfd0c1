// undo_log.h — the undo log: old values saved before a wrap overwrites them.
//
// Each wrap of the undo engine owns its lane from position 0 and a
// generation number gen = LaneHeader::undo_committed_gen + 1.  A record is
//   (offset << 8 | kUndoRecord), (length | gen << 32), ceil(len/8) words of
//   old data, checksum
// packed back to back at 8-byte alignment.  The checksum (seeded with the
// pool UUID, lane, position and gen) makes each record self-validating, so
// recovery reads records from position 0 while they validate for the lane's
// open generation, rolls them back newest first, and then marks the
// generation done by persisting undo_committed_gen = gen.  Commit persists
// the same word after the new data is flushed and fenced.
#ifndef SOFTWRAP_LOG_UNDO_LOG_H_
#define SOFTWRAP_LOG_UNDO_LOG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "log/lanes.h"

namespace softwrap {

class Medium;
class PoolFile;

inline constexpr uint64_t kUndoRecord = 0x5;

class UndoWriter {
 public:
  UndoWriter(const PoolFile* pool, Medium* medium) : pool_(pool), medium_(medium) {}
  void begin(Lane& lane);
  // Streams a record of the current bytes at [off, off+n) (no fence).
  // False if the lane is full.
  bool append(uint64_t off, size_t n);
  // Marks the generation finished: store + flush of the lane header word
  // (the caller fences).  Advances lane.undo_gen.
  void finish();
  size_t used() const { return pos_; }

 private:
  const PoolFile* pool_;
  Medium* medium_;
  Lane* lane_ = nullptr;
  uint64_t pos_ = 0;
  std::vector<uint64_t> buf_;
};

struct UndoRecordImage {
  uint64_t offset;
  std::vector<unsigned char> old;
};

// Valid records of the lane's open generation, in log order.
void scan_undo(const PoolFile& pool, uint32_t lane, std::vector<UndoRecordImage>* out);

}  // namespace softwrap

#endif  // SOFTWRAP_LOG_UNDO_LOG_H_
