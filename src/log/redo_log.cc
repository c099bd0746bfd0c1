// redo_log.cc — frame writer (line buffer + incremental checksum) and the
// recovery-side scanner.  The writer never reads the lane; the scanner
// never trusts a word before the checksum has vouched for it, and bounds
// every length by the lane and the pool before reading.
#include "log/redo_log.h"

#include <algorithm>
#include <cstring>

#include "common/counters.h"
#include "common/hash.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {

uint64_t frame_seed(const PoolFile& pool, uint32_t lane, uint64_t phys_pos) {
  const PoolHeader& h = pool.header();
  uint64_t s = hash64(h.uuid, sizeof h.uuid);
  s = hash_word(s, 0x5245444Full ^ lane);
  s = hash_word(s, phys_pos);
  return s;
}


void RedoWriter::begin(Lane& lane) {
  lane_ = &lane;
  start_ = lane.tail;
  hash_ = frame_seed(*pool_, lane.index, start_ % lane.size);
  count_ = 0;
  fill_ = 0;
  put(kFrameMagic);
}

bool RedoWriter::flush_line() {
  Lane& l = *lane_;
  const uint64_t need_end = l.tail + kCacheLine;
  if (need_end - start_ > l.size - kCacheLine) return false;  // frame > lane
  if (need_end > l.reclaimed + l.size && !space_(space_self_, l, need_end)) return false;
  medium_->stream(l.base + l.tail % l.size, line_, kCacheLine);
  l.tail = need_end;
  fill_ = 0;
  return true;
}

inline bool RedoWriter::put(uint64_t w) {
  hash_ = hash_word(hash_, w);
  line_[fill_ / 8] = w;
  fill_ += 8;
  return fill_ < kCacheLine || flush_line();
}

bool RedoWriter::append_store(uint64_t off, uint64_t v, unsigned size) {
  const uint64_t lg = size == 8 ? 3 : size == 4 ? 2 : size == 2 ? 1 : 0;
  ++count_;
  counters().log_bytes.add(16);
  return put(off << 8 | lg << 4 | kStore) && put(v);
}

bool RedoWriter::stream_lines(const unsigned char* src, size_t lines) {
  // Whole lines straight from the caller's buffer, as many per stream()
  // call as fit before the lane's physical end: the same bytes and the
  // same order as line-by-line flush_line(), in fewer medium calls.
  Lane& l = *lane_;
  while (lines > 0) {
    const uint64_t phys = l.tail % l.size;
    const size_t k = std::min<size_t>(lines, (l.size - phys) / kCacheLine);
    const uint64_t need_end = l.tail + k * kCacheLine;
    if (need_end - start_ > l.size - kCacheLine) return false;  // frame > lane
    // Room for all k lines can always be made while the frame fits its
    // lane (the frames in the way are committed ones), as for one line.
    if (need_end > l.reclaimed + l.size && !space_(space_self_, l, need_end)) return false;
    medium_->stream(l.base + phys, src, k * kCacheLine);
    l.tail = need_end;
    src += k * kCacheLine;
    lines -= k;
  }
  return true;
}

bool RedoWriter::append_range(uint64_t off, const void* src, size_t n) {
  ++count_;
  counters().log_bytes.add(16 + ((n + 7) & ~size_t{7}));
  if (!put(off << 8 | kRange) || !put(n)) return false;
  const auto* p = static_cast<const unsigned char*>(src);
  // Fill the open line word by word; then whole lines of the payload go
  // out directly (hashed first), and the tail word by word again.
  while (n >= 8 && fill_ != 0) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (!put(w)) return false;
    p += 8;
    n -= 8;
  }
  if (const size_t lines = n / kCacheLine; lines > 0) {
    for (size_t i = 0; i < lines * (kCacheLine / 8); ++i) {
      uint64_t w;
      std::memcpy(&w, p + i * 8, 8);
      hash_ = hash_word(hash_, w);
    }
    if (!stream_lines(p, lines)) return false;
    p += lines * kCacheLine;
    n -= lines * kCacheLine;
  }
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (!put(w)) return false;
    p += 8;
    n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    if (!put(w)) return false;
  }
  return true;
}

bool RedoWriter::commit(uint64_t seq) {
  counters().log_bytes.add(24 + 8);
  if (!put(uint64_t{count_} << 8 | kCommit) || !put(seq)) return false;
  const uint64_t sum = hash_finish(hash_);
  line_[fill_ / 8] = sum;  // not hashed: it is the hash
  fill_ += 8;
  if (fill_ < kCacheLine) std::memset(reinterpret_cast<char*>(line_) + fill_, 0, kCacheLine - fill_);
  fill_ = kCacheLine;
  if (!flush_line()) return false;
  lane_->committed.push_back({lane_->tail, seq});
  lane_ = nullptr;
  return true;
}

void RedoWriter::abandon() {
  if (!lane_) return;
  lane_->tail = start_;
  lane_ = nullptr;
  fill_ = 0;
}

namespace {

// Reads logical words of a lane starting at a physical position, wrapping.
class LaneCursor {
 public:
  LaneCursor(const char* base, uint64_t size, uint64_t phys)
      : base_(base), size_(size), pos_(phys) {}
  uint64_t next() {
    uint64_t w;
    std::memcpy(&w, base_ + pos_ % size_, 8);
    pos_ += 8;
    ++read_;
    return w;
  }
  uint64_t words_read() const { return read_; }

 private:
  const char* base_;
  uint64_t size_;
  uint64_t pos_;
  uint64_t read_ = 0;
};

}  // namespace

void scan_lane(const PoolFile& pool, uint32_t lane, uint64_t min_seq,
               std::vector<RedoFrame>* out, uint64_t* torn, bool validate_commit) {
  const PoolHeader& h = pool.header();
  const char* base = pool.lane_base(lane);
  const uint64_t size = h.lane_size;
  const uint64_t max_words = (size - kCacheLine) / 8;
  for (uint64_t p = 0; p < size; p += kCacheLine) {
    uint64_t first;
    std::memcpy(&first, base + p, 8);
    if (first != kFrameMagic) continue;
    LaneCursor c(base, size, p);
    uint64_t hash = hash_word(frame_seed(pool, lane, p), c.next());
    RedoFrame f{0, lane, p, {}};
    uint64_t count = 0;
    bool valid = false;
    while (c.words_read() + 3 <= max_words) {
      const uint64_t w = c.next();
      hash = hash_word(hash, w);
      const uint64_t kind = w & 0xF;
      if (kind == kStore) {
        const uint64_t lg = (w >> 4) & 0xF, off = w >> 8, n = uint64_t{1} << lg;
        if (lg > 3 || (off & (n - 1)) || !pool.home_range_ok(off, n)) break;
        const uint64_t v = c.next();
        hash = hash_word(hash, v);
        f.words.push_back(w);
        f.words.push_back(v);
        ++count;
      } else if (kind == kRange) {
        const uint64_t off = w >> 8, n = c.next();
        hash = hash_word(hash, n);
        const uint64_t nw = (n + 7) / 8;
        if (n == 0 || n > size || !pool.home_range_ok(off, n) || c.words_read() + nw + 3 > max_words) break;
        f.words.push_back(w);
        f.words.push_back(n);
        for (uint64_t i = 0; i < nw; ++i) {
          const uint64_t d = c.next();
          hash = hash_word(hash, d);
          f.words.push_back(d);
        }
        ++count;
      } else if (kind == kCommit) {
        const uint64_t seq = c.next();
        hash = hash_word(hash, seq);
        const uint64_t sum = c.next();
        valid = (w >> 8) == count && sum == hash_finish(hash);
        f.seq = seq;
        break;
      } else {
        break;
      }
    }
    if (!valid && !validate_commit && count > 0) {  // control variant only: trust what parsed
      if (f.seq <= min_seq) f.seq = min_seq + 1;
      valid = true;
    }
    if (!valid) {
      ++*torn;
      continue;
    }
    if (f.seq > min_seq) out->push_back(std::move(f));
  }
}

uint64_t apply_frame(const PoolFile& pool, Medium& medium, const RedoFrame& f) {
  uint64_t bytes = 0;
  const std::vector<uint64_t>& w = f.words;
  for (size_t i = 0; i < w.size();) {
    const uint64_t head = w[i];
    const uint64_t off = head >> 8;
    if ((head & 0xF) == kStore) {
      const unsigned n = 1u << ((head >> 4) & 0xF);
      medium.store(pool.at(off), w[i + 1], n);
      medium.flush(pool.at(off), n);
      bytes += n;
      i += 2;
    } else {  // kRange (scan_lane admits nothing else)
      const uint64_t n = w[i + 1];
      medium.write(pool.at(off), &w[i + 2], n);
      medium.flush(pool.at(off), n);
      bytes += n;
      i += 2 + (n + 7) / 8;
    }
  }
  counters().home_writes.add(f.words.empty() ? 0 : 1);
  return bytes;
}

}  // namespace softwrap
