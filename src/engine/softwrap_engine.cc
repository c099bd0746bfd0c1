// softwrap_engine.cc — SoftWrAP with global aliasing (full paper, IV-A).
//
// A store goes to the active alias table (one CAS to insert a new key,
// none to update) and is appended to the thread's redo frame, which streams
// whole cache lines to its lane as they fill.  A commit takes a sequence
// number, writes the frame trailer and fences once.  Home locations are
// written only by retirement (alias_ring.cc), after the table is Closed.
//
// Abort: the first time a wrap touches an entry it saves the entry's
// previous value and meta (DRAM only); shadow-page bytes it overwrites are
// saved likewise.  Rolling back restores them newest first, so the tables
// again hold exactly what committed wraps left there.
//
// If a switch happens while a store is inserting, the store is repeated in
// the new active table, so the newest value of a key is always in the
// newest table holding it.
#include <sched.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "alias/alias_ring.h"
#include "common/error.h"
#include "common/relaxed_copy.h"
#include "engine/engine.h"
#include "log/lanes.h"
#include "log/redo_log.h"
#include "medium/medium.h"
#include "medium/trace_label.h"

namespace softwrap {
namespace {

struct WordUndo {
  AliasEntry* e;
  uint64_t value, meta;
};
struct PageUndo {
  static constexpr size_t kUnwritten = ~size_t{0};
  char* page;
  uint32_t off, len;
  // In SwThread::page_bytes: the old data, then the old mask words of the
  // 64-byte chunks covering it; kUnwritten: none of its bytes was written.
  size_t bytes_at;
};

class SoftwrapEngine;

struct SwThread {
  SwThread(SoftwrapEngine* eng, const PoolFile* pool, Medium* medium, Allocator* alloc, RedoWriter::RoomFn fn)
      : writer(pool, medium, alloc, fn, this), engine(eng) {}
  RedoWriter writer;
  SoftwrapEngine* engine;
  Lane* lane = nullptr;
  WrapTag tag{};
  uint64_t id = 0;
  uint64_t stamp = 0;
  std::vector<WordUndo> undo;
  std::vector<PageUndo> page_undo;
  std::vector<unsigned char> page_bytes;
  std::vector<unsigned char> scratch;
  // The shadow page this thread last wrote: page `po` of the table of
  // generation `gen`.  A table keeps its entries (and their pages) until
  // it is recycled, which happens only after it stopped being active, so
  // while gen is the active generation the page is still the one for po:
  // consecutive writes to a page (a node's keys, its data, its head) skip
  // the table probe.
  uint64_t last_gen = ~uint64_t{0};
  uint64_t last_po = ~uint64_t{0};
  char* last_page = nullptr;
};

class SoftwrapEngine final : public Engine {
 public:
  explicit SoftwrapEngine(const EngineEnv& env)
      : pool_(env.pool), medium_(env.medium), lanes_(env.lanes), alloc_(env.alloc),
        ring_(*env.cfg, env.pool, env.medium), page_size_(env.cfg->shadow_page_size) {
    // Frames at or below the watermark are already home: lanes start empty.
    for (uint32_t i = 0; i < lanes_->count(); ++i) {
      Lane& l = lanes_->lane(i);
      l.tail = l.reclaimed = 0;
      l.committed.clear();
    }
  }
  ~SoftwrapEngine() override {
    ring_.stop();
    release_extents(~uint64_t{0});  // nothing is replayed from them once we are gone (close retired all)
  }

  const char* name() const override { return "softwrap"; }

  void attach(ThreadCtx& ctx) override {
    auto* t = new SwThread(this, pool_, medium_, alloc_, &SoftwrapEngine::room);
    t->id = (thread_ids_.fetch_add(1) + 1) & 0xFFFF;
    ctx.engine_state = t;
  }
  void detach(ThreadCtx& ctx) override { delete st(ctx); }

  bool lane_usable(Lane& l) override {
    reclaim(l);
    return RedoWriter::lane_free_lines(l) >= 1;
  }

  int begin(ThreadCtx& ctx) override {
    SwThread& t = *st(ctx);
    t.lane = &lanes_->lane(ctx.lane);
    reclaim(*t.lane);
    release_extents(ring_.retired_seq());
    // A frame starts with a line in its lane.  Only when every free lane is
    // full of frames awaiting retirement (acquire passed over the others)
    // does a wrap wait, before it takes its colour: for other wraps'
    // tables, never for its own.
    while (RedoWriter::lane_free_lines(*t.lane) == 0) {
      ring_.wait_retired(t.lane->committed.front().seq);
      reclaim(*t.lane);
    }
    ring_.throttle(t.lane->tail - t.lane->reclaimed > t.lane->size / 4);
    t.tag = ring_.enter();
    // meta = stamp: thread context id, wrap serial, valid bit.
    t.stamp = t.id << 48 | (ctx.wrap_serial & ((uint64_t{1} << 47) - 1)) << 1 | kMetaValid;
    t.writer.begin(*t.lane);
    return 0;
  }

  int commit(ThreadCtx& ctx) override {
    SwThread& t = *st(ctx);
    SW_TRACE_LABEL("redo:commit");
    const uint64_t seq = ring_.next_seq();
    if (!t.writer.commit(seq)) {
      rollback(ctx);
      return set_error(SW_ETOOBIG, "the pool has no free space left for the wrap's redo log; the wrap was "
                                   "rolled back");
    }
    medium_->fence(FenceKind::kCommit);
    if (std::vector<LogExtent> ex = t.writer.take_extents(); !ex.empty()) {
      std::lock_guard<std::mutex> g(ext_mu_);
      retiring_extents_.push_back({seq, std::move(ex)});
      has_retiring_extents_.store(true, std::memory_order_relaxed);
    }
    ring_.leave(t.tag);
    t.undo.clear();
    t.page_undo.clear();
    t.page_bytes.clear();
    const bool pressure = t.lane->tail - t.lane->reclaimed > t.lane->size / 4;
    t.lane = nullptr;
    ring_.after_commit(pressure);
    return 0;
  }

  int rollback(ThreadCtx& ctx) override {
    SwThread& t = *st(ctx);
    for (size_t i = t.page_undo.size(); i-- > 0;) {
      const PageUndo& u = t.page_undo[i];
      const bool unwritten = u.bytes_at == PageUndo::kUnwritten;
      const unsigned char* old = unwritten ? nullptr : &t.page_bytes[u.bytes_at];
      if (!unwritten) relaxed_copy(u.page + u.off, old, u.len);
      // The range's bits of each mask word get back their saved value.
      uint64_t* mask = mask_words(u.page, page_size_);
      for (size_t c = u.off / 64, k = 0; c * 64 < u.off + u.len; ++c, ++k) {
        const uint64_t bits = chunk_bits(c, u.off, u.off + u.len);
        uint64_t was = 0;
        if (!unwritten) std::memcpy(&was, old + u.len + 8 * k, 8);
        __atomic_fetch_and(mask + c, ~bits, __ATOMIC_RELAXED);
        if (was & bits) __atomic_fetch_or(mask + c, was & bits, __ATOMIC_RELEASE);
      }
    }
    for (size_t i = t.undo.size(); i-- > 0;) {
      const WordUndo& u = t.undo[i];
      u.e->value.store(u.value, std::memory_order_relaxed);
      u.e->meta.store(u.meta, std::memory_order_release);
    }
    t.undo.clear();
    t.page_undo.clear();
    t.page_bytes.clear();
    t.writer.abandon();
    ring_.leave(t.tag);
    t.lane = nullptr;
    return 0;
  }

  uint64_t load(ThreadCtx& ctx, uint64_t off, unsigned size) override {
    counters().loads.add();
    const uint64_t w = off & ~uint64_t{7};
    uint64_t v;
    if (ctx.depth == 0) {
      const WrapTag tag = ring_.enter();
      v = ring_.lookup_word(w);
      ring_.leave(tag);
    } else {
      v = ring_.lookup_word(w);
    }
    return extract(v, off - w, size);
  }

  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    SwThread& t = *st(ctx);
    counters().stores.add();
    SW_TRACE_LABEL_DEFAULT("redo:record");
    const uint64_t w = off & ~uint64_t{7};
    if (size < 8) v = merge(ring_.lookup_word(w), off - w, v, size);
    if (!put_word(t, w, v) || !t.writer.append_store(w, v, 8)) fail(ctx);
  }

  void read(ThreadCtx& ctx, void* dst, uint64_t off, size_t n) override {
    counters().loads.add();
    WrapTag tag{};
    if (ctx.depth == 0) tag = ring_.enter();
    auto* out = static_cast<unsigned char*>(dst);
    const uint64_t below = ring_.active_gen() + 1;
    for_pages(off, n, [&](uint64_t o, size_t len, size_t done) { ring_.visible_bytes(o, len, below, out + done); });
    if (ctx.depth == 0) ring_.leave(tag);
  }

  void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) override {
    SwThread& t = *st(ctx);
    counters().stores.add();
    SW_TRACE_LABEL_DEFAULT("redo:record");
    const auto* in = static_cast<const unsigned char*>(src);
    bool ok = true;
    for_pages(off, n, [&](uint64_t o, size_t len, size_t done) {
      if (ok) ok = put_bytes(t, o, in + done, len);
    });
    if (!ok || !t.writer.append_range(off, src, n)) fail(ctx);
  }

  int quiesce() override {
    const int rc = ring_.quiesce();
    release_extents(ring_.retired_seq());
    return rc;
  }
  int shutdown() override {
    int rc = ring_.quiesce();
    ring_.stop();
    release_extents(ring_.retired_seq());
    return rc;
  }
  void add_stats(sw_stats* out) override { ring_.retire_counters().add_to(out); }
  void reset_stats() override { ring_.retire_counters().reset(); }

 private:
  static SwThread* st(ThreadCtx& ctx) { return static_cast<SwThread*>(ctx.engine_state); }

  static uint64_t extract(uint64_t v, uint64_t byte, unsigned size) {
    if (size == 8) return v;
    return (v >> (8 * byte)) & ((uint64_t{1} << (8 * size)) - 1);
  }
  static uint64_t merge(uint64_t cur, uint64_t byte, uint64_t v, unsigned size) {
    const uint64_t mask = ((uint64_t{1} << (8 * size)) - 1) << (8 * byte);
    return (cur & ~mask) | ((v << (8 * byte)) & mask);
  }

  template <class F>
  void for_pages(uint64_t off, size_t n, F&& f) {
    size_t done = 0;
    while (done < n) {
      const uint64_t o = off + done;
      const size_t len = std::min<size_t>(n - done, page_size_ - (o & (page_size_ - 1)));
      f(o, len, done);
      done += len;
    }
  }

  // Inserts/updates the word in the active table (and again in a newer one
  // if a switch raced with us).  False if no table can take it.
  bool put_word(SwThread& t, uint64_t w, uint64_t v) {
    for (;;) {
      const uint64_t g = ring_.active_gen();
      AliasTable& tab = ring_.table(g);
      // A word of a page this table already shadows goes into that page
      // (unless the word has an entry of its own, which shadows the page):
      // one probe fewer for every later access to the page's words.
      if (tab.has_pages.load(std::memory_order_acquire)) {
        const uint64_t po = w & ~(uint64_t{page_size_} - 1);
        const uint64_t hint = AliasTable::page_hint(po);
        if (tab.may_hold(hint) && !(tab.may_hold_words(hint) && tab.probe(w)) &&
            ((t.last_gen == g && t.last_po == po) || tab.probe(page_key(po)))) {
          return put_bytes(t, w, reinterpret_cast<const unsigned char*>(&v), 8);
        }
      }
      bool inserted;
      AliasEntry* e = tab.find_or_insert(w, &inserted);
      if (!e) {
        if (!ring_.make_room(g, t.tag)) return false;
        continue;
      }
      // Strict mode: the value before this table had the word (the entry
      // is not valid yet, so the lookup sees past it).
      if (inserted && tab.keeps_base()) tab.word_base(e) = ring_.lookup_word(w);
      touch_word(t, e);
      e->value.store(v, std::memory_order_relaxed);
      e->meta.store(t.stamp, std::memory_order_release);
      if (ring_.active_gen() == g) return true;
    }
  }

  void touch_word(SwThread& t, AliasEntry* e) {
    const uint64_t m = e->meta.load(std::memory_order_relaxed);
    if (m != t.stamp) t.undo.push_back({e, e->value.load(std::memory_order_relaxed), m});
  }

  // Writes bytes [o, o+len) (within one shadow page) into the active
  // table's page (created empty if needed: pages hold only written bytes)
  // and keeps word entries of that table which overlap the range current.
  bool put_bytes(SwThread& t, uint64_t o, const unsigned char* src, size_t len) {
    const uint64_t po = o & ~(uint64_t{page_size_} - 1);
    for (;;) {
      const uint64_t g = ring_.active_gen();
      AliasTable& tab = ring_.table(g);
      char* page;
      if (t.last_gen == g && t.last_po == po) {
        page = t.last_page;
      } else {
        if (!tab.has_pages.load(std::memory_order_relaxed)) tab.has_pages.store(true, std::memory_order_release);
        bool inserted;
        AliasEntry* e = tab.find_or_insert(page_key(po), &inserted);
        if (!e) {
          if (!ring_.make_room(g, t.tag)) return false;
          continue;
        }
        if (inserted) {
          page = tab.new_page();
          if (!page) return false;
          if (tab.keeps_base()) {
            ring_.visible_bytes(po, page_size_, g, reinterpret_cast<unsigned char*>(tab.page_base(page)));
          }
          e->value.store(reinterpret_cast<uintptr_t>(page), std::memory_order_relaxed);
          e->meta.store(kMetaValid, std::memory_order_release);
        } else {
          while (!(e->meta.load(std::memory_order_acquire) & kMetaValid)) sched_yield();  // being set up
          page = reinterpret_cast<char*>(e->value.load(std::memory_order_relaxed));
        }
        t.last_gen = g;
        t.last_po = po;
        t.last_page = page;
      }
      // Save what this page held for the range (bytes and mask) for abort;
      // a range with no byte written yet (always so in a fresh page) saves
      // nothing: abort only clears its mask bits.
      const uint32_t in_page = static_cast<uint32_t>(o - po);
      const size_t c0 = in_page / 64, c1 = (in_page + len + 63) / 64;
      bool written = false;
      for (size_t c = c0; c < c1 && !written; ++c) {
        written = (mask_word(page, page_size_, c) & chunk_bits(c, in_page, in_page + len)) != 0;
      }
      size_t at = PageUndo::kUnwritten;
      if (written) {
        at = t.page_bytes.size();
        t.page_bytes.resize(at + len + 8 * (c1 - c0));
        relaxed_copy(&t.page_bytes[at], page + in_page, len);
        for (size_t c = c0; c < c1; ++c) {
          const uint64_t m = mask_word(page, page_size_, c);
          std::memcpy(&t.page_bytes[at + len + 8 * (c - c0)], &m, 8);
        }
      }
      t.page_undo.push_back({page, in_page, static_cast<uint32_t>(len), at});
      page_write(page, page_size_, in_page, src, len);
      if (tab.may_hold_words(AliasTable::page_hint(po))) {
        for (uint64_t w = o & ~uint64_t{7}; w < o + len; w += 8) {
          AliasEntry* we = tab.probe(w);
          if (!we || !(we->meta.load(std::memory_order_acquire) & kMetaValid)) continue;
          uint64_t v = we->value.load(std::memory_order_relaxed);
          const uint64_t lo = std::max(w, o), hi = std::min(w + 8, o + len);
          std::memcpy(reinterpret_cast<char*>(&v) + (lo - w), src + (lo - o), hi - lo);
          touch_word(t, we);
          we->value.store(v, std::memory_order_relaxed);
          we->meta.store(t.stamp, std::memory_order_release);
        }
      }
      if (ring_.active_gen() == g) return true;
    }
  }

  void fail(ThreadCtx& ctx) {
    if (ctx.fail_code) return;
    rollback(ctx);
    ctx.fail_code = SW_ETOOBIG;
    set_error(SW_ETOOBIG,
              "wrap too large: the pool has no free space left for its redo log, or its alias entries "
              "exceed what the alias tables can hold; the wrap was rolled back");
  }

  // Log extents of frames with seq <= retired go back to the heap: those
  // frames are home and will never be replayed.
  void release_extents(uint64_t retired) {
    if (!has_retiring_extents_.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> g(ext_mu_);
    release_extents_locked(retired, &retiring_extents_, alloc_);
    has_retiring_extents_.store(!retiring_extents_.empty(), std::memory_order_relaxed);
  }

  void reclaim(Lane& l) {
    const uint64_t r = ring_.retired_seq();
    while (!l.committed.empty() && l.committed.front().seq <= r) {
      l.reclaimed = l.committed.front().end;
      l.committed.pop_front();
    }
    if (l.committed.empty() && l.tail == l.reclaimed) {
      // Nothing pending: restart at a line boundary (tail already is one).
      l.reclaimed = l.tail;
    }
  }

  // The frame's lane part is short of room: take back what retirement
  // has freed (never waits).
  static void room(void* self, Lane& l) { static_cast<SwThread*>(self)->engine->reclaim(l); }

  PoolFile* pool_;
  Medium* medium_;
  LaneSet* lanes_;
  Allocator* alloc_;
  AliasRing ring_;
  std::mutex ext_mu_;
  RetiringExtents retiring_extents_;  // by seq; GUARDED_BY(ext_mu_)
  std::atomic<bool> has_retiring_extents_{false};
  size_t page_size_;
  std::atomic<uint64_t> thread_ids_{0};
};

}  // namespace

std::unique_ptr<Engine> make_softwrap_engine(const EngineEnv& env) {
  return std::make_unique<SoftwrapEngine>(env);
}

}  // namespace softwrap
