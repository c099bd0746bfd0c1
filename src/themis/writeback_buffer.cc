// writeback_buffer.cc — DA pointers against hAck' (Fig. 7).
#include "themis/writeback_buffer.h"

#include <algorithm>

namespace softwrap::themis {

Cycle Histogram::quantile(double q) const {
  if (total == 0) return 0;
  const double want = q * static_cast<double>(total);
  uint64_t seen = 0;
  for (Cycle v = 0; v < counts.size(); ++v) {
    seen += counts[v];
    if (static_cast<double>(seen) >= want) return v;
  }
  return kExact;
}

void Histogram::merge(const Histogram& o) {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += o.counts[i];
  total += o.total;
  max = std::max(max, o.max);
}

void WritebackBuffer::released(Entry& e, Cycle now) {
  e.drainable = true;
  waits_.add(now - e.entered);
}

bool WritebackBuffer::insert(const Writeback& wb, uint64_t version, bool flush, Cycle now) {
  if (Entry* e = find(wb.line)) {
    e->version = std::max(e->version, version);
    e->flush |= flush;
    if (wb.tag != kNoTag && (e->da == kNoTag || wb.tag > e->da)) e->da = wb.tag;
    if (!e->drainable) return true;  // already waiting: counted once, when released
    if (ok(e->da)) {
      waits_.add(0);
      return false;
    }
    e->drainable = false;  // its wait counts from the merge
    e->entered = now;
    return true;
  }
  Entry e{wb.line, version, wb.tag, ok(wb.tag), flush, now};
  if (e.drainable) waits_.add(0);
  entries_.push_back(e);
  return !e.drainable;
}

unsigned WritebackBuffer::head_ack(uint32_t h, Cycle now) {
  hack_ = h;
  unsigned n = 0;
  for (Entry& e : entries_) {
    if (!e.drainable && ok(e.da)) {
      released(e, now);
      ++n;
    }
  }
  return n;
}

void WritebackBuffer::overflow_reset(Cycle now) {
  hack_ = 0;
  for (Entry& e : entries_) {
    e.da = kNoTag;
    if (!e.drainable) released(e, now);
  }
}

std::optional<WritebackBuffer::Entry> WritebackBuffer::pop_drainable() {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].drainable) {
      Entry e = entries_[i];
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      return e;
    }
  }
  return std::nullopt;
}

bool WritebackBuffer::has_drainable() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.drainable; });
}

uint32_t WritebackBuffer::max_waiting_da() const {
  uint32_t m = kNoTag;
  for (const Entry& e : entries_) {
    if (!e.drainable && (m == kNoTag || e.da > m)) m = e.da;
  }
  return m;
}

WritebackBuffer::Entry* WritebackBuffer::find(uint64_t line) {
  for (Entry& e : entries_) {
    if (e.line == line) return &e;
  }
  return nullptr;
}

}  // namespace softwrap::themis
