// home_writer.h — copying aliased values to their home locations.
//
// Retirement (global tables) and the local engine's close both end the same
// way: many words and page runs to write home, each line to be flushed once,
// one fence.  Stores go first and flushes after, so flushing a line once
// covers every store to it whatever the order of the entries; a small
// direct-mapped filter drops most repeated flushes of one line (a repeat is
// harmless, only slower), so no sort is needed.  Retirement may compare
// first and skip what home already holds: a page rewritten with mostly the
// same bytes (a SQLite page, a B+tree node whose tail moved) then costs
// only the lines that changed.
//
// On a medium that asks for it (home_runs: msync, whose pages persist by
// write back; the trace medium under the page-cache model) a comparing writer
// keeps what differs until finish() and writes it then as runs of
// contiguous bytes, sorted, each with one write_through() (pwrite there):
// home pages are then never stored to through the mapping, so their write
// back needs no write-protect and the next retirement's writes no fault.
// Nothing reads a value between word() and finish() but this writer's own
// comparisons, and a writer's values never overlap (one phase's entries
// are distinct words, or distinct pages), so their order does not matter.
#ifndef SOFTWRAP_ALIAS_HOME_WRITER_H_
#define SOFTWRAP_ALIAS_HOME_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace softwrap {

class Medium;
class PoolFile;

class HomeWriter {
 public:
  // skip_unchanged: compare before writing and leave alone (no store, no
  // flush) every line segment whose home bytes already equal the value.
  // Only for a writer that is the sole writer of home (global retirement):
  // bytes another thread stored but has not yet flushed could compare
  // equal without being durable.
  // late: the crash simulator's broken variant (ResolvedConfig::
  // home_runs_late): kept runs are written when the writer is destroyed,
  // after the caller's fence, instead of at finish().
  HomeWriter(PoolFile* pool, Medium* medium, bool skip_unchanged = false, bool late = false);
  ~HomeWriter();
  HomeWriter(const HomeWriter&) = delete;
  HomeWriter& operator=(const HomeWriter&) = delete;
  void word(uint64_t off, uint64_t v);
  void bytes(uint64_t off, const void* src, size_t n);
  // Line segments found equal and skipped (skip_unchanged only).
  uint64_t skipped() const { return skipped_; }
  // Flushes every line written since the last finish (no fence).  Returns
  // the number of values written.
  uint64_t finish();

 private:
  PoolFile* pool_;
  Medium* medium_;
  bool skip_unchanged_;
  bool defer_;  // runs kept until finish() (see the top of this file)
  bool late_;
  std::vector<uintptr_t> lines_;
  struct Run {
    uint64_t off;
    uint32_t len, at;  // bytes, and where they start in bytes_
  };
  std::vector<Run> runs_;
  std::vector<unsigned char> bytes_;
  std::vector<unsigned char> scratch_;
  void keep(uint64_t off, const void* src, size_t n);
  void write_runs();
  uint64_t values_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ALIAS_HOME_WRITER_H_
