// undo_engine.cc — the papers' baselines: Undo Log and Non-Atomic, and
// the Themis paper's fence-elided undo log.
//
// Undo (PMDK style): before the first store of a wrap to an 8-byte word,
// the word's old value is streamed to the lane's undo log and fenced
// (FenceKind::kLogOrder — the one fence the Themis rule makes unnecessary);
// then the new value is stored in place with a temporal store (the Themis
// rule orders a non-temporal store before a later temporal one, not before
// another non-temporal one).  Its line is flushed as soon as the wrap
// stores to another line (WriteBehind), the last one at close; then a
// fence (kDataOrder: the data before the commit mark), then the lane header
// records the generation as committed and is fenced (kCommit).  Abort and
// recovery copy the old values back.
//
// Undo-themis (Themis paper, section II-D): the same engine without the
// kLogOrder fences and nothing else changed.  Each elided fence is counted
// (fences_elided) and both variants record the distance between
// consecutive such points (Fig. 10).  Correct only where a streamed store
// persists before every later temporal store of its thread (Eq. 3);
// check_engine_medium (engine.cc) keeps it off media that do not promise
// that unless the caller opted in to the paper's "Ideal".
//
// Non-atomic: stores go home with temporal stores, each line flushed as
// the wrap moves on (WriteBehind), the last at close; one fence.  Durable,
// not atomic: a crash mid-wrap leaves a mixture, which is what the crash
// tests use it to prove they can see.  (Streaming the stores instead, as
// the paper's emulated Non-Atomic does with ntstores, is faster on x86 —
// no read-for-ownership of the home line — but issue #2 fixes this
// baseline as "stores go home, flushed at close"; docs/results.md reports
// both views.)
//
// Both thus write their home lines while the wrap runs, as the papers'
// baselines do ("directly update SCM").  On a slow device the lines are then
// written while the CPU works on the next store; keeping them in the cache
// and flushing them all at close would leave the device idle during the
// wrap and serialize all the lines after it (the paper's Table I times,
// n·Tw + Ts and n(2Tw + Ts) + ..., assume the former).
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/relaxed_copy.h"
#include "engine/engine.h"
#include "engine/wcl_queue.h"
#include "engine/word_set.h"
#include "engine/write_behind.h"
#include "log/lanes.h"
#include "log/undo_log.h"
#include "medium/medium.h"
#include "medium/trace_label.h"

namespace softwrap {
namespace {

// The ranges an open wrap's program stores to itself (sw_modify on an
// engine that stores in place): reported to the medium and flushed when
// the wrap ends, so that every home byte the wrap changed is durable
// before its commit mark (undo) or its close returns (nonatomic).
struct InPlace {
  std::vector<std::pair<char*, size_t>> ranges;
  void open(Medium& m, char* p, size_t n) {
    if (!ranges.empty() && ranges.back().first == p && ranges.back().second >= n) return;  // again
    m.open_in_place(p, n);
    ranges.push_back({p, n});
  }
  // Returns whether there was any.
  bool close(Medium& m) {
    if (ranges.empty()) return false;
    SW_TRACE_LABEL("in-place:data");
    for (const auto& [p, n] : ranges) {
      m.close_in_place(p, n);
      m.flush(p, n);
    }
    ranges.clear();
    return true;
  }
};

struct UndoThread {
  UndoThread(const PoolFile* pool, Medium* medium, Allocator* alloc) : writer(pool, medium, alloc) {}
  UndoWriter writer;
  Lane* lane = nullptr;
  WordSet logged;  // words with an undo record this wrap (exact: records are disjoint)
  std::vector<std::pair<uint64_t, size_t>> runs;  // write(): the byte runs to save and write
  WriteBehind dirty;
  InPlace in_place;  // sw_modify's objects: the program stores to them itself
};

// The byte runs of [off, off+n) where src differs from `home` (the pool's
// bytes at off), whole words at a time; gaps of up to two equal words stay
// inside a run.  The undo and nonatomic engines' read-and-compare under
// SW_CONFIG_WCL (the redo engines compare in RedoWriter::append_range_wcl,
// where the wrap's own earlier stores are the reference).
void changed_runs(const unsigned char* home, uint64_t off, const unsigned char* src, size_t n,
                  std::vector<std::pair<uint64_t, size_t>>* out) {
  uint64_t start = 0, end = 0, gap = 0;
  bool open = false;
  for (size_t i = 0; i < n;) {
    const size_t len = std::min<size_t>(n - i, 8 - ((off + i) & 7));
    const bool same = std::memcmp(home + i, src + i, len) == 0;
    if (same) {
      counters().wcl_eliminated.add();
      if (open && ++gap > 2) {
        out->push_back({start, end - start});
        open = false;
      }
    } else {
      if (!open) {
        start = off + i;
        open = true;
      }
      end = off + i + len;
      gap = 0;
    }
    i += len;
  }
  if (open) out->push_back({start, end - start});
}

class UndoEngine final : public Engine {
 public:
  UndoEngine(const EngineEnv& env, bool themis)
      : pool_(env.pool), medium_(env.medium), load_(env.medium), lanes_(env.lanes), alloc_(env.alloc), themis_(themis),
        wcl_((env.cfg->flags & SW_CONFIG_WCL) != 0), wcl_stores_(wcl_ && env.cfg->wcl_words),
        objects_unlogged_(env.cfg->objects_unlogged) {
    resync();
  }
  // Each lane's next generation follows its header (another handle may
  // have committed generations in it).
  void resync() override {
    for (uint32_t i = 0; i < lanes_->count(); ++i) {
      lanes_->lane(i).undo_gen = pool_->lane_header(i)->undo_committed_gen + 1;
    }
  }
  const char* name() const override { return themis_ ? "undo-themis" : "undo"; }
  void attach(ThreadCtx& ctx) override { ctx.engine_state = new UndoThread(pool_, medium_, alloc_); }
  void detach(ThreadCtx& ctx) override { delete st(ctx); }

  int begin(ThreadCtx& ctx) override {
    UndoThread& t = *st(ctx);
    t.lane = &lanes_->lane(ctx.lane);
    t.writer.begin(*t.lane);
    return 0;
  }

  int commit(ThreadCtx& ctx) override {
    UndoThread& t = *st(ctx);
    SW_TRACE_LABEL("undo:commit-data");
    const bool objects = t.in_place.close(*medium_);
    const bool stored = t.dirty.flush(*medium_) || objects;
    const bool heap = ctx.used_heap();
    ctx.fresh.flush(*medium_);  // fresh blocks (fresh.h): ordered by the same fence
    if (!stored && !heap && !t.writer.used()) {  // a wrap that wrote nothing: no fence
      reset(t);
      return 0;
    }
    medium_->fence(t.writer.used() ? FenceKind::kDataOrder : FenceKind::kCommit);
    if (t.writer.used()) {
      SW_TRACE_LABEL("undo:commit-mark");
      t.writer.finish();
      medium_->fence(FenceKind::kCommit);
      t.writer.release_extents();
    }
    reset(t);
    return 0;
  }

  int rollback(ThreadCtx& ctx) override {
    UndoThread& t = *st(ctx);
    SW_TRACE_LABEL("undo:rollback");
    t.in_place.close(*medium_);  // what the program stored is then put back from the log
    t.dirty.clear();
    if (t.writer.used()) {
      // The old values are read back from the log (no DRAM copy): the
      // records cover disjoint words, so their order does not matter.
      medium_->publish_streams();
      visit_undo(*pool_, t.lane->index, &UndoEngine::restore, this);
      medium_->fence(FenceKind::kOther);
      t.writer.finish();
      medium_->fence(FenceKind::kOther);
      t.writer.release_extents();
    }
    reset(t);
    return 0;
  }

  uint64_t load(ThreadCtx&, uint64_t off, unsigned size) override {
    counters().loads.add();
    load_(pool_->at(off), size);
    return relaxed_load(pool_->at(off), size);
  }

  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    UndoThread& t = *st(ctx);
    ctx.counters.stores.add();
    if (wcl_stores_ && holds_value(pool_->at(off), v, size)) {
      counters().wcl_eliminated.add();  // unchanged: no undo record, no fence, no home write
      return;
    }
    const uint64_t w = off & ~uint64_t{7};
    if (t.logged.insert(w)) {
      if (!save(t, w, 8)) return fail(ctx);
      log_order_fence();
    }
    SW_TRACE_LABEL_DEFAULT("undo:data");
    medium_->store(pool_->at(off), v, size);
    ctx.counters.home_writes.add();
    t.dirty.add(*medium_, pool_->at(off), size);
  }

  void read(ThreadCtx&, void* dst, uint64_t off, size_t n) override {
    counters().loads.add();
    load_(pool_->at(off), n);
    std::memcpy(dst, pool_->at(off), n);
  }

  void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) override {
    UndoThread& t = *st(ctx);
    ctx.counters.stores.add();
    const auto* in = static_cast<const unsigned char*>(src);
    // With SW_CONFIG_WCL, only the byte runs that differ from home are
    // saved and written.
    t.runs.clear();
    if (wcl_ && wcl_compares_range(wcl_stores_, n) && !ctx.write_whole) {  // sw_write_whole: saved and written whole
      changed_runs(reinterpret_cast<const unsigned char*>(pool_->at(off)), off, in, n, &t.runs);
    } else {
      t.runs.push_back({off, n});
    }
    // One record per run of words not yet saved in this wrap; one fence.
    bool any = false;
    for (const auto& [roff, rn] : t.runs) {
      if (!save_new(t, roff, rn, &any)) return fail(ctx);
    }
    if (any) log_order_fence();
    SW_TRACE_LABEL_DEFAULT("undo:data");
    for (const auto& [roff, rn] : t.runs) {
      medium_->write(pool_->at(roff), in + (roff - off), rn);
      t.dirty.add(*medium_, pool_->at(roff), rn);
    }
    ctx.counters.home_writes.add();
  }

  // The allocator's words of the committing wrap: a record per run of
  // adjacent words not saved yet (a block's two header words come one
  // after the other), one ordering fence for them all (not one per word,
  // as stores take), then the words home, in order.
  void write_words(ThreadCtx& ctx, const HeapWord* w, size_t n) override {
    UndoThread& t = *st(ctx);
    ctx.counters.stores.add(n);
    // With SW_CONFIG_WCL a word that already holds its value is left out.
    const auto changes = [&](size_t i) {
      return !wcl_stores_ || !holds_value(pool_->at(w[i].off), w[i].value, 8);
    };
    bool any = false;
    for (size_t i = 0; i < n;) {
      if (!changes(i)) {
        counters().wcl_eliminated.add();
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < n && w[j].off == w[j - 1].off + 8 && changes(j)) ++j;  // save_new skips saved words
      if (!save_new(t, w[i].off, 8 * (j - i), &any)) return fail(ctx);
      i = j;
    }
    if (any) log_order_fence();
    SW_TRACE_LABEL_DEFAULT("undo:data");
    for (size_t i = 0; i < n; ++i) {
      if (!changes(i)) continue;
      medium_->store(pool_->at(w[i].off), w[i].value, 8);
      t.dirty.add(*medium_, pool_->at(w[i].off), 8);
      ctx.counters.home_writes.add();
    }
  }

  // The range's words not yet saved in this wrap get undo records, then
  // one ordering fence (as for a write), before the program's first store.
  bool modify_in_place(ThreadCtx& ctx, uint64_t off, size_t n) override {
    UndoThread& t = *st(ctx);
    SW_TRACE_LABEL("undo:object");
    if (objects_unlogged_) [[unlikely]] {  // crash-simulator control: no undo record
      t.in_place.open(*medium_, pool_->at(off), n);
      return true;
    }
    bool any = false;
    if (!save_new(t, off, n, &any)) return fail(ctx), true;
    if (any) log_order_fence();
    t.in_place.open(*medium_, pool_->at(off), n);
    ctx.counters.home_writes.add();
    return true;
  }

  int quiesce() override { return 0; }
  int shutdown() override { return 0; }

 private:
  static UndoThread* st(ThreadCtx& ctx) { return static_cast<UndoThread*>(ctx.engine_state); }

  // The fence between an undo record (streamed) and the data store it
  // protects (temporal): the only one the Themis rule makes unnecessary,
  // and the only one undo-themis drops.
  void log_order_fence() {
    SW_TRACE_LABEL_DEFAULT("undo:log-order");
    Counters& c = counters();
    c.removable_fence_point();
    if (themis_) {
      c.fences_elided.add();
    } else {
      medium_->fence(FenceKind::kLogOrder);
    }
  }

  // Undo records for the words of [off, off+n) not saved yet in this wrap,
  // one per run of them; *any is set if there was one.  False if out of
  // log space.
  bool save_new(UndoThread& t, uint64_t off, size_t n, bool* any) {
    uint64_t run = 0, run_end = 0;
    for (uint64_t w = off & ~uint64_t{7}; w < off + n; w += 8) {
      if (!t.logged.insert(w)) continue;
      if (run_end != w) {
        if (run_end > run && !save(t, run, run_end - run)) return false;
        run = w;
      }
      run_end = w + 8;
      *any = true;
    }
    return run_end <= run || save(t, run, run_end - run);
  }

  bool save(UndoThread& t, uint64_t off, size_t n) {
    SW_TRACE_LABEL_DEFAULT("undo:record");
    if (off + n > pool_->size()) n = pool_->size() - off;
    load_(pool_->at(off), n);  // the old value (append reads it)
    return t.writer.append(off, n);
  }

  static void restore(void* self, uint64_t off, const unsigned char* old, size_t n) {
    auto* e = static_cast<UndoEngine*>(self);
    e->medium_->write(e->pool_->at(off), old, n);
    e->medium_->flush(e->pool_->at(off), n);
  }

  void reset(UndoThread& t) {
    t.logged.clear();
    t.lane = nullptr;
  }

  void fail(ThreadCtx& ctx) {
    if (ctx.fail_code) return;
    const std::string why = space_reason();
    rollback(ctx);
    ctx.fail_code = SW_ETOOBIG;
    set_error(SW_ETOOBIG, "wrap too large: the pool has no free space left for its undo log; the wrap was "
                          "rolled back%s", why.c_str());
  }

  PoolFile* pool_;
  Medium* medium_;
  LoadTap load_;
  LaneSet* lanes_;
  Allocator* alloc_;
  bool themis_;
  bool wcl_;  // SW_CONFIG_WCL: unchanged stores and bytes are skipped
  bool wcl_stores_;  // ... stores and ranges of any size too, not only ranges of a page or more (kWclRangeMinBytes)
  bool objects_unlogged_;  // crash-simulator control (ResolvedConfig::objects_unlogged)
};

struct NonatomicThread {
  WriteBehind dirty;
  InPlace in_place;  // sw_modify's objects
  std::vector<std::pair<uint64_t, size_t>> runs;  // write(): the byte runs that changed (SW_CONFIG_WCL)
};

class NonatomicEngine final : public Engine {
 public:
  explicit NonatomicEngine(const EngineEnv& env)
      : pool_(env.pool), medium_(env.medium), load_(env.medium), wcl_((env.cfg->flags & SW_CONFIG_WCL) != 0),
        wcl_stores_(wcl_ && env.cfg->wcl_words) {}
  const char* name() const override { return "nonatomic"; }
  bool writes_fresh_apart() const override { return false; }  // every store goes home in place already
  bool batches_heap_words() const override { return false; }  // an abort keeps them, like every store
  void attach(ThreadCtx& ctx) override { ctx.engine_state = new NonatomicThread; }
  void detach(ThreadCtx& ctx) override { delete st(ctx); }

  int begin(ThreadCtx&) override { return 0; }
  int commit(ThreadCtx& ctx) override {
    SW_TRACE_LABEL("nonatomic:commit");
    const bool objects = st(ctx)->in_place.close(*medium_);
    const bool stored = st(ctx)->dirty.flush(*medium_) || objects;
    const bool heap = ctx.used_heap();
    ctx.fresh.flush(*medium_);
    if (stored || heap) medium_->fence(FenceKind::kCommit);  // a wrap that wrote nothing: no fence
    return 0;
  }
  int rollback(ThreadCtx& ctx) override {
    commit(ctx);
    return set_error(SW_ENOTSUP, "the nonatomic engine cannot take stores back: the wrap ended with its stores "
                                 "kept and flushed");
  }
  bool modify_in_place(ThreadCtx& ctx, uint64_t off, size_t n) override {
    st(ctx)->in_place.open(*medium_, pool_->at(off), n);
    ctx.counters.home_writes.add();
    return true;
  }
  uint64_t load(ThreadCtx&, uint64_t off, unsigned size) override {
    counters().loads.add();
    load_(pool_->at(off), size);
    return relaxed_load(pool_->at(off), size);
  }
  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    ctx.counters.stores.add();
    if (wcl_stores_ && holds_value(pool_->at(off), v, size)) {
      counters().wcl_eliminated.add();  // unchanged: no home write
      return;
    }
    ctx.counters.home_writes.add();
    SW_TRACE_LABEL_DEFAULT("nonatomic:data");
    medium_->store(pool_->at(off), v, size);
    st(ctx)->dirty.add(*medium_, pool_->at(off), size);
  }
  void read(ThreadCtx&, void* dst, uint64_t off, size_t n) override {
    counters().loads.add();
    load_(pool_->at(off), n);
    std::memcpy(dst, pool_->at(off), n);
  }
  void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) override {
    ctx.counters.stores.add();
    ctx.counters.home_writes.add();
    SW_TRACE_LABEL_DEFAULT("nonatomic:data");
    if (!wcl_ || !wcl_compares_range(wcl_stores_, n) || ctx.write_whole) {  // sw_write_whole: written whole
      medium_->write(pool_->at(off), src, n);
      st(ctx)->dirty.add(*medium_, pool_->at(off), n);
      return;
    }
    // SW_CONFIG_WCL: only the runs that differ from home are written.
    const auto* in = static_cast<const unsigned char*>(src);
    NonatomicThread& t = *st(ctx);
    t.runs.clear();
    changed_runs(reinterpret_cast<const unsigned char*>(pool_->at(off)), off, in, n, &t.runs);
    for (const auto& [roff, rn] : t.runs) {
      medium_->write(pool_->at(roff), in + (roff - off), rn);
      t.dirty.add(*medium_, pool_->at(roff), rn);
    }
  }
  void zero(ThreadCtx& ctx, uint64_t off, size_t n) override {
    if (wcl_ && wcl_compares_range(wcl_stores_, n)) return Engine::zero(ctx, off, n);  // only the words not zero yet
    ctx.counters.stores.add();
    ctx.counters.home_writes.add();
    SW_TRACE_LABEL_DEFAULT("nonatomic:data");
    medium_->zero(pool_->at(off), n);
    st(ctx)->dirty.add(*medium_, pool_->at(off), n);
  }
  int quiesce() override { return 0; }
  int shutdown() override { return 0; }

 private:
  static NonatomicThread* st(ThreadCtx& ctx) { return static_cast<NonatomicThread*>(ctx.engine_state); }
  PoolFile* pool_;
  Medium* medium_;
  LoadTap load_;
  bool wcl_;  // SW_CONFIG_WCL: unchanged stores and bytes are skipped
  bool wcl_stores_;  // ... stores and ranges of any size too, not only ranges of a page or more (kWclRangeMinBytes)
};


}  // namespace

std::unique_ptr<Engine> make_undo_engine(const EngineEnv& env, bool themis) {
  return std::make_unique<UndoEngine>(env, themis);
}
std::unique_ptr<Engine> make_nonatomic_engine(const EngineEnv& env) {
  return std::make_unique<NonatomicEngine>(env);
}

}  // namespace softwrap
