// suite.h — the crash test as a whole: engines x models x workloads, plus
// the controls, until an image budget is reached.  Shared by the CLI's
// `softwrap crashtest` and the CTest `crash` test.
//
// Levels: quick (CI: >= 100,000 images and at least 4 seeds, about a minute
// on two cores) and full (>= 10 million; the default set of workloads plus
// those of a pool several handles share, share_workload.h).  Both go round after round over
// every combination with a new seed per round until the level's image
// target (and round minimum) is met, so the totals do not depend on how
// many images a seed happens to produce.
//
// Controls are runs that must come out a certain way, proving the checker
// can fail: `nonatomic` (both models) must fail; the undo engine without its
// log-order fence must fail under x86 and pass under Themis; recovery that
// does not validate redo commit trailers must fail (softwrap and
// softwrap-local); engines that do not flush fresh blocks before the commit,
// or do not log or do not flush the small ones they log
// (ResolvedConfig::fresh_control) must fail; a handle of a shared pool
// giving write access up before its commits are home
// (ResolvedConfig::share_skip_quiesce) must fail a crash image; and the
// others in docs/crash-simulator.md.  When the page-cache model is among
// the models, the controls about persistence ordering run under it too
// (nonatomic, undo-themis, fresh blocks unflushed, ...): they must fail
// there as well.  When the eADR model is among them: undo-themis in the
// temporal cpu-cache form must pass it; the cpu-cache forms of softwrap and
// undo must fail the x86 model (they issue no flushes: the model tells the
// platforms apart); nonatomic, and the non-temporal form with its ordering
// fences dropped (CpuCacheForm::drop_needed_fences), must fail eADR.
#ifndef SOFTWRAP_CRASHSIM_SUITE_H_
#define SOFTWRAP_CRASHSIM_SUITE_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "crashsim/model.h"
#include "crashsim/driver.h"
#include "softwrap/softwrap.h"

namespace softwrap::crashsim {

struct SuiteOptions {
  bool full = false;
  std::vector<sw_engine_kind> engines{SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO};
  std::vector<Persistency> models{Persistency::kX86, Persistency::kThemis};
  uint32_t writeback_unit = kSyncPage;  // of the page-cache model (model.h)
  // Under the eADR model every engine runs in the medium's cpu-cache form
  // (medium.h), once per stream form listed here.
  std::vector<StreamForm> eadr_streams{StreamForm::kTemporal, StreamForm::kNonTemporal};
  // Run the other models' cells in those cpu-cache forms too (the CLI's
  // --cpu-cache with --model x86: a control's reproduction).
  bool cpu_cache_all_models = false;
  std::vector<const Workload*> workloads;  // empty: workloads(), and with full the share workloads too
  uint64_t seed = 1;
  uint64_t max_exhaustive = uint64_t{1} << 14;
  uint32_t size = 0;            // wraps per run; 0: the level's default
  uint64_t target_images = 0;   // 0: the level's (100k quick, 10M full)
  uint32_t min_rounds = 0;      // 0: the level's (4 quick, 1 full): seeds tried at least
  uint32_t max_rounds = 0;      // 0: unbounded (until the target)
  bool controls = true;
  FILE* progress = nullptr;     // one line per round, if not null
};

struct ControlResult {
  std::string name;
  bool caught;  // behaved as it must
  uint64_t images, failures;
  std::string detail;  // first failure report (for "must fail" controls)
};

struct SuiteResult {
  uint64_t images = 0, distinct = 0, failures = 0, crash_points = 0, nested_images = 0, exhaustive_points = 0;
  uint64_t mixed = 0, runs = 0;
  double seconds = 0;
  std::map<std::string, uint64_t> points_by_label;
  std::vector<std::string> reports;  // failures of the engines under test
  std::vector<ControlResult> controls;
  uint32_t controls_caught() const {
    uint32_t n = 0;
    for (const ControlResult& c : controls) n += c.caught;
    return n;
  }
  // "crashtest: images=N distinct=D failures=F controls=C/T"
  std::string summary() const;
  bool passed() const { return failures == 0 && controls_caught() == controls.size(); }
};

SuiteResult run_suite(const SuiteOptions& opt);

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_SUITE_H_
