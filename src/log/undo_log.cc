// undo_log.cc — undo record writer and reader.
#include "log/undo_log.h"

#include <algorithm>
#include <cstring>

#include "common/counters.h"
#include "common/hash.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {

namespace {

constexpr uint64_t kInExtent = uint64_t{1} << 63;  // seg_id of extents: pool offset | this
constexpr uint64_t kLinkBytes = 24;

// pool_seed: redo_log.h's pool_seed(pool).
uint64_t undo_seed(uint64_t pool_seed, uint32_t lane, uint64_t pos, uint64_t gen) {
  uint64_t s = hash_word(pool_seed, 0x554E444Full ^ lane);
  s = hash_word(s, pos);
  return hash_word(s, gen);
}

}  // namespace

void UndoWriter::begin(Lane& lane) {
  lane_ = &lane;
  seg_ = lane.base;
  seg_id_ = 0;
  seg_size_ = lane.size;
  pos_ = 0;
  used_ = 0;
}

uint64_t UndoWriter::begin_in_extent(Lane& lane) {
  const LogExtent e = extents_.take();
  if (e.chunks == 0) return 0;
  lane_ = &lane;
  seg_ = static_cast<char*>(pool_->at(e.offset));
  seg_id_ = kInExtent | e.offset;
  seg_size_ = uint64_t{e.chunks} * kChunkSize;  // the first extent is one chunk
  pos_ = 0;
  used_ = 0;
  return e.offset;
}

bool UndoWriter::link() {
  const LogExtent e = extents_.take();
  if (e.chunks == 0) return false;
  const uint64_t bytes = uint64_t{e.chunks} * kChunkSize;
  const uint64_t gen = lane_->undo_gen & 0xFFFFFFFF;
  uint64_t rec[3] = {e.offset << 8 | kUndoLink, bytes | gen << 32, 0};
  uint64_t h = undo_seed(pool_seed_, lane_->index, seg_id_ + pos_, gen);
  h = hash_word(hash_word(h, rec[0]), rec[1]);
  rec[2] = hash_finish(h);
  medium_->stream(seg_ + pos_, rec, kLinkBytes);
  counters().log_bytes.add(kLinkBytes);
  used_ += kLinkBytes;
  seg_ = static_cast<char*>(pool_->at(e.offset));
  seg_id_ = kInExtent | e.offset;
  seg_size_ = bytes;
  pos_ = 0;
  return true;
}

bool UndoWriter::append(uint64_t off, size_t n) {
  const uint64_t gen = lane_->undo_gen & 0xFFFFFFFF;
  while (n > 0) {
    // Room for the record's 3 words, at least one data word, and a link.
    if (pos_ + 32 + kLinkBytes > seg_size_ && !link()) return false;
    const uint64_t max_words = (seg_size_ - pos_ - kLinkBytes) / 8 - 3;
    const size_t part = std::min<uint64_t>(n, std::min<uint64_t>(max_words * 8, 0xFFFFFFF8u));
    const uint64_t nw = (part + 7) / 8;
    const uint64_t bytes = (3 + nw) * 8;
    buf_.assign(3 + nw, 0);
    buf_[0] = off << 8 | kUndoRecord;
    buf_[1] = uint64_t{static_cast<uint32_t>(part)} | (gen << 32);
    std::memcpy(&buf_[2], pool_->at(off), part);
    uint64_t h = undo_seed(pool_seed_, lane_->index, seg_id_ + pos_, gen);
    for (uint64_t i = 0; i < 2 + nw; ++i) h = hash_word(h, buf_[i]);
    buf_[2 + nw] = hash_finish(h);
    medium_->stream(seg_ + pos_, buf_.data(), bytes);
    counters().log_bytes.add(bytes);
    pos_ += bytes;
    used_ += bytes;
    off += part;
    n -= part;
  }
  return true;
}

void UndoWriter::finish() {
  LaneHeader* lh = pool_->lane_header(lane_->index);
  medium_->store(&lh->undo_committed_gen, lane_->undo_gen, 8);
  medium_->flush(&lh->undo_committed_gen, 8);
  ++lane_->undo_gen;
  seg_ = lane_->base;
  seg_id_ = 0;
  seg_size_ = lane_->size;
  pos_ = 0;
  used_ = 0;
}

uint64_t visit_undo(const PoolFile& pool, uint32_t lane, UndoVisit visit, void* ctx) {
  const PoolHeader& h = pool.header();
  const uint64_t gen = (pool.lane_header(lane)->undo_committed_gen + 1) & 0xFFFFFFFF;
  const char* seg = pool.lane_base(lane);
  uint64_t seg_id = 0, seg_size = h.lane_size, pos = 0, count = 0;
  if (const uint64_t head = pool.lane_header(lane)->spill_head; head != 0) {
    if (!pool.chunk_run_ok(head, kChunkSize)) return 0;
    seg = static_cast<const char*>(pool.at(head));
    seg_id = kInExtent | head;
    seg_size = kChunkSize;
  }
  uint64_t budget = pool.size();  // bytes: a chain of links cannot loop forever
  const uint64_t seed = pool_seed(pool);
  auto word = [&](uint64_t p) {
    uint64_t w;
    std::memcpy(&w, seg + p, 8);
    return w;
  };
  while (pos + kLinkBytes <= seg_size && budget >= kLinkBytes) {
    const uint64_t w0 = word(pos), w1 = word(pos + 8);
    const uint64_t kind = w0 & 0xFF, off = w0 >> 8, n = w1 & 0xFFFFFFFF;
    if ((kind != kUndoRecord && kind != kUndoLink) || (w1 >> 32) != gen || n == 0) break;
    const uint64_t nw = kind == kUndoRecord ? (n + 7) / 8 : 0;
    const uint64_t bytes = (3 + nw) * 8;
    if (bytes > seg_size - pos || bytes > budget) break;
    uint64_t hs = undo_seed(seed, lane, seg_id + pos, gen);
    for (uint64_t i = 0; i < 2 + nw; ++i) hs = hash_word(hs, word(pos + 8 * i));
    if (hash_finish(hs) != word(pos + (2 + nw) * 8)) break;
    budget -= bytes;
    if (kind == kUndoLink) {
      if (!pool.chunk_run_ok(off, n)) break;
      seg = static_cast<const char*>(pool.at(off));
      seg_id = kInExtent | off;
      seg_size = n;
      pos = 0;
      continue;
    }
    if (!pool.home_range_ok(off, n)) break;
    visit(ctx, off, reinterpret_cast<const unsigned char*>(seg + pos + 16), n);
    ++count;
    pos += bytes;
  }
  return count;
}

}  // namespace softwrap
