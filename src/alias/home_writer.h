// home_writer.h — copying aliased values to their home locations.
//
// Retirement (global tables) and the local engine's close both end the same
// way: many words and page runs to write home, each line to be flushed once,
// one fence.  Stores go first and flushes after, so flushing a line once
// covers every store to it whatever the order of the entries; a small
// direct-mapped filter drops most repeated flushes of one line (a repeat is
// harmless, only slower), so no sort is needed.
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
  HomeWriter(PoolFile* pool, Medium* medium) : pool_(pool), medium_(medium) {}
  void word(uint64_t off, uint64_t v);
  void bytes(uint64_t off, const void* src, size_t n);
  // Flushes every line written since the last finish (no fence).  Returns
  // the number of values written.
  uint64_t finish();

 private:
  PoolFile* pool_;
  Medium* medium_;
  std::vector<uintptr_t> lines_;
  uint64_t values_ = 0;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ALIAS_HOME_WRITER_H_
