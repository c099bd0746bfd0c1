// home_writer.cc — stores now, one flush per line at finish().
#include "alias/home_writer.h"

#include <algorithm>
#include <cstring>

#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {

HomeWriter::HomeWriter(PoolFile* pool, Medium* medium, bool skip_unchanged, bool late)
    : pool_(pool),
      medium_(medium),
      skip_unchanged_(skip_unchanged),
      defer_(skip_unchanged && medium->properties().home_runs),
      late_(late) {}

HomeWriter::~HomeWriter() {
  if (!runs_.empty()) write_runs();  // only the broken variant leaves any
}

void HomeWriter::keep(uint64_t off, const void* src, size_t n) {
  runs_.push_back({off, static_cast<uint32_t>(n), static_cast<uint32_t>(bytes_.size())});
  const auto* b = static_cast<const unsigned char*>(src);
  bytes_.insert(bytes_.end(), b, b + n);
}

void HomeWriter::word(uint64_t off, uint64_t v) {
  char* home = pool_->at(off);
  ++values_;
  if (skip_unchanged_ && __atomic_load_n(reinterpret_cast<const uint64_t*>(home), __ATOMIC_RELAXED) == v) {
    ++skipped_;
    return;
  }
  if (defer_) {
    keep(off, &v, 8);
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
    } else if (defer_) {
      keep(off + done, in + done, len);
    } else {
      medium_->write(home + done, in + done, len);
      lines_.push_back(line_down(at));
    }
    done += len;
  }
}

void HomeWriter::write_runs() {
  std::sort(runs_.begin(), runs_.end(), [](const Run& x, const Run& y) { return x.off < y.off; });
  for (size_t i = 0; i < runs_.size();) {
    size_t j = i + 1;
    uint64_t end = runs_[i].off + runs_[i].len;
    while (j < runs_.size() && runs_[j].off == end) end += runs_[j++].len;
    const void* src = bytes_.data() + runs_[i].at;
    if (j - i > 1) {  // contiguous values from different calls: one buffer
      scratch_.clear();
      for (size_t k = i; k < j; ++k) {
        const unsigned char* b = bytes_.data() + runs_[k].at;
        scratch_.insert(scratch_.end(), b, b + runs_[k].len);
      }
      src = scratch_.data();
    }
    medium_->write_through(pool_->at(runs_[i].off), src, end - runs_[i].off);
    i = j;
  }
  runs_.clear();
  bytes_.clear();
}

uint64_t HomeWriter::finish() {
  if (defer_ && !late_) write_runs();
  // Each line flushed once: a few lines are compared with those before
  // them (a wrap's or a small chunk's), more go through a small filter
  // (zeroing it costs more than the compares below kLinear lines).
  constexpr size_t kLinear = 16;
  if (lines_.size() <= kLinear) {
    for (size_t i = 0; i < lines_.size(); ++i) {
      const uintptr_t l = lines_[i];
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = lines_[j] == l;
      if (!seen) medium_->flush(reinterpret_cast<void*>(l), kCacheLine);
    }
  } else {
    constexpr size_t kFilter = 256;
    uintptr_t seen[kFilter] = {};
    for (uintptr_t l : lines_) {
      uintptr_t& slot = seen[(l >> 6) % kFilter];
      if (slot == l) continue;
      slot = l;
      medium_->flush(reinterpret_cast<void*>(l), kCacheLine);
    }
  }
  lines_.clear();
  const uint64_t n = values_;
  values_ = 0;
  return n;
}

}  // namespace softwrap
