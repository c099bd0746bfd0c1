// objects.h — the objects an open wrap modifies through sw_modify.
//
// A program names an object it is about to write (sw_modify(pool, addr,
// n)) and gets a pointer it writes with plain stores.  Engines that store
// in place (undo, nonatomic) hand out the home bytes themselves
// (Engine::modify_in_place).  The redo engines (softwrap, softwrap-local)
// must not let a home byte change before the wrap commits, so the API
// layer keeps, per open wrap, a DRAM copy of each such object here, and
// the program's stores go into the copy.  At commit the bytes that differ
// from the object's reference are written through the engine like one
// sw_write per changed run (c_api.cc, commit_objects), so the log, the
// alias tables, retirement and recovery see nothing new; an abort drops
// the copies.
//
// Two images per object, both DRAM, both only this thread's:
//   copy  what the wrap sees: the bytes the program writes;
//   ref   what the engine holds for the same bytes (its tables, the log,
//         home), i.e. what a commit must change.
// Invariant: for every byte of every object, ref equals the engine's view
// of the byte (Engine::read in this wrap) and copy the wrap's view.  The
// wrap's other accesses keep it: a word store or sw_write of object bytes
// goes to the engine *and* into both images (patch), a load or read of
// them takes the copy's bytes (overlay).  So a commit logs exactly the
// bytes the program changed through the pointer and no others, however
// word stores and object writes of the same bytes interleave, and the
// wrap always reads its own newest value.
//
// Objects of one wrap never overlap: a request inside an object is
// answered from it (the same pointer plus the offset), one that overlaps
// objects without lying inside one gets a new object covering them all,
// built from the engine's view and the old copies' bytes; the old pointers
// are then stale (docs/api.md: "a pointer sw_modify returned stays valid
// until the wrap ends or until the same wrap modifies a range that
// overlaps its object without lying inside it").  Their DRAM is kept until
// the wrap ends, so a stale pointer never points at freed memory.
//
// Cost: a request for the object the wrap touched last is two compares; a
// new object is a map insert, an arena bump and two copies of its bytes;
// a commit compares the two images a word at a time.  Loads and stores
// outside objects pay one test of empty().
#ifndef SOFTWRAP_ENGINE_OBJECTS_H_
#define SOFTWRAP_ENGINE_OBJECTS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <new>
#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace softwrap {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ObjectSet::changed_runs reads bytes as little-endian words");

class ObjectSet {
 public:
  struct Object {
    uint64_t off;
    uint64_t n;
    unsigned char* copy;
    unsigned char* ref;
  };

  ObjectSet() = default;
  ObjectSet(const ObjectSet&) = delete;
  ObjectSet& operator=(const ObjectSet&) = delete;

  bool empty() const { return objects_.empty(); }

  // The writable copy of [off, off+n) (n >= 1): from the object holding
  // it, or a new object.  fill(dst, o, len) must copy the engine's view of
  // [o, o+len) into dst; *made tells whether an object was made (the
  // caller then makes its loads reach the library), with its range in
  // *made_off / *made_n.  nullptr if DRAM ran out.
  template <class Fill>
  unsigned char* modify(uint64_t off, uint64_t n, Fill&& fill, bool* made, uint64_t* made_off, uint64_t* made_n) {
    *made = false;
    if (last_ && off >= last_->off && off + n <= last_->off + last_->n) return last_->copy + (off - last_->off);
    uint64_t lo = off, hi = off + n;
    auto first = objects_.end(), end = objects_.end();
    overlapping(off, n, &first, &end);
    for (auto it = first; it != end; ++it) {
      const Object& o = it->second;
      if (off >= o.off && off + n <= o.off + o.n) {
        last_ = &it->second;
        return o.copy + (off - o.off);
      }
      lo = std::min(lo, o.off);
      hi = std::max(hi, o.off + o.n);
    }
    unsigned char* mem = take(2 * (hi - lo));
    if (!mem) return nullptr;
    Object no{lo, hi - lo, mem, mem + (hi - lo)};
    fill(no.ref, lo, hi - lo);
    std::memcpy(no.copy, no.ref, hi - lo);
    for (auto it = first; it != end; ++it) {  // their copies are the wrap's newest bytes
      const Object& o = it->second;
      std::memcpy(no.copy + (o.off - lo), o.copy, o.n);
    }
    objects_.erase(first, end);
    last_ = &objects_.emplace(lo, no).first->second;
    *made = true;
    *made_off = lo;
    *made_n = hi - lo;
    return no.copy + (off - lo);
  }

  // The object holding all of [off, off+n), or nullptr.
  const Object* holding(uint64_t off, uint64_t n) const {
    if (last_ && off >= last_->off && off + n <= last_->off + last_->n) return last_;
    auto it = objects_.upper_bound(off);
    if (it == objects_.begin()) return nullptr;
    --it;
    const Object& o = it->second;
    return off + n <= o.off + o.n ? &o : nullptr;
  }

  // Whether any object has a byte of [off, off+n).
  bool overlaps(uint64_t off, uint64_t n) const {
    const auto it = first_from(objects_, off);
    return it != objects_.end() && it->second.off < off + n;
  }

  // dst holds the engine's view of [off, off+n): the objects' copies
  // replace the bytes they hold (the wrap's view).
  void overlay(uint64_t off, uint64_t n, void* dst) const {
    for_each_overlap(off, n, [&](const Object& o, uint64_t lo, uint64_t hi) {
      std::memcpy(static_cast<unsigned char*>(dst) + (lo - off), o.copy + (lo - o.off), hi - lo);
    });
  }

  // The wrap stored src to [off, off+n) through the engine: objects
  // holding any of those bytes take them into both images.
  void patch(uint64_t off, const void* src, uint64_t n) {
    for_each_overlap(off, n, [&](const Object& o, uint64_t lo, uint64_t hi) {
      const auto* s = static_cast<const unsigned char*>(src) + (lo - off);
      std::memcpy(o.copy + (lo - o.off), s, hi - lo);
      std::memcpy(o.ref + (lo - o.off), s, hi - lo);
    });
  }

  // The same for n copies of byte ch.
  void patch_fill(uint64_t off, int ch, uint64_t n) {
    for_each_overlap(off, n, [&](const Object& o, uint64_t lo, uint64_t hi) {
      std::memset(o.copy + (lo - o.off), ch, hi - lo);
      std::memset(o.ref + (lo - o.off), ch, hi - lo);
    });
  }

  // Ends the objects that have a byte of [off, off+n) (the wrap frees a
  // block they overlap): f(off, bytes, len) is called for their changed
  // runs, as at commit, and they are forgotten (their DRAM stays until
  // clear()).  Returns false if f did.
  template <class F>
  bool end_overlapping(uint64_t off, uint64_t n, F&& f) {
    auto first = objects_.end(), end = objects_.end();
    overlapping(off, n, &first, &end);
    for (auto it = first; it != end; ++it) {
      if (!changed_runs(it->second, f)) return false;
    }
    objects_.erase(first, end);
    last_ = nullptr;
    return true;
  }

  // Calls f(off, bytes, len) for each run of bytes whose copy differs from
  // its reference, in address order; runs separated by fewer than kJoin
  // equal bytes are one (a record's header costs more than the bytes).
  // Stops and returns false when f does.
  static constexpr uint64_t kJoin = 16;
  template <class F>
  bool for_changed(F&& f) const {
    for (const auto& [_, o] : objects_) {
      if (!changed_runs(o, f)) return false;
    }
    return true;
  }

  // Forgets every object (commit wrote them, or the wrap is dropped).
  // Keeps one arena block for the next wrap.
  void clear() {
    objects_.clear();
    last_ = nullptr;
    if (!blocks_.empty() && blocks_[0].size == kBlock) {
      blocks_.resize(1);
    } else {
      blocks_.clear();
    }
    used_ = 0;
  }

 private:
  static constexpr uint64_t kBlock = 64 << 10;
  struct Block {
    std::unique_ptr<unsigned char[]> mem;
    uint64_t size;
  };

  // The first object that ends after off (the first that may overlap a
  // range starting at off); objects never overlap each other.
  using Map = std::map<uint64_t, Object>;
  template <class M>
  static decltype(std::declval<M&>().begin()) first_from(M& objects, uint64_t off) {
    auto it = objects.upper_bound(off);
    if (it != objects.begin() && std::prev(it)->second.off + std::prev(it)->second.n > off) --it;
    return it;
  }
  // The objects overlapping [off, off+n), as a range of the map.
  void overlapping(uint64_t off, uint64_t n, Map::iterator* first, Map::iterator* end) {
    auto it = *first = first_from(objects_, off);
    while (it != objects_.end() && it->second.off < off + n) ++it;
    *end = it;
  }
  template <class F>
  void for_each_overlap(uint64_t off, uint64_t n, F&& f) const {
    for (auto it = first_from(objects_, off); it != objects_.end() && it->second.off < off + n; ++it) {
      const Object& o = it->second;
      f(o, std::max(off, o.off), std::min(off + n, o.off + o.n));
    }
  }
  template <class F>
  static bool changed_runs(const Object& o, F& f) {
    uint64_t i = 0, run = 0, run_end = 0;
    bool open = false;
    while (i < o.n) {
      const uint64_t len = std::min<uint64_t>(8, o.n - i);
      uint64_t a = 0, b = 0;  // the 8 bytes (fewer at the end) of each image
      if (len == 8) {
        std::memcpy(&a, o.copy + i, 8);
        std::memcpy(&b, o.ref + i, 8);
      } else {
        std::memcpy(&a, o.copy + i, len);
        std::memcpy(&b, o.ref + i, len);
      }
      if (const uint64_t d = a ^ b) {
        // Trimmed to the bytes that differ (little-endian: byte k of the
        // word is bits 8k..8k+7).
        const uint64_t lo = i + static_cast<uint64_t>(__builtin_ctzll(d)) / 8;
        const uint64_t hi = i + 8 - static_cast<uint64_t>(__builtin_clzll(d)) / 8;
        if (open && lo - run_end >= kJoin) {
          if (!f(o.off + run, o.copy + run, run_end - run)) return false;
          open = false;
        }
        if (!open) {
          run = lo;
          open = true;
        }
        run_end = hi;
      }
      i += len;
    }
    return !open || f(o.off + run, o.copy + run, run_end - run);
  }

  // n bytes of arena, 16-byte aligned; nullptr if DRAM ran out.
  unsigned char* take(uint64_t n) {
    n = (n + 15) & ~uint64_t{15};
    if (blocks_.empty() || used_ + n > blocks_.back().size) {
      const uint64_t size = std::max(n, kBlock);
      auto* p = new (std::nothrow) unsigned char[size];
      if (!p) return nullptr;
      blocks_.push_back({std::unique_ptr<unsigned char[]>(p), size});
      used_ = 0;
    }
    unsigned char* p = blocks_.back().mem.get() + used_;
    used_ += n;
    return p;
  }

  Map objects_;
  Object* last_ = nullptr;  // the object the wrap modified last
  std::vector<Block> blocks_;
  uint64_t used_ = 0;  // bytes of blocks_.back() handed out
};

}  // namespace softwrap

#endif  // SOFTWRAP_ENGINE_OBJECTS_H_
