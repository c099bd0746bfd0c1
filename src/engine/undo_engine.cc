// undo_engine.cc — the papers' baselines: Undo Log and Non-Atomic.
//
// Undo (PMDK style): before the first store of a wrap to an 8-byte word,
// the word's old value is streamed to the lane's undo log and fenced
// (FenceKind::kLogOrder — the one fence the Themis rule makes unnecessary);
// then the new value is stored in place.  At close the dirty lines are
// flushed and fenced, then the lane header records the generation as
// committed and is fenced.  Abort and recovery copy the old values back.
//
// Non-atomic: stores go home; close flushes the dirty lines and fences
// once.  Durable, not atomic: a crash mid-wrap leaves a mixture, which is
// what the crash tests use it to prove they can see.
#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "common/error.h"
#include "engine/engine.h"
#include "log/lanes.h"
#include "log/undo_log.h"
#include "medium/medium.h"

namespace softwrap {
namespace {

// Lines a wrap dirtied, flushed once each at close.
class DirtyLines {
 public:
  void add(const void* p, size_t n) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (uintptr_t l = line_down(a); l < a + n; l += kCacheLine) {
      if (l != last_) lines_.push_back(l);
      last_ = l;
    }
  }
  void flush(Medium& m) {
    std::sort(lines_.begin(), lines_.end());
    lines_.erase(std::unique(lines_.begin(), lines_.end()), lines_.end());
    for (uintptr_t l : lines_) m.flush(reinterpret_cast<void*>(l), kCacheLine);
    clear();
  }
  void clear() {
    lines_.clear();
    last_ = 0;
  }

 private:
  std::vector<uintptr_t> lines_;
  uintptr_t last_ = 0;
};

inline uint64_t load_home(const char* p, unsigned size) {
  switch (size) {
    case 1: return __atomic_load_n(reinterpret_cast<const uint8_t*>(p), __ATOMIC_RELAXED);
    case 2: return __atomic_load_n(reinterpret_cast<const uint16_t*>(p), __ATOMIC_RELAXED);
    case 4: return __atomic_load_n(reinterpret_cast<const uint32_t*>(p), __ATOMIC_RELAXED);
    default: return __atomic_load_n(reinterpret_cast<const uint64_t*>(p), __ATOMIC_RELAXED);
  }
}

struct UndoThread {
  UndoThread(const PoolFile* pool, Medium* medium) : writer(pool, medium) {}
  UndoWriter writer;
  Lane* lane = nullptr;
  std::unordered_set<uint64_t> logged;  // words with an undo record this wrap
  struct Saved {
    uint64_t off;
    size_t n, at;
  };
  std::vector<Saved> saved;  // DRAM copy of the records, for abort
  std::vector<unsigned char> old;
  DirtyLines dirty;
};

class UndoEngine final : public Engine {
 public:
  explicit UndoEngine(const EngineEnv& env) : pool_(env.pool), medium_(env.medium), lanes_(env.lanes) {
    for (uint32_t i = 0; i < lanes_->count(); ++i) {
      lanes_->lane(i).undo_gen = pool_->lane_header(i)->undo_committed_gen + 1;
    }
  }
  const char* name() const override { return "undo"; }
  void attach(ThreadCtx& ctx) override { ctx.engine_state = new UndoThread(pool_, medium_); }
  void detach(ThreadCtx& ctx) override { delete st(ctx); }

  int begin(ThreadCtx& ctx) override {
    UndoThread& t = *st(ctx);
    t.lane = &lanes_->lane(ctx.lane);
    t.writer.begin(*t.lane);
    return 0;
  }

  int commit(ThreadCtx& ctx) override {
    UndoThread& t = *st(ctx);
    t.dirty.flush(*medium_);
    medium_->fence(FenceKind::kCommit);
    if (!t.saved.empty()) {
      t.writer.finish();
      medium_->fence(FenceKind::kCommit);
    }
    reset(t);
    return 0;
  }

  int rollback(ThreadCtx& ctx) override {
    UndoThread& t = *st(ctx);
    for (size_t i = t.saved.size(); i-- > 0;) {
      const UndoThread::Saved& s = t.saved[i];
      medium_->write(pool_->at(s.off), &t.old[s.at], s.n);
      medium_->flush(pool_->at(s.off), s.n);
    }
    t.dirty.clear();
    if (!t.saved.empty()) {
      medium_->fence(FenceKind::kOther);
      t.writer.finish();
      medium_->fence(FenceKind::kOther);
    }
    reset(t);
    return 0;
  }

  uint64_t load(ThreadCtx&, uint64_t off, unsigned size) override {
    counters().loads.add();
    return load_home(pool_->at(off), size);
  }

  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    UndoThread& t = *st(ctx);
    counters().stores.add();
    const uint64_t w = off & ~uint64_t{7};
    if (t.logged.insert(w).second) {
      if (!save(t, w, 8)) return fail(ctx);
      medium_->fence(FenceKind::kLogOrder);
    }
    medium_->store(pool_->at(off), v, size);
    counters().home_writes.add();
    t.dirty.add(pool_->at(off), size);
  }

  void read(ThreadCtx&, void* dst, uint64_t off, size_t n) override {
    counters().loads.add();
    std::memcpy(dst, pool_->at(off), n);
  }

  void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) override {
    UndoThread& t = *st(ctx);
    counters().stores.add();
    // One record per run of words not yet saved in this wrap; one fence.
    bool any = false;
    uint64_t run = 0, run_end = 0;
    for (uint64_t w = off & ~uint64_t{7}; w < off + n; w += 8) {
      if (t.logged.insert(w).second) {
        if (run_end != w) {
          if (run_end > run && !save(t, run, run_end - run)) return fail(ctx);
          run = w;
        }
        run_end = w + 8;
        any = true;
      }
    }
    if (run_end > run && !save(t, run, run_end - run)) return fail(ctx);
    if (any) medium_->fence(FenceKind::kLogOrder);
    medium_->write(pool_->at(off), src, n);
    counters().home_writes.add();
    t.dirty.add(pool_->at(off), n);
  }

  int quiesce() override { return 0; }
  int shutdown() override { return 0; }

 private:
  static UndoThread* st(ThreadCtx& ctx) { return static_cast<UndoThread*>(ctx.engine_state); }

  bool save(UndoThread& t, uint64_t off, size_t n) {
    if (off + n > pool_->size()) n = pool_->size() - off;
    if (!t.writer.append(off, n)) return false;
    t.saved.push_back({off, n, t.old.size()});
    t.old.insert(t.old.end(), pool_->at(off), pool_->at(off) + n);
    return true;
  }

  void reset(UndoThread& t) {
    t.logged.clear();
    t.saved.clear();
    t.old.clear();
    t.lane = nullptr;
  }

  void fail(ThreadCtx& ctx) {
    if (ctx.fail_code) return;
    const uint64_t lane_size = st(ctx)->lane ? st(ctx)->lane->size : 0;
    rollback(ctx);
    ctx.fail_code = SW_ETOOBIG;
    set_error(SW_ETOOBIG,
              "wrap too large: its undo records exceed the log lane (%llu bytes); the wrap was rolled back "
              "(raise lane_size)",
              static_cast<unsigned long long>(lane_size));
  }

  PoolFile* pool_;
  Medium* medium_;
  LaneSet* lanes_;
};

class NonatomicEngine final : public Engine {
 public:
  explicit NonatomicEngine(const EngineEnv& env) : pool_(env.pool), medium_(env.medium) {}
  const char* name() const override { return "nonatomic"; }
  void attach(ThreadCtx& ctx) override { ctx.engine_state = new DirtyLines; }
  void detach(ThreadCtx& ctx) override { delete st(ctx); }

  int begin(ThreadCtx&) override { return 0; }
  int commit(ThreadCtx& ctx) override {
    st(ctx)->flush(*medium_);
    medium_->fence(FenceKind::kCommit);
    return 0;
  }
  int rollback(ThreadCtx& ctx) override {
    commit(ctx);
    return set_error(SW_ENOTSUP, "the nonatomic engine cannot take stores back: the wrap ended with its stores "
                                 "kept and flushed");
  }
  uint64_t load(ThreadCtx&, uint64_t off, unsigned size) override {
    counters().loads.add();
    return load_home(pool_->at(off), size);
  }
  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    counters().stores.add();
    counters().home_writes.add();
    medium_->store(pool_->at(off), v, size);
    st(ctx)->add(pool_->at(off), size);
  }
  void read(ThreadCtx&, void* dst, uint64_t off, size_t n) override {
    counters().loads.add();
    std::memcpy(dst, pool_->at(off), n);
  }
  void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) override {
    counters().stores.add();
    counters().home_writes.add();
    medium_->write(pool_->at(off), src, n);
    st(ctx)->add(pool_->at(off), n);
  }
  int quiesce() override { return 0; }
  int shutdown() override { return 0; }

 private:
  static DirtyLines* st(ThreadCtx& ctx) { return static_cast<DirtyLines*>(ctx.engine_state); }
  PoolFile* pool_;
  Medium* medium_;
};

}  // namespace

std::unique_ptr<Engine> make_undo_engine(const EngineEnv& env) { return std::make_unique<UndoEngine>(env); }
std::unique_ptr<Engine> make_nonatomic_engine(const EngineEnv& env) {
  return std::make_unique<NonatomicEngine>(env);
}

}  // namespace softwrap
