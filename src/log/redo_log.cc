// redo_log.cc — frame writer (line buffer + incremental checksum, lane
// then extents) and the recovery-side reader.  The writer never reads the
// log; the reader never trusts a word before the checksum has vouched for
// it, bounds every length by its segment and the pool before reading, and
// keeps nothing of a frame in DRAM: it validates a frame in one pass over
// the pool and applies it in a second.
#include "log/redo_log.h"

#include <algorithm>
#include <cstring>

#include "common/counters.h"
#include "medium/medium.h"
#include "pool/allocator.h"
#include "pool/pool.h"

namespace softwrap {

uint64_t frame_seed(const PoolFile& pool, uint32_t lane, uint64_t phys_pos) {
  const PoolHeader& h = pool.header();
  uint64_t s = hash64(h.uuid, sizeof h.uuid);
  s = hash_word(s, 0x5245444Full ^ lane);
  s = hash_word(s, phys_pos);
  return s;
}

// ------------------------------------------------------------ ExtentSource

LogExtent ExtentSource::take() {
  uint32_t n = taken_.empty() ? 1 : std::min(taken_.back().chunks * 2, kMaxChunks);
  for (; n > 0; n /= 2) {
    if (const uint64_t off = alloc_->reserve_log_chunks(n)) {
      taken_.push_back({off, n});
      return taken_.back();
    }
  }
  return {0, 0};
}

std::vector<LogExtent> ExtentSource::hand_over() {
  std::vector<LogExtent> out;
  out.swap(taken_);
  return out;
}

void ExtentSource::release(Allocator* alloc, const std::vector<LogExtent>& exts) {
  for (const LogExtent& e : exts) alloc->release_log_chunks(e.offset, e.chunks);
}

void ExtentSource::release_all() {
  release(alloc_, taken_);
  taken_.clear();
}

void release_extents_locked(uint64_t retired, RetiringExtents* q, Allocator* alloc) {
  for (auto it = q->begin(); it != q->end();) {
    if (it->first <= retired) {
      ExtentSource::release(alloc, it->second);
      it = q->erase(it);
    } else {
      ++it;
    }
  }
}

// ------------------------------------------------------------------ writer

void RedoWriter::begin(Lane& lane) {
  lane_ = &lane;
  start_ = lane.tail;
  limit_ = std::min(lane.reclaimed + lane.size, start_ + lane.size - kLine);
  ext_ = nullptr;
  hash_ = frame_seed(*pool_, lane.index, start_ % lane.size);
  count_ = 0;
  fill_ = 0;
  put(kFrameMagic);
}

uint64_t RedoWriter::words_left() {
  const uint64_t seg = ext_ ? ext_size_ - ext_pos_ : limit_ - lane_->tail;
  return seg / 8 - fill_ / 8;
}

void RedoWriter::flush_line() {
  if (ext_) {
    medium_->stream(ext_ + ext_pos_, line_, kLine);
    ext_pos_ += kLine;
  } else {
    Lane& l = *lane_;
    medium_->stream(l.base + l.tail % l.size, line_, kLine);
    l.tail += kLine;
  }
  fill_ = 0;
}

void RedoWriter::stream_lines(const unsigned char* src, size_t lines) {
  if (ext_) {
    medium_->stream(ext_ + ext_pos_, src, lines * kLine);
    ext_pos_ += lines * kLine;
    return;
  }
  // As many lines per stream() call as fit before the lane's physical end.
  Lane& l = *lane_;
  while (lines > 0) {
    const uint64_t phys = l.tail % l.size;
    const size_t k = std::min<size_t>(lines, (l.size - phys) / kLine);
    medium_->stream(l.base + phys, src, k * kLine);
    l.tail += k * kLine;
    src += k * kLine;
    lines -= k;
  }
}

bool RedoWriter::ensure(uint64_t words) {
  if (words_left() >= words + 2) return true;
  if (!ext_) {  // retirement may have freed lane space meanwhile
    room_(room_self_, *lane_);
    limit_ = std::min(lane_->reclaimed + lane_->size, start_ + lane_->size - kLine);
    if (words_left() >= words + 2) return true;
  }
  return link() && words_left() >= words + 2;
}

bool RedoWriter::link() {
  const LogExtent e = extents_.take();
  if (e.chunks == 0) return false;
  const uint64_t bytes = uint64_t{e.chunks} * kChunkSize;
  put(e.offset << 8 | kLink);  // room for both words is always kept
  put(bytes);
  if (fill_ != 0) {
    std::memset(reinterpret_cast<char*>(line_) + fill_, 0, kLine - fill_);
    flush_line();
  }
  ext_ = static_cast<char*>(pool_->at(e.offset));
  ext_pos_ = 0;
  ext_size_ = bytes;
  return true;
}

bool RedoWriter::append_store(uint64_t off, uint64_t v, unsigned size) {
  if (!ensure(2)) return false;
  const uint64_t lg = size == 8 ? 3 : size == 4 ? 2 : size == 2 ? 1 : 0;
  ++count_;
  counters().log_bytes.add(16);
  put(off << 8 | lg << 4 | kStore);
  put(v);
  return true;
}

bool RedoWriter::append_range(uint64_t off, const void* src, size_t n) {
  const auto* p = static_cast<const unsigned char*>(src);
  while (n > 0) {
    // One RANGE entry per segment: as much as fits before the link room.
    if (!ensure(3)) return false;
    const uint64_t words = std::min<uint64_t>((n + 7) / 8, words_left() - 4);
    size_t part = std::min<size_t>(n, words * 8);
    ++count_;
    counters().log_bytes.add(16 + ((part + 7) & ~size_t{7}));
    put(off << 8 | kRange);
    put(part);
    off += part;
    n -= part;
    // Fill the open line word by word; then whole lines of the payload go
    // out directly (hashed first), and the tail word by word again.
    while (part >= 8 && fill_ != 0) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      put(w);
      p += 8;
      part -= 8;
    }
    if (const size_t lines = part / kLine; lines > 0) {
      for (size_t i = 0; i < lines * (kLine / 8); ++i) {
        uint64_t w;
        std::memcpy(&w, p + i * 8, 8);
        hash_ = hash_word(hash_, w);
      }
      stream_lines(p, lines);
      p += lines * kLine;
      part -= lines * kLine;
    }
    while (part >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      put(w);
      p += 8;
      part -= 8;
    }
    if (part) {
      uint64_t w = 0;
      std::memcpy(&w, p, part);
      put(w);
      p += part;
    }
  }
  return true;
}

bool RedoWriter::commit(uint64_t seq) {
  if (!ensure(1)) return false;  // the three trailer words, no link after them
  counters().log_bytes.add(24 + 8);
  put(uint64_t{count_} << 8 | kCommit);
  put(seq);
  line_[fill_ / 8] = hash_finish(hash_);  // not hashed: it is the hash
  fill_ += 8;
  if (fill_ < kLine) std::memset(reinterpret_cast<char*>(line_) + fill_, 0, kLine - fill_);
  flush_line();
  lane_->committed.push_back({lane_->tail, seq});
  lane_ = nullptr;
  return true;
}

void RedoWriter::abandon() {
  if (!lane_) return;
  lane_->tail = start_;
  lane_ = nullptr;
  fill_ = 0;
  extents_.release_all();
}

// ------------------------------------------------------------------ reader

namespace {

// Offsets a redo entry may name: the root slot of PoolMeta, and everything
// from the chunk table on (chunk heads and heap).  Never the header, the
// retired watermark, lane headers or the log itself.
bool home_range_ok(const PoolHeader& h, uint64_t off, uint64_t n) {
  if (n > h.pool_size || off > h.pool_size - n) return false;
  if (off >= h.chunk_table_offset) return true;
  return off >= h.meta_offset && off + n <= h.meta_offset + 2 * sizeof(uint64_t);
}

// A log extent must be whole heap chunks.
bool extent_ok(const PoolHeader& h, uint64_t off, uint64_t bytes) {
  const uint64_t heap_end = h.heap_offset + h.chunk_count * kChunkSize;
  return off >= h.heap_offset && (off - h.heap_offset) % kChunkSize == 0 && bytes >= kChunkSize &&
         bytes % kChunkSize == 0 && bytes <= heap_end - off;
}

// Reads a frame's words across its lane part and its extents.
class FrameReader {
 public:
  FrameReader(const PoolFile& pool, uint32_t lane, uint64_t phys)
      : h_(pool.header()), pool_(pool), lane_base_(pool.lane_base(lane)), lane_size_(h_.lane_size), pos_(phys),
        left_((h_.lane_size - 64) / 8), budget_(h_.pool_size / 8) {}

  // Words left in the current segment.
  uint64_t left() const { return left_; }
  bool next(uint64_t* w) {
    if (left_ == 0 || budget_ == 0) return false;
    if (ext_) {
      std::memcpy(w, ext_ + pos_, 8);
    } else {
      std::memcpy(w, lane_base_ + pos_ % lane_size_, 8);
    }
    pos_ += 8;
    --left_;
    --budget_;
    return true;
  }
  // Up to `words` contiguous words at the position (advanced past them).
  const unsigned char* span(uint64_t words, uint64_t* got) {
    const char* base = ext_ ? ext_ + pos_ : lane_base_ + pos_ % lane_size_;
    uint64_t n = std::min({words, left_, budget_});
    if (!ext_) n = std::min(n, (lane_size_ - pos_ % lane_size_) / 8);
    pos_ += n * 8;
    left_ -= n;
    budget_ -= n;
    *got = n;
    return reinterpret_cast<const unsigned char*>(base);
  }
  bool jump(uint64_t off, uint64_t bytes) {
    if (!extent_ok(h_, off, bytes)) return false;
    ext_ = static_cast<const char*>(pool_.at(off));
    pos_ = 0;
    left_ = bytes / 8;
    return true;
  }

 private:
  const PoolHeader& h_;
  const PoolFile& pool_;
  const char* lane_base_;
  uint64_t lane_size_;
  const char* ext_ = nullptr;
  uint64_t pos_;     // lane: physical byte position (mod lane size); extent: byte offset
  uint64_t left_;    // words left in the segment
  uint64_t budget_;  // words left in all (a chain of links cannot loop forever)
};

struct WalkResult {
  bool valid = false;  // the trailer's count and checksum match
  bool parsed = false;  // at least one entry parsed (the broken control's criterion)
  uint64_t seq = 0;
  uint32_t entries = 0;
  uint64_t bytes = 0;  // bytes applied
};

// Walks the frame whose header is at `phys`: validates it, and with
// `apply` also writes its entries home (only for a frame already known
// valid).  With `words`, collects the entry words.
WalkResult walk_frame(const PoolFile& pool, uint32_t lane, uint64_t phys, Medium* apply,
                      std::vector<uint64_t>* words) {
  const PoolHeader& h = pool.header();
  FrameReader r(pool, lane, phys);
  WalkResult res;
  uint64_t w;
  if (!r.next(&w) || w != kFrameMagic) return res;
  uint64_t hash = hash_word(frame_seed(pool, lane, phys), w);
  uint64_t count = 0;
  while (r.next(&w)) {
    hash = hash_word(hash, w);
    const uint64_t kind = w & 0xF;
    if (kind == kStore) {
      const uint64_t lg = (w >> 4) & 0xF, off = w >> 8, n = uint64_t{1} << lg;
      uint64_t v;
      if (lg > 3 || (off & (n - 1)) || !home_range_ok(h, off, n) || !r.next(&v)) break;
      hash = hash_word(hash, v);
      if (apply) {
        apply->store(pool.at(off), v, static_cast<unsigned>(n));
        apply->flush(pool.at(off), n);
        res.bytes += n;
      }
      if (words) words->insert(words->end(), {w, v});
      ++count;
    } else if (kind == kRange) {
      const uint64_t off = w >> 8;
      uint64_t n;
      if (!r.next(&n)) break;
      hash = hash_word(hash, n);
      const uint64_t nw = (n + 7) / 8;
      if (n == 0 || !home_range_ok(h, off, n) || nw > r.left()) break;
      if (words) words->insert(words->end(), {w, n});
      for (uint64_t done = 0; done < nw;) {
        uint64_t got;
        const unsigned char* p = r.span(nw - done, &got);
        if (got == 0) break;
        for (uint64_t i = 0; i < got; ++i) {
          uint64_t d;
          std::memcpy(&d, p + 8 * i, 8);
          hash = hash_word(hash, d);
          if (words) words->push_back(d);
        }
        if (apply) {
          const uint64_t lo = done * 8, len = std::min(got * 8, n - lo);
          apply->write(pool.at(off + lo), p, len);
          apply->flush(pool.at(off + lo), len);
        }
        done += got;
      }
      if (apply) res.bytes += n;
      ++count;
    } else if (kind == kLink) {
      uint64_t bytes;
      if (!r.next(&bytes)) break;
      hash = hash_word(hash, bytes);
      if (!r.jump(w >> 8, bytes)) break;
    } else if (kind == kCommit) {
      uint64_t seq, sum;
      if (!r.next(&seq)) break;
      hash = hash_word(hash, seq);
      if (!r.next(&sum)) break;
      res.valid = (w >> 8) == count && sum == hash_finish(hash);
      res.seq = seq;
      break;
    } else {
      break;
    }
  }
  res.parsed = count > 0;
  res.entries = static_cast<uint32_t>(count);
  return res;
}

}  // namespace

void scan_lane(const PoolFile& pool, uint32_t lane, uint64_t min_seq, std::vector<RedoFrame>* out,
               uint64_t* torn, bool validate_commit) {
  const char* base = pool.lane_base(lane);
  const uint64_t size = pool.header().lane_size;
  for (uint64_t p = 0; p < size; p += 64) {
    uint64_t first;
    std::memcpy(&first, base + p, 8);
    if (first != kFrameMagic) continue;
    WalkResult r = walk_frame(pool, lane, p, nullptr, nullptr);
    if (!r.valid && !validate_commit && r.parsed) {  // control variant only: trust what parsed
      if (r.seq <= min_seq) r.seq = min_seq + 1;
      r.valid = true;
    }
    if (!r.valid) {
      ++*torn;
      continue;
    }
    if (r.seq > min_seq) out->push_back({r.seq, lane, p, r.entries});
  }
}

uint64_t apply_frame(const PoolFile& pool, Medium& medium, const RedoFrame& f) {
  const WalkResult r = walk_frame(pool, f.lane, f.phys_pos, &medium, nullptr);
  counters().home_writes.add(r.entries ? 1 : 0);
  return r.bytes;
}

std::vector<uint64_t> frame_entry_words(const PoolFile& pool, const RedoFrame& f) {
  std::vector<uint64_t> words;
  walk_frame(pool, f.lane, f.phys_pos, nullptr, &words);
  return words;
}

}  // namespace softwrap
