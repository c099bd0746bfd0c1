// suite.cc — rounds of (engine, model, workload) runs and the controls.
#include "crashsim/suite.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crashsim/share_workload.h"
#include "crashsim/simulator.h"
#include "pool/pool.h"

namespace softwrap::crashsim {

std::string SuiteResult::summary() const {
  return "crashtest: images=" + std::to_string(images) + " distinct=" + std::to_string(distinct) +
         " failures=" + std::to_string(failures) + " controls=" + std::to_string(controls_caught()) + "/" +
         std::to_string(controls.size());
}

namespace {

struct ControlSpec {
  const char* name;
  sw_engine_kind engine;
  Persistency model;
  bool skip_validation;
  bool must_fail;
  std::vector<const char*> workloads;
  bool misread_pairs = false;
  bool skip_zone_fence = false;
  FreshControl fresh_control = FreshControl::kNone;
  HelpControl help_control = HelpControl::kNone;
  bool share_skip_quiesce = false;
  bool home_runs_late = false;
  bool objects_unlogged = false;
  bool alloc_unlogged = false;
  CpuCacheForm cpu_cache = {};
  // Caught only by a failing crash image, not by a run that failed as a
  // whole (the workload seeing the API misbehave).
  bool by_images = false;
};

ControlResult run_control(const ControlSpec& c, const SuiteOptions& so, uint32_t size, SuiteResult* total) {
  SimOptions o;
  o.engine = c.engine;
  o.model = c.model;
  o.writeback_unit = so.writeback_unit;
  o.en.max_exhaustive = so.max_exhaustive;
  o.redo_skip_commit_validation = c.skip_validation;
  o.wcl_misread_pairs = c.misread_pairs;
  o.grow_skip_zone_fence = c.skip_zone_fence;
  o.fresh_control = c.fresh_control;
  o.help_control = c.help_control;
  o.share_skip_quiesce = c.share_skip_quiesce;
  o.home_runs_late = c.home_runs_late;
  o.objects_unlogged = c.objects_unlogged;
  o.alloc_unlogged = c.alloc_unlogged;
  o.cpu_cache = c.cpu_cache;
  o.max_reports = c.by_images ? 4 : 1;
  o.stop_after_failures = c.must_fail ? 1 : 0;
  Simulator sim(o);
  SimResult r;
  const auto failed = [&] { return c.by_images ? r.failures > r.run_failures : r.failures > 0; };
  for (uint64_t s = 0; s < 4 && (!c.must_fail || !failed()); ++s) {
    for (const char* wn : c.workloads) {
      if (c.must_fail && failed()) break;
      sim.run(*find_workload(wn), so.seed + s, size, &r);
    }
  }
  total->images += r.images;
  total->distinct += sim.distinct();
  ControlResult cr{c.name, c.must_fail ? failed() : r.failures == 0, r.images, r.failures, {}};
  for (const std::string& rep : r.reports) {  // a failing image's report first, if the control wants one
    if (cr.detail.empty() && (!c.by_images || rep.find("crash point:") != std::string::npos)) cr.detail = rep;
  }
  if (cr.detail.empty() && !r.reports.empty()) cr.detail = r.reports[0];
  return cr;
}

}  // namespace

SuiteResult run_suite(const SuiteOptions& so) {
  const auto t0 = std::chrono::steady_clock::now();
  SuiteResult res;
  const uint64_t target = so.target_images ? so.target_images : so.full ? 10'000'000 : 100'000;
  const uint32_t size = so.size ? so.size : so.full ? 40 : 12;
  std::vector<const Workload*> wl = so.workloads;
  if (wl.empty()) {
    for (const Workload& w : workloads()) wl.push_back(&w);
    if (so.full) {
      for (const Workload& w : share_workloads()) wl.push_back(&w);
    }
  }
  // One simulator per (engine, model): buffers are reused across runs.
  struct Cell {
    std::unique_ptr<Simulator> sim;
    SimResult r;
  };
  std::vector<Cell> cells;
  for (sw_engine_kind e : so.engines) {
    for (Persistency m : so.models) {
      SimOptions o;
      o.engine = e;
      o.model = m;
      o.writeback_unit = so.writeback_unit;
      o.en.max_exhaustive = so.max_exhaustive;
      if (so.full) {
        o.en.random = 64;
        o.en.flips = 48;
        o.nested_per_point = 2;
      }
      if (m != Persistency::kEadr && !so.cpu_cache_all_models) {
        cells.push_back({std::make_unique<Simulator>(o), {}});
        continue;
      }
      o.cpu_cache.on = true;
      for (StreamForm f : so.eadr_streams) {
        o.cpu_cache.streams = f;
        cells.push_back({std::make_unique<Simulator>(o), {}});
      }
    }
  }
  uint64_t images = 0;
  const uint32_t min_rounds = so.min_rounds ? so.min_rounds : so.full ? 1 : 4;
  for (uint32_t round = 0; (images < target || round < min_rounds) && (so.max_rounds == 0 || round < so.max_rounds);
       ++round) {
    for (Cell& c : cells) {
      for (const Workload* w : wl) c.sim->run(*w, so.seed + round, size, &c.r);
    }
    images = 0;
    for (const Cell& c : cells) images += c.r.images;
    if (so.progress) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(so.progress, "round %u: %llu images in %.1f s (%.0f/s)\n", round + 1,
                   static_cast<unsigned long long>(images), s, s > 0 ? images / s : 0.0);
      std::fflush(so.progress);
    }
  }
  for (Cell& c : cells) {
    res.images += c.r.images;
    res.distinct += c.sim->distinct();
    res.failures += c.r.failures;
    res.crash_points += c.r.crash_points;
    res.nested_images += c.r.nested_images;
    res.exhaustive_points += c.r.exhaustive_points;
    res.mixed += c.r.mixed;
    res.runs += c.r.runs;
    res.reports.insert(res.reports.end(), c.r.reports.begin(), c.r.reports.end());
    for (const auto& [k, v] : c.r.points_by_label) res.points_by_label[k] += v;
  }
  if (so.controls) {
    const std::vector<ControlSpec> specs = {
        {"nonatomic caught (x86)", SW_ENGINE_NONATOMIC, Persistency::kX86, false, true, {"stores", "bank"}},
        {"nonatomic caught (themis)", SW_ENGINE_NONATOMIC, Persistency::kThemis, false, true, {"stores", "bank"}},
        {"undo-themis caught (x86)", SW_ENGINE_UNDO_THEMIS, Persistency::kX86, false, true,
         {"stores", "nested", "bank"}},
        {"undo-themis passes (themis)", SW_ENGINE_UNDO_THEMIS, Persistency::kThemis, false, false,
         {"stores", "nested", "alloc", "write", "threads"}},
        {"redo without commit validation caught (softwrap)", SW_ENGINE_SOFTWRAP, Persistency::kX86, true, true,
         {"stores", "switch", "write"}},
        {"redo without commit validation caught (softwrap-local)", SW_ENGINE_SOFTWRAP_LOCAL, Persistency::kX86,
         true, true, {"stores", "switch", "write"}},
        {"write-combined pairs misread caught (softwrap)", SW_ENGINE_SOFTWRAP, Persistency::kX86, false, true,
         {"wcl"}, true},
        {"growth without the zone's fence caught (softwrap)", SW_ENGINE_SOFTWRAP, Persistency::kX86, false, true,
         {"grow"}, false, true},
    };
    for (const ControlSpec& c : specs) res.controls.push_back(run_control(c, so, size, &res));
    // Fresh blocks not flushed before the commit (ResolvedConfig::
    // fresh_control), on every redo and undo engine; and, on the redo
    // engines, a wrap's few fresh bytes not logged in its frame, or logged
    // and never flushed (seen once the frame is out of replay's reach).
    auto fresh = [&](const char* what, sw_engine_kind e, FreshControl fc, std::vector<const char*> workloads) {
      const ControlSpec c{"", e, Persistency::kX86, false, true, std::move(workloads), false, false, fc};
      res.controls.push_back(run_control(c, so, size, &res));
      res.controls.back().name = std::string(what) + " caught (" + engine_kind_name(e) + ")";
    };
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO}) {
      fresh("fresh blocks unflushed at the commit", e, FreshControl::kSkipFlush, {"fresh_commit", "fresh_alloc"});
    }
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL}) {
      fresh("small fresh blocks unlogged in the frame", e, FreshControl::kSkipLog, {"fresh_commit", "fresh_alloc"});
      fresh("small fresh blocks logged but unflushed", e, FreshControl::kSkipLoggedFlush, {"fresh_small"});
      // Larger blocks neither vouched for in the frame nor fenced, or
      // vouched for and not checked by recovery: a trailer that reached
      // persistence before the blocks is taken as committed.
      fresh("fresh blocks not vouched for", e, FreshControl::kSkipVouch, {"fresh_alloc"});
      fresh("fresh blocks vouched for and not checked", e, FreshControl::kSkipVouchCheck, {"fresh_alloc"});
    }
    // A committing wrap that helps retirement and also writes its own
    // words home before its commit fence (ResolvedConfig::help_control).
    for (const auto& [model, name] : {std::pair{Persistency::kX86, "x86"}, std::pair{Persistency::kThemis, "themis"}}) {
      ControlSpec c{"", SW_ENGINE_SOFTWRAP, model, false, true, {"help_words", "help_wcl"}};
      c.help_control = HelpControl::kOwnBeforeCommit;
      res.controls.push_back(run_control(c, so, size, &res));
      res.controls.back().name = std::string("helping commit writing its own words home early caught (") + name + ")";
    }
    // Objects (sw_modify) whose changed bytes are not logged
    // (ResolvedConfig::objects_unlogged): written home before the commit
    // record (redo), or stored to with no undo record (undo).
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO}) {
      for (const auto& [model, name] :
           {std::pair{Persistency::kX86, "x86"}, std::pair{Persistency::kThemis, "themis"}}) {
        ControlSpec c{"", e, model, false, true, {"obj_nodes", "obj_large"}};
        c.objects_unlogged = true;
        c.by_images = true;
        res.controls.push_back(run_control(c, so, size, &res));
        res.controls.back().name = std::string("object changes not logged caught (") + engine_kind_name(e) + ", " +
                                   name + ")";
      }
    }
    // The allocator's words stored home in place instead of through the
    // engine (ResolvedConfig::alloc_unlogged): a crash before the commit
    // keeps an allocation (or a free) the wrap never committed.
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO}) {
      ControlSpec c{"", e, Persistency::kX86, false, true, {"alloc", "obj_alloc"}};
      c.alloc_unlogged = true;
      c.by_images = true;
      res.controls.push_back(run_control(c, so, size, &res));
      res.controls.back().name = std::string("allocator words not logged caught (") + engine_kind_name(e) + ")";
    }
    // A handle of a shared pool that gives write access up before its
    // commits are home (ResolvedConfig::share_skip_quiesce): the redo
    // engines, both models, caught by a failing crash image.  (Undo has no
    // such bug to show: its commits are home when they return.)
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL}) {
      for (const auto& [model, name] :
           {std::pair{Persistency::kX86, "x86"}, std::pair{Persistency::kThemis, "themis"}}) {
        ControlSpec c{"", e, model, false, true, {"share_pass", "share_dead"}};
        c.share_skip_quiesce = true;
        c.by_images = true;
        res.controls.push_back(run_control(c, so, size, &res));
        res.controls.back().name = std::string("write access given up before commits are home caught (") +
                                   engine_kind_name(e) + ", " + name + ")";
      }
    }
    // The page cache model: the controls whose bug is an order of
    // persistence (a flush or fence missing) must be caught there too.
    if (std::find(so.models.begin(), so.models.end(), Persistency::kPageCache) != so.models.end()) {
      auto page = [&](const char* what, ControlSpec c) {
        c.model = Persistency::kPageCache;
        res.controls.push_back(run_control(c, so, size, &res));
        res.controls.back().name = std::string(what) + " caught (page-cache)";
      };
      page("nonatomic", {"", SW_ENGINE_NONATOMIC, {}, false, true, {"stores", "bank"}});
      page("undo-themis", {"", SW_ENGINE_UNDO_THEMIS, {}, false, true, {"stores", "nested", "bank"}});
      page("growth without the zone's fence, softwrap", {"", SW_ENGINE_SOFTWRAP, {}, false, true, {"grow"}, false, true});
      for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO}) {
        page((std::string("fresh blocks unflushed at the commit, ") + engine_kind_name(e)).c_str(),
             {"", e, {}, false, true, {"fresh_commit", "fresh_alloc"}, false, false, FreshControl::kSkipFlush});
      }
      // (Not kSkipLoggedFlush: it leaves one line of a block unflushed
      // while flushing the others, and a fence syncs their whole page.)
      for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL}) {
        page((std::string("small fresh blocks unlogged in the frame, ") + engine_kind_name(e)).c_str(),
             {"", e, {}, false, true, {"fresh_commit", "fresh_alloc"}, false, false, FreshControl::kSkipLog});
        page((std::string("fresh blocks not vouched for, ") + engine_kind_name(e)).c_str(),
             {"", e, {}, false, true, {"fresh_alloc"}, false, false, FreshControl::kSkipVouch});
        page((std::string("fresh blocks vouched for and not checked, ") + engine_kind_name(e)).c_str(),
             {"", e, {}, false, true, {"fresh_alloc"}, false, false, FreshControl::kSkipVouchCheck});
      }
      ControlSpec help{"", SW_ENGINE_SOFTWRAP, {}, false, true, {"help_words", "help_wcl"}};
      help.help_control = HelpControl::kOwnBeforeCommit;
      page("helping commit writing its own words home early", help);
      page("redo without commit validation, softwrap", {"", SW_ENGINE_SOFTWRAP, {}, true, true, {"stores", "switch", "write"}});
      // Retirement's home runs (kept until each batch's end under this
      // model, as on msync) written after its fence: the log is reclaimed
      // while the values it held are not durable at home.
      ControlSpec late{"", SW_ENGINE_SOFTWRAP, {}, false, true, {"switch", "write", "stores"}};
      late.home_runs_late = true;
      page("retirement's home runs written after its fence", late);
    }
  }
  // The eADR model: the cpu-cache forms pass it and not x86; without the
  // fences the form keeps, or without atomicity, they fail it.
  if (so.controls && std::find(so.models.begin(), so.models.end(), Persistency::kEadr) != so.models.end()) {
    auto eadr = [&](std::string name, ControlSpec c, StreamForm f) {
      c.cpu_cache.on = true;
      c.cpu_cache.streams = f;
      c.by_images = c.must_fail;  // by a crash image, not a run the workload saw fail
      res.controls.push_back(run_control(c, so, size, &res));
      res.controls.back().name = std::move(name);
    };
    const StreamForm kT = StreamForm::kTemporal, kNt = StreamForm::kNonTemporal;
    eadr("undo-themis passes (eadr, temporal)",
         {"", SW_ENGINE_UNDO_THEMIS, Persistency::kEadr, false, false, {"stores", "nested", "alloc", "write", "threads"}},
         kT);
    eadr("nonatomic caught (eadr)", {"", SW_ENGINE_NONATOMIC, Persistency::kEadr, false, true, {"stores", "bank"}}, kT);
    for (sw_engine_kind e : {SW_ENGINE_SOFTWRAP, SW_ENGINE_UNDO}) {
      for (StreamForm f : {kT, kNt}) {
        eadr(std::string("cpu-cache form caught (x86, ") + engine_kind_name(e) + ", " + stream_form_name(f) + ")",
             {"", e, Persistency::kX86, false, true, {"stores", "bank"}}, f);
      }
      ControlSpec c{"", e, Persistency::kEadr, false, true, {"stores", "fresh_alloc", "spill"}};
      c.cpu_cache.drop_needed_fences = true;
      eadr(std::string("non-temporal streams without their ordering fences caught (eadr, ") + engine_kind_name(e) + ")", c, kNt);
    }
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace softwrap::crashsim
