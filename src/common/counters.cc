// counters.cc — summing per-thread counters into sw_stats; the
// removable-fence distance histograms.
#include "common/counters.h"

#include "common/clock.h"
#include "softwrap/softwrap.h"

namespace softwrap {

namespace {
thread_local Counters tls_scratch;
}  // namespace

thread_local constinit Counters* tls_counters = nullptr;

Counters* scratch_counters() { return &tls_scratch; }

unsigned gap_bucket(uint64_t d) {
  if (d < 8) return static_cast<unsigned>(d);
  const unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(d));  // 2^e <= d
  const unsigned b = 8 + (e - 3) * 4 + static_cast<unsigned>((d >> (e - 2)) & 3);
  return b < SW_GAP_BUCKETS ? b : SW_GAP_BUCKETS - 1;
}

uint64_t Counters::events() const {
  uint64_t n = loads.get() + stores.get() + streamed_lines.get() + flushes.get();
  for (const Counter& f : fences) n += f.get();
  return n;
}

void Counters::removable_fence_point() {
  const uint64_t t = cpu_ticks(), ev = events();
  const uint64_t lt = last_ticks.get(), le = last_events.get();
  if (lt != 0 && t >= lt && ev >= le) {
    gaps.add();
    gap_cycles[gap_bucket(t - lt)].add();
    gap_events[gap_bucket(ev - le)].add();
  }
  last_ticks.set(t == 0 ? 1 : t);
  last_events.set(ev);
}

void Counters::add_to(sw_stats* out) const {
  out->wraps += wraps.get();
  out->aborts += aborts.get();
  out->loads += loads.get();
  out->stores += stores.get();
  out->log_bytes += log_bytes.get();
  out->streamed_lines += streamed_lines.get();
  out->flushes += flushes.get();
  uint64_t total = 0;
  for (const Counter& f : fences) total += f.get();
  out->fences += total;
  out->fences_commit += fences[static_cast<int>(FenceKind::kCommit)].get();
  out->fences_log += fences[static_cast<int>(FenceKind::kLogOrder)].get();
  out->fences_retire += fences[static_cast<int>(FenceKind::kRetire)].get();
  out->fences_data += fences[static_cast<int>(FenceKind::kDataOrder)].get();
  out->fences_other += fences[static_cast<int>(FenceKind::kOther)].get();
  out->fences_elided += fences_elided.get();
  out->removable_gaps += gaps.get();
  for (unsigned b = 0; b < SW_GAP_BUCKETS; ++b) {
    out->removable_gap_cycles[b] += gap_cycles[b].get();
    out->removable_gap_events[b] += gap_events[b].get();
  }
  out->home_writes += home_writes.get();
  out->alias_hits += alias_hits.get();
  out->alias_misses += alias_misses.get();
  out->table_switches += table_switches.get();
  out->retire_ns += retire_ns.get();
  out->retired_entries += retired_entries.get();
  out->wcl_words_full += wcl_full.get();
  out->wcl_words_half += wcl_half.get();
  out->wcl_words_paired += wcl_paired.get();
  out->wcl_words_eliminated += wcl_eliminated.get();
  out->log_words_saved += log_words_saved.get();
  out->log_lines_saved += log_lines_saved.get();
  out->log_halfwords_allowed += wcl_allowed2.get();
  out->wcl_words_uncompared += wcl_uncompared.get();
  out->nvram_words += nvram_words.get();
  out->fresh_words += fresh_words.get();
  out->fresh_blocks += fresh_blocks.get();
  out->help_entries += help_entries.get();
  out->throttle_waits += throttle_waits.get();
  out->device_syncs += device_syncs.get();
  out->device_syncs_commit += device_syncs_commit.get();
  out->fences_shared += fences_shared.get();
  out->nvram_lines += streamed_lines.get() + flushes.get();
}

void Counters::reset() {
  for (Counter* c : {&wraps, &aborts, &loads, &stores, &log_bytes, &streamed_lines, &flushes,
                     &home_writes, &alias_hits, &alias_misses, &table_switches, &retire_ns,
                     &retired_entries, &wcl_full, &wcl_half, &wcl_paired, &wcl_eliminated, &log_words_saved,
                     &log_lines_saved, &wcl_allowed2, &wcl_uncompared, &nvram_words, &fences_elided, &gaps, &last_ticks, &last_events, &fresh_words,
                     &fresh_blocks, &help_entries, &throttle_waits, &device_syncs, &device_syncs_commit,
                     &fences_shared}) {
    c->reset();
  }
  for (Counter& f : fences) f.reset();
  for (unsigned b = 0; b < SW_GAP_BUCKETS; ++b) {
    gap_cycles[b].reset();
    gap_events[b].reset();
  }
}

}  // namespace softwrap
