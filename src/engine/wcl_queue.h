// wcl_queue.h — whole-word stores of a wrap waiting for their
// write-combined-logging compare, and when to compare at all (the redo
// engines, SW_CONFIG_WCL).
//
// Approach.  The compare needs the word's current value; for a word no
// alias table holds that is a home read, a cache miss for scattered stores
// (without WCL the redo engines never read home in the foreground).  So a
// whole-word store is queued with its home line prefetched, and the queue
// is compared and logged, in order, when it is full or before anything
// else of the wrap goes through the engine (a load, read, write, narrower
// store, peek, commit): the misses of a wrap's scattered stores overlap
// instead of adding up.  Abort discards it: nothing queued has reached an
// alias table or the log.  The wrap's own loads see queued stores because
// every load drains first.
#ifndef SOFTWRAP_ENGINE_WCL_QUEUE_H_
#define SOFTWRAP_ENGINE_WCL_QUEUE_H_

#include <algorithm>
#include <cstdint>

#include "common/counters.h"

namespace softwrap {

class WclQueue {
 public:
  static constexpr unsigned kSize = 16;
  struct Item {
    uint64_t w, v;  // word offset, new value
  };

  bool empty() const { return n_ == 0; }
  // Queues a store of v to word w whose home copy is at `home`; true when
  // the queue is full (drain it).
  bool push(const void* home, uint64_t w, uint64_t v) {
    __builtin_prefetch(home);
    items_[n_++] = {w, v};
    return n_ == kSize;
  }
  // Calls f(item) for the queued stores in order until one returns false;
  // the queue is empty afterwards.
  template <class F>
  void drain(F&& f) {
    const unsigned n = n_;
    n_ = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (!f(items_[i])) return;
    }
  }
  void clear() { n_ = 0; }
  // f(item) for each queued store, in order (the queue is unchanged).
  template <class F>
  void for_each(F&& f) const {
    for (unsigned i = 0; i < n_; ++i) f(items_[i]);
  }

 private:
  Item items_[kSize];
  unsigned n_ = 0;
};

// The values a compared wrap last loaded or stored, by word: a few
// direct-mapped slots, valid for the wrap they were noted in.  A wrap
// typically loads a word and then stores a new value to it (a counter, a
// link); the compare then needs the value the load just found, and looking
// it up again through every alias table of the ring and home is what the
// compare would otherwise cost (ssca2's degree counts on x86 ran at 0.90x
// of their speed without WCL before, 1.00x with the slots).  Loads of a
// compared wrap note what they return (a few instructions each), and every
// compared store notes the word's new value, so a slot never holds an
// older value of the wrap's view than the one a lookup would find; a range
// write forgets everything (clear()).
class WclSeen {
 public:
  static constexpr unsigned kSlots = 16;
  // At the start of a compared wrap and on a range write (sixteen stores:
  // a load's note stays two).
  void clear() {
    for (Slot& s : slot_) s.w = kNone;
  }
  void note(uint64_t w, uint64_t v) { slot_[(w >> 3) % kSlots] = {w, v}; }
  bool find(uint64_t w, uint64_t* v) const {
    const Slot& s = slot_[(w >> 3) % kSlots];
    if (s.w != w) return false;
    *v = s.v;
    return true;
  }

 private:
  static constexpr uint64_t kNone = ~uint64_t{0};  // no word offset is odd
  struct Slot {
    uint64_t w = kNone, v = 0;
  };
  Slot slot_[kSlots];
};

// Whether a thread's wraps compare their word stores.  The compare pays
// when it finds words unchanged or changed in one half; when a thread's
// stores keep changing whole words (random values, fresh data) it only
// costs a read of each word's current value, a cache miss for scattered
// stores.  Each compare that finds something to save earns credit (up to a
// cap), each that finds nothing spends one.  The choice is made per wrap,
// at its start: a thread with credit compares; without, only every
// kSample-th wrap does (which keeps watching the pattern and earns the
// credit back when it changes), and the others store words exactly as
// without WCL, one test per store (a pool without SW_CONFIG_WCL never
// starts a compared wrap: the same test).  A sampled wrap compares only
// its first kSampleWords word stores (the redo engines' store() asks
// sample_full() as each is queued and calls sample_done() once they are
// compared): one paying word earns the credit back, while a
// scattered word's compare costs ~0.35 us more than its store (a TLB and
// cache miss on home; measured on the 2-CPU x86 VM), so comparing all ten
// stores of Table II's array-update wrap every 256th wrap cost ~0.7 % of
// its wrap time (~3 us a sample), two cost a third of that (~1.2 us: two
// misses that overlap with nothing).  sw_write ranges are compared in
// every wrap (the engines' write()); a half-changed word one leaves waiting
// for its partner is logged before any later uncompared store of the same
// word (RedoWriter::append_store), so entries for one word stay in order.
// The smallest sw_write range a pool that compares ranges only
// (ResolvedConfig::wcl_words false: the x86 and msync media's default)
// compares: a page.  A smaller range saves at most part of a page of log
// (a B+tree leaf's shifted entries change nearly every word and cost the
// compare without saving: durable batches of 100 inserts on msync ran
// 0.88x with them compared); a page SQLite rewrites saves most of its log.
inline constexpr size_t kWclRangeMinBytes = 4096;

// Whether a range of n bytes is compared (SW_CONFIG_WCL on).
inline bool wcl_compares_range(bool words, size_t n) { return words || n >= kWclRangeMinBytes; }

class WclPolicy {
 public:
  static constexpr int kCap = 64, kGain = 8;
  static constexpr unsigned kSample = 256, kSampleWords = 2;
  // At wrap start; `stores` is the thread's store count (sw_stats.stores).
  // Not called where the pool compares only ranges of a page or more
  // (ResolvedConfig::wcl_words false): no wrap there compares a store.
  void begin_wrap(uint64_t stores) {
    sampled_ = credit_ <= 0 && ++paused_ % kSample == 0 ? kSampleWords : 0;
    on_ = credit_ > 0 || sampled_ != 0;
    stores_at_begin_ = stores;
  }
  bool on() const { return on_; }
  // A word store of a compared wrap was queued: true when it completes a
  // sampled wrap's sample (the caller compares the queue, then calls
  // sample_done(): the wrap's later stores go uncompared, after them).
  bool sample_full() { return sampled_ != 0 && --sampled_ == 0; }
  // The sample is compared; `stores` as for begin_wrap.  A sample that
  // earned credit keeps the rest of the wrap compared.
  void sample_done(uint64_t stores) {
    if (credit_ > 0) return;
    on_ = false;
    stores_at_begin_ = stores;  // end_wrap counts the stores from here on
  }
  // At wrap end: the words the wrap stored without a compare
  // (sw_stats.wcl_words_uncompared).
  uint64_t end_wrap(uint64_t stores) {
    const uint64_t n = on_ ? 0 : stores - stores_at_begin_;
    on_ = false;  // (a second call, from a rollback after a failed commit, adds nothing)
    stores_at_begin_ = stores;
    return n;
  }
  void saw(bool pays) { credit_ = pays ? std::min(credit_ + kGain, kCap) : credit_ - (credit_ > -1); }
  // A word store of v over cur pays if it leaves a half (or all) unchanged.
  static bool pays(uint64_t v, uint64_t cur) {
    const uint64_t d = v ^ cur;
    return (d >> 32) == 0 || (d & 0xFFFFFFFFu) == 0;
  }

 private:
  int credit_ = kCap;
  unsigned paused_ = 0;
  bool on_ = false;       // outside wraps, and always without SW_CONFIG_WCL
  unsigned sampled_ = 0;  // word stores a sampled wrap still compares (0: not sampling)
  uint64_t stores_at_begin_ = 0;
};

// A compared wrap's whole-word store, for the redo engines' store(): it
// is queued with its home line prefetched, and the queue is compared
// (drain(), which returns false when a store failed and rolled the wrap
// back) when it is full or when the store completes a paused thread's
// sample; after a sample the policy decides, from what it found, whether
// the rest of the wrap goes uncompared (`stores`: the thread's store
// counter, sw_stats.stores).
template <class Drain>
void queue_word(WclQueue& q, WclPolicy& p, const void* home, uint64_t w, uint64_t v, const Counter& stores,
                Drain&& drain) {
  const bool full = q.push(home, w, v);
  const bool sampled = p.sample_full();
  if ((full || sampled) && !drain()) return;
  if (sampled) p.sample_done(stores.get());
}

}  // namespace softwrap

#endif  // SOFTWRAP_ENGINE_WCL_QUEUE_H_
