// counters.cc — summing per-thread counters into sw_stats.
#include "common/counters.h"

#include "softwrap/softwrap.h"

namespace softwrap {

namespace {
thread_local Counters tls_scratch;
}  // namespace

thread_local constinit Counters* tls_counters = nullptr;

Counters* scratch_counters() { return &tls_scratch; }

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
  out->nvram_words += nvram_words.get();
  out->nvram_lines += streamed_lines.get() + flushes.get();
}

void Counters::reset() {
  for (Counter* c : {&wraps, &aborts, &loads, &stores, &log_bytes, &streamed_lines, &flushes,
                     &home_writes, &alias_hits, &alias_misses, &table_switches, &retire_ns,
                     &retired_entries, &wcl_full, &wcl_half, &wcl_paired, &wcl_eliminated, &log_words_saved,
                     &log_lines_saved, &nvram_words}) {
    c->reset();
  }
  for (Counter& f : fences) f.reset();
}

}  // namespace softwrap
