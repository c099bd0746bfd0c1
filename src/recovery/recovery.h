// recovery.h — bringing a pool's home locations to a committed state.
//
// Runs at every open, before any engine state exists, from the pool image
// alone (never DRAM state):
//   1. every lane whose undo generation is open is rolled back, newest
//      record first, and the generation is marked finished;
//   2. every committed redo frame above PoolMeta::retired_seq, from all
//      lanes, is copied home in sequence order, flushed and fenced, and the
//      watermark is raised to the newest of them.
// Each step rewrites the same values when repeated, and the marks that end
// a step are persisted only after its data is, so recovery may itself be
// interrupted and rerun (it is idempotent).
#ifndef SOFTWRAP_RECOVERY_RECOVERY_H_
#define SOFTWRAP_RECOVERY_RECOVERY_H_

#include "softwrap/softwrap.h"

namespace softwrap {

class PoolFile;
class Medium;

struct RecoveryOptions {
  // Crash-simulator control only (ResolvedConfig::redo_skip_commit_validation):
  // accept redo frames whose trailer is missing or invalid.  Never set
  // otherwise: it replays torn frames.
  bool redo_skip_commit_validation = false;
  // Crash-simulator control only (ResolvedConfig::wcl_misread_pairs): apply
  // each half of a PAIR record to its whole word.  Replays wrong values.
  bool wcl_misread_pairs = false;
  // Crash-simulator control only (FreshControl::kSkipVouchCheck): take
  // frames as committed without checking the fresh bytes they vouch for.
  bool fresh_skip_check = false;
};

int recover(PoolFile& pool, Medium& medium, sw_recovery_report* report, const RecoveryOptions& opts = {});

}  // namespace softwrap

#endif  // SOFTWRAP_RECOVERY_RECOVERY_H_
