// simulator.cc — trace a workload, replay it through the model, and run the
// oracle on every legal crash image (see simulator.h).
//
// Two buffers per simulator, of the largest size a pool may grow to:
// `vol_`, the volatile image the workload runs on, and `dur_`, the durable
// image the model maintains.  A pool starts at 8 MiB and grows inside them
// (only its durable size moves).  Nothing is copied per image: an image is
// a diff written into dur_ (word journal), recovery's writes go through a
// journaling trace medium, and both are taken back after the checks.  The
// oracle attaches each image afresh, so its durable size and zones are the
// image's own.  Between runs only the part a run used is cleared.
#include "crashsim/simulator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "api/attach.h"
#include "api/runtime.h"
#include "common/error.h"
#include "common/hash.h"
#include "log/redo_log.h"
#include "log/undo_log.h"
#include "medium/trace_medium.h"
#include "pool/allocator.h"
#include "pool/pool.h"
#include "recovery/recovery.h"

namespace softwrap::crashsim {

namespace {

constexpr size_t kPoolSize = size_t{8} << 20;  // initial size
constexpr size_t kCapacity = size_t{64} << 20;  // largest Workload::max_size
constexpr uint64_t kLaneSize = 64 << 10;

// Zero pages from the kernel, committed only where touched.
struct Buffer {
  explicit Buffer(size_t n)
      : p(static_cast<char*>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))), size(n) {
    if (p == MAP_FAILED) {
      std::perror("crash simulator: mmap");
      std::abort();
    }
  }
  ~Buffer() { munmap(p, size); }
  char* p;
  size_t size;
};

std::unique_ptr<Medium> trace_factory(const MediumOptions&, void* base, size_t len, void* ctx) {
  auto* rec = static_cast<Recording*>(ctx);
  auto m = std::make_unique<TraceMedium>(base, len, &rec->trace, nullptr);
  m->set_home_runs(rec->home_runs);
  if (rec->cpu_cache.on) m->set_cpu_cache(rec->cpu_cache);
  return m;
}

// A medium that only journals its writes (for Workload::check_image).
std::unique_ptr<Medium> journal_factory(const MediumOptions&, void* base, size_t len, void* ctx) {
  return std::make_unique<TraceMedium>(base, len, nullptr, static_cast<WriteJournal*>(ctx));
}

// Legal golden states per owner: a or b (a == b once the wrap closed).
struct Expect {
  std::vector<std::pair<uint32_t, uint32_t>> allowed;
};

struct Verdict {
  bool ok = true;
  std::string why;
  std::vector<uint32_t> matched;  // per owner
  bool recovery_wrote = false;
};

struct PointInfo {
  uint64_t event;
  uint64_t events;
  const char* what;  // "before a fence", "at a marker", "at the end"
  const char* label;
  int thread;
  std::string parent;  // for a crash during recovery: the outer crash point
};

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

}  // namespace

void SimResult::add(const SimResult& o) {
  runs += o.runs;
  crash_points += o.crash_points;
  images += o.images;
  nested_images += o.nested_images;
  failures += o.failures;
  run_failures += o.run_failures;
  exhaustive_points += o.exhaustive_points;
  mixed += o.mixed;
  reports.insert(reports.end(), o.reports.begin(), o.reports.end());
  for (const auto& [k, v] : o.points_by_label) points_by_label[k] += v;
}

struct Simulator::Impl {
  explicit Impl(const SimOptions& o) : opt(o), vol(kCapacity), dur(kCapacity) {}

  SimOptions opt;
  Buffer vol, dur;
  size_t used = 0;  // bytes of vol and dur the last run may have written (fresh pages are zero)
  WriteJournal rj;  // recovery's writes on dur
  WordJournal wj;   // the image's words on dur
  std::vector<unsigned char> scratch;
  std::vector<std::pair<uint64_t, uint32_t>> ranges;
  std::vector<RedoFrame> frames;

  // The current run.
  const Workload* w = nullptr;
  ResolvedConfig cfg;
  uint64_t seed = 0;
  uint32_t size = 0;
  Recording* rec = nullptr;
  std::unique_ptr<PoolFile> pool;
  std::unordered_set<uint64_t>* distinct = nullptr;
  SimResult* res = nullptr;
  uint64_t salt = 0;
  uint64_t points = 0;

  bool stop() const {
    return opt.stop_after_failures && res->failures - res->run_failures >= opt.stop_after_failures;
  }

  // ---------------------------------------------------------------- oracle

  uint64_t live_allocs(std::string* why) {
    AllocatorStats st;
    if (Allocator::check(*pool, &st) != 0) {
      *why = std::string("allocator check failed: ") + last_error_message();
      return ~uint64_t{0};
    }
    return st.allocated_blocks + st.allocated_extents;
  }

  bool matches(const Golden& g, uint64_t live) const {
    if (g.live_allocs != live) return false;
    for (const Extent& e : g.extents) {
      if (std::memcmp(dur.p + e.off, e.bytes.data(), e.bytes.size()) != 0) return false;
    }
    return true;
  }

  std::string describe_mismatch(uint32_t owner, const Golden& a, const Golden& b, uint64_t live) const {
    std::ostringstream s;
    s << "owner " << owner << ": the recovered bytes match neither the state before nor the state after its wrap";
    for (const Extent& e : b.extents) {
      for (size_t i = 0; i < e.bytes.size(); ++i) {
        const auto got = static_cast<unsigned char>(dur.p[e.off + i]);
        if (got == e.bytes[i]) continue;
        int before = -1;
        for (const Extent& x : a.extents) {
          if (e.off + i >= x.off && e.off + i < x.off + x.bytes.size()) before = x.bytes[e.off + i - x.off];
        }
        s << "; first difference from 'after' at offset " << hex(e.off + i) << ": image " << hex(got) << ", before "
          << (before < 0 ? std::string("(not owned)") : hex(static_cast<uint64_t>(before))) << ", after "
          << hex(e.bytes[i]);
        s << "; live allocations: image " << live << ", before " << a.live_allocs << ", after " << b.live_allocs;
        return s.str();
      }
    }
    s << "; bytes equal 'after' but live allocations differ: image " << live << ", before " << a.live_allocs
      << ", after " << b.live_allocs;
    return s.str();
  }

  // The image in dur as a pool (its own durable size and zones).
  bool attach_image(std::string* why) {
    pool = PoolFile::attach(dur.p, kCapacity);
    if (!pool) *why = std::string("the image does not open as a pool: ") + last_error_message();
    return pool != nullptr;
  }

  Verdict oracle(const Expect& ex) {
    Verdict v;
    rj.clear();
    TraceMedium med(dur.p, kCapacity, nullptr, &rj);
    RecoveryOptions ro;
    ro.redo_skip_commit_validation = opt.redo_skip_commit_validation;
    ro.fresh_skip_check = opt.fresh_control == FreshControl::kSkipVouchCheck;
    ro.wcl_misread_pairs = opt.wcl_misread_pairs;
    sw_recovery_report rep;
    auto fail = [&](std::string why) {
      v.ok = false;
      v.why = std::move(why);
      rj.revert(dur.p);
      return v;
    };
    std::string why;
    if (!attach_image(&why)) return fail(why);
    if (recover(*pool, med, &rep, ro) != 0) return fail(std::string("recovery failed: ") + last_error_message());
    const size_t j1 = rj.size();
    v.recovery_wrote = j1 > 0;
    if (recover(*pool, med, &rep, ro) != 0) return fail(std::string("second recovery failed: ") + last_error_message());
    if (rj.size() > j1) {  // idempotence: the second run's writes must change nothing
      ranges.clear();
      scratch.clear();
      for (size_t i = j1; i < rj.size(); ++i) {
        ranges.emplace_back(rj.off(i), rj.len(i));
        scratch.insert(scratch.end(), dur.p + rj.off(i), dur.p + rj.off(i) + rj.len(i));
      }
      rj.revert_to(dur.p, j1);
      size_t at = 0;
      for (const auto& [off, len] : ranges) {
        if (std::memcmp(dur.p + off, &scratch[at], len) != 0) {
          return fail("recovery is not idempotent: a second run changed bytes at offset " + hex(off));
        }
        at += len;
      }
    }
    const uint64_t live = live_allocs(&why);
    if (!why.empty()) return fail(why);
    v.matched.resize(ex.allowed.size());
    for (size_t o = 0; o < ex.allowed.size(); ++o) {
      const auto [a, b] = ex.allowed[o];
      if (matches(rec->goldens[a], live)) {
        v.matched[o] = a;
      } else if (matches(rec->goldens[b], live)) {
        v.matched[o] = b;
      } else {
        return fail(describe_mismatch(static_cast<uint32_t>(o), rec->goldens[a], rec->goldens[b], live));
      }
    }
    const uint64_t retired = pool->meta()->retired_seq;
    for (uint32_t i = 0; i < pool->header().lanes; ++i) {
      frames.clear();
      uint64_t torn = 0;
      scan_lane(*pool, i, retired, &frames, &torn);
      if (!frames.empty()) return fail("a committed redo frame above the watermark is left after recovery");
      if (visit_undo(*pool, i, [](void*, uint64_t, const unsigned char*, size_t) {}, nullptr) != 0) {
        return fail("undo records of an open generation are left after recovery");
      }
    }
    if (w->check_image) {
      why = check_image(ex, v.matched);
      if (!why.empty()) return fail(why);
    }
    rj.revert(dur.p);
    return v;
  }

  // The workload's own check (Workload::check_image) on the recovered
  // image: opened as a pool in place, on a medium that journals into rj,
  // so its writes (open, close) are taken back with recovery's.
  std::string check_image(const Expect& ex, const std::vector<uint32_t>& matched) {
    std::vector<ImageState> owners;
    for (size_t o = 0; o < ex.allowed.size(); ++o) {
      owners.push_back({ex.allowed[o].first, ex.allowed[o].second, matched[o]});
    }
    set_medium_factory(journal_factory, &rj);
    sw_pool* p = open_attached(dur.p, kCapacity, cfg, false);
    set_medium_factory(nullptr, nullptr);
    if (!p) return std::string("the recovered image does not open as a pool: ") + sw_errormsg();
    std::string why = w->check_image(p, owners);
    if (sw_pool_close(p) != 0 && why.empty()) {
      why = std::string("closing the recovered image failed: ") + sw_errormsg();
    }
    return why.empty() ? why : "workload check: " + why;
  }

  // Oracle on choice c applied to dur (and taken back).
  Verdict check_choice(const CrashState& cs, const Choice& c, const Expect& ex) {
    const size_t j0 = wj.size();
    apply_choice(cs, c, dur.p, &wj);
    Verdict v = oracle(ex);
    wj.revert_to(dur.p, j0);
    return v;
  }

  // --------------------------------------------------------------- reports

  Choice shrink(const CrashState& cs, Choice c, const Expect& ex, std::string* why) {
    for (int round = 0; round < 3; ++round) {
      bool changed = false;
      for (size_t d = 0; d < cs.dims(); ++d) {
        for (uint32_t k = 0; k < c[d]; ++k) {
          Choice x = c;
          x[d] = k;
          if (opt.model == Persistency::kThemis) themis_repair_down(cs, &x);
          const Verdict v = check_choice(cs, x, ex);
          if (!v.ok) {
            c = x;
            *why = v.why;
            changed = true;
            break;
          }
        }
      }
      if (!changed) break;
    }
    return c;
  }

  static std::string labels(const std::vector<Unit>& u, size_t from, size_t to) {
    std::string s;
    const char* last = nullptr;
    for (size_t i = from; i < to; ++i) {
      if (last && std::strcmp(last, u[i].label) == 0) continue;
      if (!s.empty()) s += ", ";
      s += u[i].label;
      last = u[i].label;
    }
    return s;
  }

  bool page_cache() const { return opt.model == Persistency::kPageCache; }
  // What the model's line is called in reports.
  const char* line_name() const {
    if (opt.model == Persistency::kEadr) return "visible stores from";
    if (!page_cache()) return "line";
    return opt.writeback_unit == kSyncPage ? "page" : "writeback unit";
  }
  // The CLI's options that select the model.
  std::string model_args() const {
    std::string s = std::string("--model ") + persistency_name(opt.model);
    if (page_cache() && opt.writeback_unit != kSyncPage) s += " --writeback-unit " + std::to_string(opt.writeback_unit);
    if (opt.cpu_cache.on) s += std::string(" --cpu-cache ") + stream_form_name(opt.cpu_cache.streams);
    return s;
  }

  std::string report(const CrashState& cs, const Choice& c, const PointInfo& at, const std::string& why) {
    std::ostringstream s;
    s << "FAILURE engine=" << engine_kind_name(opt.engine) << " model=" << persistency_name(opt.model);
    if (page_cache() && opt.writeback_unit != kSyncPage) s << " writeback-unit=" << opt.writeback_unit;
    if (opt.cpu_cache.on) s << " medium=cpu-cache/" << stream_form_name(opt.cpu_cache.streams);
    s << " workload=" << w->name << " seed=" << seed << " size=" << size;
    if (opt.redo_skip_commit_validation) s << " variant=redo-skip-commit-validation";
    if (opt.wcl_misread_pairs) s << " variant=wcl-misread-pairs";
    if (opt.fresh_control != FreshControl::kNone) s << " variant=" << fresh_control_name(opt.fresh_control);
    if (opt.help_control != HelpControl::kNone) s << " variant=" << help_control_name(opt.help_control);
    if (opt.home_runs_late) s << " variant=home-runs-late";
    if (opt.objects_unlogged) s << " variant=objects-unlogged";
    if (opt.alloc_unlogged) s << " variant=alloc-unlogged";
    if (opt.share_skip_quiesce) s << " variant=share-skip-quiesce";
    if (opt.cpu_cache.on && opt.cpu_cache.drop_needed_fences) s << " variant=cpu-cache-nt-ordering-fences-dropped";
    s << "\n  crash point: event " << at.event << " of " << at.events << ", " << at.what << " \"" << at.label
      << "\"";
    if (at.thread >= 0) s << " (thread " << at.thread << ")";
    if (!at.parent.empty()) s << "\n  during recovery of an image from: " << at.parent;
    s << "\n  why: " << why;
    size_t persisted = 0;
    for (size_t d = 0; d < cs.dims(); ++d) persisted += c[d] > 0;
    s << "\n  minimal image: " << persisted << " of " << cs.dims() << " pending items persisted";
    size_t dropped_shown = 0, dropped = 0;
    for (size_t d = 0; d < cs.dims(); ++d) {
      const bool line = cs.is_line(d);
      if (c[d] > 0) {
        if (line) {
          s << "\n    persisted: " << line_name() << " " << hex(cs.line_off[d]) << ", stores 1.." << c[d] << " of " << cs.max(d) << " ["
            << labels(cs.line_units[d], 0, c[d]) << "]";
        } else {
          const Unit& u = cs.stream(d);
          s << "\n    persisted: streamed word " << hex(u.word) << " (thread " << int(u.thread) << ") [" << u.label
            << "]";
        }
      }
      if (c[d] < cs.max(d)) {
        ++dropped;
        if (dropped_shown++ >= 8) continue;
        if (line) {
          s << "\n    dropped:   " << line_name() << " " << hex(cs.line_off[d]) << ", stores " << c[d] + 1 << ".." << cs.max(d) << " ["
            << labels(cs.line_units[d], c[d], cs.max(d)) << "]";
        } else {
          const Unit& u = cs.stream(d);
          s << "\n    dropped:   streamed word " << hex(u.word) << " (thread " << int(u.thread) << ") [" << u.label
            << "]";
        }
      }
    }
    if (dropped > 8) s << "\n    (" << dropped - 8 << " more dropped)";
    s << "\n  reproduce: softwrap crashtest --engine " << engine_kind_name(opt.engine) << " " << model_args()
      << " --workload " << w->name << " --seed " << seed << " --size " << size;
    return s.str();
  }

  void fail_run(const std::string& why) {
    ++res->failures;
    ++res->run_failures;
    if (res->reports.size() < opt.max_reports) {
      res->reports.push_back(std::string("FAILURE engine=") + engine_kind_name(opt.engine) + " workload=" + w->name +
                             " seed=" + std::to_string(seed) + ": " + why);
    }
  }

  // ----------------------------------------------------------- crash points

  void nested(const Model& outer_model, uint64_t image_hash, const std::vector<uint32_t>& matched,
              const PointInfo& outer) {
    Trace t;
    WriteJournal nj;
    std::string why;
    if (!attach_image(&why)) return;  // cannot be: the oracle passed this image
    {
      TraceMedium med(dur.p, kCapacity, &t, &nj);
      if (opt.cpu_cache.on) med.set_cpu_cache(opt.cpu_cache);  // recovery runs on the same platform
      RecoveryOptions ro;
      ro.redo_skip_commit_validation = opt.redo_skip_commit_validation;
      ro.fresh_skip_check = opt.fresh_control == FreshControl::kSkipVouchCheck;
    ro.fresh_skip_check = opt.fresh_control == FreshControl::kSkipVouchCheck;
    ro.wcl_misread_pairs = opt.wcl_misread_pairs;
      sw_recovery_report rep;
      t.start();
      recover(*pool, med, &rep, ro);
      t.stop();
    }
    nj.revert(dur.p);
    Expect exact;
    for (uint32_t g : matched) exact.allowed.emplace_back(g, g);
    WordJournal mj;
    Model m(dur.p, kCapacity, opt.model, image_hash, &mj, opt.writeback_unit);
    const auto& ev = t.events();
    std::ostringstream parent;
    parent << "event " << outer.event << ", " << outer.what << " \"" << outer.label << "\"";
    for (size_t i = 0; i < ev.size() && !stop(); ++i) {
      if (ev[i].kind == TraceKind::kFence || ev[i].kind == TraceKind::kDrain) {
        check_point(m, exact, PointInfo{i, ev.size(), "before a fence in recovery", ev[i].label, ev[i].thread,
                                        parent.str()},
                    false);
      }
      m.step(ev[i], i);
    }
    mj.revert(dur.p);
    (void)outer_model;
  }

  void check_point(Model& m, const Expect& ex, const PointInfo& at, bool top) {
    CrashState cs;
    m.snapshot(&cs);
    ++res->crash_points;
    ++res->points_by_label[top ? at.label : std::string("in recovery: ") + at.label];
    std::unordered_set<uint64_t> seen;
    uint32_t nested_left = top ? opt.nested_per_point : 0;
    Rng rng(seed * 0x9E3779B97F4A7C15ull + (++points));
    const bool exhaustive = enumerate(cs, opt.model, top ? opt.en : opt.nested_en, rng, [&](const Choice& c) {
      const size_t j0 = wj.size();
      apply_choice(cs, c, dur.p, &wj);
      const uint64_t h = m.hash() ^ wj.delta_hash(dur.p, j0);
      if (!seen.insert(h).second) {
        wj.revert_to(dur.p, j0);
        return true;
      }
      distinct->insert(h ^ salt);
      ++res->images;
      if (!top) ++res->nested_images;
      const Verdict v = oracle(ex);
      if (!v.ok) {
        ++res->failures;
        if (res->reports.size() < opt.max_reports) {
          wj.revert_to(dur.p, j0);
          std::string why = v.why;
          const Choice small = shrink(cs, c, ex, &why);
          res->reports.push_back(report(cs, small, at, why));
          return !stop();
        }
      } else if (nested_left > 0 && v.recovery_wrote) {
        --nested_left;
        nested(m, h, v.matched, at);
      }
      wj.revert_to(dur.p, j0);
      return !stop();
    });
    if (exhaustive) ++res->exhaustive_points;
  }

  // The crash points of the trace's first `limit` events, and at its end
  // if that is all of it.
  void replay(size_t limit) {
    std::string why;
    if (!attach_image(&why)) return fail_run("the durable image at the start of the trace: " + why);
    Model m(dur.p, kCapacity, opt.model, 0, nullptr, opt.writeback_unit);
    Expect ex;
    for (uint32_t g : rec->initial) ex.allowed.emplace_back(g, g);
    const auto& ev = rec->trace.events();
    limit = std::min(limit, ev.size());
    for (size_t i = 0; i < limit && !stop(); ++i) {
      const TraceEvent& e = ev[i];
      if (e.kind == TraceKind::kMark) {
        const Marker& mk = rec->markers[e.aux];
        if (mk.kind == Marker::kOpen) ex.allowed[mk.owner] = {mk.before, mk.after};
        if (mk.kind == Marker::kClose) ex.allowed[mk.owner] = {mk.after, mk.after};
        check_point(m, ex, PointInfo{i, ev.size(), "at the marker", e.label, e.thread, {}}, true);
      } else if (e.kind == TraceKind::kFence || e.kind == TraceKind::kDrain) {
        check_point(m, ex, PointInfo{i, ev.size(), "before the fence", e.label, e.thread, {}}, true);
      }
      m.step(e, i);
    }
    if (!stop() && limit == ev.size()) {
      check_point(m, ex, PointInfo{ev.size(), ev.size(), "at the end of the trace", "end", -1, {}}, true);
    }
    res->mixed += m.mixed_words();
    pool.reset();
  }
};

Simulator::Simulator(const SimOptions& opt) : impl_(std::make_unique<Impl>(opt)) {}
Simulator::~Simulator() = default;

void Simulator::run(const Workload& w, uint64_t seed, uint32_t size, SimResult* out) {
  Impl& I = *impl_;
  I.w = &w;
  I.seed = seed;
  I.size = size;
  I.res = out;
  I.distinct = &distinct_;
  I.points = 0;
  ++out->runs;
  if (w.max_size > kCapacity) return I.fail_run("the workload's max_size exceeds the simulator's buffers");
  std::memset(I.vol.p, 0, std::max(I.used, kPoolSize));  // the pages the last run wrote
  const size_t dirty = I.used;
  I.used = kCapacity;  // until this run has ended cleanly

  sw_config c{};
  c.alias_entries = w.alias_entries;
  c.retire_divisor = w.retire_divisor;
  c.shadow_page_size = w.shadow_page_size;
  c.max_alias_tables = w.max_alias_tables;
  c.lanes = 2;
  c.lane_size = kLaneSize;
  c.flags = SW_CONFIG_NO_RETIRE_THREAD | w.flags | (w.handles > 1 ? SW_CONFIG_SHARED : 0u);
  ResolvedConfig cfg;
  if (resolve_config(&c, &cfg) != 0) return I.fail_run(std::string("bad configuration: ") + sw_errormsg());
  cfg.engine = I.opt.engine;  // over any SOFTWRAP_ENGINE in the environment
  cfg.redo_skip_commit_validation = I.opt.redo_skip_commit_validation;
  cfg.grow_skip_zone_fence = I.opt.grow_skip_zone_fence;
  cfg.fresh_control = I.opt.fresh_control;
  cfg.help_control = I.opt.help_control;
  cfg.home_runs_late = I.opt.home_runs_late;
  cfg.objects_unlogged = I.opt.objects_unlogged;
  cfg.alloc_unlogged = I.opt.alloc_unlogged;
  cfg.retire_stepwise = w.retire_stepwise;
  cfg.max_size = w.max_size;
  cfg.wcl_misread_pairs = I.opt.wcl_misread_pairs;
  cfg.share_skip_quiesce = I.opt.share_skip_quiesce;
  if (w.spill_bytes >= 0) cfg.spill_bytes = static_cast<uint64_t>(w.spill_bytes);
  I.cfg = cfg;
  uint8_t uuid[16];
  const uint64_t u0 = mix64(seed ^ 0x55555555), u1 = mix64(u0 + 1);
  std::memcpy(uuid, &u0, 8);
  std::memcpy(uuid + 8, &u1, 8);
  I.salt = mix64(hash_word(hash_word(hash64(w.name, std::strlen(w.name)), seed),
                           uint64_t{size} << 8 | static_cast<uint64_t>(I.opt.engine) << 1 |
                               static_cast<uint64_t>(I.opt.model)));

  Recording rec;
  I.rec = &rec;
  // Under the page-cache model the medium asks for home runs, as msync
  // does on a file: retirement's writes then reach the trace in the order
  // they take there (sorted runs at each batch's end).
  rec.home_runs = I.opt.model == Persistency::kPageCache;
  rec.cpu_cache = I.opt.cpu_cache;
  set_medium_factory(trace_factory, &rec);
  sw_pool* p = open_attached(I.vol.p, kCapacity, cfg, true, uuid, kPoolSize);
  // More handles on the same image (Workload::handles): other "processes".
  std::vector<sw_pool*> handles{p};
  for (uint32_t i = 1; p && i < w.handles; ++i) {
    sw_pool* q = open_attached(I.vol.p, kCapacity, cfg, false);
    if (!q) {
      const std::string why = sw_errormsg();
      for (sw_pool* h : handles) sw_pool_close(h);
      set_medium_factory(nullptr, nullptr);
      return I.fail_run("cannot open handle " + std::to_string(i) + " of the in-memory pool: " + why);
    }
    handles.push_back(q);
  }
  set_medium_factory(nullptr, nullptr);
  if (!p) return I.fail_run(std::string("cannot open the in-memory pool: ") + sw_errormsg());
  auto close_all = [&handles] {
    for (size_t i = handles.size(); i-- > 0;) sw_pool_close(handles[i]);
  };

  std::vector<std::unique_ptr<Driver>> owners;
  std::vector<Driver*> dv;
  for (uint32_t o = 0; o < w.owners; ++o) {
    owners.push_back(std::make_unique<Driver>(p, &rec, o));
    owners.back()->set_handles(handles);
    dv.push_back(owners.back().get());
  }
  Rng rng(seed);
  w.setup(dv, rng);
  sw_pool_quiesce(p);
  AllocatorStats st;
  if (Allocator::check(*p->file, &st) != 0) {
    close_all();
    return I.fail_run(std::string("allocator check after setup: ") + last_error_message());
  }
  for (Driver* d : dv) {
    d->set_live(st.allocated_blocks + st.allocated_extents);
    d->start();
  }
  // dur gets vol's bytes over everything either may hold (vol is zero past
  // its size; dur may still hold the last run's grown pool).
  std::memcpy(I.dur.p, I.vol.p, std::max({dirty, kPoolSize, sw_pool_size(p)}));
  rec.trace.start();
  w.run(dv, rng, size);
  rec.trace.stop();
  for (Driver* d : dv) d->end_open_wrap();  // a wrap left open: the trace ended inside it
  I.used = 0;
  for (sw_pool* h : handles) I.used = std::max(I.used, sw_pool_size(h));
  close_all();
  if (!rec.error.empty()) {
    // The crash points before the misbehaviour still have their golden
    // states: they are checked too (a bug may show in both ways).
    I.replay(rec.error_event);
    I.fail_run("the workload saw the API misbehave (trace event " + std::to_string(rec.error_event) +
               "): " + rec.error);
  } else {
    I.replay(rec.trace.events().size());
  }
  I.rec = nullptr;
}

}  // namespace softwrap::crashsim
