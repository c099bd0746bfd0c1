// lanes.h — log lanes: one per open wrap, acquired at outermost open.
//
// A lane is a fixed slice of the pool's log region plus the DRAM state of
// its writer.  Threads do not own lanes: a thread takes a free lane when it
// opens a wrap (trying the lane it used last first, as PMDK does) and gives
// it back at close, so any number of threads can share a pool.  When every
// lane is busy, opening waits.  The writer state (tail, the FIFO of
// committed frames awaiting retirement) belongs to the lane, so it survives
// a change of owner.
#ifndef SOFTWRAP_LOG_LANES_H_
#define SOFTWRAP_LOG_LANES_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace softwrap {

class PoolFile;

struct FrameMark {
  uint64_t end;  // logical position just past the frame
  uint64_t seq;  // commit sequence
};

// One lane.  What a wrap reads to take the lane, check its room, begin a
// frame and reclaim retired frames lies in its first cache line (a wrap
// that opens with cold caches pays one miss for it): the position words,
// and the queue of committed frames awaiting retirement summed up by the
// sequence number of its oldest frame, so that a lane none of whose frames
// has retired is told apart without reading the queue's buffer.
struct alignas(64) Lane {
  Lane() = default;
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  ~Lane() { delete[] frames_; }

  std::atomic<bool> busy{false};
  uint8_t frames_log2_ = 0;  // the frame buffer holds 1 << frames_log2_ marks (none before the first push)
  uint32_t index = 0;
  char* base = nullptr;  // mapped lane area
  uint64_t size = 0;     // bytes, multiple of 64
  // Writer state (touched only by the lane's current holder).
  uint64_t tail = 0;     // logical position of the next line to write
  uint64_t reclaimed = 0;  // logical position below which space is free

  // ---- committed frames not yet reclaimed, oldest first
  bool frames_empty() const { return frames_count_ == 0; }
  size_t frames() const { return frames_count_; }
  const FrameMark& oldest_frame() const { return frames_[frames_head_]; }
  // The oldest frame's commit sequence; ~0 when there is none.
  uint64_t oldest_seq() const { return oldest_seq_; }
  void push_frame(FrameMark m) {
    const uint32_t mask = (uint32_t{1} << frames_log2_) - 1;
    if (frames_ == nullptr || frames_count_ > mask) [[unlikely]] return grow_and_push(m);
    frames_[(frames_head_ + frames_count_) & mask] = m;
    if (frames_count_++ == 0) oldest_seq_ = m.seq;
  }
  void pop_frame() {
    frames_head_ = (frames_head_ + 1) & ((uint32_t{1} << frames_log2_) - 1);
    oldest_seq_ = --frames_count_ == 0 ? ~uint64_t{0} : frames_[frames_head_].seq;
  }
  void clear_frames() {
    frames_head_ = frames_count_ = 0;
    oldest_seq_ = ~uint64_t{0};
  }
  // Frees the space of every frame with seq <= retired (all of it home):
  // reads only this line while the oldest frame is younger.
  void reclaim_through(uint64_t retired) {
    if (oldest_seq_ > retired) [[likely]] return;
    reclaim_slow(retired);
  }

  void reclaim_slow(uint64_t retired);
  void grow_and_push(FrameMark m);

  // The queue's own words (use the calls above).
  uint64_t oldest_seq_ = ~uint64_t{0};
  FrameMark* frames_ = nullptr;  // ring buffer of 1 << frames_log2_ marks
  uint32_t frames_head_ = 0;
  uint32_t frames_count_ = 0;

  // Second line: the undo engine's.
  uint64_t undo_gen = 0;  // undo engine: generation of the open/next wrap
};
static_assert(offsetof(Lane, undo_gen) == 64, "a lane's hot words fill its first cache line");

class LaneSet {
 public:
  explicit LaneSet(PoolFile* pool);
  uint32_t count() const { return count_; }
  Lane& lane(uint32_t i) { return lanes_[i]; }

  // Takes a free lane, preferring `hint`; spins then yields while all are
  // busy.  With `usable`, a lane it refuses (a redo lane whose space is all
  // held by frames awaiting retirement) is passed over while another free
  // lane can be had; after a pass that finds none, any free lane is taken.
  // Returns its index.
  using UsableFn = bool (*)(void* ctx, Lane& lane);
  uint32_t acquire(uint32_t hint, UsableFn usable = nullptr, void* ctx = nullptr);
  void release(uint32_t i);

 private:
  // One array: a lane is found without reading a pointer first.
  std::unique_ptr<Lane[]> lanes_;
  uint32_t count_ = 0;
};

}  // namespace softwrap

#endif  // SOFTWRAP_LOG_LANES_H_
