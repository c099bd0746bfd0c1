// object_workload.cc — object writes under the crash simulator
// (object_workload.h).
//
//   obj_nodes  the root as 14 B+tree-like nodes of 288 bytes (a count and
//              35 slots): each wrap modifies 1-3 nodes, shifting slots with
//              a memmove in the view and setting the count; some nodes are
//              modified twice (the same view again), partly (a request
//              inside the node), or across two nodes (the objects merge);
//              word stores, sw_write and sw_memset of bytes the wrap
//              modifies interleave with plain stores; 10 % of the wraps
//              abort; the last wrap is sometimes left open.
//   obj_large  objects larger than the shadow page (1 KiB here), up to 3.5
//              KiB of the root, changed in a few scattered places, beside
//              dozens of small objects (8-40 bytes) in the same wrap.
//   obj_alloc  blocks allocated in a wrap and written through sw_modify
//              (fresh bytes), linked, modified by later wraps, freed with
//              their objects still open, allocated again in one wrap.
#include "crashsim/object_workload.h"

#include <cstring>

namespace softwrap::crashsim {
namespace {

constexpr size_t kNode = 288;  // 8-byte count, then 35 slots
constexpr size_t kNodes = kRootSize / kNode;
constexpr size_t kSlots = (kNode - 8) / 8;

char* node(char* r, size_t i) { return r + i * kNode; }

// Inserts a value at a random slot of the node's view: slots right of it
// move one place (the last falls off), then the count changes.
void insert_slot(Driver& d, Rng& rng, char* n) {
  auto* v = static_cast<unsigned char*>(d.modify(n, kNode));
  if (!v) return;
  const size_t at = rng.below(kSlots);
  std::memmove(v + 8 + (at + 1) * 8, v + 8 + at * 8, (kSlots - at - 1) * 8);
  const uint64_t x = rng.next();
  std::memcpy(v + 8 + at * 8, &x, 8);
  uint64_t count;
  std::memcpy(&count, v, 8);
  ++count;
  std::memcpy(v, &count, 8);
  d.wrote(n, v, kNode);
}

void run_obj_nodes(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 1 + rng.below(3); k-- > 0;) {
      char* n = node(r, rng.below(kNodes));
      switch (rng.below(8)) {
        case 0: {  // part of a node: three slots
          const size_t at = rng.below(kSlots - 3);
          auto* v = static_cast<unsigned char*>(d.modify(n + 8 + at * 8, 24));
          if (!v) return;
          const uint64_t x = rng.next();
          std::memcpy(v + 8, &x, 8);
          d.wrote(n + 8 + at * 8 + 8, v + 8, 8);
          break;
        }
        case 1: {  // across two nodes: the tail of one, the head of the next
          if (n + 2 * kNode > r + kRootSize) break;
          auto* v = static_cast<unsigned char*>(d.modify(n + kNode - 40, 80));
          if (!v) return;
          for (size_t i = 0; i < 80; i += 16) v[i] = static_cast<unsigned char>(rng.next());
          d.wrote(n + kNode - 40, v, 80);
          break;
        }
        case 2:  // a word store into the node, then a shift through the view
          d.store(n + 8 + rng.below(kSlots) * 8, rng.next(), 8);
          insert_slot(d, rng, n);
          break;
        case 3: {  // a shift, then a range write over part of the node and a byte store
          insert_slot(d, rng, n);
          unsigned char buf[40];
          for (unsigned char& b : buf) b = static_cast<unsigned char>(rng.next());
          d.write(n + 8 + rng.below(kSlots - 5) * 8 + rng.below(8), buf, sizeof buf);
          d.store(n + rng.below(kNode), rng.next(), 1);
          break;
        }
        case 4:  // a shift, then a memset of bytes the view holds, then another shift
          insert_slot(d, rng, n);
          d.memset(n + 8 + rng.below(kSlots - 2) * 8, static_cast<int>(rng.below(256)), 1 + rng.below(16));
          insert_slot(d, rng, n);
          break;
        case 5: {  // a value set back to what it was: nothing to log for it
          auto* v = static_cast<unsigned char*>(d.modify(n, kNode));
          if (!v) return;
          const size_t at = 8 + rng.below(kSlots) * 8;
          uint64_t old;
          std::memcpy(&old, v + at, 8);
          const uint64_t x = rng.next();
          std::memcpy(v + at, &x, 8);
          std::memcpy(v + at, &old, 8);
          d.wrote(n + at, v + at, 8);
          break;
        }
        default:
          insert_slot(d, rng, n);
      }
      if (rng.chance(30)) (void)d.load64(n + 8 + rng.below(kSlots) * 8);  // checked against the mirror
    }
    if (w + 1 == size && rng.chance(50)) return;  // left open: the trace ends inside it
    d.close_or_abort(rng, 10);
  }
}

void run_obj_large(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    // One large object: 1.5-3.5 KiB from the start of the root.
    const size_t len = 1536 + rng.below(2048);
    auto* v = static_cast<unsigned char*>(d.modify(r, len));
    if (!v) return;
    for (uint64_t k = 2 + rng.below(5); k-- > 0;) {
      const size_t at = rng.below(len - 64), n = 1 + rng.below(64);
      for (size_t i = 0; i < n; ++i) v[at + i] = static_cast<unsigned char>(rng.next());
      d.wrote(r + at, v + at, n);
    }
    // Small objects beyond it, each written whole or in part.
    for (uint64_t k = 10 + rng.below(30); k-- > 0;) {
      const size_t n = 8 + rng.below(33);
      const size_t at = len + rng.below(kRootSize - len - n);
      auto* s = static_cast<unsigned char*>(d.modify(r + at, n));
      if (!s) return;
      const size_t from = rng.below(n), cnt = 1 + rng.below(n - from);
      for (size_t i = from; i < from + cnt; ++i) s[i] = static_cast<unsigned char>(rng.next());
      d.wrote(r + at + from, s + from, cnt);
    }
    if (w + 1 == size && rng.chance(50)) return;
    d.close_or_abort(rng, 10);
  }
}

// The root: 8 link slots (block offsets), then scratch.  Blocks are 256
// bytes, owned whole.
constexpr size_t kLinks = 8;
constexpr size_t kBlock = 256;

void run_obj_alloc(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* r = root(d);
  sw_pool* p = d.pool();
  auto link = [&](size_t i) { return r + i * 8; };
  auto block = [&](size_t i) -> char* {
    const uint64_t off = d.load64(link(i));
    return off ? static_cast<char*>(sw_pool_ptr(p, off)) : nullptr;
  };
  auto fill = [&](char* b, size_t from, size_t n, bool unwritten = false) {
    auto* v = static_cast<unsigned char*>(d.modify(b + from, n, !unwritten));
    if (!v) return;
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(rng.next());
    d.wrote(b + from, v, n);
  };
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 1 + rng.below(3); k-- > 0;) {
      const size_t i = rng.below(kLinks);
      char* b = block(i);
      if (!b) {  // allocate, write through an object, link
        const bool zero = rng.chance(50);
        auto* nb = static_cast<char*>(zero ? d.zalloc(kBlock) : d.alloc(kBlock));
        if (!nb) return;
        fill(nb, 0, kBlock, !zero);
        d.store(link(i), sw_pool_offset(p, nb), 8);
      } else if (rng.chance(30)) {  // modify, then free with the object open
        fill(b, rng.below(kBlock / 2), 16 + rng.below(kBlock / 2 - 16));
        d.free(b);
        d.store(link(i), 0, 8);
        if (rng.chance(50)) {  // and allocate again in the same wrap
          auto* nb = static_cast<char*>(d.alloc(kBlock));
          if (!nb) return;
          fill(nb, 0, kBlock, true);
          d.store(link(i), sw_pool_offset(p, nb), 8);
        }
      } else {  // old data: part of the block
        fill(b, rng.below(kBlock - 32), 1 + rng.below(32));
      }
    }
    if (w + 1 == size && rng.chance(50)) return;
    d.close_or_abort(rng, 10);
  }
}

}  // namespace

const std::vector<Workload>& object_workloads() {
  static const std::vector<Workload> w = {
      {"obj_nodes",
       "B+tree-like nodes shifted through sw_modify views, modified twice, partly and across two, mixed with "
       "word stores, sw_write and sw_memset of the same bytes; 10% aborted",
       256, 8, 1024, 8, 1, own_root, run_obj_nodes},
      {"obj_large", "objects larger than a 1 KiB shadow page beside dozens of small ones in one wrap", 256, 8,
       1024, 8, 1, own_root, run_obj_large},
      {"obj_alloc",
       "blocks allocated and written through sw_modify, linked, modified later, freed with their objects open "
       "and allocated again in the same wrap",
       256, 8, 1024, 8, 1, own_root, run_obj_alloc},
  };
  return w;
}

}  // namespace softwrap::crashsim
