// spill.h — redo wraps that outgrow their DRAM budget continue in place.
//
// A wrap of the softwrap engines keeps its new values in DRAM (alias
// entries, shadow pages, what abort needs) until they reach home.  Past
// ResolvedConfig::spill_bytes of that, the wrap *spills*: each further
// store to bytes that no live alias table holds is written home at once,
// after its old bytes were saved as undo records (streamed, fenced:
// FenceKind::kLogOrder) — the undo engine's technique, and like it with
// no DRAM copy of anything.  The new bytes still go to the redo frame too,
// so recovery replays every committed frame in commit order whatever was
// written in place (an older frame that is not yet past the watermark may
// hold the same bytes).  Bytes some table does hold keep taking the alias
// path, so retirement never meets a spilled byte.  DRAM of a spilled wrap
// stays at the budget plus about 2% of what it writes in place (the set of
// saved words, engine/word_set.h), and its size is limited only by free
// pool space (its log is about twice what it writes in place).
//
// The undo records form a generation of the lane's undo log
// (LaneHeader::undo_committed_gen + 1) that starts in a log extent named
// by LaneHeader::spill_head; LaneHeader::spill_frame names the wrap's redo
// frame.  Both are persisted before the first in-place store.  Commit
// flushes the in-place lines before the commit fence (so they are durable
// before the watermark can pass the frame), then marks the generation
// done.  Recovery keeps the in-place bytes if the frame at spill_frame is
// committed and above the watermark (and replays the frame), and rolls
// them back from the records otherwise (docs/log-format.md).
#ifndef SOFTWRAP_ENGINE_SPILL_H_
#define SOFTWRAP_ENGINE_SPILL_H_

#include <cstddef>
#include <cstdint>

#include "engine/word_set.h"
#include "engine/write_behind.h"
#include "log/undo_log.h"

namespace softwrap {

class Allocator;
class Medium;
class PoolFile;
struct Lane;

class Spill {
 public:
  Spill(PoolFile* pool, Medium* medium, Allocator* alloc) : pool_(pool), medium_(medium), undo_(pool, medium, alloc) {}

  bool active() const { return lane_ != nullptr; }
  // Starts spilling the wrap that holds `lane`, whose redo frame has its
  // header at lane position frame_phys.  False: no free chunk for the log.
  bool start(Lane& lane, uint64_t frame_phys);
  // Writes n bytes home at off, saving first the old bytes of every word
  // not saved yet in this wrap.  False: no log space (nothing written).
  bool write(uint64_t off, const void* src, size_t n);
  bool store(uint64_t off, uint64_t v, unsigned size);
  // Before the commit fence: flushes the in-place lines.
  void flush() { dirty_.flush(*medium_); }
  // After the commit fence (the frame is committed): marks the generation
  // done, fenced, and returns the log space.
  void finish_commit();
  // Abort: copies the saved bytes back and marks the generation done.
  void rollback();
  uint64_t bytes_in_place() const { return in_place_; }

 private:
  bool save(uint64_t off, size_t n);
  void mark_done();
  static void restore(void* self, uint64_t off, const unsigned char* old, size_t n);

  Lane* lane_ = nullptr;  // first: active() reads it on every store (SwThread puts it on a hot line)
  PoolFile* pool_;
  Medium* medium_;
  UndoWriter undo_;
  WordSet saved_;
  WriteBehind dirty_;
  uint64_t in_place_ = 0;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ENGINE_SPILL_H_
