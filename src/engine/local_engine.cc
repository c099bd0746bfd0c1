// local_engine.cc — SoftWrAP with local aliasing (full paper, IV-D).
//
// Each thread buffers its wrap in a private alias table (no CAS, no colour
// counters) and streams the redo frame as the global engine does.  At
// commit, after the one commit fence, it copies the table to the home
// locations, flushes them and fences again, then empties the table: values
// then travel through the caches without aliasing, and other threads read
// them from home.  Under this engine other threads see a wrap's stores only
// after it closes — the strict isolation the paper assumes for it.
//
// Shadow pages hold only the bytes the wrap wrote (alias_table.h), and only
// those go home: other threads commit their own bytes of the same page to
// home meanwhile, which a whole-page copy would overwrite.
//
// Log space: a frame is reusable once every wrap with a smaller or equal
// sequence number has its values home.  Each lane publishes the sequence of
// the commit it has in flight; the watermark is the smallest in-flight
// sequence minus one, persisted as PoolMeta::retired_seq when a lane needs
// room (cheap and rare: lanes hold many frames).
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "alias/alias_table.h"
#include "alias/home_writer.h"
#include "common/clock.h"
#include "common/error.h"
#include "engine/engine.h"
#include "log/lanes.h"
#include "log/redo_log.h"
#include "medium/medium.h"
#include "medium/trace_label.h"

namespace softwrap {
namespace {

class LocalEngine;

struct LocalThread {
  LocalThread(LocalEngine* eng, const PoolFile* pool, Medium* medium, Allocator* alloc, RedoWriter::RoomFn fn,
              uint32_t cap, size_t page_size)
      : writer(pool, medium, alloc, fn, this), engine(eng), table(std::make_unique<AliasTable>(cap, page_size)) {}
  RedoWriter writer;
  LocalEngine* engine;
  std::unique_ptr<AliasTable> table;
  std::vector<std::unique_ptr<AliasTable>> outgrown;  // keep their shadow pages alive
  Lane* lane = nullptr;
};

class LocalEngine final : public Engine {
 public:
  explicit LocalEngine(const EngineEnv& env)
      : pool_(env.pool), medium_(env.medium), lanes_(env.lanes), alloc_(env.alloc), capacity_(env.cfg->alias_entries),
        page_size_(env.cfg->shadow_page_size), inflight_(new std::atomic<uint64_t>[env.lanes->count()]) {
    persisted_ = pool_->meta()->retired_seq;
    seq_.store(persisted_);
    published_.store(persisted_);
    for (uint32_t i = 0; i < lanes_->count(); ++i) {
      inflight_[i].store(0);
      Lane& l = lanes_->lane(i);
      l.tail = l.reclaimed = 0;
      l.committed.clear();
    }
  }

  const char* name() const override { return "softwrap-local"; }

  void attach(ThreadCtx& ctx) override {
    // Local tables start small and grow: most wraps are short.
    ctx.engine_state = new LocalThread(this, pool_, medium_, alloc_, &LocalEngine::room,
                                       std::min<uint32_t>(capacity_, 4096), page_size_);
  }
  void detach(ThreadCtx& ctx) override { delete st(ctx); }

  bool lane_usable(Lane& l) override {
    reclaim(l);
    return RedoWriter::lane_free_lines(l) >= 1;
  }

  int begin(ThreadCtx& ctx) override {
    LocalThread& t = *st(ctx);
    t.lane = &lanes_->lane(ctx.lane);
    reclaim(*t.lane);
    // Every frame of the lane awaits only the watermark, which moves as soon
    // as the commits in flight on other lanes (which wait for no one) end.
    while (RedoWriter::lane_free_lines(*t.lane) == 0) {
      advance_watermark();
      reclaim(*t.lane);
      if (RedoWriter::lane_free_lines(*t.lane) == 0) sched_yield();
    }
    t.writer.begin(*t.lane);
    return 0;
  }

  int commit(ThreadCtx& ctx) override {
    LocalThread& t = *st(ctx);
    SW_TRACE_LABEL("redo:commit");
    std::atomic<uint64_t>& flight = inflight_[t.lane->index];
    flight.store(seq_.load() + 1);
    const uint64_t seq = seq_.fetch_add(1) + 1;
    if (!t.writer.commit(seq)) {
      flight.store(0);
      rollback(ctx);
      return set_error(SW_ETOOBIG, "the pool has no free space left for the wrap's redo log; the wrap was "
                                   "rolled back");
    }
    medium_->fence(FenceKind::kCommit);
    {
      SW_TRACE_LABEL("local:home");
      write_home(t);
      medium_->fence(FenceKind::kRetire);
    }
    flight.store(0);
    if (std::vector<LogExtent> ex = t.writer.take_extents(); !ex.empty()) {
      // Home now, but replayable until the watermark passes seq: the
      // extents go back then (advance_watermark).
      std::lock_guard<std::mutex> g(wm_mu_);
      retiring_extents_.push_back({seq, std::move(ex)});
    }
    Lane& l = *t.lane;
    clear(t);
    if (l.tail - l.reclaimed > l.size / 2) {
      advance_watermark();
      reclaim(l);
    }
    return 0;
  }

  int rollback(ThreadCtx& ctx) override {
    LocalThread& t = *st(ctx);
    t.writer.abandon();
    clear(t);
    return 0;
  }

  uint64_t load(ThreadCtx& ctx, uint64_t off, unsigned size) override {
    counters().loads.add();
    const uint64_t w = off & ~uint64_t{7};
    const uint64_t v = ctx.depth ? lookup(*st(ctx), w) : home_word(w);
    if (size == 8) return v;
    return (v >> (8 * (off - w))) & ((uint64_t{1} << (8 * size)) - 1);
  }

  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    LocalThread& t = *st(ctx);
    counters().stores.add();
    SW_TRACE_LABEL_DEFAULT("redo:record");
    const uint64_t w = off & ~uint64_t{7};
    if (size < 8) {
      const uint64_t shift = 8 * (off - w), mask = ((uint64_t{1} << (8 * size)) - 1) << shift;
      v = (lookup(t, w) & ~mask) | ((v << shift) & mask);
    }
    t.table->has_words.store(true, std::memory_order_relaxed);
    AliasEntry* e = entry(t, w);
    e->value.store(v, std::memory_order_relaxed);
    e->meta.store(kMetaValid, std::memory_order_relaxed);
    if (!t.writer.append_store(w, v, 8)) fail(ctx);
  }

  void read(ThreadCtx& ctx, void* dst, uint64_t off, size_t n) override {
    counters().loads.add();
    std::memcpy(dst, pool_->at(off), n);
    if (ctx.depth == 0) return;
    LocalThread& t = *st(ctx);
    AliasTable& tab = *t.table;
    const bool pages = tab.has_pages.load(std::memory_order_relaxed);
    const bool words = tab.has_words.load(std::memory_order_relaxed);
    if (!pages && !words) return;
    auto* out = static_cast<unsigned char*>(dst);
    for (size_t done = 0; done < n;) {
      const uint64_t o = off + done;
      const uint64_t po = o & ~(uint64_t{page_size_} - 1);
      const size_t len = std::min<size_t>(n - done, page_size_ - (o - po));
      if (pages) {
        if (AliasEntry* e = tab.find(page_key(po))) {
          page_overlay(reinterpret_cast<const char*>(e->value.load(std::memory_order_relaxed)), page_size_, o - po,
                       len, out + done);
        }
      }
      if (words) {
        for (uint64_t w = o & ~uint64_t{7}; w < o + len; w += 8) {
          AliasEntry* e = tab.find(w);
          if (!e) continue;
          const uint64_t v = e->value.load(std::memory_order_relaxed);
          const uint64_t lo = std::max(w, o), hi = std::min(w + 8, o + len);
          std::memcpy(out + done + (lo - o), reinterpret_cast<const char*>(&v) + (lo - w), hi - lo);
        }
      }
      done += len;
    }
  }

  void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) override {
    LocalThread& t = *st(ctx);
    counters().stores.add();
    SW_TRACE_LABEL_DEFAULT("redo:record");
    const auto* in = static_cast<const unsigned char*>(src);
    t.table->has_pages.store(true, std::memory_order_relaxed);
    for (size_t done = 0; done < n;) {
      const uint64_t o = off + done;
      const uint64_t po = o & ~(uint64_t{page_size_} - 1);
      const size_t len = std::min<size_t>(n - done, page_size_ - (o - po));
      AliasEntry* e = entry(t, page_key(po));
      if (!(e->meta.load(std::memory_order_relaxed) & kMetaValid)) {
        char* page = t.table->new_page();
        if (!page) return fail(ctx);
        e->value.store(reinterpret_cast<uintptr_t>(page), std::memory_order_relaxed);
        e->meta.store(kMetaValid, std::memory_order_relaxed);
      }
      page_write(reinterpret_cast<char*>(e->value.load(std::memory_order_relaxed)), page_size_, o - po, in + done, len);
      if (t.table->has_words.load(std::memory_order_relaxed)) {
        for (uint64_t w = o & ~uint64_t{7}; w < o + len; w += 8) {
          AliasEntry* we = t.table->find(w);
          if (!we) continue;
          uint64_t v = we->value.load(std::memory_order_relaxed);
          const uint64_t lo = std::max(w, o), hi = std::min(w + 8, o + len);
          std::memcpy(reinterpret_cast<char*>(&v) + (lo - w), in + done + (lo - o), hi - lo);
          we->value.store(v, std::memory_order_relaxed);
        }
      }
      done += len;
    }
    if (!t.writer.append_range(off, src, n)) fail(ctx);
  }

  int quiesce() override {
    advance_watermark();
    return 0;
  }
  ~LocalEngine() override {
    for (auto& [seq, ex] : retiring_extents_) ExtentSource::release(alloc_, ex);
  }
  int shutdown() override { return quiesce(); }

 private:
  static LocalThread* st(ThreadCtx& ctx) { return static_cast<LocalThread*>(ctx.engine_state); }

  uint64_t home_word(uint64_t w) const {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(pool_->at(w)), __ATOMIC_RELAXED);
  }

  uint64_t lookup(LocalThread& t, uint64_t w) {
    AliasTable& tab = *t.table;
    if (AliasEntry* e = tab.find(w)) {
      counters().alias_hits.add();
      return e->value.load(std::memory_order_relaxed);
    }
    if (tab.has_pages.load(std::memory_order_relaxed)) {
      const uint64_t po = w & ~(uint64_t{page_size_} - 1);
      if (AliasEntry* e = tab.find(page_key(po))) {
        counters().alias_hits.add();
        uint64_t v = home_word(w);
        page_overlay(reinterpret_cast<const char*>(e->value.load(std::memory_order_relaxed)), page_size_, w - po, 8,
                     reinterpret_cast<unsigned char*>(&v));
        return v;
      }
    }
    counters().alias_misses.add();
    return home_word(w);
  }

  // Entry for key in the thread's table, growing the table when full.
  AliasEntry* entry(LocalThread& t, uint64_t key) {
    bool inserted;
    AliasEntry* e = t.table->find_or_insert(key, &inserted);
    if (!e) {
      grow(t);
      e = t.table->find_or_insert(key, &inserted);
    }
    return e;
  }

  void grow(LocalThread& t) {
    auto bigger = std::make_unique<AliasTable>(t.table->capacity() * 2, page_size_);
    t.table->for_each([&](AliasEntry& e) {
      bool ins;
      AliasEntry* n = bigger->find_or_insert(e.key.load(std::memory_order_relaxed), &ins);
      n->value.store(e.value.load(std::memory_order_relaxed), std::memory_order_relaxed);
      n->meta.store(e.meta.load(std::memory_order_relaxed), std::memory_order_relaxed);
    });
    bigger->has_words.store(t.table->has_words.load());
    bigger->has_pages.store(t.table->has_pages.load());
    t.outgrown.push_back(std::move(t.table));
    t.table = std::move(bigger);
  }

  void write_home(LocalThread& t) {
    HomeWriter home(pool_, medium_);
    // Pages first: a word entry shadows the page of its own table.
    if (t.table->has_pages.load(std::memory_order_relaxed)) {
      t.table->for_each([&](AliasEntry& e) {
        const uint64_t k = e.key.load(std::memory_order_relaxed);
        if (!(k & 1)) return;
        const char* page = reinterpret_cast<const char*>(e.value.load(std::memory_order_relaxed));
        page_dirty_runs(page, page_size_, [&](size_t off, size_t len) { home.bytes((k & ~uint64_t{1}) + off, page + off, len); });
      });
    }
    t.table->for_each([&](AliasEntry& e) {
      const uint64_t k = e.key.load(std::memory_order_relaxed);
      if (!(k & 1)) home.word(k, e.value.load(std::memory_order_relaxed));
    });
    counters().home_writes.add(home.finish());
  }

  void clear(LocalThread& t) {
    if (t.table->capacity() > 4 * 4096 && uint64_t{t.table->count()} * 64 < t.table->capacity()) {
      t.table = std::make_unique<AliasTable>(4096, page_size_);  // shrink after an outsized wrap
    } else {
      t.table->clear();
    }
    t.outgrown.clear();
    t.lane = nullptr;
  }

  void fail(ThreadCtx& ctx) {
    if (ctx.fail_code) return;
    rollback(ctx);
    ctx.fail_code = SW_ETOOBIG;
    set_error(SW_ETOOBIG, "wrap too large: the pool has no free space left for its redo log; the wrap was "
                          "rolled back");
  }

  void advance_watermark() {
    uint64_t w = seq_.load();
    for (uint32_t i = 0; i < lanes_->count(); ++i) {
      const uint64_t f = inflight_[i].load();
      if (f && f - 1 < w) w = f - 1;
    }
    std::lock_guard<std::mutex> g(wm_mu_);
    if (w > persisted_) {
      SW_TRACE_LABEL("truncate:watermark");
      uint64_t* word = &pool_->meta()->retired_seq;
      medium_->store(word, w, 8);
      medium_->flush(word, 8);
      medium_->fence(FenceKind::kRetire);
      persisted_ = w;
      published_.store(w, std::memory_order_release);
    }
    release_extents_locked(persisted_, &retiring_extents_, alloc_);
  }

  void reclaim(Lane& l) {
    const uint64_t r = published_.load(std::memory_order_acquire);
    while (!l.committed.empty() && l.committed.front().seq <= r) {
      l.reclaimed = l.committed.front().end;
      l.committed.pop_front();
    }
  }

  // The frame's lane part is short of room: move the watermark as far as
  // the commits in flight allow and take the space back (never waits).
  static void room(void* self, Lane& l) {
    LocalEngine* eng = static_cast<LocalThread*>(self)->engine;
    eng->advance_watermark();
    eng->reclaim(l);
  }

  PoolFile* pool_;
  Medium* medium_;
  LaneSet* lanes_;
  Allocator* alloc_;
  uint32_t capacity_;
  size_t page_size_;
  std::unique_ptr<std::atomic<uint64_t>[]> inflight_;
  alignas(64) std::atomic<uint64_t> seq_{0};
  std::mutex wm_mu_;
  uint64_t persisted_ = 0;                                                    // GUARDED_BY(wm_mu_)
  RetiringExtents retiring_extents_;  // by seq; GUARDED_BY(wm_mu_)
  std::atomic<uint64_t> published_{0};
};

}  // namespace

std::unique_ptr<Engine> make_local_engine(const EngineEnv& env) { return std::make_unique<LocalEngine>(env); }

}  // namespace softwrap
