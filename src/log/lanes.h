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
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace softwrap {

class PoolFile;

struct FrameMark {
  uint64_t end;  // logical position just past the frame
  uint64_t seq;  // commit sequence
};

struct alignas(64) Lane {
  std::atomic<bool> busy{false};
  uint32_t index = 0;
  char* base = nullptr;  // mapped lane area
  uint64_t size = 0;     // bytes, multiple of 64
  // Writer state (touched only by the lane's current holder).
  uint64_t tail = 0;     // logical position of the next line to write
  uint64_t reclaimed = 0;  // logical position below which space is free
  std::deque<FrameMark> committed;  // frames not yet reclaimed, in order
  uint64_t undo_gen = 0;  // undo engine: generation of the open/next wrap
};

class LaneSet {
 public:
  explicit LaneSet(PoolFile* pool);
  uint32_t count() const { return static_cast<uint32_t>(lanes_.size()); }
  Lane& lane(uint32_t i) { return *lanes_[i]; }

  // Takes a free lane, preferring `hint`; spins then yields while all are
  // busy.  With `usable`, a lane it refuses (a redo lane whose space is all
  // held by frames awaiting retirement) is passed over while another free
  // lane can be had; after a pass that finds none, any free lane is taken.
  // Returns its index.
  using UsableFn = bool (*)(void* ctx, Lane& lane);
  uint32_t acquire(uint32_t hint, UsableFn usable = nullptr, void* ctx = nullptr);
  void release(uint32_t i);

 private:
  std::vector<std::unique_ptr<Lane>> lanes_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_LOG_LANES_H_
