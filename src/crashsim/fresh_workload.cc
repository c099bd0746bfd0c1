// fresh_workload.cc — the fresh-memory workloads (fresh_workload.h).
//
// Issue 23: a block a wrap allocates is *fresh* until that wrap ends; the
// engines may write its bytes home in place (no alias entry, no log
// record), flushed and fenced before the commit record, while the
// allocation itself stays logged.  An aborted wrap frees its fresh blocks,
// a crash before the commit leaves them free and unreachable; a block freed
// in the same wrap may be allocated again, still fresh; a block a committed
// wrap freed is fresh again for a later wrap.  These workloads put crash
// points on every side of those rules:
//   fresh_alloc   the root itself allocated in the first wrap; blocks of
//                 several size classes and extents (over 64 KiB: whole
//                 256 KiB chunks), sw_pmalloc'd and sw_pzalloc'd, filled
//                 with word stores, sw_write and sw_memset, read back in
//                 the same wrap, linked, committed; later wraps read them
//                 back, modify them (old data: logged) and free them;
//   fresh_abort   the same, aborted (also with a nested level that closed),
//                 committed, and as the last wrap left open: the trace ends
//                 inside it, a crash before its commit;
//   fresh_reuse   allocate, fill, free, allocate the same size again and
//                 fill in one wrap; blocks freed by a committed wrap and
//                 allocated again by a later one (often the next);
//   fresh_commit  wraps whose only stores go to their fresh blocks (one,
//                 or two where the first links the second) and one link
//                 word, small enough that every crash point's images are
//                 enumerated, among them those between the blocks' flush
//                 and the commit record;
//   fresh_small   wraps whose fresh blocks are few bytes (logged in the
//                 redo engines' frames instead of fenced), with tiny alias
//                 tables that retire those frames while the blocks stay
//                 linked.
// The API semantics do not change, so engines that log every byte run them
// too and must pass.
//
// Layout.  The root (4 KiB, owned) holds 16 slots of two words, a block's
// pool offset and its size (fresh_commit: 32 one-word slots, its blocks
// carry their size, see there), then scratch words.  A small block is owned
// whole; of an extent, its parts() (its first 512 bytes, a word every
// 16 KiB, its last 64 bytes), so bytes past the first 64 KiB count while
// the mirror stays small; a sw_pzalloc'd block is owned whole, its zeros
// too.  Each workload's check_image hook checks that every slot of the
// recovered image links a live allocation at least as large as the slot
// says (the byte and live-count checks alone would accept a link to a
// block a crash freed while another stayed allocated).
#include "crashsim/fresh_workload.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <string>

namespace softwrap::crashsim {
namespace {

constexpr uint64_t kSlots = 16;                  // two words each: offset, size
constexpr uint64_t kScratch = kSlots * 16;       // root words old-data writes go to
constexpr size_t kSmall[] = {16, 40, 64, 120, 200, 1000, 3000};
constexpr size_t kExtents[] = {70000, 300000};  // one 256 KiB chunk; two
constexpr uint64_t kMaxExtents = 2;              // linked at a time (the pool is 8 MiB)

char* ptr(Driver& d, uint64_t off) { return static_cast<char*>(sw_pool_ptr(d.pool(), off)); }
uint64_t off(Driver& d, const void* a) { return sw_pool_offset(d.pool(), a); }

void own_nothing(std::vector<Driver*>&, Rng&) {}

struct Part {
  size_t off, len;
};

// The bytes of an n-byte block the workloads own and write (see above).
std::vector<Part> parts(size_t n) {
  if (n <= 4096) return {{0, n}};
  std::vector<Part> v{{0, 512}};
  for (size_t o = 16 << 10; o + 8 <= n - 64; o += 16 << 10) v.push_back({o, 8});
  v.push_back({n - 64, 64});
  return v;
}

// Writes [at, at+len): a prefix of up to 16 words by 8-byte stores, the
// rest by one sw_write; sometimes a word stored twice, a byte store and a
// sw_memset over part of it.  (Few stores: each is a crash point on the
// undo engines, which log a word's old value before its first store.)
void fill_part(Driver& d, Rng& rng, char* at, size_t len) {
  const size_t k = 8 * rng.below(std::min<size_t>(len / 8, 16) + 1);
  for (size_t i = 0; i < k; i += 8) d.store(at + i, rng.next(), 8);
  if (k < len) {
    std::vector<unsigned char> buf(len - k);
    for (auto& c : buf) c = static_cast<unsigned char>(rng.next());
    d.write(at + k, buf.data(), buf.size());
  }
  if (rng.chance(25)) d.store(at + 8 * rng.below(len / 8), rng.next(), 8);
  if (rng.chance(15)) d.store(at + rng.below(len), rng.next(), 1);
  if (len >= 32 && rng.chance(15)) {
    const size_t m = 1 + rng.below(len / 2);
    d.memset(at + rng.below(len - m + 1), static_cast<int>(rng.below(256)), m);
  }
}

// Reads every owned part of the block (the driver checks the bytes).
void read_back(Driver& d, char* a, size_t n) {
  std::vector<unsigned char> got;
  for (const Part& p : parts(n)) {
    got.resize(p.len);
    d.read(got.data(), a + p.off, p.len);
    d.load64(a + p.off);
  }
}

// Allocates n bytes in the open wrap (sw_pzalloc or sw_pmalloc), owns
// them (whole or its parts) and writes them (a zeroed block: a prefix of
// each part), then reads a part back in the same wrap.
char* alloc_block(Driver& d, Rng& rng, size_t n, bool zero) {
  const std::vector<Part> ps = parts(n);
  char* a = nullptr;
  if (zero) {
    a = static_cast<char*>(d.zalloc(n));
  } else if ((a = static_cast<char*>(d.alloc(n, ps[0].len)))) {
    for (size_t i = 1; i < ps.size(); ++i) d.own_new(a + ps[i].off, ps[i].len);
  }
  if (!a) return nullptr;
  for (const Part& p : ps) fill_part(d, rng, a + p.off, zero ? 8 * (1 + rng.below(p.len / 8)) : p.len);
  const Part& p = ps[rng.below(ps.size())];
  std::vector<unsigned char> got(p.len);
  d.read(got.data(), a + p.off, p.len);
  return a;
}

// Old data: a few words and a range of one owned part rewritten.
void modify(Driver& d, Rng& rng, char* a, size_t n) {
  const std::vector<Part> ps = parts(n);
  const Part& p = ps[rng.below(ps.size())];
  for (uint64_t k = 1 + rng.below(3); k-- > 0;) {
    char* w = a + p.off + 8 * rng.below(p.len / 8);
    d.store(w, d.load64(w) + 1 + rng.below(1000), 8);
  }
  if (p.len >= 16 && rng.chance(50)) {
    const size_t m = 1 + rng.below(std::min<size_t>(p.len, 256));
    std::vector<unsigned char> buf(m);
    for (auto& c : buf) c = static_cast<unsigned char>(rng.next());
    d.write(a + p.off + rng.below(p.len - m + 1), buf.data(), m);
  }
}

size_t pick_size(Rng& rng, bool extent_ok) {
  if (extent_ok && rng.chance(15)) return kExtents[rng.chance(30) ? 1 : 0];
  return kSmall[rng.below(std::size(kSmall))];
}

char* slot(char* r, uint64_t i) { return r + i * 16; }

uint64_t linked(Driver& d, char* r, uint64_t* extents = nullptr) {
  uint64_t n = 0, e = 0;
  for (uint64_t i = 0; i < kSlots; ++i) {
    if (d.load64(slot(r, i)) == 0) continue;
    ++n;
    e += d.load64(slot(r, i) + 8) > 65536;
  }
  if (extents) *extents = e;
  return n;
}

bool extent_ok(Driver& d, char* r) {
  uint64_t e = 0;
  linked(d, r, &e);
  return e < kMaxExtents;
}

// A random slot holding a block (full) or none (!full); nullptr if none is.
char* find_slot(Driver& d, Rng& rng, char* r, bool full) {
  const uint64_t start = rng.below(kSlots);
  for (uint64_t i = 0; i < kSlots; ++i) {
    char* s = slot(r, (start + i) % kSlots);
    if ((d.load64(s) != 0) == full) return s;
  }
  return nullptr;
}

void link(Driver& d, char* s, char* a, size_t n) {
  d.store(s, off(d, a), 8);
  d.store(s + 8, n, 8);
}

// Allocates, fills and links a block into a free slot (if there is one).
void alloc_into(Driver& d, Rng& rng, char* r, size_t n, bool zero) {
  char* s = find_slot(d, rng, r, false);
  if (!s) return;
  if (char* a = alloc_block(d, rng, n, zero)) link(d, s, a, n);
}

// Frees the block slot s links; returns its size.
size_t unlink_free(Driver& d, char* s) {
  const size_t n = d.load64(s + 8);
  d.free(ptr(d, d.load64(s)));
  d.store(s, 0, 8);
  d.store(s + 8, 0, 8);
  return n;
}

void modify_linked(Driver& d, Rng& rng, char* r) {
  if (char* s = find_slot(d, rng, r, true)) {
    char* a = ptr(d, d.load64(s));
    const size_t n = d.load64(s + 8);
    read_back(d, a, n);
    modify(d, rng, a, n);
  }
  d.store(r + kScratch + 8 * rng.below((kRootSize - kScratch) / 8), rng.next(), 8);
}

std::string hexs(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

// check_image: every slot links a live allocation of at least its size.
std::string check_slots(sw_pool* p, char* r) {
  for (uint64_t i = 0; i < kSlots; ++i) {
    const uint64_t o = sw_load64(p, slot(r, i)), n = sw_load64(p, slot(r, i) + 8);
    if (o != 0 && sw_pusable_size(p, sw_pool_ptr(p, o)) < n) {
      return "slot " + std::to_string(i) + " links " + hexs(o) + ", not a live allocation of " + std::to_string(n) +
             " bytes";
    }
  }
  return "";
}

std::string check_root_slots(sw_pool* p, const std::vector<ImageState>&) {
  auto* r = static_cast<char*>(sw_pool_root(p, 0));
  return r ? check_slots(p, r) : "no root object";
}

// ------------------------------------------------------------ fresh_alloc

// The golden ids of fresh_alloc's states without a root in the current
// run — at the start, and saved as 'before' by its first wrap's open — for
// its check_image hook (which runs after `run` of the same Simulator::run).
uint32_t g_alloc_initial = ~0u, g_alloc_before = ~0u;

void run_fresh_alloc(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  g_alloc_initial = d.state();
  // The first wrap allocates the root (fresh in it, like any block),
  // writes some of its words and links a small block and an extent.
  d.open();
  g_alloc_before = d.state();
  auto* r = static_cast<char*>(sw_pool_root(d.pool(), kRootSize));
  if (!r) {
    d.fail("sw_pool_root in a wrap");
    return d.close();
  }
  d.adopt_zeroed(r, kRootSize);
  fill_part(d, rng, r + kScratch, 256);
  alloc_into(d, rng, r, kSmall[rng.below(std::size(kSmall))], rng.chance(50));
  alloc_into(d, rng, r, kExtents[rng.chance(30) ? 1 : 0], rng.chance(50));
  d.close();
  for (uint32_t w = 1; w < size; ++w) {
    d.open();
    for (uint64_t k = 1 + rng.below(2); k-- > 0;) {
      char* s = slot(r, rng.below(kSlots));
      if (d.load64(s) == 0) {
        const size_t n = pick_size(rng, extent_ok(d, r));
        if (char* a = alloc_block(d, rng, n, rng.chance(40))) link(d, s, a, n);
        continue;
      }
      char* a = ptr(d, d.load64(s));
      const size_t n = d.load64(s + 8);
      switch (rng.below(4)) {
        case 0: read_back(d, a, n); break;
        case 1:
        case 2:
          read_back(d, a, n);
          modify(d, rng, a, n);
          break;
        default: unlink_free(d, s);
      }
    }
    d.close();
  }
}

std::string check_fresh_alloc(sw_pool* p, const std::vector<ImageState>& owners) {
  const bool before_root = owners[0].matched == g_alloc_initial || owners[0].matched == g_alloc_before;
  auto* r = static_cast<char*>(sw_pool_root(p, 0));
  if (before_root && r) return "a root object in the state before the wrap that allocated it";
  if (!before_root && !r) return "no root object in a state after the wrap that allocated it";
  return r ? check_slots(p, r) : "";
}

// ------------------------------------------------------------ fresh_abort

void run_fresh_abort(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    if (w + 1 == size) {
      // The last wrap stays open: the trace ends inside it, so every crash
      // point from here on must find the state before it (its blocks free,
      // unreachable).
      alloc_into(d, rng, r, kSmall[rng.below(std::size(kSmall))], false);
      alloc_into(d, rng, r, kSmall[rng.below(std::size(kSmall))], true);
      if (extent_ok(d, r)) alloc_into(d, rng, r, kExtents[0], rng.chance(50));
      if (rng.chance(50)) modify_linked(d, rng, r);
      return;
    }
    uint64_t kind = rng.below(10);
    if (kind >= 4 && kind < 7 && linked(d, r) >= 12) kind = 7;  // keep slots free
    if (kind < 7) {  // allocate, fill, link: aborted (0-3) or committed (4-6)
      for (uint64_t k = 1 + rng.below(2); k-- > 0;) alloc_into(d, rng, r, pick_size(rng, extent_ok(d, r)), rng.chance(40));
      if (rng.chance(30)) {  // a nested level that closes before the outer ends
        d.open();
        alloc_into(d, rng, r, kSmall[rng.below(std::size(kSmall))], rng.chance(40));
        d.close();
      }
      if (rng.chance(30)) modify_linked(d, rng, r);
      if (kind < 4) {
        d.abort();
        continue;
      }
    } else if (kind < 9) {
      if (char* s = find_slot(d, rng, r, true)) unlink_free(d, s);
    } else {
      modify_linked(d, rng, r);
    }
    d.close();
  }
}

// ------------------------------------------------------------ fresh_partial

// A block filled by a wrap that aborts is allocated again by the next wrap,
// which writes only its first part: the rest still holds the aborted
// wrap's bytes, never flushed (an abort drops what it wrote), and a frame
// that vouches for the whole block vouches for them too — its commit must
// make them durable, or a crash drops the committed wrap (fresh.h).
void run_fresh_partial(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  for (uint32_t w = 0; w + 1 < size; w += 2) {
    char* s = find_slot(d, rng, r, false);
    if (s == nullptr) {  // full: free one
      d.open();
      if (char* f = find_slot(d, rng, r, true)) unlink_free(d, f);
      d.close();
      continue;
    }
    const size_t n = rng.chance(50) ? 1000 : 3000;
    d.open();
    if (char* a = static_cast<char*>(d.alloc(n, n))) fill_part(d, rng, a, n);
    d.abort();
    d.open();
    const size_t part = 8 * (1 + rng.below(8));
    if (char* a = static_cast<char*>(d.alloc(n, part))) {
      fill_part(d, rng, a, part);
      link(d, s, a, n);
    }
    d.close();
  }
}

// ------------------------------------------------------------ fresh_reuse

void run_fresh_reuse(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  std::vector<size_t> freed;  // sizes of blocks committed wraps freed, newest last
  bool reuse_next = false;
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    uint64_t kind = reuse_next && !freed.empty() ? 6 : rng.below(10);
    reuse_next = false;
    if (kind >= 6 && kind < 8 && freed.empty()) kind = 0;
    char* empty = find_slot(d, rng, r, false);
    if (kind < 4 && (!empty || linked(d, r) >= 12)) kind = 4;
    if (kind < 4) {
      // In one wrap: allocate, fill, free, allocate the same size again
      // (most likely the same block, still fresh), fill; once or twice;
      // link the last.
      const size_t n = pick_size(rng, extent_ok(d, r));
      char* a = alloc_block(d, rng, n, rng.chance(30));
      for (uint64_t k = 1 + rng.below(2); k-- > 0 && a;) {
        d.free(a);
        a = alloc_block(d, rng, n, rng.chance(30));
      }
      if (a) link(d, empty, a, n);
      if (rng.chance(10)) {
        d.abort();
        continue;
      }
    } else if (kind < 6) {  // a committed wrap frees a block; often the next allocates its size
      if (char* s = find_slot(d, rng, r, true)) {
        freed.push_back(unlink_free(d, s));
        reuse_next = rng.chance(60);
      }
    } else if (kind < 8) {  // a later wrap allocates the size a committed wrap freed
      const size_t n = freed.back();
      freed.pop_back();
      if (n <= 65536 || extent_ok(d, r)) alloc_into(d, rng, r, n, rng.chance(40));
    } else {  // old data only: lets the log retire between a free and the next allocation
      for (uint64_t k = 1 + rng.below(3); k-- > 0;) modify_linked(d, rng, r);
      // Fresh blocks fill no table: old words that do keep retirement going.
      for (uint64_t k = 8 + rng.below(16); k-- > 0;) {
        d.store(r + kScratch + 8 * rng.below((kRootSize - kScratch) / 8), rng.next(), 8);
      }
    }
    d.close();
  }
}

// ------------------------------------------------------------ fresh_small

// Wraps whose fresh blocks hold at most FreshSet::kLogMax bytes in all:
// the redo engines log them in the frame (no fence of their own) and flush
// their lines for the commit fence.  Tiny alias tables retire often, so
// the frames of many such wraps become unreplayable while their blocks
// stay linked: from then on only the flushed home lines hold the bytes.
constexpr size_t kLogged[] = {16, 40, 64, 120};  // two of them: at most 240 bytes

void run_fresh_small(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    const uint64_t kind = rng.below(4);
    if (kind < 2 && linked(d, r) < kSlots - 1) {
      for (uint64_t k = 1 + rng.below(2); k-- > 0;) {
        const size_t n = kLogged[rng.below(std::size(kLogged))];
        alloc_into(d, rng, r, n, rng.chance(30));
      }
    } else if (char* s = kind == 2 ? find_slot(d, rng, r, true) : nullptr) {
      // Allocating a block a committed wrap freed asks the engine whether
      // its frames are out of replay's reach (softwrap-local then moves its
      // watermark: the frames of earlier wraps become unreplayable).
      unlink_free(d, s);
    } else {  // old words fill the tables: retirement
      for (uint64_t k = 4 + rng.below(8); k-- > 0;) {
        d.store(r + kScratch + 8 * rng.below((kRootSize - kScratch) / 8), rng.next(), 8);
      }
    }
    d.close();
  }
}

// ----------------------------------------------------------- fresh_commit

// 32 one-word slots, each the offset of a block A or 0.  A's first word is
// its size, with kChained set if its second word is the offset of a block
// B, whose first word is its size.  A wrap either allocates A (and B),
// fills them, writes those words and stores the slot — its only store to
// old data — or frees a slot's blocks.  Blocks are 16-256 bytes.
constexpr uint64_t kCommitSlots = 32;
constexpr uint64_t kChained = uint64_t{1} << 63;
constexpr size_t kTiny[] = {16, 32, 48, 64, 128, 192, 256};

void run_fresh_commit(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    char* s = r + rng.below(kCommitSlots) * 8;
    const uint64_t cur = d.load64(s);
    d.open();
    if (cur == 0) {
      const size_t n = kTiny[rng.below(std::size(kTiny))];
      char* a = alloc_block(d, rng, n, rng.chance(30));
      if (!a) return d.close();
      char* b = nullptr;
      if (rng.chance(40)) {
        const size_t nb = kTiny[rng.below(std::size(kTiny))];
        if ((b = alloc_block(d, rng, nb, rng.chance(30)))) {
          d.store(b, nb, 8);
          d.store(a + 8, off(d, b), 8);
        }
      }
      d.store(a, n | (b ? kChained : 0), 8);
      d.store(s, off(d, a), 8);
    } else {
      char* a = ptr(d, cur);
      const uint64_t head = d.load64(a);
      if (head & kChained) d.free(ptr(d, d.load64(a + 8)));
      d.free(a);
      d.store(s, 0, 8);
    }
    d.close();
  }
}

std::string check_fresh_commit(sw_pool* p, const std::vector<ImageState>&) {
  auto* r = static_cast<char*>(sw_pool_root(p, 0));
  if (!r) return "no root object";
  auto live = [&](uint64_t o, const char* what) -> std::string {
    void* a = sw_pool_ptr(p, o);
    const uint64_t n = sw_load64(p, a) & ~kChained;
    if (sw_pusable_size(p, a) < n) return std::string(what) + " " + hexs(o) + " is not a live allocation of its size";
    return "";
  };
  for (uint64_t i = 0; i < kCommitSlots; ++i) {
    const uint64_t o = sw_load64(p, r + i * 8);
    if (o == 0) continue;
    std::string why = live(o, "a linked block");
    if (why.empty() && (sw_load64(p, sw_pool_ptr(p, o)) & kChained)) {
      why = live(sw_load64(p, static_cast<char*>(sw_pool_ptr(p, o)) + 8), "a chained block");
    }
    if (!why.empty()) return "slot " + std::to_string(i) + ": " + why;
  }
  return "";
}

}  // namespace

const std::vector<Workload>& fresh_workloads() {
  static const std::vector<Workload> w = {
      {"fresh_alloc",
       "the root and blocks of 16 B - 300 KB allocated, filled (stores, sw_write, sw_memset), linked, committed; "
       "read back, modified, freed later",
       1024, 8, 1024, 8, 1, own_nothing, run_fresh_alloc, check_fresh_alloc},
      {"fresh_abort", "fresh blocks filled and linked in wraps aborted, committed, and left open at the end", 1024, 8,
       1024, 8, 1, own_root, run_fresh_abort, check_root_slots},
      {"fresh_reuse",
       "allocate, fill, free, allocate again in one wrap; blocks a committed wrap freed allocated by a later one",
       64, 2, 128, 8, 1, own_root, run_fresh_reuse, check_root_slots},
      {"fresh_commit", "wraps storing only to 1-2 fresh blocks of 16-256 B and one link word", 1024, 8, 1024, 8, 1,
       own_root, run_fresh_commit, check_fresh_commit},
      {"fresh_partial",
       "a block filled by an aborted wrap allocated again and written only in part (the rest vouched for as it is)",
       1024, 8, 1024, 8, 1, own_root, run_fresh_partial, check_root_slots},
      {"fresh_small",
       "wraps of 1-2 fresh blocks of at most 240 B in all (logged in the frame), tiny tables retiring them", 64, 2,
       1024, 8, 1, own_root, run_fresh_small, check_root_slots},
  };
  return w;
}

}  // namespace softwrap::crashsim
