// write_combining_buffer.cc — the WCB's pointer arithmetic (Fig. 5).
#include "themis/write_combining_buffer.h"

namespace softwrap::themis {

WriteCombiningBuffer::WriteCombiningBuffer(unsigned entries, unsigned tail_bits)
    : entries_(entries), limit_(tail_bits ? 1u << tail_bits : 0) {}

WriteCombiningBuffer::Put WriteCombiningBuffer::store(uint64_t line, unsigned word, uint32_t unit, Cycle now) {
  if (const uint32_t p = undrained(line); p != tail_) {
    Entry& e = at(p);
    e.words |= static_cast<uint8_t>(1u << word);
    e.units.push_back(unit);
    e.last_write = now;
    ++coalesced_;
    return Put::kCoalesced;
  }
  if (overflowing_) return Put::kOverflowing;
  if (full()) return Put::kFull;
  Entry& e = at(tail_);
  e.line = line;
  e.words = static_cast<uint8_t>(1u << word);
  e.drained = e.acked = false;
  e.last_write = now;
  e.units.assign(1, unit);
  ++tail_;
  ++allocations_;
  if (limit_ && tail_ == limit_) overflowing_ = true;
  return Put::kAllocated;
}

uint32_t WriteCombiningBuffer::undrained(uint64_t line) const {
  for (uint32_t p = tail_; p != head_;) {  // newest first
    if (entry(--p).line == line) return p;
  }
  return tail_;
}

uint32_t WriteCombiningBuffer::drain() {
  at(head_).drained = true;
  return head_++;
}

WriteCombiningBuffer::AckResult WriteCombiningBuffer::ack(uint32_t p) {
  AckResult r;
  at(p).acked = true;
  while (head_ack_ != head_ && at(head_ack_).acked) {
    ++head_ack_;
    r.head_ack_moved = true;
  }
  if (overflowing_ && head_ack_ == tail_) {
    tail_ = head_ = head_ack_ = 0;
    overflowing_ = false;
    ++overflows_;
    r.reset = true;
  }
  return r;
}

}  // namespace softwrap::themis
