// alias_ring.cc — table switches, state transitions and retirement.
//
// All transitions happen under mu_ in step_locked(), driven by the
// retirement thread (or inline, with SW_CONFIG_NO_RETIRE_THREAD, and by
// quiesce).  Only the copy of a Closed table to its home locations and the
// clearing of a Retired one run without the lock, guarded by retiring_ so
// that each happens once and never both at a time.
#include "alias/alias_ring.h"

#include <sched.h>

#include "alias/home_writer.h"

#include <algorithm>
#include <cstddef>
#include <bit>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/clock.h"
#include "common/error.h"
#include "common/relaxed_copy.h"
#include "medium/medium.h"
#include "medium/trace_label.h"

namespace softwrap {

AliasRing::AliasRing(const ResolvedConfig& cfg, PoolFile* pool, Medium* medium, uint32_t* live, uint64_t* regions)
    : pool_(pool),
      medium_(medium),
      load_(medium),
      filter_(pool->base(), pool->max_size(), cfg.filter_granule, live, regions),
      limit_(std::min<uint32_t>(std::max<uint32_t>(cfg.max_alias_tables, 2), kMaxRing)),
      page_size_(cfg.shadow_page_size),
      base_capacity_(cfg.alias_entries),
      strict_(cfg.flags & SW_CONFIG_STRICT),
      ring_(std::bit_ceil(limit_)),
      threshold_(std::max<uint32_t>(cfg.alias_entries / cfg.retire_divisor, 1)),
      shadow_budget_(uint64_t{cfg.shadow_budget_kib} << 10),
      slots_(new std::atomic<AliasTable*>[ring_]),
      inline_retire_(cfg.flags & SW_CONFIG_NO_RETIRE_THREAD),
      help_(!(cfg.flags & SW_CONFIG_NO_RETIRE_HELP)),
      retire_stepwise_(inline_retire_ && cfg.retire_stepwise),
      home_runs_late_(cfg.home_runs_late) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(offsetof(AliasRing, retired_seq_) + sizeof(retired_seq_) - offsetof(AliasRing, active_gen_) <= 64 &&
                    offsetof(AliasRing, active_gen_) % 64 == 0,
                "what every wrap reads of the ring lies on one line");
#pragma GCC diagnostic pop
  for (uint32_t i = 0; i < 2; ++i) tables_.push_back(std::make_unique<AliasTable>(cfg.alias_entries, page_size_, strict_));
  for (uint32_t i = 0; i < ring_; ++i) slots_[i].store(nullptr);
  slots_[0].store(tables_[0].get());
  spare_.push_back(tables_[1].get());
  const uint64_t s = pool_->meta()->retired_seq;
  seq_.store(s);
  retired_seq_.store(s);
  home_seq_.store(s);
  tables_[0]->gen = 0;
  tables_[0]->state.store(TableState::kActive);
  if (!inline_retire_) {
    thread_ = std::thread([this] { retirer_main(); });
    for (uint32_t i = 1; i < cfg.retire_threads; ++i) {
      helper_counters_.push_back(std::make_unique<Counters>());
      Counters* c = helper_counters_.back().get();
      helpers_.emplace_back([this, c] { helper_main(c); });
    }
  }
}

AliasRing::~AliasRing() { stop(); }

void AliasRing::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  stop_requested_.store(true);
  phase_serial_.fetch_add(1);
  phase_serial_.notify_all();
  for (std::thread& h : helpers_) h.join();
  helpers_.clear();
}

void AliasRing::add_slot(WrapSlot* s) {
  std::lock_guard<std::mutex> g(wrap_slots_mu_);
  wrap_slots_.push_back(s);
}

void AliasRing::remove_slot(WrapSlot* s) {
  std::lock_guard<std::mutex> g(wrap_slots_mu_);
  wrap_slots_.erase(std::remove(wrap_slots_.begin(), wrap_slots_.end(), s), wrap_slots_.end());
}

int64_t AliasRing::writers_of(uint64_t gen) {
  std::lock_guard<std::mutex> g(wrap_slots_mu_);
  int64_t n = 0;
  for (WrapSlot* s : wrap_slots_) {
    const uint64_t w = s->word.load();
    if (w != 0 && unpack_colour(w).active <= gen) ++n;
  }
  return n;
}

int64_t AliasRing::readers_of(uint64_t gen) {
  std::lock_guard<std::mutex> g(wrap_slots_mu_);
  int64_t n = 0;
  for (WrapSlot* s : wrap_slots_) {
    const uint64_t w = s->word.load();
    if (w != 0 && unpack_colour(w).readable <= gen) ++n;
  }
  return n;
}

void AliasRing::wake() {
  if (inline_retire_) return;
  work_.store(true);
  if (sleeping_.load()) cv_.notify_one();
}

uint64_t AliasRing::lookup_word(uint64_t w) {
  if (filter_.clear_word(w)) {  // nothing of w's line is aliased: home is newest
    counters().alias_misses.add();
    load_(pool_->at(w), 8);
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(pool_->at(w)), __ATOMIC_RELAXED);
  }
  const uint64_t a = active_gen_.load();
  const uint64_t r = readable_gen_.load();
  const uint64_t po = w & ~(uint64_t{page_size_} - 1);
  const uint64_t hint = AliasTable::page_hint(po);
  uint64_t v = 0;
  unsigned have = 0;  // bytes of v found so far (bit per byte)
  for (uint64_t g = a; g + 1 > r; --g) {
    AliasTable& t = table(g);
    if (t.may_hold(hint)) {
      if (t.may_hold_words(hint)) {
        if (AliasEntry* e = t.probe(w); e && (e->meta.load(std::memory_order_acquire) & kMetaValid)) {
          counters().alias_hits.add();
          const uint64_t x = e->value.load(std::memory_order_relaxed);
          if (have == 0) return x;
          for (unsigned b = 0; b < 8; ++b) {
            if (!((have >> b) & 1)) reinterpret_cast<char*>(&v)[b] = reinterpret_cast<const char*>(&x)[b];
          }
          return v;
        }
      }
      if (t.has_pages.load(std::memory_order_acquire)) {
        if (AliasEntry* e = t.probe(page_key(po)); e && (e->meta.load(std::memory_order_acquire) & kMetaValid)) {
          const char* page = reinterpret_cast<const char*>(e->value.load(std::memory_order_relaxed));
          const uint64_t mw = mask_word(page, page_size_, (w - po) / 64);
          const unsigned m = static_cast<unsigned>(mw >> ((w - po) % 64)) & 0xFF & ~have;
          if (m == 0xFF) {
            // The whole word is this page's (so have == 0): one aligned
            // 8-byte load, as a store wrote it (page_write), never bytes of
            // two stores a concurrent wrap made in between
            // (ConcurrencyTest.AWordRewrittenWholeIsNeverReadTorn).
            counters().alias_hits.add();
            return __atomic_load_n(reinterpret_cast<const uint64_t*>(page + (w - po)), __ATOMIC_RELAXED);
          }
          if (m) {  // bytes of a range that covered part of the word
            for (unsigned b = 0; b < 8; ++b) {
              if ((m >> b) & 1) {
                reinterpret_cast<char*>(&v)[b] = __atomic_load_n(page + (w - po) + b, __ATOMIC_RELAXED);
              }
            }
            have |= m;
            if (have == 0xFF) {
              counters().alias_hits.add();
              return v;
            }
          }
        }
      }
    }
    if (g == 0) break;
  }
  counters().alias_misses.add();
  load_(pool_->at(w), 8);
  const uint64_t home = __atomic_load_n(reinterpret_cast<const uint64_t*>(pool_->at(w)), __ATOMIC_RELAXED);
  if (have == 0) return home;
  for (unsigned b = 0; b < 8; ++b) {
    if (!((have >> b) & 1)) reinterpret_cast<char*>(&v)[b] = reinterpret_cast<const char*>(&home)[b];
  }
  return v;
}

void AliasRing::visible_bytes(uint64_t off, size_t n, uint64_t below_gen, unsigned char* out) {
  // Which tables to overlay is decided before home is read: a table retired
  // after this point is still overlaid (its values are the ones home got),
  // one retired before it has its values in the home bytes read below.
  const uint64_t r = readable_gen_.load();
  load_(pool_->at(off), n);
  if (filter_.clear(off, n)) {  // nothing of the range is aliased
    relaxed_copy(out, pool_->at(off), n);
    return;
  }
  relaxed_copy(out, pool_->at(off), n);
  const uint64_t hint = AliasTable::page_hint(off & ~(uint64_t{page_size_} - 1));
  for (uint64_t g = r; g < below_gen; ++g) {
    AliasTable& t = table(g);
    if (t.may_hold(hint)) overlay_table(t, off, n, page_size_, hint, out);
  }
}

bool AliasRing::holds_any(uint64_t off, size_t n) {
  if (filter_.clear(off, n)) return false;
  const uint64_t po = off & ~(uint64_t{page_size_} - 1);
  const uint64_t hint = AliasTable::page_hint(po);
  const uint64_t a = active_gen_.load(), r = readable_gen_.load();
  for (uint64_t g = a; g + 1 > r; --g) {
    AliasTable& t = table(g);
    if (t.may_hold(hint)) {
      if (t.may_hold_words(hint)) {
        for (uint64_t w = off & ~uint64_t{7}; w < off + n; w += 8) {
          if (AliasEntry* e = t.probe(w); e && (e->meta.load(std::memory_order_acquire) & kMetaValid)) return true;
        }
      }
      if (t.has_pages.load(std::memory_order_acquire)) {
        if (AliasEntry* e = t.probe(page_key(po)); e && (e->meta.load(std::memory_order_acquire) & kMetaValid)) {
          const char* page = reinterpret_cast<const char*>(e->value.load(std::memory_order_relaxed));
          const size_t lo = off - po, hi = lo + n;
          for (size_t c = lo / 64; c * 64 < hi; ++c) {
            if (mask_word(page, page_size_, c) & chunk_bits(c, lo, hi)) return true;
          }
        }
      }
    }
    if (g == 0) break;
  }
  return false;
}

bool AliasRing::try_switch_locked(bool overflow, bool wake_retirer) {
  const uint64_t a = active_gen_.load(), o = oldest_gen_.load();
  const uint64_t live = a - o + 1;
  if (!overflow && live > 1) return false;
  if (live >= limit_) return false;
  const uint64_t ng = a + 1;
  // A table made for a wrap that outgrew the active one is twice its size.
  const uint32_t want = overflow && live > 1 ? std::min<uint64_t>(uint64_t{table(a).capacity()} * 2, kMaxEntries)
                                             : base_capacity_;
  // The most recently recycled spare table of the right size, else a new one.
  AliasTable* pick = nullptr;
  for (size_t i = spare_.size(); i-- > 0;) {
    if (spare_[i]->capacity() == want) {
      pick = spare_[i];
      spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (!pick) {
    tables_.push_back(std::make_unique<AliasTable>(want, page_size_, strict_));
    pick = tables_.back().get();
  }
  slots_[ng % ring_].store(pick, std::memory_order_release);
  AliasTable& next = *pick;
  next.gen = ng;
  next.state.store(TableState::kActive);
  AliasTable& cur = table(a);
  // Every wrap that took a sequence number up to here has finished storing;
  // wraps taking one later may still store into the new table.
  cur.seq_boundary = seq_.load();
  cur.state.store(TableState::kFull);
  active_gen_.store(ng);
  counters().table_switches.add();
  if (wake_retirer) wake();
  return true;
}

void AliasRing::after_commit(bool pressure, TableCache& c) {
  const uint64_t a = active_gen_.load();
  if (retire_stepwise_ && oldest_gen_.load() != a) {
    // Inline stepping: a few more chunks of the table going home.
    std::unique_lock<std::mutex> lk(mu_);
    stepping_ = true;
    while (step_locked(lk)) {
    }
    stepping_ = false;
  }
  if (!pressure && !past_threshold(table(a, c), 1)) return;
  if (oldest_gen_.load() != a) return;  // other table still draining
  // A commit does not wait for the lock: if the retirer (or another
  // committer) holds it, a later commit switches.  The active table has
  // room up to its hard limit, and throttle() stops wraps well before it.
  std::unique_lock<std::mutex> lk(mu_, std::defer_lock);
  if (inline_retire_) {
    lk.lock();
  } else if (!lk.try_lock()) {
    return;
  }
  try_switch_locked(false);
  if (inline_retire_) {
    stepping_ = retire_stepwise_;
    while (step_locked(lk)) {
    }
    stepping_ = false;
  }
}

bool AliasRing::make_room(uint64_t gen, const WrapTag& tag) {
  const uint64_t deadline = now_ns() + kRoomWaitNs;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (active_gen_.load() != gen) return true;
    if (try_switch_locked(true)) return true;
    // The ring is full.  Only tables older than the ones this wrap may read
    // can be recycled without it; if there are none, waiting cannot help.
    if (oldest_gen_.load() >= tag.readable) return false;
    if (inline_retire_) {
      if (!step_locked(lk)) return false;
      continue;
    }
    wake();
    done_cv_.wait_until(lk, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline)));
    if (now_ns() >= deadline) return active_gen_.load() != gen || try_switch_locked(true);
  }
}

void AliasRing::throttle(bool pressure, TableCache& c) {
  const uint64_t a = active_gen_.load();
  AliasTable& t = table(a, c);
  if (!pressure && !past_threshold(t, 3) && t.count() < t.hard_limit() / 2) return;
  if (pressure && oldest_gen_.load() == a && t.count() == 0) return;  // nothing to switch away from
  // The active table is well past its threshold but the other one is still
  // draining: wait for it (as the paper's wrapOpen does), but not forever —
  // the extra tables of the ring absorb what a stalled retirement leaves.
  const uint64_t deadline = now_ns() + kThrottleWaitNs;
  std::unique_lock<std::mutex> lk(mu_);
  if (oldest_gen_.load() != active_gen_.load()) counters().throttle_waits.add();
  while (oldest_gen_.load() != active_gen_.load()) {
    if (inline_retire_) {
      if (!step_locked(lk)) break;
      continue;
    }
    if (help_ && unclaimed()) {  // write home beside the retirer instead of sleeping
      lk.unlock();
      help_while_waiting();
      lk.lock();
      continue;
    }
    wake();
    done_cv_.wait_until(lk, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline)));
    if (now_ns() >= deadline) break;
  }
  if (pressure || past_threshold(table(active_gen_.load()), 1)) try_switch_locked(false);
}

bool AliasRing::wait_retired(uint64_t seq) {
  const uint64_t deadline = now_ns() + kRoomWaitNs;
  std::unique_lock<std::mutex> lk(mu_);
  while (retired_seq_.load() < seq) {
    // The frame is in the active table: it needs a switch first.
    if (seq > table(active_gen_.load()).seq_boundary && table(active_gen_.load()).state.load() == TableState::kActive) {
      try_switch_locked(false);
    }
    if (inline_retire_) {
      if (!step_locked(lk)) return retired_seq_.load() >= seq;
      continue;
    }
    wake();
    done_cv_.wait_until(lk, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline)));
    if (now_ns() >= deadline) return retired_seq_.load() >= seq;
  }
  return true;
}

bool AliasRing::retire_through(uint64_t seq) {
  const uint64_t deadline = now_ns() + kRoomWaitNs;
  std::unique_lock<std::mutex> lk(mu_);
  while (retired_seq_.load() < seq) {
    // The frame is in the active table: it needs a switch first, which
    // waits for the other table to drain (no new table: the ring grows
    // only for wraps that outgrow one).
    if (seq > table(active_gen_.load()).seq_boundary && table(active_gen_.load()).state.load() == TableState::kActive &&
        try_switch_locked(false, false)) {
      continue;
    }
    if (step_locked(lk)) continue;
    // Another thread retires, or a wrap still open keeps the table: wait.
    if (now_ns() >= deadline) return retired_seq_.load() >= seq;
    done_cv_.wait_for(lk, std::chrono::milliseconds(1));
  }
  return true;
}

bool AliasRing::step_locked(std::unique_lock<std::mutex>& lk) {
  const uint64_t a = active_gen_.load();
  const uint64_t g = readable_gen_.load();
  if (g < a && !retiring_.load()) {
    AliasTable& t = table(g);
    const TableState s = t.state.load();
    if (s == TableState::kFull && writers_of(g) == 0) {
      t.state.store(TableState::kClosed);
      return true;
    }
    if (s == TableState::kClosed) {
      retiring_.store(true);
      const bool stepping = stepping_;
      lk.unlock();
      const bool done = retire(t, stepping);
      lk.lock();
      if (!done) {  // inline stepping: the rest at the next step
        retiring_.store(false);
        return false;
      }
      t.state.store(TableState::kRetired);
      readable_gen_.store(g + 1);
      filter_.publish_oldest(g + 1);  // after the home writes of g and older (retire() fenced them)
      if (t.seq_boundary > home_seq_.load()) home_seq_.store(t.seq_boundary, std::memory_order_release);
      retiring_.store(false);
      done_cv_.notify_all();
      return true;
    }
  }
  const uint64_t o = oldest_gen_.load();
  if (o < readable_gen_.load() && readers_of(o) == 0 && !retiring_.load()) {
    // Nobody can reach a Retired table without readers: clear it without
    // the lock (it may take a while for a big table), like retire().
    AliasTable& t = table(o);
    retiring_.store(true);
    lk.unlock();
    t.clear();
    lk.lock();
    t.state.store(TableState::kEmpty);
    spare_.push_back(&t);
    oldest_gen_.store(o + 1);
    retiring_.store(false);
    done_cv_.notify_all();
    return true;
  }
  return false;
}

// Strict mode: before a table goes home, every byte it is about to write
// must still hold, at home, the value it had when the table aliased it
// (older tables are home by now, and retirement is home's only writer).
// A difference is a plain store that retirement would overwrite.
void AliasRing::check_home_unchanged(AliasTable& t) {
  auto report = [&](uint64_t off, uint64_t was, uint64_t home) {
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "pool memory at offset 0x%llx (address %p) was changed by a plain store (not sw_store/"
                  "sw_write) while a wrap's value for it was waiting to be retired: it held 0x%llx when the "
                  "wrap aliased it and holds 0x%llx now, and retirement would overwrite it with the wrapped "
                  "value.  Write pool memory only with sw_store*/sw_write/sw_memset (see softwrap.h)",
                  static_cast<unsigned long long>(off), static_cast<void*>(pool_->at(off)),
                  static_cast<unsigned long long>(was), static_cast<unsigned long long>(home));
    strict_abort(msg);
  };
  t.for_each([&](AliasEntry& e) {
    if (!(e.meta.load(std::memory_order_acquire) & kMetaValid)) return;
    const uint64_t k = e.key.load(std::memory_order_relaxed);
    if (k & 1) {
      char* page = reinterpret_cast<char*>(e.value.load(std::memory_order_relaxed));
      const char* base = t.page_base(page);
      const uint64_t po = k & ~uint64_t{1};
      page_dirty_runs(page, page_size_, [&](size_t off, size_t len) {
        const auto* home = reinterpret_cast<const unsigned char*>(pool_->at(po + off));
        for (size_t i = 0; i < len; ++i) {
          const unsigned char h = __atomic_load_n(home + i, __ATOMIC_RELAXED);
          if (h != static_cast<unsigned char>(base[off + i])) {
            report(po + off + i, static_cast<unsigned char>(base[off + i]), h);
          }
        }
      });
    } else {
      const uint64_t h = __atomic_load_n(reinterpret_cast<const uint64_t*>(pool_->at(k)), __ATOMIC_RELAXED);
      if (h != t.word_base(&e)) report(k, t.word_base(&e), h);
    }
  });
}

bool AliasRing::claim(uint32_t want, uint32_t* first, uint32_t* k) {
  uint64_t c = job_.claim.load(std::memory_order_acquire);
  for (;;) {
    const auto total = static_cast<uint32_t>(c >> 32), next = static_cast<uint32_t>(c);
    if (next >= total) return false;
    const uint32_t take = std::min(want, total - next);
    // Success means chunks [next, next + take) of the phase published now
    // are this writer's, whichever phase it is (the words read before the
    // CAS are never trusted: the job's fields are read after it).
    if (job_.claim.compare_exchange_weak(c, c + take, std::memory_order_acq_rel, std::memory_order_acquire)) {
      *first = next;
      *k = take;
      return true;
    }
  }
}

// Home locations are scattered, and comparing before writing makes each a
// load that must complete before the store is decided, so the home of an
// entry a few places ahead is prefetched (for writing): the misses overlap
// instead of queuing one behind another.  Entries [first, first + k) chunks
// of the table's insertion order, of one kind (pages or words).
void AliasRing::write_chunks(AliasTable& t, bool pages, uint32_t entries, uint32_t first, uint32_t k,
                             HomeWriter& home) {
  const uint32_t lo = first * kChunk, hi = std::min<uint64_t>(uint64_t{first + k} * kChunk, entries);
  const uint32_t ahead = pages ? 4 : 16;  // a page writes several runs: less distance
  for (uint32_t i = lo; i < hi; ++i) {
    if (i + ahead < hi) {
      const uint64_t key = t.inserted(i + ahead).key.load(std::memory_order_relaxed);
      if (((key & 1) != 0) == pages) __builtin_prefetch(pool_->at(key & ~uint64_t{1}), 1);
    }
    AliasEntry& e = t.inserted(i);
    const uint64_t key = e.key.load(std::memory_order_relaxed);
    if (((key & 1) != 0) != pages || !(e.meta.load(std::memory_order_acquire) & kMetaValid)) continue;
    const uint64_t v = e.value.load(std::memory_order_relaxed);
    if (pages) {
      const uint64_t po = key & ~uint64_t{1};
      const char* page = reinterpret_cast<const char*>(v);
      page_dirty_runs(page, page_size_, [&](size_t off, size_t len) { home.bytes(po + off, page + off, len); });
    } else {
      home.word(key, v);
    }
  }
}

bool AliasRing::run_phase(AliasTable& t, bool pages, HomeWriter& home, uint32_t budget) {
  const uint32_t entries = t.count();
  const uint32_t total = (entries + kChunk - 1) / kChunk;
  if (phase_ != (pages ? 1u : 2u)) {  // publish the phase
    phase_ = pages ? 1 : 2;
    job_.table.store(&t, std::memory_order_relaxed);
    job_.pages.store(pages, std::memory_order_relaxed);
    job_.entries.store(entries, std::memory_order_relaxed);
    job_.done.store(0, std::memory_order_relaxed);
    job_.claim.store(uint64_t{total} << 32, std::memory_order_release);
    phase_open_.store(true, std::memory_order_release);
    done_cv_.notify_all();  // wraps waiting at open (throttle) help
    if (!helpers_.empty()) {
      phase_serial_.fetch_add(1, std::memory_order_release);
      phase_serial_.notify_all();
    }
  }
  uint32_t mine = 0, first, k;
  // The retirer claims a few chunks at a time and flushes them before it
  // claims more: the flushes are what takes time on a slow medium (a full
  // device queue waits), so the chunks not yet claimed are the work still
  // to do, which a helping commit can take.
  uint64_t n = 0;
  while (budget > 0 && claim(std::min<uint32_t>(budget, 4), &first, &k)) {
    write_chunks(t, pages, entries, first, k, home);
    n += home.finish();
    mine += k;
    budget -= k;
  }
  if (mine != 0) {
    count_home(n);
    medium_->fence(FenceKind::kRetire);
    job_.done.fetch_add(mine, std::memory_order_release);
  }
  if (static_cast<uint32_t>(job_.claim.load(std::memory_order_acquire)) < total) return false;  // stepping
  // Every chunk is claimed; wait for the writers that have not reported
  // (a committing wrap between its home writes and its fence, an extra
  // retirement thread), then close the phase.
  for (unsigned spins = 0; job_.done.load(std::memory_order_acquire) < total; ++spins) {
    if (spins < 64) {
      __builtin_ia32_pause();
    } else {
      sched_yield();
    }
  }
  phase_open_.store(false, std::memory_order_relaxed);
  job_.claim.store(0, std::memory_order_relaxed);
  return true;
}

bool AliasRing::retire(AliasTable& t, bool stepping) {
  CountersScope scope(&retire_counters_);
  SW_TRACE_LABEL("retire:home");
  if (phase_ == 0) {
    if (strict_) check_home_unchanged(t);
    retire_t0_ = now_ns();
  }
  // Inline stepping (crash simulator): a seeded budget of chunks per step,
  // so that commits between the steps claim the others.
  uint32_t budget = ~uint32_t{0};
  if (stepping) budget = static_cast<uint32_t>((++step_count_ * 0x9E3779B97F4A7C15ull) >> 61);  // 0..7
  HomeWriter home(pool_, medium_, /*skip_unchanged=*/true, home_runs_late_);  // home's writers never write one key twice
  if (phase_ < 2 && t.has_pages.load(std::memory_order_acquire) && !run_phase(t, true, home, budget)) return false;
  if (!run_phase(t, false, home, budget)) return false;
  phase_ = 0;
  persist_retired_seq(t.seq_boundary);
  counters().retire_ns.add(now_ns() - retire_t0_);
  return true;
}

void AliasRing::help_slow(Help* h, uint64_t entries) {
  // Behind: the table going home has more entries left unclaimed than the
  // active table has room for before its next switch is due — at one
  // entry written home per entry aliased, retirement would not be done by
  // then.
  const uint64_t left = uint64_t{unclaimed()} * kChunk;
  const AliasTable& act = table(active_gen_.load(std::memory_order_relaxed));
  const uint64_t room = past_shadow_budget(act, 1) ? 0 : threshold_ - std::min<uint64_t>(threshold_, act.count());
  // (The crash simulator's stepping helps whenever it can.)
  if (left <= room && !retire_stepwise_) return;
  const uint32_t want = static_cast<uint32_t>(std::min<uint64_t>((entries + kChunk - 1) / kChunk, 1u << 20));
  uint32_t first, k;
  if (!claim(std::max<uint32_t>(want, 1), &first, &k)) return;
  SW_TRACE_LABEL("help:home");
  AliasTable& t = *job_.table.load(std::memory_order_relaxed);
  HomeWriter home(pool_, medium_, /*skip_unchanged=*/true, home_runs_late_);
  write_chunks(t, job_.pages.load(std::memory_order_relaxed), job_.entries.load(std::memory_order_relaxed), first,
               k, home);
  h->entries = home.finish();
  h->chunks = k;
}

uint64_t AliasRing::write_claimed() {
  HomeWriter home(pool_, medium_, /*skip_unchanged=*/true, home_runs_late_);
  uint32_t first, k, mine = 0;
  uint64_t n = 0;
  // The phase cannot end (nor the next start) before this thread reports
  // the chunks it claimed, so every claim of the loop is of one phase.
  while (claim(2, &first, &k)) {
    write_chunks(*job_.table.load(std::memory_order_relaxed), job_.pages.load(std::memory_order_relaxed),
                 job_.entries.load(std::memory_order_relaxed), first, k, home);
    n += home.finish();
    mine += k;
  }
  if (mine == 0) return 0;
  count_home(n);
  medium_->fence(FenceKind::kRetire);
  job_.done.fetch_add(mine, std::memory_order_release);
  return n;
}

void AliasRing::help_while_waiting() {
  SW_TRACE_LABEL("help:home");
  counters().help_entries.add(write_claimed());
}

void AliasRing::help_done_slow(Help* h) {
  job_.done.fetch_add(h->chunks, std::memory_order_release);
  count_home(h->entries);
  counters().help_entries.add(h->entries);
  h->chunks = 0;
  h->entries = 0;
}

// An extra retirement thread: claims chunks of each phase the retirer
// publishes, beside it.
void AliasRing::helper_main(Counters* mine_counters) {
  uint64_t seen = 0;
  CountersScope scope(mine_counters);
  for (;;) {
    phase_serial_.wait(seen, std::memory_order_acquire);
    seen = phase_serial_.load(std::memory_order_acquire);
    if (stop_requested_.load(std::memory_order_acquire)) return;
    write_claimed();
  }
}

void AliasRing::persist_retired_seq(uint64_t s) {
  if (s <= retired_seq_.load()) return;
  SW_TRACE_LABEL("truncate:watermark");
  uint64_t* w = &pool_->meta()->retired_seq;
  medium_->store(w, s, 8);
  medium_->flush(w, 8);
  medium_->fence(FenceKind::kRetire);
  retired_seq_.store(s, std::memory_order_release);
}

void AliasRing::retirer_main() {
  std::unique_lock<std::mutex> lk(mu_);
  uint64_t idle_seq = ~uint64_t{0}, idle_since = 0;
  while (!stop_) {
    idle_switch_locked(&idle_seq, &idle_since);
    if (!work_.exchange(false)) {
      // Poll a little before sleeping: a switch usually follows soon, and
      // waking a sleeping thread costs the committing thread a futex call.
      // Polling yields the core, so on a machine with more runnable
      // threads than cores it takes no time from the wrapping threads.
      lk.unlock();
      const uint64_t until = now_ns() + kRetirerSpinNs;
      while (!work_.load(std::memory_order_acquire) && now_ns() < until) sched_yield();
      lk.lock();
      if (!work_.exchange(false)) {
        sleeping_.store(true);
        if (!work_.exchange(false)) cv_.wait_for(lk, std::chrono::milliseconds(2));
        sleeping_.store(false);
      }
    }
    while (!stop_ && step_locked(lk)) {
    }
  }
}

// After kIdleSwitchNs without a commit, a non-empty active table whose
// predecessors are all recycled is switched out (and so retired by the
// steps that follow): in a read-only phase the tables would otherwise keep
// the last writes aliased for good, and every read of those bytes would
// pay the overlay (sw_peek would copy) until the next writes fill the
// table.  Commits reset the clock, so write-heavy phases never see it.
void AliasRing::idle_switch_locked(uint64_t* last_seq, uint64_t* since) {
  const uint64_t s = seq_.load(std::memory_order_relaxed), now = now_ns();
  if (s != *last_seq) {
    *last_seq = s;
    *since = now;
    return;
  }
  const uint64_t a = active_gen_.load();
  if (now - *since < kIdleSwitchNs || oldest_gen_.load() != a || !has_aliases(a)) return;
  if (try_switch_locked(false)) work_.store(true);
  *since = now;
}

void AliasRing::add_stats(sw_stats* out) const {
  retire_counters_.add_to(out);
  for (const auto& c : helper_counters_) c->add_to(out);
}

void AliasRing::reset_stats() {
  retire_counters_.reset();
  for (const auto& c : helper_counters_) c->reset();
}

void AliasRing::resync(uint64_t durable) {
  std::lock_guard<std::mutex> lk(mu_);
  if (durable <= seq_.load()) return;
  seq_.store(durable);
  retired_seq_.store(durable, std::memory_order_release);
  home_seq_.store(durable, std::memory_order_release);
}

int AliasRing::quiesce() {
  std::unique_lock<std::mutex> lk(mu_);
  if (has_aliases(active_gen_.load())) {
    // The caller retires the tables itself (below): waking the retirer
    // would only have it contend for mu_ (a futex call per quiesce; a
    // shared pool quiesces at every give-up).
    while (!try_switch_locked(true, false)) {
      if (!step_locked(lk)) done_cv_.wait_for(lk, std::chrono::milliseconds(1));
    }
  }
  while (oldest_gen_.load() < active_gen_.load()) {
    if (!step_locked(lk)) done_cv_.wait_for(lk, std::chrono::milliseconds(1));
  }
  // Nothing is aliased now: every committed frame is home.
  persist_retired_seq(seq_.load());
  if (retired_seq_.load() > home_seq_.load()) home_seq_.store(retired_seq_.load(), std::memory_order_release);
  return 0;
}

}  // namespace softwrap
