// redo_log.cc — frame writer (line buffer + incremental checksum, lane
// then extents) and the recovery-side reader.  The writer never reads the
// log; the reader never trusts a word before the checksum has vouched for
// it, bounds every length by its segment and the pool before reading, and
// keeps nothing of a frame in DRAM: it validates a frame in one pass over
// the pool and applies it in a second.
#include "log/redo_log.h"

#include <map>

#include <algorithm>
#include <cstring>

#include "common/counters.h"
#include "common/error.h"
#include "medium/medium.h"
#include "pool/allocator.h"
#include "pool/pool.h"

namespace softwrap {

uint64_t pool_seed(const PoolFile& pool) {
  const PoolHeader& h = pool.header();
  return hash64(h.uuid, sizeof h.uuid);
}

uint64_t frame_seed_from(uint64_t pool_seed, uint32_t lane, uint64_t phys_pos) {
  uint64_t s = hash_word(pool_seed, 0x5245444Full ^ lane);
  s = hash_word(s, phys_pos);
  return s;
}

uint64_t frame_seed(const PoolFile& pool, uint32_t lane, uint64_t phys_pos) {
  return frame_seed_from(pool_seed(pool), lane, phys_pos);
}

// ------------------------------------------------------------ ExtentSource

LogExtent ExtentSource::take() {
  const uint32_t want = taken_.empty() ? 1 : std::min(taken_.back().chunks * 2, kMaxChunks);
  // A smaller extent after a refused larger one (a pool that cannot grow
  // that far) is a success: the thread's error stays what it was.
  const int err = last_error();
  const std::string msg = err != 0 ? last_error_message() : std::string();
  // No chunk at all: the reclaim function may free the extents of frames
  // that are home by now (or wait for them to be), then look again.
  do {
    for (uint32_t n = want; n > 0; n /= 2) {
      if (const uint64_t off = alloc_->reserve_log_chunks(n)) {
        if (err != 0) {
          set_error(err, "%s", msg.c_str());
        } else {
          clear_error();
        }
        taken_.push_back({off, n});
        return taken_.back();
      }
    }
  } while (reclaim_ != nullptr && reclaim_(reclaim_self_));
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
    if (it->seq <= retired) {
      ExtentSource::release(alloc, it->extents);
      it = q->erase(it);
    } else {
      ++it;
    }
  }
}

// ------------------------------------------------------------------ writer

RedoWriter::RedoWriter(const PoolFile* pool, Medium* medium, Allocator* alloc, RoomFn room, void* room_self)
    : medium_(medium),
      pool_(pool),
      pool_seed_(pool_seed(*pool)),
      one_line_(pool->header().layout_version >= kLayoutVersion),
      extents_(alloc),
      room_(room),
      room_self_(room_self) {}

void RedoWriter::begin(Lane& lane) {
  lane_ = &lane;
  start_ = lane.tail;
  limit_ = std::min(lane.reclaimed + lane.size, start_ + lane.size - kLine);
  ext_ = nullptr;
  ext_size_ = 0;
  hash_ = frame_seed_from(pool_seed_, lane.index, start_ % lane.size);
  count_ = 0;
  fill_ = 0;
  frame_words_ = 0;
  put(kFrameMagic);
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
  frame_words_ += lines * (kLine / 8);
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

bool RedoWriter::append_range(uint64_t off, const void* src, size_t n) {
  return flush_pending_in(off & ~uint64_t{7}, (off & 7) + n) &&
         put_range(off, static_cast<const unsigned char*>(src), n);
}

uint64_t fresh_hash(const void* bytes, uint64_t off, uint64_t len) {
  return hash64(bytes, len, kHashSeed ^ mix64(off));
}

bool RedoWriter::append_fresh(uint64_t off, uint64_t n, uint64_t hash) {
  if (!ensure(3)) return false;  // (a half-changed word waiting is not in the way: nothing is replayed)
  ++count_;
  counters().log_bytes.add(24);
  put(off << 8 | kFresh);
  put(n);
  put(hash);
  return true;
}

bool RedoWriter::put_range(uint64_t off, const unsigned char* p, size_t n) {
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

// ---- write-combined logging

bool RedoWriter::flush_pending() {
  pending_.set = false;
  return put_store(pending_.w, pending_.full, 8);
}

void RedoWriter::note_eliminated() {
  counters().wcl_eliminated.add();
  counters().wcl_allowed2.add(4);  // its STORE: 2 words
  saved_words_ += 2;
}

bool RedoWriter::put_pair(uint64_t a, uint64_t va, unsigned ha, uint64_t b, uint64_t vb, unsigned hb) {
  if (!ensure(3)) return false;
  count_ += 2;
  counters().log_bytes.add(24);
  counters().wcl_paired.add(2);
  saved_words_ += 1;
  const uint64_t half_a = ha ? va >> 32 : va & 0xFFFFFFFFu, half_b = hb ? vb >> 32 : vb & 0xFFFFFFFFu;
  put(a << 8 | uint64_t{ha} << 4 | kHalfPair);
  put(b << 8 | uint64_t{hb} << 4 | kHalfPair);
  put(half_a | half_b << 32);
  return true;
}

bool RedoWriter::append_word(uint64_t w, uint64_t v, uint64_t cur) {
  const uint64_t diff = v ^ cur;
  const unsigned halves = ((diff & 0xFFFFFFFFu) != 0 ? 1u : 0u) | ((diff >> 32) != 0 ? 2u : 0u);
  if (pending_.set && pending_.w == w) {
    // The waiting word again: it keeps waiting while one half, relative to
    // its value before the wrap, is all that changed.
    pending_.full = v;
    pending_.halves |= halves;
    if (pending_.halves == 3) {
      counters().wcl_full.add();
      return flush_pending();
    }
    counters().wcl_half.add();
    if (!in_range_) counters().wcl_allowed2.add(1);  // half of a PAIR's word saved
    return true;
  }
  if (halves == 3) {
    counters().wcl_full.add();
    return put_store(w, v, 8);
  }
  counters().wcl_half.add();
  if (!in_range_) counters().wcl_allowed2.add(1);  // half of a PAIR's word saved
  if (!pending_.set) {
    pending_ = {w, v, halves, true};
    return true;
  }
  pending_.set = false;
  return put_pair(pending_.w, pending_.full, pending_.halves == 2, w, v, halves == 2);
}

bool RedoWriter::append_range_wcl(uint64_t off, const unsigned char* now, const unsigned char* cur, size_t n,
                                  ChangedFn changed, void* ctx) {
  // Classify the words of the range: 0 unchanged, 1 one half changed (a
  // word the range covers whole), 2 otherwise changed.
  const uint64_t first = off & ~uint64_t{7}, end = off + n;
  auto kind_of = [&](uint64_t w) {
    const uint64_t lo = std::max(w, off), hi = std::min(w + 8, end);
    if (lo != w || hi != w + 8) return std::memcmp(now + (lo - off), cur + (lo - off), hi - lo) == 0 ? 0 : 2;
    // A whole word: two loads and a xor (a library memcmp call per word
    // was a sixth of a WAL commit's time).
    uint64_t a, b;
    std::memcpy(&a, now + (w - off), 8);
    std::memcpy(&b, cur + (w - off), 8);
    const uint64_t d = a ^ b;
    if (d == 0) return 0;
    return ((d >> 32) == 0 || (d & 0xFFFFFFFFu) == 0) ? 1 : 2;
  };
  uint64_t logged_words = 0;  // what the records below cost
  uint64_t changed_words = 0;
  in_range_ = true;  // the range's bound is counted below, not per word
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{in_range_};
  uint64_t w = first;
  while (w < end) {
    int k = kind_of(w);
    if (k == 0) {
      counters().wcl_eliminated.add();
      w += 8;
      continue;
    }
    // A run of changed words; gaps of up to two unchanged words stay in
    // it (splitting the range would cost two header words).
    uint64_t run_end = w + 8, halves = k == 1, fulls = k == 2, gap = 0, e = w + 8;
    while (e < end) {
      const int ke = kind_of(e);
      if (ke == 0) {
        if (++gap > 2) break;
      } else {
        gap = 0;
        halves += ke == 1;
        fulls += ke == 2;
        run_end = e + 8;
      }
      e += 8;
    }
    const uint64_t lo = std::max(w, off), hi = std::min(run_end, end);
    changed_words += fulls + halves;
    if (fulls == 0 && halves <= 3) {
      // One to three half-changed words (and the unchanged ones between):
      // halves pair up, 1.5 words each, against 2 + len/8 for a range.
      for (uint64_t x = w; x < run_end; x += 8) {
        uint64_t a, b;
        std::memcpy(&a, now + (x - off), 8);
        std::memcpy(&b, cur + (x - off), 8);
        if (a == b) {
          counters().wcl_eliminated.add();
          continue;
        }
        if (!append_word(x, a, b)) return false;
        logged_words += 2;  // a pair's third word saved is counted by put_pair
        if (!changed(ctx, x, 8, x - off)) return false;
      }
    } else {
      counters().wcl_full.add(fulls + halves);
      if (!flush_pending_in(lo & ~uint64_t{7}, (lo & 7) + (hi - lo)) || !put_range(lo, now + (lo - off), hi - lo)) {
        return false;
      }
      logged_words += 2 + (hi - lo + 7) / 8;
      if (!changed(ctx, lo, hi - lo, lo - off)) return false;
    }
    w = run_end;
  }
  // Without WCL the range was one RANGE entry; at best it is one entry of
  // only its changed words.
  const uint64_t baseline = 2 + (n + 7) / 8;
  saved_words_ += static_cast<int64_t>(baseline) - static_cast<int64_t>(logged_words);
  counters().wcl_allowed2.add(2 * (baseline - (changed_words ? std::min(baseline, 2 + changed_words) : 0)));
  return true;
}

bool RedoWriter::commit(uint64_t seq) {
  if (pending_.set && !flush_pending()) return false;
  // Lines of a frame of `words` words through its entries (header and
  // links included).
  auto lines = [this](uint64_t words) { return one_line_ && words <= 1 + kOneLineEntryWords ? 1 : (words + 3 + 7) / 8; };
  if (saved_words_ > 0) {
    counters().log_words_saved.add(static_cast<uint64_t>(saved_words_));
    // Frames are whole lines: what the frame would have taken without WCL
    // against what it takes.
    counters().log_lines_saved.add(lines(frame_words_ + static_cast<uint64_t>(saved_words_)) - lines(frame_words_));
  }
  saved_words_ = 0;
  // Header and entries all in the open line, nothing of the frame streamed
  // or linked (fill_ would then hold fewer than all its words; and a line
  // is streamed once full, so fill_ <= 56: at most six entry words): the
  // line is the frame.
  static_assert(kOneLineEntryWords == kLine / 8 - 2);
  if (one_line_ && fill_ == frame_words_ * 8 && seq - 1 < kOneLineSeqMax) {
    counters().log_bytes.add(16);
    for (uint32_t i = fill_ / 8; i <= kOneLineEntryWords; ++i) {
      line_[i] = 0;
      hash_ = hash_word(hash_, 0);
    }
    const uint64_t head = kOneLineTag << 48 | seq;
    line_[0] = head;  // begin hashed kFrameMagic in its place
    line_[7] = hash_finish(hash_word(hash_, head));
    flush_line();
    lane_->push_frame({lane_->tail, seq});
    lane_ = nullptr;
    return true;
  }
  if (!ensure(1)) return false;  // the three trailer words, no link after them
  counters().log_bytes.add(24 + 8);
  put(uint64_t{count_} << 8 | kCommit);
  put(seq);
  line_[fill_ / 8] = hash_finish(hash_);  // not hashed: it is the hash
  fill_ += 8;
  if (fill_ < kLine) std::memset(reinterpret_cast<char*>(line_) + fill_, 0, kLine - fill_);
  flush_line();
  lane_->push_frame({lane_->tail, seq});
  lane_ = nullptr;
  return true;
}

void RedoWriter::abandon() {
  pending_.set = false;
  saved_words_ = 0;
  if (!lane_) return;
  // The frame's lines the medium holds back land now, while the lane and
  // the extents are still this thread's (medium.h, publish_streams).
  medium_->publish_streams();
  lane_->tail = start_;
  lane_ = nullptr;
  fill_ = 0;
  extents_.release_all();
}

// ------------------------------------------------------------------ reader

namespace {

// Reads a frame's words across its lane part and its extents.
class FrameReader {
 public:
  FrameReader(const PoolFile& pool, uint32_t lane, uint64_t phys)
      : h_(pool.header()), pool_(pool), lane_base_(pool.lane_base(lane)), lane_size_(h_.lane_size), pos_(phys),
        left_((h_.lane_size - 64) / 8), budget_(pool.size() / 8) {}

  // Words left in the current segment.
  uint64_t left() const { return left_; }
  // Words read so far.
  uint64_t read() const { return read_; }
  // A one-line frame: after its header, the six entry words of the line.
  void one_line() { left_ = kOneLineEntryWords; }
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
    ++read_;
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
    read_ += n;
    *got = n;
    return reinterpret_cast<const unsigned char*>(base);
  }
  bool jump(uint64_t off, uint64_t bytes) {
    if (!pool_.chunk_run_ok(off, bytes)) return false;
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
  uint64_t read_ = 0;
};

struct WalkResult {
  bool valid = false;  // the trailer's count and checksum match
  bool parsed = false;  // at least one entry parsed (the broken control's criterion)
  bool vouches = false;  // has FRESH records
  uint64_t seq = 0;
  uint32_t entries = 0;
  uint64_t bytes = 0;  // bytes applied
};

// What a frame writes home and what it vouches for (byte ranges).
struct FrameSpans {
  struct Fresh {
    uint64_t off, len, hash;
  };
  std::vector<std::pair<uint64_t, uint64_t>> written;  // off, len
  std::vector<Fresh> fresh;
};

// Walks the frame whose header is at `phys`: validates it, and with
// `apply` also writes its entries home (only for a frame already known
// valid).  With `words`, collects the entry words; with `spans`, the
// ranges it writes and vouches for.
WalkResult walk_frame(const PoolFile& pool, uint32_t lane, uint64_t phys, Medium* apply,
                      std::vector<uint64_t>* words, bool misread_pairs = false, FrameSpans* spans = nullptr) {
  FrameReader r(pool, lane, phys);
  WalkResult res;
  uint64_t w;
  if (!r.next(&w)) return res;
  const uint64_t head = w;
  const bool one_line = head >> 48 == kOneLineTag;
  if (!one_line && head != kFrameMagic) return res;
  if (one_line) r.one_line();
  uint64_t hash = hash_word(frame_seed(pool, lane, phys), kFrameMagic);
  uint64_t count = 0;
  uint64_t entries_end = 1;  // words through the last whole entry (one-line frames)
  while (r.next(&w)) {
    if (one_line && w == 0) break;  // the padding: no entry starts with 0
    hash = hash_word(hash, w);
    const uint64_t kind = w & 0xF;
    if (kind == kStore) {
      const uint64_t lg = (w >> 4) & 0xF, off = w >> 8, n = uint64_t{1} << lg;
      uint64_t v;
      if (lg > 3 || (off & (n - 1)) || !pool.home_range_ok(off, n) || !r.next(&v)) break;
      hash = hash_word(hash, v);
      if (apply) {
        apply->store(pool.at(off), v, static_cast<unsigned>(n));
        apply->flush(pool.at(off), n);
        res.bytes += n;
      }
      if (words) words->insert(words->end(), {w, v});
      if (spans) spans->written.push_back({off, n});
      ++count;
    } else if (kind == kRange) {
      const uint64_t off = w >> 8;
      uint64_t n;
      if (!r.next(&n)) break;
      hash = hash_word(hash, n);
      const uint64_t nw = (n + 7) / 8;
      if (n == 0 || !pool.home_range_ok(off, n) || nw > r.left()) break;
      if (words) words->insert(words->end(), {w, n});
      if (spans) spans->written.push_back({off, n});
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
    } else if (kind == kHalfPair) {
      uint64_t w2, vals;
      if (!r.next(&w2)) break;
      hash = hash_word(hash, w2);
      if (!r.next(&vals)) break;
      hash = hash_word(hash, vals);
      const uint64_t a = w >> 8, b = w2 >> 8, ha = (w >> 4) & 0xF, hb = (w2 >> 4) & 0xF;
      if ((w2 & 0xF) != kHalfPair || ha > 1 || hb > 1 || (a & 7) || (b & 7) || !pool.home_range_ok(a, 8) ||
          !pool.home_range_ok(b, 8)) {
        break;
      }
      if (apply && misread_pairs) {  // the broken control: a half as the whole word
        apply->store(pool.at(a), vals & 0xFFFFFFFFu, 8);
        apply->store(pool.at(b), vals >> 32, 8);
        apply->flush(pool.at(a), 8);
        apply->flush(pool.at(b), 8);
      } else if (apply) {  // each half onto its half only
        apply->store(pool.at(a + 4 * ha), vals & 0xFFFFFFFFu, 4);
        apply->flush(pool.at(a), 8);
        apply->store(pool.at(b + 4 * hb), vals >> 32, 4);
        apply->flush(pool.at(b), 8);
        res.bytes += 8;
      }
      if (words) words->insert(words->end(), {w, w2, vals});
      if (spans) spans->written.insert(spans->written.end(), {{a, 8}, {b, 8}});
      count += 2;
    } else if (kind == kFresh) {
      uint64_t n, h;
      if (!r.next(&n)) break;
      hash = hash_word(hash, n);
      if (!r.next(&h)) break;
      hash = hash_word(hash, h);
      const uint64_t off = w >> 8;
      if (n == 0 || !pool.home_range_ok(off, n)) break;
      if (words) words->insert(words->end(), {w, n, h});
      if (spans) spans->fresh.push_back({off, n, h});
      // Replay writes nothing, but flushes the bytes: the recovering
      // process may have found them only in a page cache (the writer was
      // killed in its commit's sync) and must make them durable before
      // its watermark passes the frame.
      if (apply) apply->flush(pool.at(off), n);
      res.vouches = true;
      ++count;
    } else if (kind == kLink && !one_line) {
      uint64_t bytes;
      if (!r.next(&bytes)) break;
      hash = hash_word(hash, bytes);
      if (!r.jump(w >> 8, bytes)) break;
    } else if (kind == kCommit && !one_line) {
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
    entries_end = r.read();
  }
  if (one_line) {
    // Zero words from the last whole entry to the checksum in word 7.  A
    // damaged or stale entry fails here or in the sum.
    const char* line = pool.lane_base(lane) + phys;
    bool padded = true;
    for (uint64_t i = entries_end; i <= kOneLineEntryWords; ++i) {
      std::memcpy(&w, line + 8 * i, 8);
      padded = padded && w == 0;
      hash = hash_word(hash, w);
    }
    uint64_t sum;
    std::memcpy(&sum, line + 8 * (kOneLineEntryWords + 1), 8);
    res.valid = padded && sum == hash_finish(hash_word(hash, head));
    res.seq = head & kOneLineSeqMax;
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
    if (first != kFrameMagic && first >> 48 != kOneLineTag) continue;
    WalkResult r = walk_frame(pool, lane, p, nullptr, nullptr);
    if (!r.valid && !validate_commit && r.parsed) {  // control variant only: trust what parsed
      if (r.seq <= min_seq) r.seq = min_seq + 1;
      r.valid = true;
    }
    if (!r.valid) {
      ++*torn;
      continue;
    }
    if (r.seq > min_seq) out->push_back({r.seq, lane, p, r.entries, r.vouches});
  }
}

uint64_t apply_frame(const PoolFile& pool, Medium& medium, const RedoFrame& f, bool misread_pairs) {
  const WalkResult r = walk_frame(pool, f.lane, f.phys_pos, &medium, nullptr, misread_pairs);
  counters().home_writes.add(r.entries ? 1 : 0);
  return r.bytes;
}

static FrameSpans frame_spans(const PoolFile& pool, const RedoFrame& f) {
  FrameSpans sp;
  walk_frame(pool, f.lane, f.phys_pos, nullptr, nullptr, false, &sp);
  return sp;
}

static bool home_holds(const PoolFile& pool, const FrameSpans::Fresh& fr) {
  return fresh_hash(pool.at(fr.off), fr.off, fr.len) == fr.hash;
}

uint64_t drop_unvouched(const PoolFile& pool, std::vector<RedoFrame>* frames, uint64_t* max_seq) {
  // The common case: every frame's fresh bytes are what it vouched for.
  bool any_bad = false;
  for (const RedoFrame& f : *frames) {
    *max_seq = std::max(*max_seq, f.seq);
    if (!f.vouches || any_bad) continue;
    for (const FrameSpans::Fresh& fr : frame_spans(pool, f).fresh) any_bad = any_bad || !home_holds(pool, fr);
  }
  if (!any_bad) return 0;
  // Rare (a crash mid-commit).  Newest first: a frame home does not match
  // stands if a newer frame kept writes to the range home does not match.
  std::sort(frames->begin(), frames->end(), [](const RedoFrame& a, const RedoFrame& b) { return a.seq > b.seq; });
  std::map<uint64_t, uint64_t> written;  // off -> end, of the frames kept so far (may overlap)
  auto overlaps = [&](uint64_t off, uint64_t len) {  // a plain walk
    for (auto it = written.begin(); it != written.end() && it->first < off + len; ++it) {
      if (it->second > off) return true;
    }
    return false;
  };
  size_t kept = 0;
  for (size_t i = 0; i < frames->size(); ++i) {
    const FrameSpans sp = frame_spans(pool, (*frames)[i]);
    bool drop = false;
    for (const FrameSpans::Fresh& fr : sp.fresh) drop = drop || (!home_holds(pool, fr) && !overlaps(fr.off, fr.len));
    if (drop) continue;
    for (const auto& [off, len] : sp.written) {
      uint64_t& end = written[off];
      end = std::max(end, off + len);
    }
    (*frames)[kept++] = (*frames)[i];
  }
  const uint64_t dropped = frames->size() - kept;
  frames->resize(kept);
  return dropped;
}

bool frame_committed(const PoolFile& pool, uint32_t lane, uint64_t phys, uint64_t min_seq) {
  if (phys % 64 != 0 || phys >= pool.header().lane_size) return false;
  const WalkResult r = walk_frame(pool, lane, phys, nullptr, nullptr);
  return r.valid && r.seq > min_seq;
}

std::vector<uint64_t> frame_entry_words(const PoolFile& pool, const RedoFrame& f) {
  std::vector<uint64_t> words;
  walk_frame(pool, f.lane, f.phys_pos, nullptr, &words);
  return words;
}

}  // namespace softwrap
