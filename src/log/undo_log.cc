// undo_log.cc — undo record writer and scanner.
#include "log/undo_log.h"

#include <cstring>

#include "common/counters.h"
#include "common/hash.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {

static uint64_t undo_seed(const PoolFile& pool, uint32_t lane, uint64_t pos, uint64_t gen) {
  uint64_t s = hash64(pool.header().uuid, 16);
  s = hash_word(s, 0x554E444Full ^ lane);
  s = hash_word(s, pos);
  return hash_word(s, gen);
}

void UndoWriter::begin(Lane& lane) {
  lane_ = &lane;
  pos_ = 0;
}

bool UndoWriter::append(uint64_t off, size_t n) {
  const uint64_t nw = (n + 7) / 8;
  const uint64_t bytes = (3 + nw) * 8;
  if (pos_ + bytes > lane_->size) return false;
  buf_.assign(3 + nw, 0);
  buf_[0] = off << 8 | kUndoRecord;
  buf_[1] = uint64_t{static_cast<uint32_t>(n)} | (lane_->undo_gen << 32);
  std::memcpy(&buf_[2], pool_->at(off), n);
  uint64_t h = undo_seed(*pool_, lane_->index, pos_, lane_->undo_gen & 0xFFFFFFFF);
  for (uint64_t i = 0; i < 2 + nw; ++i) h = hash_word(h, buf_[i]);
  buf_[2 + nw] = hash_finish(h);
  medium_->stream(lane_->base + pos_, buf_.data(), bytes);
  counters().log_bytes.add(bytes);
  pos_ += bytes;
  return true;
}

void UndoWriter::finish() {
  LaneHeader* lh = pool_->lane_header(lane_->index);
  medium_->store(&lh->undo_committed_gen, lane_->undo_gen, 8);
  medium_->flush(&lh->undo_committed_gen, 8);
  ++lane_->undo_gen;
  pos_ = 0;
}

void scan_undo(const PoolFile& pool, uint32_t lane, std::vector<UndoRecordImage>* out) {
  const PoolHeader& h = pool.header();
  const uint64_t gen = pool.lane_header(lane)->undo_committed_gen + 1;
  const char* base = pool.lane_base(lane);
  uint64_t pos = 0;
  auto word = [&](uint64_t p) {
    uint64_t w;
    std::memcpy(&w, base + p, 8);
    return w;
  };
  while (pos + 32 <= h.lane_size) {
    const uint64_t w0 = word(pos), w1 = word(pos + 8);
    const uint64_t off = w0 >> 8, n = w1 & 0xFFFFFFFF;
    if ((w0 & 0xFF) != kUndoRecord || (w1 >> 32) != (gen & 0xFFFFFFFF) || n == 0) break;
    const uint64_t nw = (n + 7) / 8;
    if (pos + (3 + nw) * 8 > h.lane_size) break;
    if (!pool.home_range_ok(off, n)) break;
    uint64_t hs = undo_seed(pool, lane, pos, gen & 0xFFFFFFFF);
    for (uint64_t i = 0; i < 2 + nw; ++i) hs = hash_word(hs, word(pos + 8 * i));
    if (hash_finish(hs) != word(pos + (2 + nw) * 8)) break;
    UndoRecordImage r{off, std::vector<unsigned char>(n)};
    std::memcpy(r.old.data(), base + pos + 16, n);
    out->push_back(std::move(r));
    pos += (3 + nw) * 8;
  }
}

}  // namespace softwrap
