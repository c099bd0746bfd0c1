// write_behind.h — flushing a wrap's home lines as it moves on.
//
// Engines that store in place (undo, nonatomic, and spilled redo wraps)
// flush a line as soon as the wrap stores to a different line, the last
// one at close, so the device writes lines while the CPU works on the next
// store instead of all at the end.
#ifndef SOFTWRAP_ENGINE_WRITE_BEHIND_H_
#define SOFTWRAP_ENGINE_WRITE_BEHIND_H_

#include <cstddef>
#include <cstdint>

#include "medium/medium.h"

namespace softwrap {

// Write-behind of a wrap's home lines: a line is flushed as soon as the
// wrap stores to a different line, the last one at close.  Stores to the
// line being written combine; a line stored to again after it was flushed
// is flushed again (its new bytes need it).
class WriteBehind {
 public:
  // Records a store of [p, p+n) (already written); flushes what it leaves.
  void add(Medium& m, const void* p, size_t n) {
    if (n == 0) return;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const uintptr_t first = line_down(a), last = line_down(a + n - 1);
    if (pending_ != 0 && (pending_ < first || pending_ > last)) m.flush(reinterpret_cast<void*>(pending_), kCacheLine);
    if (last > first) m.flush(reinterpret_cast<void*>(first), last - first);
    pending_ = last;
  }
  // Flushes the line still pending (before the commit fence).  Returns
  // whether any store was recorded since the last flush() or clear() (a
  // store always leaves its last line pending): if not, there is nothing
  // for a fence to order.
  bool flush(Medium& m) {
    if (pending_ == 0) return false;
    m.flush(reinterpret_cast<void*>(pending_), kCacheLine);
    pending_ = 0;
    return true;
  }
  void clear() { pending_ = 0; }

 private:
  uintptr_t pending_ = 0;
};

}  // namespace softwrap

#endif  // SOFTWRAP_ENGINE_WRITE_BEHIND_H_
