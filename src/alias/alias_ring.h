// alias_ring.h — the global alias tables, their five states, the wrap
// colour counters and the retirement thread (full paper, sections IV-A/B).
//
// Tables live in a ring indexed by generation.  In steady state two are in
// use, exactly the paper's double buffer: one Active, the other Full,
// Closed or Retired while it drains, and a switch happens (at a wrap close
// that finds the active table past its threshold) only when the other one
// is Empty again.  A wrap that outgrows the active table while the other is
// still draining gets a further table from the ring instead of failing
// (section IV-B's long-running wrap, handled without stopping the world);
// only when the whole ring is in use does it wait for retirement, and only
// for a bounded time, after which it fails with SW_ETOOBIG.  When commits
// stop (10 ms without one), the retirer switches a non-empty active table
// out too, so that a read-only phase reads home bytes (sw_peek) instead of
// overlaying the last writes for good.
//
// Colours: a wrap is tagged at open with (a, m) = (active generation, oldest
// generation not yet Retired).  With two tables these are the paper's four
// sets A_X R_Y, A_X R̄_Y, A_Y R_X, A_Y R̄_X.  Table t may go Full -> Closed
// when no open wrap has a = t (every wrap that could write into it has
// committed), and Retired -> Empty when no open wrap has m = t (no wrap can
// still be looking it up).  The paper counts each set in a shared counter;
// here each thread keeps its open wrap's colour in a slot of its own
// (WrapSlot, in the line of thread state every wrap touches anyway), and
// the retirer, which alone asks "does any open wrap have a = t?", reads
// every registered slot.  So opening and closing a wrap writes no line
// another thread writes (a shared counter was an atomic add on a line every
// thread's wraps contended for, and a line a wrap opening with cold caches
// missed).  Ordering: enter() stores the slot, then reads both generations
// again (all seq_cst); a switch or retirement changes a generation, then
// reads the slots (seq_cst).  In the single total order either the slot's
// store comes first, and the retirer sees the wrap, or the generation's
// store does, and the wrap's re-read sees it and tags itself again.
//
// Commit order: every committed wrap takes a sequence number.  At a switch
// the ring records the table's seq_boundary S: wraps with seq <= S stored
// only into that table or older ones.  After retiring the table (home
// lines written, flushed, fenced) the ring persists PoolMeta::retired_seq =
// S; recovery replays only frames above it, and lanes reuse the space of
// frames at or below it.
//
// Retirement in chunks, and commits that help (issue 24).  A Closed table
// goes home in phases (its page entries, then its word entries: a word
// entry shadows the page of its own table), each published as chunks of
// kChunk entries that any writer may claim with one CAS: the retirement
// thread, the extra retirement threads (SOFTWRAP_RETIRE_THREADS), wraps
// waiting at open for retirement (throttle: they write home instead of
// sleeping, then fence), and committing wraps when retirement is behind:
// when the table going home has more entries left unclaimed than the
// active table has room for before its next switch is due.  A committing
// wrap claims as many entries as it aliased itself, stores and flushes
// their home lines before its commit fence, which then makes them durable
// too (no fence of its own), and reports them done after it.  A phase ends when every chunk is done (each writer
// fenced its own); only then does the next phase start, or the table's
// retired_seq get persisted.  So the writers of one phase write distinct
// keys, a word written home by two phases or tables is written in their
// order, and the compare before writing (HomeWriter skip_unchanged) only
// ever sees bytes that another writer of the same table stored and will
// have fenced before the table counts as retired.
#ifndef SOFTWRAP_ALIAS_ALIAS_RING_H_
#define SOFTWRAP_ALIAS_ALIAS_RING_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "alias/alias_filter.h"
#include "alias/alias_table.h"
#include "alias/home_writer.h"
#include "common/counters.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {


struct WrapTag {
  uint64_t active;    // a
  uint64_t readable;  // m
};

// Where one thread's open wrap keeps its colour (see the top of this
// file): 0 while it has none, else the packed tag.  Owned by the thread's
// state, registered with the ring (AliasRing::add_slot) for as long as it
// may be used; written only by its thread, read by the retirer.
struct WrapSlot {
  std::atomic<uint64_t> word{0};
};

// A thread's copy of which table object is generation `gen`'s (kept in
// state the thread touches anyway, so that a wrap does not read the ring's
// slot array): the ring assigns a generation its table before publishing
// the generation and keeps it there until the table is recycled, which
// happens only after the generation stopped being active.  So a copy whose
// gen is the active generation just read is that generation's table.
struct TableCache {
  uint64_t gen = ~uint64_t{0};
  AliasTable* table = nullptr;
};

class AliasRing {
 public:
  // live: where the alias filter publishes its live word (the pool's
  // sw_pool_hot::live), or nullptr for a word of its own.
  AliasRing(const ResolvedConfig& cfg, PoolFile* pool, Medium* medium, uint32_t* live = nullptr,
            uint64_t* regions = nullptr);
  ~AliasRing();

  // ---- colours (lock-free: a store to the thread's own slot and a re-check)
  // A thread's slot joins the ring before its first enter() and leaves it
  // (remove_slot) only while it holds no colour.
  void add_slot(WrapSlot* s);
  void remove_slot(WrapSlot* s);
  WrapTag enter(WrapSlot& s) {
    for (;;) {
      const WrapTag t = colour_now();
      if (try_enter(s, t)) return t;
    }
  }
  void leave(WrapSlot& s, const WrapTag& tag) {
    s.word.store(0);
    // Wake the retirer only when this wrap may have been what it waits for
    // (seq_cst loads after the store: a switch the ring made before it read
    // this slot is seen here; a wake missed otherwise would only wait for
    // the retirer's 2 ms poll).
    if (tag.active != active_gen_.load() || tag.readable != readable_gen_.load()) wake();
  }
  // The colour slot s holds (REQUIRES: s holds one; its own thread).
  static WrapTag colour_of(const WrapSlot& s) { return unpack_colour(s.word.load(std::memory_order_relaxed)); }
  // enter()'s two steps, apart for the tests: the generations now, and
  // publishing them as the slot's colour, which holds only if neither
  // generation moved meanwhile (false: the slot holds a stale colour, which
  // keeps tables longer but never too short; tag again or leave).
  WrapTag colour_now() const { return {active_gen_.load(), readable_gen_.load()}; }
  bool try_enter(WrapSlot& s, const WrapTag& t) {
    s.word.store(pack_colour(t));
    return active_gen_.load() == t.active && readable_gen_.load() == t.readable;
  }

  // ---- tables, newest first: for (g = active_gen(); g + 1 > readable_gen() ...)
  uint64_t active_gen() const { return active_gen_.load(std::memory_order_seq_cst); }
  uint64_t readable_gen() const { return readable_gen_.load(std::memory_order_seq_cst); }
  AliasTable& table(uint64_t gen) { return *slots_[gen & (ring_ - 1)].load(std::memory_order_acquire); }
  // The same through a thread's copy (TableCache), for a generation read
  // from active_gen().
  AliasTable& table(uint64_t gen, TableCache& c) {
    if (c.gen != gen) [[unlikely]] {
      c.table = &table(gen);
      c.gen = gen;
    }
    return *c.table;
  }
  size_t page_size() const { return page_size_; }
  // Strict mode: tables keep base values and retirement checks home against
  // them before writing (a plain store there would be overwritten).
  bool strict() const { return strict_; }

  // Which lines may have a live alias (alias_filter.h): a writer raises
  // the slots of what it is about to alias in table generation g with
  // filter().raise_gen(off, n, g) before the alias becomes visible; the
  // ring clears them by retiring tables.
  AliasFilter& filter() { return filter_; }
  const AliasFilter& filter() const { return filter_; }

  // Word value visible to a reader (newest table first, then home).  The
  // caller is inside enter()/leave().
  uint64_t lookup_word(uint64_t word_off);
  // Bytes [off, off+n) of one shadow page as visible, from tables with
  // generation < below_gen (and home).  n and off within one page.
  void visible_bytes(uint64_t off, size_t n, uint64_t below_gen, unsigned char* out);
  // Whether any live table holds any byte of [off, off+n) (within one
  // shadow page): a spilled wrap writes in place only bytes none holds.
  bool holds_any(uint64_t off, size_t n);

  // ---- commit order
  uint64_t next_seq() { return seq_.fetch_add(1, std::memory_order_seq_cst) + 1; }
  uint64_t retired_seq() const { return retired_seq_.load(std::memory_order_acquire); }
  // Every wrap with seq <= home_seq() is home, beyond replay (retired_seq()
  // covers it) and in no table a lookup still reads (readable_gen() has
  // passed its tables): a block such a wrap freed may be written in place
  // (fresh blocks).  Published after readable_gen(), so it trails
  // retired_seq(), which retire() publishes before the table stops being
  // readable.
  uint64_t home_seq() const { return home_seq_.load(std::memory_order_acquire); }

  // ---- policy
  // After a commit: switch if the active table is past its threshold (or
  // `pressure`, a lane past a quarter full) and the other table is Empty.
  void after_commit(bool pressure, TableCache& c);
  void after_commit(bool pressure) {
    TableCache c;
    after_commit(pressure, c);
  }
  // A store found table `gen` at its hard limit.  Makes a new table active
  // if the ring has room; else waits (bounded) for one to be recycled.
  // Returns false when no progress is possible (the wrap must fail).
  bool make_room(uint64_t gen, const WrapTag& tag);
  // At wrap open: if the active table is far past its threshold (or the
  // opener's lane is filling: `pressure`) while the other is still
  // draining, wait (bounded) for the drain, then switch — before the wrap
  // takes its colour, so the frames in its lane never wait for it.
  void throttle(bool pressure, TableCache& c);
  void throttle(bool pressure) {
    TableCache c;
    throttle(pressure, c);
  }
  // Waits until retired_seq() >= seq, or until the deadline; asks for a
  // switch first.  False on timeout.
  bool wait_retired(uint64_t seq);
  // The same, retiring on the calling thread (as quiesce() does) instead of
  // handing the work to the retirement thread and sleeping: a committer
  // that must see its commit home before it goes on (Engine::publish)
  // pays the home writes, not two thread switches.
  bool retire_through(uint64_t seq);

  // ---- commits that help retire (see the top of this file)
  // What a committing wrap claimed: chunks of the phase being retired.
  struct Help {
    uint32_t chunks = 0;
    uint64_t entries = 0;
  };
  // Before a commit's fence: if retirement is behind, claims about
  // `entries` entries (at least one chunk) of the table going home, stores
  // and flushes their home lines.  The caller then fences and calls
  // help_done() — also when its commit failed.  Inline: one load and a
  // compare when there is nothing to help with.
  void help(Help* h, uint64_t entries) {
    if (help_ && phase_open_.load(std::memory_order_acquire) && unclaimed() != 0) help_slow(h, entries);
  }
  void help_done(Help* h) {
    if (h->chunks != 0) help_done_slow(h);
  }
  // Whether a table is going home with chunks left to claim (for the crash
  // simulator's control, HelpControl).
  bool helping() const { return job_.claim.load(std::memory_order_relaxed) != 0; }

  // REQUIRES: no open wraps.  Retires every table; afterwards home holds
  // every committed value and retired_seq() covers every commit.
  int quiesce();
  // Stops the retirement thread (after quiesce).
  void stop();
  // REQUIRES: quiesced, no open wraps.  Another handle raised the durable
  // watermark to `durable`: commits continue above it (Engine::resync).
  void resync(uint64_t durable);

  // The counters of the retirement threads.
  void add_stats(sw_stats* out) const;
  void reset_stats();

 private:
  static constexpr int kMaxRing = 64;
  static constexpr uint64_t kMaxEntries = uint64_t{1} << 30;
  static constexpr uint64_t kThrottleWaitNs = 100'000'000;
  // A slot's word: (a + 1) << 6 | (a - m); a - m < kMaxRing (live tables).
  static uint64_t pack_colour(const WrapTag& t) { return (t.active + 1) << 6 | (t.active - t.readable); }
  static WrapTag unpack_colour(uint64_t w) { return {(w >> 6) - 1, (w >> 6) - 1 - (w & 63)}; }
  static_assert(kMaxRing <= 64, "a slot keeps a - m in 6 bits");
  // Open wraps that may still write into table gen (a <= gen: a wrap stores
  // into the table active at each store, never an older one than its a) /
  // look it up (m <= gen).  Tables close and recycle in generation order,
  // so no wrap with a < gen (m < gen) is left when gen's turn comes: the
  // counts are those of a == gen (m == gen) of the paper.
  int64_t writers_of(uint64_t gen);
  int64_t readers_of(uint64_t gen);

  // A table is due for a switch at `threshold_` entries or when its
  // shadow pages hold more than shadow_budget_ bytes (x times either; 2 MiB
  // unless sw_config.shadow_budget_kib says otherwise): with big shadow
  // pages (a SQLite VFS uses 4 KiB) a table reaches its entry threshold
  // only after many megabytes of copies, which then compete with the
  // application for the CPU caches.
  bool past_shadow_budget(const AliasTable& t, unsigned x) const { return t.shadow_bytes() >= x * shadow_budget_; }
  bool past_threshold(const AliasTable& t, unsigned x) const {
    return t.count() >= x * threshold_ || past_shadow_budget(t, x);
  }
  bool try_switch_locked(bool overflow, bool wake_retirer = true);
  // Retirement in chunks.  job_.claim: total << 32 | next chunk of the
  // published phase (0: none).  A writer that claims chunks writes them,
  // fences (or lets its commit fence), then adds them to job_.done.
  static constexpr uint32_t kChunk = 8;
  struct alignas(64) Job {
    std::atomic<uint64_t> claim{0};
    std::atomic<uint32_t> done{0};
    std::atomic<AliasTable*> table{nullptr};
    std::atomic<bool> pages{false};
    std::atomic<uint32_t> entries{0};
  };
  bool claim(uint32_t want, uint32_t* first, uint32_t* k);
  void write_chunks(AliasTable& t, bool pages, uint32_t entries, uint32_t first, uint32_t k, HomeWriter& home);
  // Publishes one phase of t, writes chunks until none is left (at most
  // `budget` chunks when stepping inline: returns false with the phase
  // still open), fences and waits for the chunks others claimed.
  bool run_phase(AliasTable& t, bool pages, HomeWriter& home, uint32_t budget);
  void help_slow(Help* h, uint64_t entries);
  // A wrap waiting at open for retirement (throttle): claims chunks until
  // none is left, writes them, fences and reports them.
  void help_while_waiting();
  // Claims chunks of the published phase until none is left, writes them,
  // fences and reports them; returns the values written (extra retirement
  // threads, wraps waiting at open).  Not inlined: its HomeWriter's
  // vector-register stores must not straddle the caller's thread-local
  // reads (tests/api/tlsdesc_check.py).
  [[gnu::noinline]] uint64_t write_claimed();
  // Chunks of the published phase nobody has claimed yet.
  uint32_t unclaimed() const {
    const uint64_t c = job_.claim.load(std::memory_order_acquire);
    return static_cast<uint32_t>(c >> 32) - std::min(static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32));
  }
  // Values a writer wrote home for retirement.
  static void count_home(uint64_t n) {
    counters().home_writes.add(n);
    counters().retired_entries.add(n);
  }
  void help_done_slow(Help* h);
  void helper_main(Counters* mine);
  // Whether table gen (the active one) has anything to retire: entries, or
  // filter slots raised in its generation without one.
  bool has_aliases(uint64_t gen) { return table(gen).count() > 0 || filter_.newest_raise() > gen; }
  bool step_locked(std::unique_lock<std::mutex>& lk);
  // Writes t home (all its phases) and persists its seq_boundary.  When
  // `stepping` (inline, retire_stepwise_) it writes a seeded budget of
  // chunks and may return false with a phase still open: call again.
  bool retire(AliasTable& t, bool stepping);
  void check_home_unchanged(AliasTable& t);
  void persist_retired_seq(uint64_t s);
  void retirer_main();
  void wake();

  PoolFile* pool_;
  Medium* medium_;
  LoadTap load_;
  AliasFilter filter_;  // aligned to cache lines (alias_filter.h)
  uint32_t limit_;  // tables in use at most (sw_config.max_alias_tables)
  size_t page_size_;
  uint32_t base_capacity_;
  bool strict_;
  // slots_[gen % ring_] is the table of a live generation.  The table
  // objects themselves are owned by tables_ (freed with the ring: unpinned
  // readers of counts, in throttle and after_commit, may still hold one)
  // and reused newest-recycled first from spare_ (under mu_), so that in
  // steady state the same two tables — and their entries, filters and
  // shadow-page arenas — alternate and stay in the CPU caches, instead of
  // every slot of the ring taking its turn.
  std::vector<std::unique_ptr<AliasTable>> tables_;
  std::vector<AliasTable*> spare_;  // Empty tables, most recently recycled last

  // One cache line holds what every wrap reads of the ring (throttle,
  // enter, leave, after_commit, help, and the lanes' reclaim): the
  // generations and the retired watermark, which only switches and
  // retirement write (the retirer writes both at the end of a table), the
  // constants beside them, and whether a retirement phase is open (which
  // only a phase's start and end write), so that a wrap opening with cold
  // caches misses one line here, not six; the ring's constructor checks
  // that they fit.
  alignas(64) std::atomic<uint64_t> active_gen_{0};
  std::atomic<uint64_t> readable_gen_{0};
  std::atomic<uint64_t> oldest_gen_{0};  // oldest table not Empty
  uint32_t ring_;   // slots: limit_ rounded up to a power of two
  uint32_t threshold_;
  uint64_t shadow_budget_;
  std::unique_ptr<std::atomic<AliasTable*>[]> slots_;
  bool inline_retire_;
  bool help_;             // committing wraps help (not SW_CONFIG_NO_RETIRE_HELP)
  bool retire_stepwise_;  // inline: a few chunks per step (crash simulator)
  // A retirement phase is published (set after job_.claim, cleared before
  // it is reset): a commit reads the job's line only while one is.
  std::atomic<bool> phase_open_{false};
  std::atomic<uint64_t> retired_seq_{0};
  alignas(64) std::atomic<uint64_t> seq_{0};
  alignas(64) std::atomic<uint64_t> home_seq_{0};

  std::mutex mu_;  // switches, state transitions
  std::mutex wrap_slots_mu_;  // after mu_ where both are held
  std::vector<WrapSlot*> wrap_slots_;  // every thread's (add_slot)
  std::condition_variable cv_;      // retirer waits for work
  std::condition_variable done_cv_;  // waiters for progress
  std::atomic<bool> work_{false};
  std::atomic<bool> sleeping_{false};  // the retirer is (about to be) in cv_.wait
  static constexpr uint64_t kRetirerSpinNs = 50'000;
  static constexpr uint64_t kIdleSwitchNs = 10'000'000;  // no commit for 10 ms: retire the active table
  void idle_switch_locked(uint64_t* last_seq, uint64_t* since);
  bool stop_ = false;
  std::atomic<bool> retiring_{false};
  bool home_runs_late_;   // crash-simulator control (ResolvedConfig::home_runs_late)
  bool stepping_ = false;    // inline stepping: this step writes a budget of chunks (under mu_)
  uint32_t step_count_ = 0;  // inline stepping: steps so far (picks each step's budget)
  alignas(64) Job job_;
  // Retirement-only state (the retirer, or the inline caller, under retiring_).
  uint32_t phase_ = 0;  // 0: not started, 1: pages published, 2: words published
  std::vector<std::thread> helpers_;  // extra retirement threads
  std::vector<std::unique_ptr<Counters>> helper_counters_;  // one block each
  std::atomic<bool> stop_requested_{false};
  uint64_t retire_t0_ = 0;  // when the table being retired started
  std::atomic<uint64_t> phase_serial_{0};  // bumped at each publish (wakes helpers_)

  Counters retire_counters_;
  std::thread thread_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ALIAS_ALIAS_RING_H_
