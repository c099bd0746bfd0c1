// workload_trace_test.cc — the paper's workloads traced on undo and
// undo-themis and run on the simulator: the traces are the same program
// but for the removable fences, they carry loads and work, and Baseline,
// Themis and themis-mc keep the persist order on them (on the default
// machine and with a slow non-temporal path).
#include "themis/workload_trace.h"

#include <gtest/gtest.h>

#include "themis/machine.h"
#include "themis/persist_check.h"
#include "workloads/registry.h"

namespace softwrap::themis {
namespace {

struct Pair {
  Recorded undo, themis;
};

Pair record(const std::string& name, uint64_t tx) {
  Pair r;
  RecordSpec s;
  s.workload = name;
  s.params.scale = workloads::find_workload(name)->small_scale;
  s.transactions = tx;
  std::string why;
  s.engine = SW_ENGINE_UNDO;
  EXPECT_TRUE(record_workload(s, &r.undo, &why)) << why;
  s.engine = SW_ENGINE_UNDO_THEMIS;
  EXPECT_TRUE(record_workload(s, &r.themis, &why)) << why;
  return r;
}

TEST(WorkloadTraceTest, UndoThemisIsUndoWithoutTheRemovableFences) {
  Pair r = record("sps", 40);
  EXPECT_EQ(r.undo.transactions, 40u);
  EXPECT_EQ(r.themis.transactions, 40u);
  EXPECT_GT(r.undo.removable_fences, 40u);
  EXPECT_EQ(r.themis.removable_fences, 0u);
  EXPECT_GT(r.undo.stores_per_tx, 2.0);
  EXPECT_DOUBLE_EQ(r.undo.stores_per_tx, r.themis.stores_per_tx);
  EXPECT_GT(r.undo.ticks_per_ns, 0.0);
  size_t loads = 0;
  uint64_t work = 0;
  for (const TraceEvent& e : r.undo.events) {
    loads += e.kind == TraceKind::kLoad;
    work += e.work;
  }
  EXPECT_GT(loads, 40u);
  EXPECT_GT(work, 0u);
  std::string why;
  ASSERT_TRUE(share_work(&r.undo.events, &r.themis.events, &why)) << why;
  // A different program is refused.
  std::vector<TraceEvent> other = r.themis.events;
  other[other.size() / 2].off += 64;
  EXPECT_FALSE(share_work(&r.undo.events, &other, &why));
  EXPECT_NE(why.find("differ"), std::string::npos);
}

TEST(WorkloadTraceTest, AnUnknownWorkloadIsAClearError) {
  RecordSpec s;
  s.workload = "nope";
  Recorded r;
  std::string why;
  EXPECT_FALSE(record_workload(s, &r, &why));
  EXPECT_NE(why.find("unknown workload 'nope'"), std::string::npos);
}

TEST(WorkloadTraceTest, EveryWorkloadKeepsThePersistOrderUnderBaselineThemisAndThemisMc) {
  for (const workloads::Info* info : workloads::themis_workloads()) {
    Pair r = record(info->name, 30);
    std::string why;
    ASSERT_TRUE(share_work(&r.undo.events, &r.themis.events, &why)) << info->name << ": " << why;
    for (Design d : {Design::kBaseline, Design::kThemis, Design::kThemisMc, Design::kIdeal}) {
      for (double nt_ns : {20.0, 100.0}) {  // the default machine, and a slow non-temporal path
        Config cfg;
        cfg.design = d;
        cfg.wcb_to_pm_ns = nt_ns;
        const std::vector<TraceEvent>& ev = d == Design::kBaseline ? r.undo.events : r.themis.events;
        ReadOptions o;
        o.ticks_per_ns = r.undo.ticks_per_ns;
        Program p;
        ASSERT_TRUE(read_trace(ev, o, cfg.cores, &p, &why)) << why;
        PersistCheck check(ev, p.footprint, crashsim::Persistency::kThemis);
        Stats s;
        ASSERT_TRUE(simulate(cfg, p, {}, &check, &s, &why)) << info->name << ": " << why;
        EXPECT_EQ(s.version_regressions, 0u) << info->name;
        EXPECT_EQ(s.seq_misjudged, 0u) << info->name;
        if (d != Design::kIdeal) {
          EXPECT_EQ(check.violations(), 0u) << info->name << " " << design_name(d) << " at " << nt_ns << " ns: "
                                            << (check.examples().empty() ? "" : check.examples()[0]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace softwrap::themis
