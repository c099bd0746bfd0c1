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

#include "alias/alias_filter.h"
#include "alias/alias_table.h"
#include "alias/home_writer.h"
#include "common/clock.h"
#include "common/error.h"
#include "engine/engine.h"
#include "engine/spill.h"
#include "engine/wcl_queue.h"
#include "log/lanes.h"
#include "log/redo_log.h"
#include "medium/medium.h"
#include "medium/trace_label.h"

namespace softwrap {
namespace {

class LocalEngine;

struct LocalThread {
  LocalThread(LocalEngine* eng, PoolFile* pool, Medium* medium, Allocator* alloc, RedoWriter::RoomFn fn,
              uint32_t cap, size_t page_size)
      : writer(pool, medium, alloc, fn, this), engine(eng), table(std::make_unique<AliasTable>(cap, page_size)),
        spill(pool, medium, alloc) {}
  RedoWriter writer;
  LocalEngine* engine;
  std::unique_ptr<AliasTable> table;
  std::vector<std::unique_ptr<AliasTable>> outgrown;  // keep their shadow pages alive
  Lane* lane = nullptr;
  Spill spill;        // in-place writes once the wrap outgrows its DRAM budget
  uint64_t dram = 0;  // DRAM of the wrap's shadow pages and grown tables
  std::vector<unsigned char> scratch;  // write-combined logging: what a range held
  WclQueue queued;                     // ... and the stores awaiting their compare
  WclPolicy wcl;                       // ... and whether to compare
  std::vector<std::pair<uint64_t, size_t>> objects;  // ranges object_made counted in the filter
  AliasFilter::CoarseMarks marks;                     // the filter's regions the wrap counts in
};

class LocalEngine final : public Engine {
 public:
  explicit LocalEngine(const EngineEnv& env)
      : pool_(env.pool), medium_(env.medium), load_(env.medium), lanes_(env.lanes), alloc_(env.alloc), capacity_(env.cfg->alias_entries),
        page_size_(env.cfg->shadow_page_size), spill_bytes_(env.cfg->spill_bytes),
        wcl_((env.cfg->flags & SW_CONFIG_WCL) != 0), wcl_stores_(wcl_ && env.cfg->wcl_words),
        filter_(env.pool->base(), env.pool->max_size(), env.cfg->filter_granule, env.filter_live, env.filter_regions),
        inflight_(new std::atomic<uint64_t>[env.lanes->count()]) {
    start_from_pool();
  }
  // Commits continue above the durable watermark; lanes start empty.
  void start_from_pool() {
    persisted_ = __atomic_load_n(&pool_->meta()->retired_seq, __ATOMIC_ACQUIRE);
    seq_.store(persisted_);
    published_.store(persisted_);
    for (uint32_t i = 0; i < lanes_->count(); ++i) {
      inflight_[i].store(0);
      Lane& l = lanes_->lane(i);
      l.tail = l.reclaimed = 0;
      l.clear_frames();
      l.undo_gen = pool_->lane_header(i)->undo_committed_gen + 1;  // for wraps that spill
    }
  }
  void resync() override {
    std::lock_guard<std::mutex> g(wm_mu_);
    retiring_extents_.clear();  // quiesce() released them all (to the allocator since rebuilt)
    if (__atomic_load_n(&pool_->meta()->retired_seq, __ATOMIC_ACQUIRE) < seq_.load()) return;  // cannot be: ours only rise
    start_from_pool();
  }

  const char* name() const override { return "softwrap-local"; }
  const AliasFilter* filter() const override { return &filter_; }
  // The wrap's objects (objects.h) count in the filter like its keys, so
  // that its own loads of them reach the library; other threads' loads of
  // those slots then ask the library too, which reads home for them.
  void object_made(ThreadCtx& ctx, uint64_t off, size_t n) override {
    LocalThread& t = *st(ctx);
    filter_.add(off, n, t.marks);
    t.objects.push_back({off, n});
  }
  void objects_ended(ThreadCtx& ctx) override {
    LocalThread& t = *st(ctx);
    for (const auto& [off, n] : t.objects) filter_.sub(off, n);
    t.objects.clear();
    filter_.release(t.marks);  // after the slots (clear() left the regions to this)
  }
  // Every frame up to seq below the persisted watermark (values are home
  // at each commit; only replay could bring old ones back).  Moving the
  // watermark costs a fence, so only when a block needs it.
  bool retires_home() const override { return true; }
  bool reuse_safe(uint64_t seq) override {
    if (seq <= published_.load(std::memory_order_acquire)) return true;
    advance_watermark();
    return seq <= published_.load(std::memory_order_acquire);
  }

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
    if (wcl_stores_) t.wcl.begin_wrap(counters().stores.get());
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
    t.dram = 0;
    return 0;
  }

  int commit(ThreadCtx& ctx) override {
    LocalThread& t = *st(ctx);
    drain(ctx);
    if (ctx.fail_code != 0) return ctx.fail_code;  // a queued store failed: rolled back (fail())
    if (wcl_stores_) {
      if (const uint64_t n = t.wcl.end_wrap(counters().stores.get())) counters().wcl_uncompared.add(n);
    }
    SW_TRACE_LABEL("redo:commit");
    if (t.writer.empty() && !t.spill.active() && !ctx.used_heap()) {
      // A wrap that wrote nothing: no frame, no sequence number, no fence.
      t.writer.abandon();
      clear(t);
      return 0;
    }
    std::atomic<uint64_t>& flight = inflight_[t.lane->index];
    flight.store(seq_.load() + 1);
    const uint64_t seq = seq_.fetch_add(1) + 1;
    if (t.spill.active()) t.spill.flush();  // durable with the commit fence
    // Fresh blocks (fresh.h) before the commit record (softwrap_engine.cc).
    if (!ctx.fresh.before_commit(*medium_, t.writer, *pool_, !t.spill.active()) || !t.writer.commit(seq)) {
      flight.store(0);
      const std::string why = space_reason();
      rollback(ctx);
      return set_error(SW_ETOOBIG, "the pool has no free space left for the wrap's redo log; the wrap was "
                                   "rolled back%s", why.c_str());
    }
    medium_->fence(FenceKind::kCommit);
    ctx.commit_seq_ = seq;
    if (t.spill.active()) t.spill.finish_commit();
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
      retiring_extents_.push_back({seq, 0, std::move(ex)});
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
    if (wcl_stores_) {
      if (const uint64_t n = t.wcl.end_wrap(counters().stores.get())) counters().wcl_uncompared.add(n);
    }
    // Queued stores never reached the table or the log; their counts end.
    t.queued.for_each([&](const WclQueue::Item& q) { filter_.sub_word(q.w); });
    t.queued.clear();
    if (t.spill.active()) t.spill.rollback();
    t.writer.abandon();
    clear(t);
    return 0;
  }

  uint64_t load(ThreadCtx& ctx, uint64_t off, unsigned size) override {
    ctx.counters.loads.add();
    const uint64_t w = off & ~uint64_t{7};
    if (ctx.begun) drain(ctx);
    // No open wrap of any thread aliases w's line: home (the filter).
    const uint64_t v = ctx.begun && !filter_.clear_word(w) ? lookup(*st(ctx), w) : home_word(w);
    if (size == 8) return v;
    return (v >> (8 * (off - w))) & ((uint64_t{1} << (8 * size)) - 1);
  }

  void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) override {
    LocalThread& t = *st(ctx);
    ctx.counters.stores.add();
    SW_TRACE_LABEL_DEFAULT("redo:record");
    const uint64_t w = off & ~uint64_t{7};
    if (t.wcl.on()) {  // a compared wrap (write-combined logging)
      // Whole words wait for their compare (wcl_queue.h).
      if (size == 8) {
        // The wrap's own loads must find the queued store: they read home
        // only where the filter is clear.  Counted while it is queued.
        filter_.add_word(w, t.marks);
        return queue_word(t.queued, t.wcl, pool_->at(w), w, v, counters().stores, [&] { return drain_queue(ctx, t); });
      }
      if (!drain_queue(ctx, t)) return;  // a queued store failed: the wrap is rolled back
      store_wcl(ctx, t, off, v, size);
      return;
    }
    if (t.spill.active() && !holds(t, w, 8)) {
      // In place, and the whole word (now home) in the frame as well.
      if (!t.spill.store(off, v, size) || !t.writer.append_store(w, home_word(w), 8)) fail(ctx);
      return;
    }
    if (size < 8) {
      const uint64_t shift = 8 * (off - w), mask = ((uint64_t{1} << (8 * size)) - 1) << shift;
      v = (lookup(t, w) & ~mask) | ((v << shift) & mask);
    }
    t.table->has_words.store(true, std::memory_order_relaxed);
    AliasEntry* e = entry(t, w);
    e->value.store(v, std::memory_order_relaxed);
    e->meta.store(kMetaValid, std::memory_order_relaxed);
    if (!t.writer.append_store(w, v, 8)) return fail(ctx);
    maybe_spill(ctx, t);
  }

  // Every path that reads or ends a wrap calls it; without SW_CONFIG_WCL
  // nothing is ever queued and it costs one test of a member.
  void drain(ThreadCtx& ctx) {
    if (!wcl_stores_) return;
    LocalThread& t = *st(ctx);
    if (!t.queued.empty()) drain_queue(ctx, t);
  }
  // Returns false when a queued store failed (the wrap was rolled back).
  bool drain_queue(ThreadCtx& ctx, LocalThread& t) {
    // Each drained word's queue count ends here: it now has an entry of
    // its own (counted by entry()), or was found unchanged (its home word
    // is what the wrap sees), or the wrap was rolled back by a failed store
    // before it (every queued word is visited, so none keeps its count).
    // A word's counts are bounded by the queue's 16 places however often
    // the wrap stores it.
    bool failed = false;
    t.queued.drain([&](const WclQueue::Item& q) {
      if (!failed) {
        store_wcl(ctx, t, q.w, q.v, 8);
        failed = ctx.fail_code != 0;
      }
      filter_.sub_word(q.w);
      return true;
    });
    return !failed;
  }

  // Write-combined logging: compare with the value the wrap sees first.
  void store_wcl(ThreadCtx& ctx, LocalThread& t, uint64_t off, uint64_t v, unsigned size) {
    const uint64_t w = off & ~uint64_t{7};
    {
      const uint64_t cur = lookup(t, w);
      const uint64_t shift = 8 * (off - w), mask = size == 8 ? ~uint64_t{0} : ((uint64_t{1} << (8 * size)) - 1) << shift;
      const uint64_t nv = (cur & ~mask) | ((v << shift) & mask);
      t.wcl.saw(WclPolicy::pays(nv, cur));
      if (nv == cur) return t.writer.note_eliminated();
      if (t.spill.active() && !holds(t, w, 8)) {
        if (!t.spill.store(w, nv, 8) || !t.writer.append_word(w, nv, cur)) fail(ctx);
        return;
      }
      t.table->has_words.store(true, std::memory_order_relaxed);
      AliasEntry* e = entry(t, w);
      e->value.store(nv, std::memory_order_relaxed);
      e->meta.store(kMetaValid, std::memory_order_relaxed);
      if (!t.writer.append_word(w, nv, cur)) return fail(ctx);
      return maybe_spill(ctx, t);
    }
  }

  // Readers overlay only their own open wrap's table (others' wraps go
  // home at their close): home is what read() returns unless the table may
  // hold something of one of the range's pages.
  bool home_visible(ThreadCtx& ctx, uint64_t off, size_t n) override {
    if (!ctx.begun) return true;
    drain(ctx);
    if (filter_.clear(off, n)) return true;
    AliasTable& tab = *st(ctx)->table;
    if (!tab.has_pages.load(std::memory_order_relaxed) && !tab.has_words.load(std::memory_order_relaxed)) return true;
    const uint64_t ps = page_size_;
    for (uint64_t po = off & ~(ps - 1); po < off + n; po += ps) {
      if (tab.may_hold(AliasTable::page_hint(po))) return false;
    }
    return true;
  }

  void read(ThreadCtx& ctx, void* dst, uint64_t off, size_t n) override {
    ctx.counters.loads.add();
    if (ctx.begun) drain(ctx);
    load_(pool_->at(off), n);
    std::memcpy(dst, pool_->at(off), n);
    if (!ctx.begun || filter_.clear(off, n)) return;
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
      // logged whole below, after the queue drained.
      if (!ctx.write_whole) return write_wcl(ctx, t, off, in, n);
    }
    if (t.spill.active()) {  // bytes the table holds keep the alias path, the rest go home
      for (size_t done = 0; done < n;) {
        const uint64_t o = off + done;
        const size_t len = std::min<size_t>(n - done, page_size_ - (o & (page_size_ - 1)));
        if (holds(t, o, len)) {
          if (!alias_bytes(t, o, in + done, len) || !t.writer.append_range(o, in + done, len)) return fail(ctx);
        } else if (!t.spill.write(o, in + done, len) || !t.writer.append_range(o, in + done, len)) {
          return fail(ctx);
        }
        done += len;
      }
      return;
    }
    if (!alias_bytes(t, off, in, n) || !t.writer.append_range(off, src, n)) return fail(ctx);
    maybe_spill(ctx, t);
  }

  // Write-combined logging of a range: compared, 64 KiB at a time, with
  // the bytes the wrap sees; only the runs the log records get aliased.
  void write_wcl(ThreadCtx& ctx, LocalThread& t, uint64_t off, const unsigned char* in, size_t n) {
    const bool ok = t.writer.append_compared(
        off, in, n, &t.scratch, [&](uint64_t o, size_t len, unsigned char* out) { read(ctx, out, o, len); },
        [&](uint64_t roff, const unsigned char* b, size_t rlen) { return alias_run(t, roff, b, rlen); });
    if (!ok) return fail(ctx);
    maybe_spill(ctx, t);
  }

  // A run of new bytes goes to the thread's shadow pages, or — spilled,
  // for bytes the table does not hold — home.
  bool alias_run(LocalThread& t, uint64_t off, const unsigned char* in, size_t n) {
    for (size_t done = 0; done < n;) {
      const uint64_t o = off + done;
      const size_t len = std::min<size_t>(n - done, page_size_ - (o & (page_size_ - 1)));
      const bool ok = t.spill.active() && !holds(t, o, len) ? t.spill.write(o, in + done, len)
                                                            : alias_bytes(t, o, in + done, len);
      if (!ok) return false;
      done += len;
    }
    return true;
  }

  int quiesce() override {
    advance_watermark();
    return 0;
  }
  ~LocalEngine() override {
    for (RetiringFrame& f : retiring_extents_) ExtentSource::release(alloc_, f.extents);
  }
  int shutdown() override { return quiesce(); }

 private:
  static LocalThread* st(ThreadCtx& ctx) { return static_cast<LocalThread*>(ctx.engine_state); }

  // Whether the thread's table holds any byte of [off, off+n) (one page).
  bool holds(LocalThread& t, uint64_t off, size_t n) {
    AliasTable& tab = *t.table;
    if (tab.has_words.load(std::memory_order_relaxed)) {
      for (uint64_t w = off & ~uint64_t{7}; w < off + n; w += 8) {
        if (tab.find(w)) return true;
      }
    }
    if (tab.has_pages.load(std::memory_order_relaxed)) {
      const uint64_t po = off & ~(uint64_t{page_size_} - 1);
      if (AliasEntry* e = tab.find(page_key(po))) {
        const char* page = reinterpret_cast<const char*>(e->value.load(std::memory_order_relaxed));
        const size_t lo = off - po, hi = lo + n;
        for (size_t c = lo / 64; c * 64 < hi; ++c) {
          if (mask_word(page, page_size_, c) & chunk_bits(c, lo, hi)) return true;
        }
      }
    }
    return false;
  }

  // Past the DRAM budget (entries of the table, which grows by doubling,
  // and shadow pages), the wrap spills (engine/spill.h).
  void maybe_spill(ThreadCtx& ctx, LocalThread& t) {
    if (t.spill.active()) return;
    // The table doubles when full and keeps the smaller ones until close.
    const uint64_t next_table = uint64_t{t.table->capacity()} * 2 * (sizeof(AliasEntry) + sizeof(uint32_t) + 1);
    if (t.dram + next_table <= spill_bytes_) return;
    if (!t.spill.start(*t.lane, t.writer.frame_phys())) fail(ctx);
  }

  // Puts [off, off+n) into the thread's shadow pages, keeping its word
  // entries current.  False if out of memory.
  bool alias_bytes(LocalThread& t, uint64_t off, const unsigned char* in, size_t n) {
    t.table->has_pages.store(true, std::memory_order_relaxed);
    for (size_t done = 0; done < n;) {
      const uint64_t o = off + done;
      const uint64_t po = o & ~(uint64_t{page_size_} - 1);
      const size_t len = std::min<size_t>(n - done, page_size_ - (o - po));
      AliasEntry* e = entry(t, page_key(po));
      if (!(e->meta.load(std::memory_order_relaxed) & kMetaValid)) {
        char* page = t.table->new_page();
        if (!page) return false;
        t.dram += page_alloc_size(page_size_);
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
    return true;
  }


  uint64_t home_word(uint64_t w) const {
    load_(pool_->at(w), 8);
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

  // Entry for key in the thread's table, growing the table when full.  A
  // new key counts in the filter (before its entry holds a value) until
  // the wrap ends (clear()).
  AliasEntry* entry(LocalThread& t, uint64_t key) {
    bool inserted;
    AliasEntry* e = t.table->find_or_insert(key, &inserted);
    if (!e) {
      grow(t);
      e = t.table->find_or_insert(key, &inserted);
    }
    if (inserted) count_key(t, key, true);
    return e;
  }
  // A key's part of the filter counts: its word's slot, or the slots of
  // its shadow page.
  void count_key(LocalThread& t, uint64_t key, bool add) {
    if (!(key & 1)) {
      add ? filter_.add_word(key, t.marks) : filter_.sub_word(key);
    } else {
      add ? filter_.add(key & ~uint64_t{1}, page_size_, t.marks) : filter_.sub(key & ~uint64_t{1}, page_size_);
    }
  }

  void grow(LocalThread& t) {
    auto bigger = std::make_unique<AliasTable>(t.table->capacity() * 2, page_size_);
    t.dram += uint64_t{bigger->capacity()} * (sizeof(AliasEntry) + sizeof(uint32_t) + 1);
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

  // Ends the wrap's aliasing: after its values are home (commit) or
  // discarded (rollback), its keys stop counting in the filter (queued
  // words stopped when the queue drained or was discarded), and the table
  // is emptied.
  void clear(LocalThread& t) {
    t.table->for_each([&](AliasEntry& e) { count_key(t, e.key.load(std::memory_order_relaxed), false); });
    // The wrap leaves its regions after its slots; with objects still
    // counted (sw_modify copies), objects_ended() does.
    if (t.objects.empty()) filter_.release(t.marks);
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
    const std::string why = space_reason();
    rollback(ctx);
    ctx.fail_code = SW_ETOOBIG;
    set_error(SW_ETOOBIG, "wrap too large: the pool has no free space left for its redo log; the wrap was "
                          "rolled back%s", why.c_str());
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

  void reclaim(Lane& l) { l.reclaim_through(published_.load(std::memory_order_acquire)); }

  // The frame's lane part is short of room: move the watermark as far as
  // the commits in flight allow and take the space back (never waits).
  static void room(void* self, Lane& l) {
    LocalEngine* eng = static_cast<LocalThread*>(self)->engine;
    eng->advance_watermark();
    eng->reclaim(l);
  }

  PoolFile* pool_;
  Medium* medium_;
  LoadTap load_;
  LaneSet* lanes_;
  Allocator* alloc_;
  uint32_t capacity_;
  size_t page_size_;
  uint64_t spill_bytes_;
  bool wcl_;  // write-combined logging (SW_CONFIG_WCL)
  // ... of word stores too, not only of ranges of a page or more
  // (ResolvedConfig::wcl_words): else the word paths run as without WCL.
  bool wcl_stores_;
  AliasFilter filter_;  // counts: how many open wraps alias something of a slot
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
