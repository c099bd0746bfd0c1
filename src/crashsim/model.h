// model.h — the persistency model of the crash simulator: which images of
// persistent memory a power failure may leave, given a trace.
//
// Approach.  A Model replays a trace (trace_medium.h) event by event and
// keeps, for the *durable* image (a buffer the size of the pool), exactly
// what is guaranteed to have reached persistence, plus everything that may
// have (pending):
//   * x86 ADR: a temporal store may persist at any time after it is issued.
//     Per cache line, what persists is a prefix of the line's stores in
//     coherence order (the global order of recording).  A store is a unit of
//     at most 8 bytes inside one aligned word, so aligned 8-byte stores are
//     atomic and larger writes tear at 8-byte boundaries.  A flush by thread
//     T records "line L up to its k-th store"; T's next fence makes that
//     prefix durable.  Streamed words are pending, each independently, until
//     the issuing thread's next fence.  drain() is a fence by every thread.
//   * Themis (fenceless persist ordering, eq. 3): as x86, plus: an image
//     that holds a temporal store of thread T holds every streamed word T
//     issued before it.  So a temporal store becoming durable makes T's
//     earlier streams durable, and a crash image is legal only if it obeys
//     the rule for its pending units too.
//   * page cache (an ordinary file mapped without DAX, made durable by the
//     msync medium): every store, temporal or streamed, lands in the page
//     cache at once, and the kernel may write any dirty page back at any
//     time, in any order, with the page's content of that moment.  So the
//     model's "line" is a writeback unit (a page, 4096 bytes by default; a
//     512-byte sector lets a page write tear on power loss), and what
//     persists of a unit is a prefix of its stores since it was last
//     synced.  A flush or a stream by thread T notes the 4 KiB page it
//     touches (the msync medium's per-thread page list); T's next fence
//     makes every unit of the noted pages durable with ALL its stores so
//     far — stores after the flush too.  Another thread's fence does not.
//     A streamed word is a store into its unit, nothing more; drain()
//     (msync of the whole mapping) makes every unit durable.
//   * eADR (the persistence domain includes the CPU caches: Intel eADR,
//     CXL global persistent flush): a temporal store is durable once it is
//     globally visible, and x86-TSO makes stores visible in one total order
//     that keeps each thread's program order; the trace's global order is
//     taken as that order.  So what persists of the temporal stores is a
//     prefix of the trace's stores: the model keeps the stores since the
//     last crash point (every fence, drain and marker is one) as one
//     ordered pending list, a crash image persists a prefix of it, and
//     after the crash point all of it is durable.  Flushes do nothing.
//     Non-temporal stores leave the cache domain for write-combining
//     buffers, which are ordered by nothing but a fence: each streamed word
//     is pending, independently, until its thread's next fence, as on x86.
//     (A string instruction may make its stores visible out of order; the
//     engines store through the medium word by word, which the trace
//     records in order.)
// At a crash point the pending state is a CrashState: per pending line its
// ordered pending stores, and the pending streamed words.  A Choice picks,
// per line, how many of them persisted (a prefix) and, per streamed word,
// whether it did.  Every legal image is one Choice; enumerate() lists them
// all when there are at most max_exhaustive, and otherwise a stratified
// sample (nothing, everything, single flips, program-order prefixes, seeded
// random choices).  The caller applies a Choice to the durable buffer (with
// a journal, to take it back) and deduplicates by the image hash.
//
// Checking a persist order (the Themis hardware simulator, src/themis).
// A caller that knows what *did* persist — a timing model of the hardware —
// replays the trace with step() in its own execution order and reports,
// in between, each line prefix and each streamed word as it reached
// persistence (persist_line, persist_stream).  The rules above then only
// ever *require* things: a fence requires its thread's streams and flushed
// prefixes, and under Themis a temporal store reaching persistence
// requires its thread's earlier streams.  A required unit that was not
// reported persisted first is passed to the observer: each call is a
// violation of Eq. 1–4 by the hardware (the model then makes it durable,
// so it is reported once).
//
// Not modelled: a temporal and a streamed store to the same word both
// pending at once (their relative order is unspecified on x86; images
// apply streams first) — counted in mixed_words() so a run can report it.
#ifndef SOFTWRAP_CRASHSIM_MODEL_H_
#define SOFTWRAP_CRASHSIM_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "medium/trace_medium.h"

namespace softwrap::crashsim {

enum class Persistency { kX86, kThemis, kPageCache, kEadr };
// "x86", "themis", "page-cache", "eadr".
const char* persistency_name(Persistency p);
// The inverse of persistency_name; false if `name` is none of them.
bool parse_persistency(const std::string& name, Persistency* out);

// The page cache model's units: the page the msync medium syncs (and the
// default writeback unit) and the smallest writeback unit allowed (a
// sector: a device may tear a page write at sector boundaries).
inline constexpr uint32_t kSyncPage = 4096;
inline constexpr uint32_t kSectorUnit = 512;
// Whether `unit` is a writeback unit the page cache model takes: a power
// of two from kSectorUnit to kSyncPage.
inline bool valid_writeback_unit(uint64_t unit) {
  return unit >= kSectorUnit && unit <= kSyncPage && (unit & (unit - 1)) == 0;
}

// Deterministic generator (splitmix64): the same seed gives the same images
// on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  uint64_t s_;
};

// One store unit: bytes `mask` of the aligned word at pool offset `word`.
struct Unit {
  uint64_t word;
  uint64_t mask;
  uint64_t val;
  uint64_t seq;  // position in the trace: global order
  const char* label;
  uint8_t thread;
};

// Words changed in the durable buffer, for taking them back.
class WordJournal {
 public:
  void push(uint64_t word, uint64_t old) { entries_.push_back({word, old}); }
  size_t size() const { return entries_.size(); }
  void revert_to(char* base, size_t n);
  void revert(char* base) { revert_to(base, 0); }
  // Hash delta of the words changed since entry `from` (first old value of
  // each word against its current value).
  uint64_t delta_hash(const char* base, size_t from);

 private:
  struct Entry {
    uint64_t word, old;
  };
  std::vector<Entry> entries_;
  std::vector<Entry> scratch_;
};

// Contribution of one word to an image hash (images hash as the XOR of
// their words' contributions, so a change is an O(1) update).
uint64_t word_hash(uint64_t word, uint64_t value);

// What may or may not have persisted at a crash point.
struct CrashState {
  std::vector<uint64_t> line_off;             // pending lines, ascending
  std::vector<std::vector<Unit>> line_units;  // their pending stores, in order
  std::vector<Unit> streams;                  // pending streamed words, in order
  size_t dims() const { return line_units.size() + streams.size(); }
  uint32_t max(size_t d) const {
    return d < line_units.size() ? static_cast<uint32_t>(line_units[d].size()) : 1;
  }
  const Unit& stream(size_t d) const { return streams[d - line_units.size()]; }
  bool is_line(size_t d) const { return d < line_units.size(); }
};

// Per dimension: line -> number of its pending stores persisted; stream ->
// 0 or 1.
using Choice = std::vector<uint32_t>;

bool themis_legal(const CrashState& cs, const Choice& c);
// Makes c legal under Themis by adding the streams its temporal stores
// require (up) or by cutting line prefixes at the first store that needs an
// excluded stream (down).
void themis_repair_up(const CrashState& cs, Choice* c);
void themis_repair_down(const CrashState& cs, Choice* c);
// Number of choices (before the Themis filter), saturating at UINT64_MAX.
uint64_t choice_count(const CrashState& cs);

// Writes the chosen units into base (streams first, then line prefixes),
// journaling every changed word.
void apply_choice(const CrashState& cs, const Choice& c, char* base, WordJournal* j);

struct EnumOptions {
  uint64_t max_exhaustive = uint64_t{1} << 14;
  uint32_t flips = 24;     // dimensions flipped singly (each both ways)
  uint32_t prefixes = 12;  // program-order prefixes
  uint32_t random = 24;    // seeded random choices
};

// Calls f for each candidate; f returns false to stop.  Returns true if the
// enumeration was exhaustive.  Under Themis only legal choices are passed.
bool enumerate(const CrashState& cs, Persistency p, const EnumOptions& opt, Rng& rng,
               const std::function<bool(const Choice&)>& f);

class Model {
 public:
  // durable: the image at the start of the trace, updated as units become
  // durable.  hash0: that image's hash.  journal (nullable) records the
  // durable buffer's changes.  writeback_unit: the page cache model's line
  // (REQUIRES: valid_writeback_unit); the other models' line is 64 bytes.
  Model(char* durable, size_t size, Persistency p, uint64_t hash0, WordJournal* journal,
        uint32_t writeback_unit = kSyncPage);

  // A unit the rules required but nobody reported persisted; `cause` is
  // the temporal store that required it (Themis rule) or nullptr (a fence).
  using Observer = std::function<void(const Unit& required, const Unit* cause)>;
  void set_observer(Observer f) { observer_ = std::move(f); }
  // Line `line` persisted up to its `upto`-th store in coherence order
  // (the order of step()); earlier reports of the same line are included.
  void persist_line(uint64_t line, uint64_t upto);
  // Thread t's streamed unit stepped with seq `seq` persisted.
  void persist_stream(uint8_t t, uint64_t seq);

  void step(const TraceEvent& e, uint64_t seq);
  // The pending state.  Streamed words that cannot change the image (same
  // bytes as durable, no other pending store to the word) and lines whose
  // stores cannot either are left out.
  void snapshot(CrashState* out);
  uint64_t hash() const { return hash_; }
  uint64_t mixed_words() const { return mixed_; }

 private:
  struct Line {
    uint64_t durable = 0;  // stores made durable so far
    std::vector<Unit> pending;
    size_t head = 0;  // pending[head..] are still pending
    bool listed = false;
    uint64_t total() const { return durable + (pending.size() - head); }
  };
  // x86/Themis: line `line` up to its `upto`-th store.  Page cache: every
  // unit of the 4 KiB page at `line`, upto = kAll (all stores at the fence).
  struct Flush {
    uint64_t line, upto;
  };

  void persist(const Unit& u);
  void require(const Unit& u, const Unit* cause) {
    if (observer_) observer_(u, cause);
    persist(u);
  }
  // reported: the line's units are the caller's report, not requirements.
  void advance(uint64_t line, uint64_t upto, bool reported = false);
  void fence(uint8_t t);
  void drain(uint8_t t);
  // Page cache: thread t's flush or stream touched the page holding `off`.
  void note_page(uint8_t t, uint64_t off);
  bool page_cache() const { return p_ == Persistency::kPageCache; }
  bool eadr() const { return p_ == Persistency::kEadr; }
  // eADR: every temporal store pending since the last crash point made
  // durable (in order).
  void eadr_visible();
  void themis_streams_before(const Unit& cause);
  void ensure_thread(uint8_t t);

  char* base_;
  size_t size_;
  Persistency p_;
  uint64_t unit_;  // bytes of a line: 64, or the page cache's writeback unit
  uint64_t hash_;
  WordJournal* journal_;
  std::unordered_map<uint64_t, Line> lines_;
  std::vector<uint64_t> listed_;
  std::vector<std::vector<Flush>> flushes_;  // per thread
  std::vector<std::vector<Unit>> streams_;   // per thread, issue order
  std::vector<Unit> visible_;                // eADR: temporal stores since the last crash point
  uint64_t mixed_ = 0;
  std::unordered_map<uint64_t, uint32_t> scratch_count_;
  std::vector<uint64_t> scratch_words_;  // one line's words (snapshot)
  Observer observer_;
};

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_MODEL_H_
