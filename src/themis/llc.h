// llc.h — the shared last-level cache (2 MiB per core, 16-way, 64 B lines).
//
// Set-associative, LRU, write-back.  A dirty line remembers the version
// (number of stores in coherence order) of the data it holds, so that what
// it writes to the PM controller can be reported as a line prefix to the
// persist-order check.  Non-inclusive: an L1 that takes a line to write it
// takes its dirtiness along (take_dirty), so there is one dirty copy of a
// line at a time.  Timing (hit latency, forwarding clwb's to memory) lives
// in the Machine.
#ifndef SOFTWRAP_THEMIS_LLC_H_
#define SOFTWRAP_THEMIS_LLC_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace softwrap::themis {

// A dirty line going to the PM controller.
struct LineWrite {
  uint64_t line;
  uint64_t version;
};

class Llc {
 public:
  Llc(uint64_t kib, unsigned ways);

  bool present(uint64_t line);  // marks it used
  bool dirty(uint64_t line) const;
  // A writeback from an L1 (allocates if absent): the line is dirty with
  // `version`; returns the dirty victim it evicted, if any.
  std::optional<LineWrite> write(uint64_t line, uint64_t version);
  // A clean fill from the PM controller; returns the dirty victim, if any.
  std::optional<LineWrite> fill(uint64_t line);
  // clwb: the line's dirty data, now clean (nullopt if it was not dirty).
  std::optional<LineWrite> clean(uint64_t line);
  // An L1 takes the line for writing: true if it was dirty (the L1's copy
  // is dirty from now on and this one clean).
  bool take_dirty(uint64_t line);

  uint64_t lines() const { return lines_.size(); }

 private:
  struct Line {
    uint64_t line = 0, version = 0, used = 0;
    bool valid = false, dirty = false;
  };
  Line* find(uint64_t line);
  const Line* find(uint64_t line) const;
  std::optional<LineWrite> allocate(uint64_t line, Line** out);

  uint64_t sets_;
  unsigned ways_;
  std::vector<Line> lines_;
  uint64_t clock_ = 0;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_LLC_H_
