// simulator.h — runs a workload on the trace medium, then checks recovery
// from every legal crash image at every crash point.
//
// One run: a small pool is laid out in memory (PoolFile::format, 8 MiB, 2
// lanes of 64 KiB, inline retirement, growing up to the workload's
// max_size inside a 64 MiB buffer) and opened with the trace medium
// installed as the medium factory; the workload's setup runs untraced and is quiesced;
// then the workload runs while the trace records.  Afterwards the trace is
// replayed through the persistency Model over a second buffer, the durable
// image.  Crash points are: before every fence (and drain), and at every
// wrap boundary marker (open and close returned, nested ones too), and the
// end of the trace.  The fences include those inside retirement (labelled
// retire:*), watermark persists (truncate:*), undo rollback, ... .  At each
// point every legal image (or a stratified sample, model.h) is written into
// the durable buffer as a diff, checked by the oracle, and taken back.
//
// A workload may ask for several handles of the pool (Workload::handles:
// other "processes" sharing it, SW_CONFIG_SHARED): the simulator opens
// them on the same image before setup, all recording into the trace, and
// closes them after it.  If the workload saw the API misbehave (a load that
// returned a value never stored, a call that failed), the run fails, and
// the crash points of the trace before that moment are still checked.
//
// The oracle sees only the image (a PoolFile attached to it, no DRAM state):
//   0. the image opens (header, durable size and every zone validate);
//   1. recovery succeeds; 2. a second recovery changes no byte
//   (idempotence); 3. each owner's bytes and the live allocation count equal
//   the golden state before or after the wrap it had open (after, once its
//   close had returned); 4. Allocator::check passes; 5. no committed redo
//   frame above the watermark and no undo record of an open generation is
//   left; 6. if the workload has a check_image hook (driver.h), the hook
//   passes on the recovered image opened as a pool.  For some images per
//   crash point (nested_per_point) recovery itself is traced and crashed at
//   each of its fences, one level deep: the re-recovered image must pass
//   the same checks and reach the same golden state as the uninterrupted
//   recovery.
//
// A failing image is shrunk (greedy delta debugging: drop persisted units
// while it still fails) and reported with the seed, the crash point's label
// and the persisted and dropped lines with their call-site labels.
#ifndef SOFTWRAP_CRASHSIM_SIMULATOR_H_
#define SOFTWRAP_CRASHSIM_SIMULATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "crashsim/model.h"
#include "crashsim/driver.h"
#include "pool/pool.h"
#include "softwrap/softwrap.h"

namespace softwrap::crashsim {

struct SimOptions {
  sw_engine_kind engine = SW_ENGINE_SOFTWRAP;
  Persistency model = Persistency::kX86;
  // The trace medium's cpu-cache form (medium.h): flushes not issued,
  // streams temporal or non-temporal, the ordering fences between temporal
  // stores elided.  The suite runs it under the eADR model (and, as a
  // control, under x86, where it must fail); drop_needed_fences is the
  // control that must fail under eADR.
  CpuCacheForm cpu_cache;
  uint32_t writeback_unit = kSyncPage;  // page-cache model only (model.h: valid_writeback_unit)
  EnumOptions en;
  EnumOptions nested_en{64, 6, 4, 6};
  uint32_t nested_per_point = 1;  // images per crash point whose recovery is crashed too
  bool redo_skip_commit_validation = false;  // control variants (pool.h)
  bool wcl_misread_pairs = false;
  uint32_t max_reports = 2;          // failure reports kept (shrunk)
  uint64_t stop_after_failures = 0;  // stop checking images once this many failed; 0: never
  bool grow_skip_zone_fence = false;  // control variant (pool.h)
  FreshControl fresh_control = FreshControl::kNone;  // control variants (pool.h)
  HelpControl help_control = HelpControl::kNone;     // control variant (pool.h)
  bool home_runs_late = false;  // control variant (pool.h)
  bool objects_unlogged = false;  // control variant (pool.h): sw_modify's changes not logged
  bool alloc_unlogged = false;    // control variant (pool.h): the allocator's words not logged
  bool share_skip_quiesce = false;  // control variant (pool.h): write access given up before commits are home
};

struct SimResult {
  uint64_t runs = 0;
  uint64_t crash_points = 0;
  uint64_t images = 0;         // images checked (distinct per crash point)
  uint64_t nested_images = 0;  // of which: crash during recovery
  uint64_t failures = 0;
  uint64_t run_failures = 0;   // of which: a run as a whole (the workload saw the API misbehave, ...)
  uint64_t exhaustive_points = 0;
  uint64_t mixed = 0;          // model: temporal+streamed on one word (not modelled)
  std::map<std::string, uint64_t> points_by_label;  // crash points per call-site label
  std::vector<std::string> reports;
  void add(const SimResult& o);
};

class Simulator {
 public:
  explicit Simulator(const SimOptions& opt);
  ~Simulator();
  // Runs workload w (seeded) with about `size` wraps; adds to *out.
  void run(const Workload& w, uint64_t seed, uint32_t size, SimResult* out);
  // Distinct images over every run of this simulator.
  uint64_t distinct() const { return distinct_.size(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unordered_set<uint64_t> distinct_;
};

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_SIMULATOR_H_
