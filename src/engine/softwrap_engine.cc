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
#include "engine/spill.h"
#include "engine/wcl_queue.h"
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

// What a wrap of a few word stores reads and writes here lies in the
// writer's two lines and its line buffer, and in the two lines after it
// (a wrap that opens with cold caches misses five lines of its thread's
// state, not nine).
struct SwThread {
  SwThread(SoftwrapEngine* eng, PoolFile* pool, Medium* medium, Allocator* alloc, RedoWriter::RoomFn fn, uint64_t id)
      : writer(pool, medium, alloc, fn, this), stamp(id << 48), spill(pool, medium, alloc), engine(eng) {}
  RedoWriter writer;
  // Every wrap's line.
  alignas(64) Lane* lane = nullptr;
  // The open wrap's colour, registered with the ring (alias_ring.h); also
  // the colour a load or read outside a wrap holds while it looks up.
  WrapSlot slot;
  WrapTag tag() const { return AliasRing::colour_of(slot); }
  // The wrap's entry stamp (meta): the thread context's 16-bit id (set
  // once), the wrap serial, the valid bit.
  uint64_t stamp;
  uint64_t dram = 0;  // DRAM of the overflow tables and pages it made (see dram_of)
  std::vector<WordUndo> undo;
  // A store's and a commit's second line: with the spill's first word.
  std::vector<PageUndo> page_undo;
  TableCache tab;   // the active table, as every store and commit finds it
  WclPolicy wcl;    // write-combined logging: whether to compare
  Spill spill;       // in-place writes once the wrap outgrows its DRAM budget
  SoftwrapEngine* engine;
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
  WclQueue queued;  // write-combined logging: stores awaiting their compare
  WclSeen seen;     // ... and the values the wrap last loaded or stored
};

class SoftwrapEngine final : public Engine {
 public:
  explicit SoftwrapEngine(const EngineEnv& env)
      : pool_(env.pool), medium_(env.medium), load_(env.medium), lanes_(env.lanes), alloc_(env.alloc),
        ring_(*env.cfg, env.pool, env.medium, env.filter_live, env.filter_regions), page_size_(env.cfg->shadow_page_size),
        spill_bytes_(env.cfg->spill_bytes), wcl_((env.cfg->flags & SW_CONFIG_WCL) != 0), wcl_stores_(wcl_ && env.cfg->wcl_words),
        help_control_(env.cfg->help_control) {
    reset_lanes();
  }
  // Frames at or below the watermark are already home: lanes start empty.
  void reset_lanes() {
    for (uint32_t i = 0; i < lanes_->count(); ++i) {
      Lane& l = lanes_->lane(i);
      l.tail = l.reclaimed = 0;
      l.clear_frames();
      l.undo_gen = pool_->lane_header(i)->undo_committed_gen + 1;  // for wraps that spill
    }
  }
  void resync() override {
    ring_.resync(__atomic_load_n(&pool_->meta()->retired_seq, __ATOMIC_ACQUIRE));
    reset_lanes();
    std::lock_guard<std::mutex> g(ext_mu_);
    retiring_extents_.clear();  // quiesce() released them all (to the allocator since rebuilt)
    has_retiring_extents_.store(false, std::memory_order_relaxed);
  }
  ~SoftwrapEngine() override {
    ring_.stop();
    release_extents(~uint64_t{0});  // nothing is replayed from them once we are gone (close retired all)
  }

  const char* name() const override { return "softwrap"; }
  const AliasFilter* filter() const override { return &ring_.filter(); }
  // The wrap's objects (objects.h): their slots raised in the generation
  // the wrap holds, so its own loads of them reach the library (the table
  // cannot retire while the wrap is open).
  void object_made(ThreadCtx& ctx, uint64_t off, size_t n) override {
    ring_.filter().raise_gen(off, n, st(ctx)->tag().active);
  }
  // Every frame up to seq retired: its values are home, no lookup reads a
  // table holding them, and recovery never replays it (home_seq(); not
  // retired_seq(), which is published while the retired table is still
  // readable).
  bool reuse_safe(uint64_t seq) override { return seq <= ring_.home_seq(); }
  bool retires_home() const override { return true; }
  void fresh_released(ThreadCtx& ctx) override {
    if (wcl_stores_) st(ctx)->seen.clear();  // values it noted for the block's words
  }

  void attach(ThreadCtx& ctx) override {
    auto* t = new SwThread(this, pool_, medium_, alloc_, &SoftwrapEngine::room, (thread_ids_.fetch_add(1) + 1) & 0xFFFF);
    t->writer.set_extent_reclaim(&SoftwrapEngine::reclaim_extents, t);
    ring_.add_slot(&t->slot);
    ctx.engine_state = t;
  }
  void detach(ThreadCtx& ctx) override {
    ring_.remove_slot(&st(ctx)->slot);
    delete st(ctx);
  }

  // A lane past a quarter full makes its wraps push the alias ring to
  // switch tables (so that retirement frees the lane).  Acquisition passes
  // over such lanes while a free one is below the mark, so a thread moves
  // on to the next lane instead: the mark applies to the whole log, not to
  // one lane (with the default 32 lanes of a small pool, one thread kept
  // on its own lane switched tables every ~85 wraps and ran at 0.65x of
  // two lanes).  When every free lane is past it, the first is taken.
  static bool pressed(const Lane& l) { return l.tail - l.reclaimed > l.size / 4; }

  bool lane_usable(Lane& l) override {
    reclaim(l);
    return RedoWriter::lane_free_lines(l) >= 1 && !pressed(l);
  }

  int begin(ThreadCtx& ctx) override {
    SwThread& t = *st(ctx);
    if (wcl_stores_) {
      t.wcl.begin_wrap(counters().stores.get());
      if (t.wcl.on()) t.seen.clear();  // only compared wraps note and look
    }
    t.lane = &lanes_->lane(ctx.lane);
    reclaim(*t.lane);
    release_extents(ring_.retired_seq());
    // A frame starts with a line in its lane.  Only when every free lane is
    // full of frames awaiting retirement (acquire passed over the others)
    // does a wrap wait, before it takes its colour: for other wraps'
    // tables, never for its own.
    while (RedoWriter::lane_free_lines(*t.lane) == 0) {
      ring_.wait_retired(t.lane->oldest_seq());
      reclaim(*t.lane);
    }
    // Committed frames that hold log extents and whose table is the active
    // one: a switch first, so that they can retire (and give the extents
    // back) while this wrap is open, should it need the space
    // (reclaim_log_space).
    const bool extents_in_active = has_retiring_extents_.load(std::memory_order_relaxed) &&
                                   newest_extent_gen_.load(std::memory_order_relaxed) >= ring_.active_gen();
    ring_.throttle(pressed(*t.lane) || extents_in_active, t.tab);
    ring_.enter(t.slot);
    // meta = stamp: thread context id, wrap serial, valid bit.
    t.stamp = (t.stamp & ~((uint64_t{1} << 48) - 1)) | (ctx.wrap_serial & ((uint64_t{1} << 47) - 1)) << 1 | kMetaValid;
    t.writer.begin(*t.lane);
    t.dram = 0;
    return 0;
  }

  int commit(ThreadCtx& ctx) override {
    SwThread& t = *st(ctx);
    drain(ctx);
    if (ctx.fail_code != 0) return ctx.fail_code;  // a queued store failed: rolled back (fail())
    if (wcl_stores_) {
      if (const uint64_t n = t.wcl.end_wrap(counters().stores.get())) counters().wcl_uncompared.add(n);
    }
    SW_TRACE_LABEL("redo:commit");
    if (t.writer.empty() && !t.spill.active() && t.undo.empty() && t.page_undo.empty() && !ctx.used_heap()) {
      // A wrap that wrote nothing: no frame, no sequence number, no fence
      // (its frame header never left the writer).
      t.writer.abandon();
      ring_.leave(t.slot, t.tag());
      const bool pressure = pressed(*t.lane);
      t.lane = nullptr;
      ring_.after_commit(pressure, t.tab);
      return 0;
    }
    const uint64_t seq = ring_.next_seq();
    if (t.spill.active()) t.spill.flush();  // durable with the commit fence
    // The wrap's fresh blocks (fresh.h): a few bytes go into the frame,
    // more are vouched for in it (a hash recovery checks), and all of them
    // become durable with the commit fence.
    if (help_control_ == HelpControl::kOwnBeforeCommit && ring_.helping()) write_own_home_early(t);
    if (!ctx.fresh.before_commit(*medium_, t.writer, *pool_, !t.spill.active()) || !t.writer.commit(seq)) {
      const std::string why = space_reason();
      rollback(ctx);
      return set_error(SW_ETOOBIG, "the pool has no free space left for the wrap's redo log; the wrap was "
                                   "rolled back%s", why.c_str());
    }
    // Retirement fallen a table behind: the wrap writes home a share of the
    // table going home (as many entries as it aliased), which its commit
    // fence makes durable (alias_ring.h).
    AliasRing::Help help;
    ring_.help(&help, t.undo.size() + t.page_undo.size());
    if (help.chunks == 0) {
      medium_->fence(FenceKind::kCommit);
    } else {
      SW_TRACE_LABEL("help:commit");  // the crash simulator's name for this point
      medium_->fence(FenceKind::kCommit);
      ring_.help_done(&help);
    }
    ctx.commit_seq_ = seq;
    if (t.spill.active()) t.spill.finish_commit();  // before leave(): see spill.h
    if (std::vector<LogExtent> ex = t.writer.take_extents(); !ex.empty()) {
      // The table active now (read after the seq was taken) gets a seq
      // boundary at or above it at its switch: the frame is home once that
      // table is retired.
      const uint64_t gen = ring_.active_gen();
      std::lock_guard<std::mutex> g(ext_mu_);
      retiring_extents_.push_back({seq, gen, std::move(ex)});
      if (gen > newest_extent_gen_.load(std::memory_order_relaxed)) {
        newest_extent_gen_.store(gen, std::memory_order_relaxed);
      }
      has_retiring_extents_.store(true, std::memory_order_relaxed);
    }
    ring_.leave(t.slot, t.tag());
    t.undo.clear();
    t.page_undo.clear();
    t.page_bytes.clear();
    const bool pressure = pressed(*t.lane);
    t.lane = nullptr;
    ring_.after_commit(pressure, t.tab);
    return 0;
  }

  // Crash-simulator control (HelpControl::kOwnBeforeCommit), deliberately
  // broken: while commits help retirement, a wrap's own words go home
  // before its commit record is even written.
  void write_own_home_early(SwThread& t) {
    for (const WordUndo& u : t.undo) {
      const uint64_t k = u.e->key.load(std::memory_order_relaxed);
      if (k & 1) continue;
      medium_->store(pool_->at(k), u.e->value.load(std::memory_order_relaxed), 8);
      medium_->flush(pool_->at(k), 8);
    }
  }

  int rollback(ThreadCtx& ctx) override {
    SwThread& t = *st(ctx);
    if (wcl_stores_) {
      if (const uint64_t n = t.wcl.end_wrap(counters().stores.get())) counters().wcl_uncompared.add(n);
    }
    t.queued.clear();  // queued stores never reached the tables or the log
    if (t.spill.active()) t.spill.rollback();
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
    ring_.leave(t.slot, t.tag());
    t.lane = nullptr;
    return 0;
  }

  uint64_t load(ThreadCtx& ctx, uint64_t off, unsigned size) override {
    ctx.counters.loads.add();
    const uint64_t w = off & ~uint64_t{7};
    uint64_t v;
    if (!ctx.begun) {
      // lookup_word() asks the alias filter first (no colour needed for a
      // home read: only table reads must keep tables from being recycled).
      if (ring_.filter().clear_word(w)) return extract(home_word_loaded(w), off - w, size);
      SwThread& t = *st(ctx);
      const WrapTag tag = ring_.enter(t.slot);
      v = ring_.lookup_word(w);
      ring_.leave(t.slot, tag);
    } else {
      drain(ctx);
      v = ring_.lookup_word(w);
      if (wcl_stores_) {
        SwThread& t = *st(ctx);
        if (t.wcl.on()) t.seen.note(w, v);  // what a store's compare of w will need
      }
    }
    return extract(v, off - w, size);
  }

  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    SwThread& t = *st(ctx);
    ctx.counters.stores.add();
    SW_TRACE_LABEL_DEFAULT("redo:record");
    const uint64_t w = off & ~uint64_t{7};
    if (t.wcl.on()) {  // a compared wrap (write-combined logging)
      // Whole words wait for their compare (wcl_queue.h).
      if (size == 8) {
        // A clear slot means no table holds w, so until this wrap changes
        // w its view of w is the home word: the compare may read home
        // instead of looking w up through the ring (bit 0 of the queued
        // offset says so).  The inline loads that used to note the value
        // in t.seen no longer reach the engine, and without this every
        // compared store of a word the wrap had only loaded walked the
        // ring.  The raise below makes any later store of w in this wrap
        // find the slot raised, so only the first queued store of w
        // carries the bit, and it is drained before any later one.  The
        // raise itself is for the wrap's own loads, which must find the
        // queued store: they read home only where the filter is clear (its
        // table cannot retire while the wrap is open).
        const bool home_view = ring_.filter().raise_word_was_clear(w, t.tag().active);
        return queue_word(t.queued, t.wcl, pool_->at(w), w | (home_view ? 1 : 0), v, counters().stores,
                          [&] { return drain_queue(ctx, t); });
      }
      if (!drain_queue(ctx, t)) return;  // a queued store failed: the wrap is rolled back
      return store_wcl(ctx, t, w, off, v, size);
    }
    if (t.spill.active() && !ring_.holds_any(w, 8)) {
      // In place, and the whole word (now home) in the frame as well.
      if (!t.spill.store(off, v, size) || !t.writer.append_store(w, home_word(w), 8)) fail(ctx);
      return;
    }
    if (size < 8) v = merge(ring_.lookup_word(w), off - w, v, size);
    if (!put_word(t, w, v) || !t.writer.append_store(w, v, 8)) return fail(ctx);
    maybe_spill(ctx, t);
  }

  // Compares and logs the queued stores, in order.
  // Every path that reads or ends a wrap calls it; without SW_CONFIG_WCL
  // nothing is ever queued and it costs one test of a member.
  void drain(ThreadCtx& ctx) {
    if (!wcl_stores_) return;
    SwThread& t = *st(ctx);
    if (!t.queued.empty()) drain_queue(ctx, t);
  }
  // Returns false when a queued store failed (the wrap was rolled back).
  bool drain_queue(ThreadCtx& ctx, SwThread& t) {
    t.queued.drain([&](const WclQueue::Item& q) {
      const uint64_t w = q.w & ~uint64_t{1};
      store_wcl(ctx, t, w, w, q.v, 8, (q.w & 1) != 0);
      return ctx.fail_code == 0;  // a failed store rolled the wrap back
    });
    return ctx.fail_code == 0;
  }

  // Write-combined logging: compare with the value the wrap sees first.
  // home_view: no table held w when the store was queued (its filter slot
  // was clear), so the wrap sees w's home word.
  void store_wcl(ThreadCtx& ctx, SwThread& t, uint64_t w, uint64_t off, uint64_t v, unsigned size,
                 bool home_view = false) {
    uint64_t cur;
    const bool seen = t.seen.find(w, &cur);  // the wrap just loaded or stored w
    if (size == 8 && !seen && !home_view && !t.spill.active()) {
      // A word stored lately has a valid entry of its own in the active
      // table: that entry holds the value the wrap sees (the newest), and
      // it is where the store goes (put_word would find it too).  One probe
      // instead of a lookup through the ring and a second probe.
      const uint64_t g = ring_.active_gen();
      AliasTable& tab = ring_.table(g, t.tab);
      AliasEntry* e = tab.find(w);
      if (e != nullptr && (e->meta.load(std::memory_order_acquire) & kMetaValid)) {
        cur = e->value.load(std::memory_order_relaxed);
        t.wcl.saw(WclPolicy::pays(v, cur));
        t.seen.note(w, v);
        if (v == cur) return t.writer.note_eliminated();
        set_word(t, e, v);
        // A switch meanwhile: the store belongs in the new active table.
        if (ring_.active_gen() != g && !put_word(t, w, v)) return fail(ctx);
        if (!t.writer.append_word(w, v, cur)) return fail(ctx);
        return maybe_spill(ctx, t);
      }
    }
    if (!seen) cur = home_view ? home_word_loaded(w) : ring_.lookup_word(w);
    const uint64_t nv = size < 8 ? merge(cur, off - w, v, size) : v;
    t.wcl.saw(WclPolicy::pays(nv, cur));
    t.seen.note(w, nv);
    if (nv == cur) return t.writer.note_eliminated();  // no record, no alias, no home write
    if (t.spill.active() && !ring_.holds_any(w, 8)) {
      if (!t.spill.store(w, nv, 8) || !t.writer.append_word(w, nv, cur)) fail(ctx);
      return;
    }
    if (!put_word(t, w, nv) || !t.writer.append_word(w, nv, cur)) return fail(ctx);
    maybe_spill(ctx, t);
  }

  void read(ThreadCtx& ctx, void* dst, uint64_t off, size_t n) override {
    ctx.counters.loads.add();
    WrapTag tag{};
    if (ctx.begun) {
      drain(ctx);  // and visible_bytes() asks the filter page by page
    } else {
      if (ring_.filter().clear(off, n)) {  // nothing of the range is aliased: no colour needed
        load_(pool_->at(off), n);
        relaxed_copy(dst, pool_->at(off), n);
        return;
      }
      tag = ring_.enter(st(ctx)->slot);
    }
    auto* out = static_cast<unsigned char*>(dst);
    const uint64_t below = ring_.active_gen() + 1;
    for_pages(off, n, [&](uint64_t o, size_t len, size_t done) { ring_.visible_bytes(o, len, below, out + done); });
    if (!ctx.begun) ring_.leave(st(ctx)->slot, tag);
  }

  // No table that a reader overlays — generations readable_gen() through
  // active_gen() — may hold anything of the range's shadow pages (one
  // Bloom filter bit per page and table).  Tables older than readable_gen()
  // are retired: their values are home.  Without a wrap the caller holds no
  // colour, so the generations are read again afterwards: if neither moved,
  // no table was recycled or added while its filter was read (both only
  // happen after a generation moves), and the answer held at that moment.
  bool home_visible(ThreadCtx& ctx, uint64_t off, size_t n) override {
    if (ctx.begun) drain(ctx);
    if (ring_.filter().clear(off, n)) return true;
    const uint64_t ps = page_size_;
    for (;;) {
      const uint64_t a = ring_.active_gen(), r = ring_.readable_gen();
      // A read-mostly phase's common case: everything older is retired and
      // the active table is empty, so nothing is aliased (no hashing).
      const bool nothing = r == a && ring_.table(a).count() == 0;
      bool clear = true;
      for (uint64_t po = off & ~(ps - 1); !nothing && clear && po < off + n; po += ps) {
        const uint64_t hint = AliasTable::page_hint(po);
        for (uint64_t g = r; g <= a; ++g) {
          if (ring_.table(g).may_hold(hint)) {
            clear = false;
            break;
          }
        }
      }
      if (ctx.begun || (ring_.active_gen() == a && ring_.readable_gen() == r)) return clear;
    }
  }

  void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) override {
    SwThread& t = *st(ctx);
    ctx.counters.stores.add();
    SW_TRACE_LABEL_DEFAULT("redo:record");
    const auto* in = static_cast<const unsigned char*>(src);
    if (wcl_ && wcl_compares_range(wcl_stores_, n)) {
      if (!drain_queue(ctx, t)) return;
      // Ranges are always compared (of a page or more where only ranges
      // are: kWclRangeMinBytes), also in a wrap whose word stores are
      // not (WclPolicy): a range's compare costs less than logging it, and
      // the pages SQLite rewrites after a bulk load of fresh data change a
      // few words each.  (A half it leaves waiting is logged before any
      // later uncompared store of its word: append_store.)  Except where
      // the caller said the bytes replace unrelated ones (sw_write_whole):
      // logged whole below, after the queue drained (append_range logs a
      // half left waiting in the range first).
      t.seen.clear();  // the range's words change without a note each
      if (!ctx.write_whole) return write_wcl(ctx, t, off, in, n);
    }
    bool ok = true;
    if (!t.spill.active()) {
      for_pages(off, n, [&](uint64_t o, size_t len, size_t done) {
        if (ok) ok = put_bytes(t, o, in + done, len);
      });
      ok = ok && t.writer.append_range(off, src, n);
    } else {
      // Spilled: bytes a table holds keep the alias path, the rest go home.
      for_pages(off, n, [&](uint64_t o, size_t len, size_t done) {
        if (!ok) return;
        if (ring_.holds_any(o, len)) {
          ok = put_bytes(t, o, in + done, len) && t.writer.append_range(o, in + done, len);
        } else {
          ok = t.spill.write(o, in + done, len) && t.writer.append_range(o, in + done, len);
        }
      });
    }
    if (!ok) return fail(ctx);
    maybe_spill(ctx, t);
  }

  // Write-combined logging of a range: compared, 64 KiB at a time, with
  // the bytes the wrap sees; only the runs the log records get aliased.
  void write_wcl(ThreadCtx& ctx, SwThread& t, uint64_t off, const unsigned char* in, size_t n) {
    const uint64_t below = ring_.active_gen() + 1;
    const bool ok = t.writer.append_compared(
        off, in, n, &t.scratch,
        [&](uint64_t o, size_t len, unsigned char* out) {
          for_pages(o, len, [&](uint64_t po, size_t plen, size_t pdone) {
            ring_.visible_bytes(po, plen, below, out + pdone);
          });
        },
        [&](uint64_t roff, const unsigned char* b, size_t rlen) { return alias_run(t, roff, b, rlen); });
    if (!ok) return fail(ctx);
    maybe_spill(ctx, t);
  }

  // Puts a run of new bytes where a write of the wrap belongs: shadow
  // pages, or — spilled, for bytes no table holds — home.
  bool alias_run(SwThread& t, uint64_t off, const unsigned char* in, size_t n) {
    bool ok = true;
    for_pages(off, n, [&](uint64_t o, size_t len, size_t done) {
      if (!ok) return;
      if (t.spill.active() && !ring_.holds_any(o, len)) {
        ok = t.spill.write(o, in + done, len);
      } else {
        ok = put_bytes(t, o, in + done, len);
      }
    });
    return ok;
  }

  int quiesce() override {
    const int rc = ring_.quiesce();
    release_extents(ring_.retired_seq());
    return rc;
  }
  // The thread's last commit retired: its tables home, flushed, fenced
  // (retirement waits for wraps other threads still have open in them).
  int publish(ThreadCtx& ctx) override {
    if (ctx.commit_seq_ == 0 || ring_.retire_through(ctx.commit_seq_)) return 0;
    return set_error(SW_EBUSY, "retiring the thread's commits home did not finish in time (a wrap of another "
                               "thread keeps its alias table open)");
  }
  int shutdown() override {
    int rc = ring_.quiesce();
    ring_.stop();
    release_extents(ring_.retired_seq());
    return rc;
  }
  void add_stats(sw_stats* out) override { ring_.add_stats(out); }
  void reset_stats() override { ring_.reset_stats(); }

 private:
  static SwThread* st(ThreadCtx& ctx) { return static_cast<SwThread*>(ctx.engine_state); }
  uint64_t home_word(uint64_t w) const {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(pool_->at(w)), __ATOMIC_RELAXED);
  }
  // A load's read of home (reported to a medium that records loads).
  uint64_t home_word_loaded(uint64_t w) {
    load_(pool_->at(w), 8);
    return home_word(w);
  }

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
  [[gnu::always_inline]] bool put_word(SwThread& t, uint64_t w, uint64_t v) {
    for (;;) {
      const uint64_t g = ring_.active_gen();
      AliasTable& tab = ring_.table(g, t.tab);
      ring_.filter().raise_word(w, g);  // before the alias is visible (alias_filter.h)
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
        if (!ring_.make_room(g, t.tag())) return false;
        t.dram += table_bytes(ring_.table(ring_.active_gen()));  // an overflow table for this wrap
        continue;
      }
      // Strict mode: the value before this table had the word (the entry
      // is not valid yet, so the lookup sees past it).
      if (inserted && tab.keeps_base()) tab.word_base(e) = ring_.lookup_word(w);
      set_word(t, e, v);
      if (ring_.active_gen() == g) return true;
    }
  }

  // Entry e of the active table takes v as this wrap's store (its old
  // value and meta saved for an abort).
  void set_word(SwThread& t, AliasEntry* e, uint64_t v) {
    touch_word(t, e);
    e->value.store(v, std::memory_order_relaxed);
    e->meta.store(t.stamp, std::memory_order_release);
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
      AliasTable& tab = ring_.table(g, t.tab);
      ring_.filter().raise_gen(o, len, g);  // before the bytes are visible (alias_filter.h)
      char* page;
      if (t.last_gen == g && t.last_po == po) {
        page = t.last_page;
      } else {
        if (!tab.has_pages.load(std::memory_order_relaxed)) tab.has_pages.store(true, std::memory_order_release);
        bool inserted;
        AliasEntry* e = tab.find_or_insert(page_key(po), &inserted);
        if (!e) {
          if (!ring_.make_room(g, t.tag())) return false;
          continue;
        }
        if (inserted) {
          page = tab.new_page();
          if (!page) return false;
          t.dram += page_alloc_size(page_size_) + (tab.keeps_base() ? page_size_ : 0) + sizeof(AliasEntry);
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

  // DRAM the open wrap holds for its new values: new entries and pages,
  // and what abort needs.
  static uint64_t dram_of(const SwThread& t) {
    return t.dram + sizeof(WordUndo) * t.undo.size() + sizeof(PageUndo) * t.page_undo.size() + t.page_bytes.size();
  }
  // Entries, insertion order and filters of a table.
  static uint64_t table_bytes(const AliasTable& tab) {
    return uint64_t{tab.capacity()} * (sizeof(AliasEntry) + sizeof(uint32_t) + 1);
  }
  // Spills before the budget would be passed, counting the next overflow
  // table (twice the active one) a growing wrap would need.
  void maybe_spill(ThreadCtx& ctx, SwThread& t) {
    if (t.spill.active()) return;
    if (dram_of(t) + 2 * table_bytes(ring_.table(ring_.active_gen(), t.tab)) <= spill_bytes_) return;
    if (!t.spill.start(*t.lane, t.writer.frame_phys())) fail(ctx);
  }

  void fail(ThreadCtx& ctx) {
    if (ctx.fail_code) return;
    const std::string why = space_reason();
    rollback(ctx);
    ctx.fail_code = SW_ETOOBIG;
    set_error(SW_ETOOBIG,
              "wrap too large: the pool has no free space left for its redo log, or its alias entries "
              "exceed what the alias tables can hold; the wrap was rolled back%s", why.c_str());
  }

  // Log extents of frames with seq <= retired go back to the heap: those
  // frames are home and will never be replayed.
  // Whether any were released.
  bool release_extents(uint64_t retired) {
    if (!has_retiring_extents_.load(std::memory_order_relaxed)) return false;
    std::lock_guard<std::mutex> g(ext_mu_);
    const size_t held = retiring_extents_.size();
    release_extents_locked(retired, &retiring_extents_, alloc_);
    has_retiring_extents_.store(!retiring_extents_.empty(), std::memory_order_relaxed);
    return retiring_extents_.size() < held;
  }

  void reclaim(Lane& l) { l.reclaim_through(ring_.retired_seq()); }

  // The frame's lane part is short of room: take back what retirement
  // has freed (never waits).
  static void room(void* self, Lane& l) { static_cast<SwThread*>(self)->engine->reclaim(l); }

  // The heap has no free chunk for the open wrap's log: committed frames
  // may hold extents only until they are retired, so wait for those whose
  // tables can retire while this wrap is open (tables older than its
  // colour's active one: it stores into that one or newer) and take their
  // extents back.  A wrap never waits for its own table (that wait could
  // only end at its own close); begin() switched tables away from frames
  // holding extents, so that case is a wrap that raced another thread's
  // large commit.  True if extents were released (look again).
  static bool reclaim_extents(void* self) {
    auto* t = static_cast<SwThread*>(self);
    return t->engine->reclaim_log_space(*t);
  }
  bool reclaim_log_space(const SwThread& t) {
    if (!has_retiring_extents_.load(std::memory_order_relaxed)) return false;
    uint64_t want = 0;
    {
      std::lock_guard<std::mutex> g(ext_mu_);
      for (const RetiringFrame& f : retiring_extents_) {
        if (f.gen < t.tag().active) want = std::max(want, f.seq);
      }
    }
    if (want == 0) return false;
    if (ring_.retired_seq() < want) ring_.wait_retired(want);  // bounded
    // Look again if this call gave extents back, or if another thread did
    // (the frames waited for are retired): each true answer leaves fewer
    // frames of older tables, so the caller's retries end.
    return release_extents(ring_.retired_seq()) || ring_.retired_seq() >= want;
  }

  PoolFile* pool_;
  Medium* medium_;
  LoadTap load_;
  LaneSet* lanes_;
  Allocator* alloc_;
  AliasRing ring_;
  std::mutex ext_mu_;
  RetiringExtents retiring_extents_;  // by seq; GUARDED_BY(ext_mu_)
  // What every wrap's begin, stores and commit read of the engine past
  // its first line, on one line of its own (not beside the extent list,
  // which only wraps with log extents touch).
  alignas(64) std::atomic<uint64_t> newest_extent_gen_{0};  // the largest RetiringFrame::gen pushed (a hint)
  size_t page_size_;
  uint64_t spill_bytes_;
  bool wcl_;  // write-combined logging (SW_CONFIG_WCL)
  // ... of word stores too, not only of ranges of a page or more
  // (ResolvedConfig::wcl_words): else the word paths run as without WCL.
  bool wcl_stores_;
  HelpControl help_control_;  // crash-simulator control (pool.h)
  std::atomic<bool> has_retiring_extents_{false};
  std::atomic<uint64_t> thread_ids_{0};
};

}  // namespace

std::unique_ptr<Engine> make_softwrap_engine(const EngineEnv& env) {
  return std::make_unique<SoftwrapEngine>(env);
}

}  // namespace softwrap
