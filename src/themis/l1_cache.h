// l1_cache.h — a core's L1 data cache whose lines carry the WCB tail
// pointer of their last store (the Themis paper's Fig. 6).
//
// Set-associative, LRU, write-back, write-allocate.  Each valid line has a
// coherence permission (exclusive: it may be written) and a dirty bit, and
// a tail tag.  The events are the figure's:
//   (a) incoming temporal store: the line is written and tagged with the
//       WCB tail the core sent along;
//   (b) evicting a dirty line (replacement, coherence, clwb): the
//       writeback leaves with the line's tag;
//   (c) overflow notification: every tag in the cache is nullified.
// Nullifying is O(1): a tag is valid only in the epoch it was written in,
// and the notification starts a new epoch.  Timing lives in the Machine;
// this class is the state.
#ifndef SOFTWRAP_THEMIS_L1_CACHE_H_
#define SOFTWRAP_THEMIS_L1_CACHE_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace softwrap::themis {

inline constexpr uint32_t kNoTag = UINT32_MAX;

struct Writeback {
  uint64_t line;
  uint32_t tag;  // WCB tail of the line's last store, kNoTag if none
};

class L1Cache {
 public:
  struct Line {
    uint64_t line = 0;
    bool valid = false;
    bool dirty = false;
    bool exclusive = false;
    uint32_t tag = kNoTag;
    uint32_t tag_epoch = 0;
    uint64_t used = 0;  // LRU stamp
  };

  L1Cache(unsigned kib, unsigned ways);

  // The line if present (and marks it used), else nullptr.
  Line* find(uint64_t line);
  const Line* peek(uint64_t line) const;
  // (a) A store to a present, exclusive line, tagged with `tail` (kNoTag:
  // the design does not tag).
  void store(Line& l, uint32_t tail);
  uint32_t tag(const Line& l) const { return l.tag_epoch == epoch_ ? l.tag : kNoTag; }
  // (b) clwb of a dirty line: its writeback; the line stays, clean, untagged.
  Writeback clean(Line& l);
  // A line leaving the cache to make room.
  struct Evicted {
    uint64_t line;
    bool dirty;
    uint32_t tag;
    Writeback writeback() const { return {line, tag}; }
  };
  // Allocates `line` (not present): evicts the LRU way of its set (b:
  // written back if it was dirty).
  std::optional<Evicted> fill(uint64_t line, bool exclusive, bool dirty);
  // The way fill() would evict (nullptr if an invalid way is free).
  const Line* victim(uint64_t line) const;
  // Coherence: drops the line; its writeback if it was dirty (b).
  std::optional<Writeback> invalidate(uint64_t line);
  // (c) Overflow notification from the core.
  void nullify_tags() { ++epoch_; }

  unsigned sets() const { return sets_; }
  unsigned ways() const { return ways_; }

 private:
  Line* set_of(uint64_t line) { return &lines_[(line % sets_) * ways_]; }
  const Line* set_of(uint64_t line) const { return &lines_[(line % sets_) * ways_]; }

  unsigned sets_, ways_;
  std::vector<Line> lines_;
  uint64_t clock_ = 0;
  uint32_t epoch_ = 1;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_L1_CACHE_H_
