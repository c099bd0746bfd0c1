// recovery.cc — undo roll-back, then redo replay (see recovery.h).
#include "recovery/recovery.h"

#include <algorithm>
#include <vector>

#include "common/clock.h"
#include "log/redo_log.h"
#include "log/undo_log.h"
#include "medium/medium.h"
#include "medium/trace_label.h"
#include "pool/pool.h"

namespace softwrap {

namespace {

void persist_word(Medium& m, uint64_t* w, uint64_t v) {
  m.store(w, v, 8);
  m.flush(w, 8);
  m.fence(FenceKind::kOther);
}

}  // namespace

int recover(PoolFile& pool, Medium& medium, sw_recovery_report* rep, const RecoveryOptions& opts) {
  *rep = sw_recovery_report{};
  const uint64_t t0 = now_ns();
  const uint32_t lanes = pool.header().lanes;

  struct Restore {
    PoolFile* pool;
    Medium* medium;
    sw_recovery_report* rep;
  } ctx{&pool, &medium, rep};
  for (uint32_t i = 0; i < lanes; ++i) {
    LaneHeader* lh = pool.lane_header(i);
    // A redo wrap that spilled (engine/spill.h): if its frame committed (and
    // is not yet retired: a spilled wrap's generation is marked done before
    // its tables can retire), its in-place writes stay — replay below
    // writes them again, in commit order, from the frame — else the records
    // roll them back.
    if (lh->spill_head != 0 && frame_committed(pool, i, lh->spill_frame, pool.meta()->retired_seq)) {
      SW_TRACE_LABEL("recovery:spill-keep");
      persist_word(medium, &lh->undo_committed_gen, lh->undo_committed_gen + 1);
      persist_word(medium, &lh->spill_head, 0);
      continue;
    }
    // The records of a generation cover disjoint words: applied in log
    // order, straight from the log.
    SW_TRACE_LABEL("recovery:undo-rollback");
    const uint64_t n = visit_undo(
        pool, i,
        [](void* c, uint64_t off, const unsigned char* old, size_t len) {
          auto* r = static_cast<Restore*>(c);
          r->medium->write(r->pool->at(off), old, len);
          r->medium->flush(r->pool->at(off), len);
          r->rep->undo_bytes_restored += len;
        },
        &ctx);
    if (n != 0) {
      medium.fence(FenceKind::kOther);
      SW_TRACE_LABEL("recovery:undo-mark");
      persist_word(medium, &lh->undo_committed_gen, lh->undo_committed_gen + 1);
      ++rep->undo_wraps_rolled_back;
    }
    if (lh->spill_head != 0) persist_word(medium, &lh->spill_head, 0);
  }

  uint64_t* retired = &pool.meta()->retired_seq;
  std::vector<RedoFrame> frames;
  for (uint32_t i = 0; i < lanes; ++i) scan_lane(pool, i, *retired, &frames, &rep->torn_frames_skipped, !opts.redo_skip_commit_validation);
  if (!frames.empty()) {
    // A frame whose fresh bytes did not all reach home was never
    // acknowledged (redo_log.h): it is left out, as a torn frame is, and
    // the watermark passes it.
    uint64_t top = 0;
    if (!opts.fresh_skip_check) rep->torn_frames_skipped += drop_unvouched(pool, &frames, &top);
    std::sort(frames.begin(), frames.end(), [](const RedoFrame& a, const RedoFrame& b) { return a.seq < b.seq; });
    SW_TRACE_LABEL("recovery:redo-replay");
    for (const RedoFrame& f : frames) rep->redo_bytes_replayed += apply_frame(pool, medium, f, opts.wcl_misread_pairs);
    if (!frames.empty()) medium.fence(FenceKind::kOther);
    top = std::max(top, frames.empty() ? 0 : frames.back().seq);
    SW_TRACE_LABEL("recovery:watermark");
    persist_word(medium, retired, top);
    rep->redo_wraps_replayed = frames.size();
  }
  rep->elapsed_ns = now_ns() - t0;
  return 0;
}

}  // namespace softwrap
