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
// still be looking it up).
//
// Commit order: every committed wrap takes a sequence number.  At a switch
// the ring records the table's seq_boundary S: wraps with seq <= S stored
// only into that table or older ones.  After retiring the table (home
// lines written, flushed, fenced) the ring persists PoolMeta::retired_seq =
// S; recovery replays only frames above it, and lanes reuse the space of
// frames at or below it.
#ifndef SOFTWRAP_ALIAS_ALIAS_RING_H_
#define SOFTWRAP_ALIAS_ALIAS_RING_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "alias/alias_filter.h"
#include "alias/alias_table.h"
#include "common/counters.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {


struct WrapTag {
  uint64_t active;    // a
  uint64_t readable;  // m
};

class AliasRing {
 public:
  // live: where the alias filter publishes its live word (the pool's
  // sw_pool_hot::live), or nullptr for a word of its own.
  AliasRing(const ResolvedConfig& cfg, PoolFile* pool, Medium* medium, uint32_t* live = nullptr);
  ~AliasRing();

  // ---- colours (lock-free: one fetch_add and a re-check)
  WrapTag enter();
  void leave(const WrapTag& tag);

  // ---- tables, newest first: for (g = active_gen(); g + 1 > readable_gen() ...)
  uint64_t active_gen() const { return active_gen_.load(std::memory_order_seq_cst); }
  uint64_t readable_gen() const { return readable_gen_.load(std::memory_order_seq_cst); }
  AliasTable& table(uint64_t gen) { return *slots_[gen & (ring_ - 1)].load(std::memory_order_acquire); }
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
  void after_commit(bool pressure);
  // A store found table `gen` at its hard limit.  Makes a new table active
  // if the ring has room; else waits (bounded) for one to be recycled.
  // Returns false when no progress is possible (the wrap must fail).
  bool make_room(uint64_t gen, const WrapTag& tag);
  // At wrap open: if the active table is far past its threshold (or the
  // opener's lane is filling: `pressure`) while the other is still
  // draining, wait (bounded) for the drain, then switch — before the wrap
  // takes its colour, so the frames in its lane never wait for it.
  void throttle(bool pressure);
  // Waits until retired_seq() >= seq, or until the deadline; asks for a
  // switch first.  False on timeout.
  bool wait_retired(uint64_t seq);

  // REQUIRES: no open wraps.  Retires every table; afterwards home holds
  // every committed value and retired_seq() covers every commit.
  int quiesce();
  // Stops the retirement thread (after quiesce).
  void stop();

  Counters& retire_counters() { return retire_counters_; }

 private:
  static constexpr int kMaxRing = 64;
  static constexpr uint64_t kMaxEntries = uint64_t{1} << 30;
  static constexpr uint64_t kThrottleWaitNs = 100'000'000;
  struct alignas(64) Colour {
    std::atomic<int64_t> n{0};
  };
  Colour& colour(uint64_t a, uint64_t m) { return colours_[(a & (ring_ - 1)) * ring_ + (m & (ring_ - 1))]; }
  int64_t writers_of(uint64_t gen);  // open wraps with a == gen
  int64_t readers_of(uint64_t gen);  // open wraps with m == gen

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
  bool try_switch_locked(bool overflow);
  // Whether table gen (the active one) has anything to retire: entries, or
  // filter slots raised in its generation without one.
  bool has_aliases(uint64_t gen) { return table(gen).count() > 0 || filter_.newest_raise() > gen; }
  bool step_locked(std::unique_lock<std::mutex>& lk);
  void retire(AliasTable& t);
  void check_home_unchanged(AliasTable& t);
  void persist_retired_seq(uint64_t s);
  void retirer_main();
  void wake();

  PoolFile* pool_;
  Medium* medium_;
  LoadTap load_;
  AliasFilter filter_;  // aligned to cache lines (alias_filter.h)
  uint32_t limit_;  // tables in use at most (sw_config.max_alias_tables)
  uint32_t ring_;   // slots: limit_ rounded up to a power of two
  uint32_t threshold_;
  size_t page_size_;
  uint64_t shadow_budget_;
  uint32_t base_capacity_;
  bool inline_retire_;
  bool strict_;
  // slots_[gen % ring_] is the table of a live generation.  The table
  // objects themselves are owned by tables_ (freed with the ring: unpinned
  // readers of counts, in throttle and after_commit, may still hold one)
  // and reused newest-recycled first from spare_ (under mu_), so that in
  // steady state the same two tables — and their entries, filters and
  // shadow-page arenas — alternate and stay in the CPU caches, instead of
  // every slot of the ring taking its turn.
  std::unique_ptr<std::atomic<AliasTable*>[]> slots_;
  std::vector<std::unique_ptr<AliasTable>> tables_;
  std::vector<AliasTable*> spare_;  // Empty tables, most recently recycled last
  std::unique_ptr<Colour[]> colours_;

  alignas(64) std::atomic<uint64_t> active_gen_{0};
  std::atomic<uint64_t> readable_gen_{0};
  std::atomic<uint64_t> oldest_gen_{0};  // oldest table not Empty
  alignas(64) std::atomic<uint64_t> seq_{0};
  alignas(64) std::atomic<uint64_t> retired_seq_{0};
  std::atomic<uint64_t> home_seq_{0};

  std::mutex mu_;  // switches, state transitions
  std::condition_variable cv_;      // retirer waits for work
  std::condition_variable done_cv_;  // waiters for progress
  std::atomic<bool> work_{false};
  std::atomic<bool> sleeping_{false};  // the retirer is (about to be) in cv_.wait
  static constexpr uint64_t kRetirerSpinNs = 50'000;
  static constexpr uint64_t kIdleSwitchNs = 10'000'000;  // no commit for 10 ms: retire the active table
  void idle_switch_locked(uint64_t* last_seq, uint64_t* since);
  bool stop_ = false;
  std::atomic<bool> retiring_{false};
  Counters retire_counters_;
  std::thread thread_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ALIAS_ALIAS_RING_H_
