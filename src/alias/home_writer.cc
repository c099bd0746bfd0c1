// home_writer.cc — stores now, one flush per line at finish().
#include "alias/home_writer.h"

#include <algorithm>
#include <cstring>

#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {

void HomeWriter::word(uint64_t off, uint64_t v) {
  char* home = pool_->at(off);
  ++values_;
  if (skip_unchanged_ && __atomic_load_n(reinterpret_cast<const uint64_t*>(home), __ATOMIC_RELAXED) == v) {
    ++skipped_;
    return;
  }
  medium_->store(home, v, 8);
  lines_.push_back(line_down(reinterpret_cast<uintptr_t>(home)));
}

void HomeWriter::bytes(uint64_t off, const void* src, size_t n) {
  char* home = pool_->at(off);
  ++values_;
  const uintptr_t a = reinterpret_cast<uintptr_t>(home);
  if (!skip_unchanged_) {
    medium_->write(home, src, n);
    for (uintptr_t l = line_down(a); l < a + n; l += kCacheLine) lines_.push_back(l);
    return;
  }
  // One line segment at a time: compare, write only what differs.
  const auto* in = static_cast<const char*>(src);
  for (size_t done = 0; done < n;) {
    const uintptr_t at = a + done;
    const size_t len = std::min<size_t>(n - done, line_down(at) + kCacheLine - at);
    if (std::memcmp(home + done, in + done, len) == 0) {
      ++skipped_;
    } else {
      medium_->write(home + done, in + done, len);
      lines_.push_back(line_down(at));
    }
    done += len;
  }
}

uint64_t HomeWriter::finish() {
  constexpr size_t kFilter = 256;
  uintptr_t seen[kFilter] = {};
  for (uintptr_t l : lines_) {
    uintptr_t& slot = seen[(l >> 6) % kFilter];
    if (slot == l) continue;
    slot = l;
    medium_->flush(reinterpret_cast<void*>(l), kCacheLine);
  }
  lines_.clear();
  const uint64_t n = values_;
  values_ = 0;
  return n;
}

}  // namespace softwrap
