// redo_log.h — the redo log: frames of a wrap's new values, streamed to a
// lane in whole cache lines; format in docs/log-format.md.
//
// A frame starts on a 64-byte boundary of its lane and is a sequence of
// 8-byte words:
//   header    kFrameMagic
//   entries   STORE: (offset << 8 | size_log2 << 4 | kStore), value
//             RANGE: (offset << 8 | kRange), length, ceil(length/8) words
//             (MASKED is reserved for write-combined logging)
//   trailer   (count << 8 | kCommit), seq, checksum
// The checksum is a word hash of everything from the header through seq,
// seeded with the pool UUID, the lane and the frame's physical position, so
// a frame is valid only where it was written and only if every word of it
// persisted.  A frame without a valid trailer was never committed.  The
// frame is therefore self-validating and a commit costs one fence: stream
// the last partial line, fence.
//
// Lanes are circular: logical positions grow forever, physical position =
// logical % lane size (a multiple of 64, so lines never straddle the end).
#ifndef SOFTWRAP_LOG_REDO_LOG_H_
#define SOFTWRAP_LOG_REDO_LOG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "log/lanes.h"

namespace softwrap {

class Medium;
class PoolFile;

inline constexpr uint64_t kFrameMagic = 0x3146524F44455257ull;  // "WREDORF1"
enum RedoKind : uint64_t { kStore = 1, kRange = 2, kMasked = 3, kCommit = 0xC };

// Seed of the frame checksum for a physical lane position.
uint64_t frame_seed(const PoolFile& pool, uint32_t lane, uint64_t phys_pos);

// Writes frames into one lane at a time.  One writer per thread; begin()
// binds it to the lane the thread holds.
class RedoWriter {
 public:
  // Called when the lane has no room for the next line.  Must return true
  // once lane.reclaimed has advanced enough (it may wait), or false to give
  // up (the wrap then fails with SW_ETOOBIG).
  using SpaceFn = bool (*)(void* self, Lane& lane, uint64_t need_end);

  RedoWriter(const PoolFile* pool, Medium* medium, SpaceFn space, void* space_self)
      : pool_(pool), medium_(medium), space_(space), space_self_(space_self) {}

  void begin(Lane& lane);
  // Append entries; false if the lane cannot hold the frame (the frame is
  // then abandoned by the caller).
  bool append_store(uint64_t off, uint64_t v, unsigned size);
  bool append_range(uint64_t off, const void* src, size_t n);
  // Trailer + last partial line streamed.  The caller fences.  Records the
  // frame in lane.committed.  False if out of space.
  bool commit(uint64_t seq);
  // Forget the open frame; the lane's tail returns to its start.
  void abandon();

  bool open() const { return lane_ != nullptr; }
  uint64_t frame_bytes() const { return (lane_ ? lane_->tail - start_ : 0) + fill_; }
  uint32_t entries() const { return count_; }

 private:
  bool put(uint64_t w);
  bool flush_line();
  // Streams `lines` whole lines from src at the tail (fill_ must be 0).
  bool stream_lines(const unsigned char* src, size_t lines);

  const PoolFile* pool_;
  Medium* medium_;
  SpaceFn space_;
  void* space_self_;
  Lane* lane_ = nullptr;
  uint64_t start_ = 0;  // logical position of the frame header
  uint64_t hash_ = 0;
  uint32_t count_ = 0;
  uint32_t fill_ = 0;  // bytes in line_
  alignas(64) uint64_t line_[8];
};

// A committed frame found by recovery.
struct RedoFrame {
  uint64_t seq;
  uint32_t lane;
  uint64_t phys_pos;
  std::vector<uint64_t> words;  // entries only (no header/trailer)
};

// Scans a lane for valid committed frames with seq > min_seq.  Counts
// candidate frames (header present) that failed validation in *torn.
// validate_commit = false is the crash simulator's broken control variant
// (RecoveryOptions::redo_skip_commit_validation): a frame whose entries
// parse is accepted without a valid trailer (count, checksum).
void scan_lane(const PoolFile& pool, uint32_t lane, uint64_t min_seq,
               std::vector<RedoFrame>* out, uint64_t* torn, bool validate_commit = true);

// Applies a frame's entries to their home locations through the medium
// (write + flush, no fence).  Returns bytes applied.
uint64_t apply_frame(const PoolFile& pool, Medium& medium, const RedoFrame& f);

}  // namespace softwrap

#endif  // SOFTWRAP_LOG_REDO_LOG_H_
