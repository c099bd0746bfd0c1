// redo_log.h — the redo log: frames of a wrap's new values, streamed to a
// lane in whole cache lines, continued in log extents taken from the heap
// when the lane has no room; format in docs/log-format.md.
//
// A frame starts on a 64-byte boundary of its lane and is a sequence of
// 8-byte words:
//   header    kFrameMagic
//   entries   STORE: (offset << 8 | size_log2 << 4 | kStore), value
//             RANGE: (offset << 8 | kRange), length, ceil(length/8) words
//             LINK:  (extent offset << 8 | kLink), extent bytes — the frame
//                    continues at the first word of that extent
//             PAIR:  (offset_a << 8 | half_a << 4 | kHalfPair),
//                    (offset_b << 8 | half_b << 4 | kHalfPair),
//                    value_a | value_b << 32 — two words each changed in one
//                    32-bit half (write-combined logging: 3 words, not 4)
//             FRESH: (offset << 8 | kFresh), length, fresh_hash(bytes) —
//                    the frame vouches that home holds these bytes: a block
//                    the wrap allocated and wrote in place (engine/fresh.h).
//                    Nothing to replay; recovery takes the frame as
//                    committed only if home matches (drop_unvouched).
//   trailer   (count << 8 | kCommit), seq, checksum
// A wrap whose entries fit in 48 bytes (six words, no LINK) writes a
// one-line frame instead (layout version 4):
//   word 0    kOneLineTag << 48 | seq
//   words 1-6 the entries, then zero words (no entry starts with 0)
//   word 7    checksum of the seed, kFrameMagic, words 1-6, then word 0
// so a wrap of up to three word stores streams one line, not two.
// Entries never straddle a link: a range that does not fit is split into
// several RANGE entries, and a link is always written while there is room
// for it, so a reader meets LINK only where it expects an entry kind.  The
// checksum is a word hash of everything from the header through seq (links
// included), seeded with the pool UUID, the lane and the frame's physical
// position, so a frame is valid only where it was written and only if
// every word of it — in the lane and in every extent — persisted.  A frame
// without a valid trailer was never committed.  Committing therefore costs
// one fence: stream the last partial line, fence.
//
// Lanes are circular: logical positions grow forever, physical position =
// logical % lane size (a multiple of 64, so lines never straddle the end).
// A frame's part in its lane is bounded by the lane's free space: when it
// runs out the frame links to an extent (Allocator::reserve_log_chunks:
// free heap chunks reserved in DRAM only, whose persistent heads stay
// "free", so a crash releases them by itself).  Writing never waits for
// log space, so a wrap never waits for space only its own close could free.
#ifndef SOFTWRAP_LOG_REDO_LOG_H_
#define SOFTWRAP_LOG_REDO_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "common/counters.h"
#include "common/hash.h"
#include "log/lanes.h"

namespace softwrap {

class Allocator;
class Medium;
class PoolFile;

inline constexpr uint64_t kFrameMagic = 0x3146524F44455257ull;  // "WREDORF1"
enum RedoKind : uint64_t { kStore = 1, kRange = 2, kHalfPair = 3, kLink = 4, kFresh = 5, kCommit = 0xC };
// One-line frames (layout version 4): the header's top 16 bits ("SW");
// its low 48 bits are the seq (a wrap with a larger seq writes a classic
// frame).  kFrameMagic's top bits differ, so a header is one or the other.
inline constexpr uint64_t kOneLineTag = 0x5753;
inline constexpr uint64_t kOneLineSeqMax = (uint64_t{1} << 48) - 1;
inline constexpr uint64_t kOneLineEntryWords = 6;
static_assert(kFrameMagic >> 48 != kOneLineTag);

// The hash a FRESH record carries for the len bytes at pool offset off.
uint64_t fresh_hash(const void* bytes, uint64_t off, uint64_t len);

// Seed of the frame checksum for a physical lane position.
uint64_t frame_seed(const PoolFile& pool, uint32_t lane, uint64_t phys_pos);
// The pool's part of every log checksum seed (a hash of its UUID, which
// never changes while the pool is open): writers keep it, so that opening
// a frame or writing an undo record reads neither the pool header — a
// line of persistent memory a cold wrap would miss — nor hashes it again.
uint64_t pool_seed(const PoolFile& pool);
// frame_seed(pool, lane, phys_pos) given pool_seed(pool).
uint64_t frame_seed_from(uint64_t pool_seed, uint32_t lane, uint64_t phys_pos);

// Heap chunks a frame (or an undo generation) continued in.
struct LogExtent {
  uint64_t offset;
  uint32_t chunks;
};

// Takes log extents for one writer: sizes double from one chunk up to
// kMaxChunks while a wrap keeps needing more (fewer when the heap has no
// such run), and every extent goes back to the allocator by release().
class ExtentSource {
 public:
  static constexpr uint32_t kMaxChunks = 256;  // 64 MiB
  explicit ExtentSource(Allocator* alloc) : alloc_(alloc) {}
  // Called when the heap has no free chunk: frees what it can (log extents
  // that committed frames hold until they are retired) and returns whether
  // take() should look again.  The owning engine's, or none.
  using ReclaimFn = bool (*)(void* self);
  void set_reclaim(ReclaimFn fn, void* self) {
    reclaim_ = fn;
    reclaim_self_ = self;
  }
  // A new extent (recorded in taken()), or {0, 0} if the heap has no free
  // chunk at all (after the reclaim function, if any, found nothing more).
  LogExtent take();
  const std::vector<LogExtent>& taken() const { return taken_; }
  // Hands the recorded extents over (to be released later) and resets.
  std::vector<LogExtent> hand_over();
  // Returns extents to the allocator.
  static void release(Allocator* alloc, const std::vector<LogExtent>& exts);
  void release_all();

 private:
  Allocator* alloc_;
  std::vector<LogExtent> taken_;
  ReclaimFn reclaim_ = nullptr;
  void* reclaim_self_ = nullptr;
};

// A committed frame's extents awaiting retirement: the frame's seq and the
// alias-table generation that was active when it committed (the frame is
// home once that table is retired; softwrap), 0 where unused.
struct RetiringFrame {
  uint64_t seq;
  uint64_t gen;
  std::vector<LogExtent> extents;
};
// Such frames in any order: release_extents_locked releases those with
// seq <= retired (the caller holds the lock).
using RetiringExtents = std::deque<RetiringFrame>;
void release_extents_locked(uint64_t retired, RetiringExtents* q, Allocator* alloc);

// Writes frames into one lane at a time.  One writer per thread; begin()
// binds it to the lane the thread holds.
class RedoWriter {
 public:
  // Called when the frame's part in the lane runs short: refreshes
  // lane.reclaimed from what retirement has freed.  Must not wait.
  using RoomFn = void (*)(void* self, Lane& lane);

  // A writer made for a pool of layout version 4 writes one-line frames; on
  // an older pool (one an older release shares, so it was not upgraded)
  // classic ones only.
  RedoWriter(const PoolFile* pool, Medium* medium, Allocator* alloc, RoomFn room, void* room_self);

  // Free whole lines in the lane (logical space not holding live frames).
  static uint64_t lane_free_lines(const Lane& lane) { return (lane.reclaimed + lane.size - lane.tail) / 64; }
  // REQUIRES: lane_free_lines(lane) >= 1.
  void begin(Lane& lane);
  // Append entries; false if the frame cannot grow (no free heap chunk for
  // an extent: the caller abandons the frame).
  bool append_store(uint64_t off, uint64_t v, unsigned size) {
    return flush_pending_in(off & ~uint64_t{7}, 8) && put_store(off, v, size);
  }
  bool append_range(uint64_t off, const void* src, size_t n);
  // No record yet, none waiting (a half-changed word) and no extent: the
  // frame holds nothing to commit, and nothing of it left the writer.
  bool empty() const { return count_ == 0 && !pending_.set && ext_ == nullptr; }
  // A FRESH record: the frame vouches for the n bytes home holds at off.
  bool append_fresh(uint64_t off, uint64_t n, uint64_t hash);

  // Write-combined logging (SW_CONFIG_WCL).  The caller compared the new
  // value v of the word at w with cur, the value the wrap saw, and found
  // them different.  A word changed in one 32-bit half only waits for a
  // second such word and goes out with it as one PAIR; others as STORE.
  bool append_word(uint64_t w, uint64_t v, uint64_t cur);
  // Log words this frame has saved so far over no WCL.
  int64_t frame_saved_words() const { return saved_words_; }
  // A word store the compare found unchanged (counted, nothing logged).
  void note_eliminated();
  // A range compared with what the wrap saw (cur, same length): runs of
  // unchanged words are left out where that saves log words, short runs of
  // half-changed words go out as halves, the rest as RANGE entries.
  // changed(ctx, off, len, at) is called for each byte run that was logged
  // (at: its index in now/cur), so the caller aliases just those; it
  // returns false to stop (the wrap failed).
  using ChangedFn = bool (*)(void* ctx, uint64_t off, size_t len, size_t at);
  bool append_range_wcl(uint64_t off, const unsigned char* now, const unsigned char* cur, size_t n,
                        ChangedFn changed, void* ctx);
  // A range write with write-combined logging, as both redo engines make
  // it: append_range_wcl 64 KiB at a time, `seen(o, len, out)` filling
  // *scratch with the bytes the wrap sees there, and `put(o, bytes, len)`
  // putting each run the log records where the wrap's writes go.  False
  // if out of space or a put failed.
  template <class Seen, class Put>
  bool append_compared(uint64_t off, const unsigned char* now, size_t n, std::vector<unsigned char>* scratch,
                       Seen&& seen, Put&& put) {
    constexpr size_t kChunk = 64 << 10;
    for (size_t done = 0; done < n; done += kChunk) {
      const uint64_t o = off + done;
      const size_t len = n - done < kChunk ? n - done : kChunk;
      scratch->resize(len);
      seen(o, len, scratch->data());
      const unsigned char* in = now + done;
      auto run = [&](uint64_t roff, size_t rlen, size_t at) { return put(roff, in + at, rlen); };
      const ChangedFn call = [](void* c, uint64_t roff, size_t rlen, size_t at) {
        return (*static_cast<decltype(run)*>(c))(roff, rlen, at);
      };
      if (!append_range_wcl(o, in, scratch->data(), len, call, &run)) return false;
    }
    return true;
  }
  // Trailer + last partial line streamed (or, for a frame of at most six
  // entry words in its first line, that line as a one-line frame).  The
  // caller fences.  Records the frame in the lane's queue
  // (Lane::push_frame).  False if out of space.
  bool commit(uint64_t seq);
  // Whether commit() writes one-line frames (the pool is version 4).
  bool one_line_frames() const { return one_line_; }
  // Forget the open frame; the lane's tail returns to its start and its
  // extents go back to the heap.
  void abandon();
  // The extents the last committed frame continued in (release them once
  // the frame is retired).
  // A frame that took none (ext_size_ still 0 from begin) reads nothing
  // past the writer's first two lines.
  std::vector<LogExtent> take_extents() { return ext_size_ == 0 ? std::vector<LogExtent>{} : extents_.hand_over(); }
  // See ExtentSource::set_reclaim.
  void set_extent_reclaim(ExtentSource::ReclaimFn fn, void* self) { extents_.set_reclaim(fn, self); }

  bool open() const { return lane_ != nullptr; }
  uint32_t entries() const { return count_; }
  // Lane position of the open frame's header.
  uint64_t frame_phys() const { return start_ % lane_->size; }

 private:
  // Words the current segment can still take, including the open line.
  uint64_t words_left() const {
    const uint64_t seg = ext_ ? ext_size_ - ext_pos_ : limit_ - lane_->tail;
    return seg / 8 - fill_ / 8;
  }
  // Makes room for `words` more words (plus a link) in the segment,
  // linking to a new extent if needed.  False: no space anywhere.
  bool ensure(uint64_t words);
  bool link();
  void put(uint64_t w) {
    ++frame_words_;
    hash_ = hash_word(hash_, w);
    line_[fill_ / 8] = w;
    fill_ += 8;
    if (fill_ == kLine) flush_line();
  }
  void flush_line();
  // Logs the half-changed word still waiting for a partner, as a STORE, if
  // it lies in [off, off+n): a later entry for it must come after it.
  bool flush_pending_in(uint64_t off, uint64_t n) {
    return !pending_.set || pending_.w + 8 <= off || pending_.w >= off + n || flush_pending();
  }
  bool flush_pending();
  bool put_store(uint64_t off, uint64_t v, unsigned size) {
    if (words_left() < 4 && !ensure(2)) return false;  // ensure's test, inline
    const uint64_t lg = size == 8 ? 3 : size == 4 ? 2 : size == 2 ? 1 : 0;
    ++count_;
    counters().log_bytes.add(16);
    put(off << 8 | lg << 4 | kStore);
    put(v);
    return true;
  }
  bool put_range(uint64_t off, const unsigned char* src, size_t n);
  bool put_pair(uint64_t a, uint64_t va, unsigned ha, uint64_t b, uint64_t vb, unsigned hb);
  // Streams `lines` whole lines from src at the segment's position.
  void stream_lines(const unsigned char* src, size_t lines);

  static constexpr uint32_t kLine = 64;
  // What a frame's begin, stores and commit read and write: two cache
  // lines and the line being filled (a wrap that opens with cold caches
  // misses three lines here).  First line: a store's.
  alignas(64) Lane* lane_ = nullptr;
  uint64_t start_ = 0;  // logical lane position of the frame header
  uint64_t limit_ = 0;  // logical lane position the frame's lane part may reach
  char* ext_ = nullptr;  // current extent (nullptr: writing in the lane)
  uint64_t hash_ = 0;
  uint64_t frame_words_ = 0;  // log words of this frame so far
  uint32_t count_ = 0;
  uint32_t fill_ = 0;  // bytes in line_
  Medium* medium_;
  // Second line: a frame's begin and commit, and a store's test for a
  // waiting half word.
  alignas(64) struct Pending {
    uint64_t w = 0, full = 0;
    unsigned halves = 0;     // bit 0: low half changed, bit 1: high half
    bool set = false;
  } pending_;                // a half-changed word waiting for a partner
  int64_t saved_words_ = 0;  // log words this frame saves over no WCL
  const PoolFile* pool_;
  uint64_t ext_pos_ = 0;
  uint64_t ext_size_ = 0;    // bytes of the current extent; 0 until the frame takes one
  uint64_t pool_seed_;       // pool_seed(*pool_), for begin's frame_seed
  bool one_line_;            // commit writes one-line frames where they fit
  // The rest: where log space comes from when the lane is short of it,
  // and a range's write-combined logging.
  bool in_range_ = false;    // append_range_wcl is logging a range's halves
  ExtentSource extents_;
  RoomFn room_;
  void* room_self_;
  alignas(64) uint64_t line_[8];
};

// A committed frame found by recovery (its words stay in the pool).
struct RedoFrame {
  uint64_t seq;
  uint32_t lane;
  uint64_t phys_pos;
  uint32_t entries;
  bool vouches = false;  // has FRESH records
};

// Scans a lane for valid committed frames with seq > min_seq, following
// links into extents.  Counts candidate frames (header present) that failed
// validation in *torn.  validate_commit = false is the crash simulator's
// broken control variant (RecoveryOptions::redo_skip_commit_validation): a
// frame whose entries parse is accepted without a valid trailer.
void scan_lane(const PoolFile& pool, uint32_t lane, uint64_t min_seq, std::vector<RedoFrame>* out,
               uint64_t* torn, bool validate_commit = true);

// Fresh bytes (FRESH records).  A frame that vouches for bytes home does
// not hold was never acknowledged: its commit fence made the trailer and
// the fresh bytes durable together, and the trailer got there first.  Home
// may also no longer match because a later wrap changed the block once it
// was committed (retirement of the same alias table, a spilled wrap's
// in-place writes) before the watermark passed the frame; such a later
// wrap's committed frame writes those bytes, and it could reach them only
// after the frame committed (the block was unreachable before), so the
// frame stands.  drop_unvouched removes from frames (any order; it may
// reorder them) each frame
// with a FRESH range that home does not match and that no frame kept and
// newer than it writes to, deciding from the newest down; returns how many
// it dropped and raises *max_seq to the highest seq among all of them
// (the watermark must pass dropped frames too, or a later recovery could
// take one).
uint64_t drop_unvouched(const PoolFile& pool, std::vector<RedoFrame>* frames, uint64_t* max_seq);

// Applies a frame's entries to their home locations through the medium
// (write + flush, no fence).  Returns bytes applied.
// misread_pairs: the crash simulator's broken control (RecoveryOptions::
// wcl_misread_pairs).
uint64_t apply_frame(const PoolFile& pool, Medium& medium, const RedoFrame& f, bool misread_pairs = false);

// Whether a valid frame with seq > min_seq has its header at `phys`.
bool frame_committed(const PoolFile& pool, uint32_t lane, uint64_t phys, uint64_t min_seq);

// The frame's entry words (links left out), for tests and tools.
std::vector<uint64_t> frame_entry_words(const PoolFile& pool, const RedoFrame& f);

}  // namespace softwrap

#endif  // SOFTWRAP_LOG_REDO_LOG_H_
