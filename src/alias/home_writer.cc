// home_writer.cc — stores now, one flush per line at finish().
#include "alias/home_writer.h"

#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {

void HomeWriter::word(uint64_t off, uint64_t v) {
  char* home = pool_->at(off);
  medium_->store(home, v, 8);
  lines_.push_back(line_down(reinterpret_cast<uintptr_t>(home)));
  ++values_;
}

void HomeWriter::bytes(uint64_t off, const void* src, size_t n) {
  char* home = pool_->at(off);
  medium_->write(home, src, n);
  const uintptr_t a = reinterpret_cast<uintptr_t>(home);
  for (uintptr_t l = line_down(a); l < a + n; l += kCacheLine) lines_.push_back(l);
  ++values_;
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
