// spill.cc — in-place writes of a spilled redo wrap (see spill.h).
#include "engine/spill.h"

#include "common/counters.h"
#include "medium/medium.h"
#include "medium/trace_label.h"
#include "pool/pool.h"

namespace softwrap {

bool Spill::start(Lane& lane, uint64_t frame_phys) {
  const uint64_t head = undo_.begin_in_extent(lane);
  if (head == 0) return false;
  SW_TRACE_LABEL("spill:start");
  LaneHeader* lh = pool_->lane_header(lane.index);
  medium_->store(&lh->spill_frame, frame_phys, 8);
  medium_->store(&lh->spill_head, head, 8);
  medium_->flush(lh, sizeof *lh);  // durable by the first record's fence, before any in-place store
  lane_ = &lane;
  saved_.clear();
  in_place_ = 0;
  return true;
}

bool Spill::save(uint64_t off, size_t n) {
  SW_TRACE_LABEL_DEFAULT("spill:record");
  bool any = false;
  uint64_t run = 0, run_end = 0;
  for (uint64_t w = off & ~uint64_t{7}; w < off + n; w += 8) {
    if (!saved_.insert(w)) continue;
    if (run_end != w) {
      if (run_end > run && !undo_.append(run, run_end - run)) return false;
      run = w;
    }
    run_end = w + 8;
    any = true;
  }
  if (run_end > run && !undo_.append(run, run_end - run)) return false;
  if (any) {
    SW_TRACE_LABEL_DEFAULT("spill:log-order");
    medium_->fence(FenceKind::kLogOrder);
  }
  return true;
}

bool Spill::write(uint64_t off, const void* src, size_t n) {
  if (!save(off, n)) return false;
  SW_TRACE_LABEL_DEFAULT("spill:data");
  medium_->write(pool_->at(off), src, n);
  dirty_.add(*medium_, pool_->at(off), n);
  counters().home_writes.add();
  in_place_ += n;
  return true;
}

bool Spill::store(uint64_t off, uint64_t v, unsigned size) {
  if (!save(off, size)) return false;
  SW_TRACE_LABEL_DEFAULT("spill:data");
  medium_->store(pool_->at(off), v, size);
  dirty_.add(*medium_, pool_->at(off), size);
  counters().home_writes.add();
  in_place_ += size;
  return true;
}

void Spill::mark_done() {
  SW_TRACE_LABEL("spill:done");
  undo_.finish();  // undo_committed_gen = the generation (stored, flushed)
  LaneHeader* lh = pool_->lane_header(lane_->index);
  medium_->store(&lh->spill_head, 0, 8);
  medium_->flush(&lh->spill_head, 8);
  medium_->fence(FenceKind::kOther);
  undo_.release_extents();
  saved_.clear();
  lane_ = nullptr;
}

void Spill::finish_commit() { mark_done(); }

void Spill::restore(void* self, uint64_t off, const unsigned char* old, size_t n) {
  auto* s = static_cast<Spill*>(self);
  s->medium_->write(s->pool_->at(off), old, n);
  s->medium_->flush(s->pool_->at(off), n);
}

void Spill::rollback() {
  SW_TRACE_LABEL("spill:rollback");
  dirty_.clear();
  // The saved words are disjoint: the records apply in any order.
  medium_->publish_streams();  // (each was fenced before its home write)
  visit_undo(*pool_, lane_->index, &Spill::restore, this);
  medium_->fence(FenceKind::kOther);
  mark_done();
}

}  // namespace softwrap
