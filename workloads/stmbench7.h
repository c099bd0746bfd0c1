// stmbench7.h — STMBench7 (WCL, Table 4): read-write operations on a CAD
// object graph of modules, assemblies, composite parts and atomic parts.
//
// The structure (as STMBench7 describes it, scaled down): one module whose
// design root is a tree of complex assemblies, three subassemblies each,
// down to base assemblies (levels: 5, or 3 at small scales); each base
// assembly uses up to 6 composite parts (3 at setup), and a composite part
// may be used by up to 8 base assemblies (a back-pointer array, `used_in`).
// A composite part owns a document and a graph of atomic parts: part i
// connects to part i+1 (a ring, so the graph is connected from the root
// part) and to two random parts of the same composite; connections are
// pool offsets with a length.  Atomic parts carry x/y coordinates and a
// build date; every object has a 64-bit id and a build date.  Two
// persistent indexes map ids to objects: atomic parts and composite parts
// (chained hash maps over the access type, IdIndex below, with the lookup
// the Themis structures do not offer).  Every object is its own
// allocation, so objects made together lie near each other in the pool.
//
// A transaction is one operation, drawn from a read-write mix (-w rw):
//   30 % query: 10 atomic parts looked up by id, their coordinates read
//   20 % short traversal: down a random path of assemblies to a base
//        assembly, into one of its composite parts, and depth first along
//        the connections, swapping every atomic part's x and y
//   15 % atomic update: 10 atomic parts by id, build date + 1
//   10 % assembly update: down a random path, build date + 1 of every
//        assembly on it and of the base assembly's composite parts
//   15 % document query: a random path to a composite part, its document read
//    2.5 % each structural modification: create a composite part (a free
//        id, its atomic parts, connections and document, indexed, linked
//        to a base assembly with room), delete one (unlinked from its base
//        assemblies, removed from the indexes, freed), link a composite
//        part to a base assembly, unlink one.
// Composite part ids are used again (STMBench7's id pools): they lie in
// [0, 2 x the initial count), about half of them in use, and atomic part
// i of composite part c has id c x parts-per-composite + i, so lookups by
// random id find a part about half the time.
// So the stores are coordinates swapped (both in the low half), counters
// incremented, ids and offsets written or relinked (pool offsets below
// 4 GiB): half writes, the paper's Table 6.
//
// Sizes (Params::scale counts composite parts, Table 4's
// ComponentsPerModule): stmb7-s, stmb7-m, stmb7-b have Table 4's
// AtomicPartsPerComponent 200/500/800 halved and its ComponentsPerModule
// 500/800/800 divided by 5: 100/250/400 atomic parts in each of 100/160/160
// composite parts, 10,000 to 64,000 atomic parts instead of 100,000 to
// 640,000, so that setup takes well under a second.  Below the default
// scale the atomic parts per composite shrink in proportion (at least 4).
//
// Locks (STMBench7's medium-grained strategy): a DRAM reader-writer lock
// on the module, taken exclusively by structural modifications and the
// assembly update, shared by the rest, which also lock the stripes of the
// composite parts whose atomic parts they touch.
//
// verify(): the assembly tree's parent links and levels; each base
// assembly's composite parts are indexed and list it among their users,
// and the other way round; each composite part's atomic parts belong to
// it, are indexed by their ids, connect only within it, are all reached
// from its root part, and keep x + y (a function of the id: a swap keeps
// it); the indexes hold exactly the graph's objects; composite parts,
// atomic parts, links and the sum of all build dates are what setup and
// the committed operations make.
#ifndef SOFTWRAP_WORKLOADS_STMBENCH7_H_
#define SOFTWRAP_WORKLOADS_STMBENCH7_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

// A persistent id -> object index: a chained hash map (bucket array of
// entry offsets, entries {id, object, next}).  The caller serializes
// changes.
template <class A>
class IdIndex {
 public:
  struct Root {
    uint64_t nbuckets, buckets;
  };

  void create(A& a, Root* r, uint64_t nbuckets) {
    n_ = std::max<uint64_t>(nbuckets, 1);
    {
      Wrap<A> w(a);
      b_ = static_cast<uint64_t*>(a.alloc(n_ * 8));
      a.store(&r->nbuckets, n_);
      a.store(&r->buckets, a.off(b_));
      w.commit();
    }
    write_words(a, b_, n_, [](uint64_t) { return uint64_t{0}; });
  }
  bool open(A& a, Root* r) {
    n_ = a.load(&r->nbuckets);
    b_ = a.template ptr<uint64_t>(a.load(&r->buckets));
    return n_ != 0 && b_ != nullptr;
  }

  // The object of `id`, 0 if absent.
  uint64_t find(A& a, uint64_t id) {
    for (uint64_t e = a.load(&b_[bucket(id)]); e != 0; e = a.load(&entry(a, e)->next)) {
      if (a.load(&entry(a, e)->id) == id) return a.load(&entry(a, e)->obj);
    }
    return 0;
  }
  // `id` must be absent.
  void insert(A& a, uint64_t id, uint64_t obj) {
    uint64_t* head = &b_[bucket(id)];
    auto* n = static_cast<Entry*>(a.alloc(sizeof(Entry)));
    a.store(&n->id, id);  // field by field, as the application sets them
    a.store(&n->obj, obj);
    a.store(&n->next, a.load(head));
    a.store(head, a.off(n));
  }
  bool erase(A& a, uint64_t id) {
    uint64_t* link = &b_[bucket(id)];
    for (uint64_t e = a.load(link); e != 0; e = a.load(link)) {
      Entry* x = entry(a, e);
      if (a.load(&x->id) == id) {
        a.store(link, a.load(&x->next));
        a.free(x);
        return true;
      }
      link = &x->next;
    }
    return false;
  }
  // f(id, obj) for every entry; "" or what is wrong with the chains (an
  // entry in the wrong bucket, an id twice, more than `limit` entries).
  template <class F>
  std::string each(A& a, uint64_t limit, F&& f) {
    std::unordered_set<uint64_t> ids;
    for (uint64_t b = 0; b < n_; ++b) {
      for (uint64_t e = a.load(&b_[b]); e != 0; e = a.load(&entry(a, e)->next)) {
        const uint64_t id = a.load(&entry(a, e)->id);
        if (bucket(id) != b) return "id " + std::to_string(id) + " is in the wrong bucket";
        if (!ids.insert(id).second) return "id " + std::to_string(id) + " is there twice";
        if (ids.size() > limit) return "more entries than objects (a cycle?)";
        f(id, a.load(&entry(a, e)->obj));
      }
    }
    return "";
  }

 private:
  struct Entry {
    uint64_t id, obj, next;
  };
  Entry* entry(A& a, uint64_t off) { return a.template ptr<Entry>(off); }
  uint64_t bucket(uint64_t id) const { return mix64(id) % n_; }

  uint64_t* b_ = nullptr;
  uint64_t n_ = 0;
};

struct Stmb7Size {
  uint64_t atomic_per_composite, composites, levels;
};
// Table 4's sizes scaled down (see above); `full_apc` is the variant's
// atomic parts per composite at its default scale.
inline Stmb7Size stmb7_size(uint64_t full_apc, uint64_t default_scale, uint64_t scale) {
  const uint64_t apc = std::clamp<uint64_t>(full_apc * scale / default_scale, 4, full_apc);
  return {apc, std::max<uint64_t>(scale, 4), scale < 32 ? 3u : 5u};
}
inline uint64_t stmb7_heap_bytes(uint64_t full_apc, uint64_t default_scale, const Params& p) {
  const Stmb7Size z = stmb7_size(full_apc, default_scale, p.scale);
  // Per composite part: atomic parts (96 B), their slots and index entries
  // (8 + 24 B), allocator headers; the composite, its document and entry.
  // Twice the composites (creates outrun deletes that miss), the buckets.
  const uint64_t per = z.atomic_per_composite * (96 + 8 + 24 + 48) + 512;
  return 2 * z.composites * per + (z.composites * z.atomic_per_composite + 2 * z.composites) * 8 + (1 << 20);
}
inline uint64_t stmb7_s_heap_bytes(const Params& p) { return stmb7_heap_bytes(100, 100, p); }
inline uint64_t stmb7_m_heap_bytes(const Params& p) { return stmb7_heap_bytes(250, 160, p); }
inline uint64_t stmb7_b_heap_bytes(const Params& p) { return stmb7_heap_bytes(400, 160, p); }

inline constexpr const char* kStmb7What =
    "one operation of the read-write mix: queries, a traversal swapping atomic parts' x/y, build dates + 1, "
    "composite parts created, deleted, linked, unlinked";
inline constexpr const char* kStmb7ScaleMeans =
    "composite parts (Table 4's ComponentsPerModule / 5; atomic parts per composite: AtomicPartsPerComponent / 2)";
inline const Info kStmb7SmallInfo{"stmb7-s", "STMBench7-small", "WCL, Table 4 (STMBench7 -w rw -s s)",
                                  kStmb7What, nullptr, 1, kStmb7ScaleMeans, 100, 4, stmb7_s_heap_bytes};
inline const Info kStmb7MediumInfo{"stmb7-m", "STMBench7-medium", "WCL, Table 4 (STMBench7 -w rw -s m)",
                                   kStmb7What, nullptr, 1, kStmb7ScaleMeans, 160, 4, stmb7_m_heap_bytes};
inline const Info kStmb7BigInfo{"stmb7-b", "STMBench7-big", "WCL, Table 4 (STMBench7 -w rw -s b)",
                                kStmb7What, nullptr, 1, kStmb7ScaleMeans, 160, 4, stmb7_b_heap_bytes};

// FullApc: the variant's atomic parts per composite part at its default
// scale; INFO its Info.
template <class A, uint64_t FullApc, const Info& INFO>
class Stmbench7 {
 public:
  static const Info& info() { return INFO; }
  Stmbench7(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), comp_locks_(256), comps_(p_.threads),
        atomics_(p_.threads), links_(p_.threads), dates_(p_.threads), scratch_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    uint64_t part = 0;
    comp_index_.each(a, kWalkLimit, [&](uint64_t, uint64_t c) {
      if (part == 0) part = a.load(&comp(a, c)->root_part);
    });
    if (part != 0) a.store(&atomic(a, part)->x, a.load(&atomic(a, part)->x) + 1);  // x + y changes
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x53544D42372D5257ull;  // "STMB7-RW"
  static constexpr uint64_t kConn = 3, kSubs = 3, kMaxComp = 6, kMaxUse = 8, kCompsPerBase = 3, kDocWords = 8;
  static constexpr uint64_t kProbe = 16;  // ids tried after a random one that is gone
  struct Atomic {
    uint64_t id, build_date, x, y, part_of;
    uint64_t to[kConn], length[kConn];
  };
  struct Composite {
    uint64_t id, build_date, document, root_part, nparts, parts;
    uint64_t nused, used_in[kMaxUse];
  };
  struct Document {
    uint64_t id, composite;
    char text[kDocWords * 8];
  };
  // Levels count down to 2 (complex) and 1 (base).
  struct Complex {
    uint64_t id, build_date, parent, level, sub[kSubs];
  };
  struct Base {
    uint64_t id, build_date, parent, ncomp, comp[kMaxComp];
  };
  static_assert(sizeof(Atomic) == 88 && sizeof(Document) == 80);
  struct Root {
    uint64_t magic, apc, levels, design_root;
    uint64_t id_space;    // composite part ids are below it (atomic part ids: below id_space x apc)
    uint64_t composites;  // how many there are
    typename IdIndex<A>::Root atomic_index, comp_index;
  };

  // x + y of atomic part `id`: a swap keeps it.
  static uint64_t coord_sum(uint64_t id) { return 1000 + mix64(id) % 99'000; }
  Atomic* atomic(A& a, uint64_t o) { return a.template ptr<Atomic>(o); }
  Composite* comp(A& a, uint64_t o) { return a.template ptr<Composite>(o); }
  // Stores the first `bytes` of `v` to *dst one 8-byte field at a time: a
  // new object is initialized as a constructor would, field by field.
  template <class T>
  static void set_fields(A& a, T* dst, const T& v, size_t bytes) {
    static_assert(sizeof(T) % 8 == 0);
    uint64_t w[sizeof(T) / 8];
    std::memcpy(w, &v, sizeof w);
    for (size_t i = 0; i < bytes / 8; ++i) a.store(reinterpret_cast<uint64_t*>(dst) + i, w[i]);
  }
  std::string err(const std::string& what) const { return std::string(info().label) + ": " + what; }

  struct Totals {
    uint64_t comps = 0, atomics = 0, links = 0, dates = 0;
  };
  uint64_t build_assembly(A& a, Rng& g, uint64_t level, uint64_t parent, uint64_t* next_id,
                          std::vector<uint64_t>* bases);
  uint64_t create_composite(A& a, Rng& g, uint64_t cid, uint64_t* dates);
  uint64_t delete_composite(A& a, uint64_t c, uint64_t* dates, uint64_t* links);
  bool link(A& a, uint64_t base, uint64_t c);
  void unlink(A& a, uint64_t base, uint64_t slot);
  uint64_t random_base(A& a, Rng& r, std::vector<uint64_t>* path);
  uint64_t live_composite(A& a, Rng& r);
  uint64_t free_composite_id(A& a, Rng& r);
  std::string walk(Totals* t);
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  std::shared_mutex module_;
  LockTable comp_locks_;                          // striped over composite ids
  ThreadCounts comps_, atomics_, links_, dates_;  // net change since setup()/attach()
  std::vector<std::vector<size_t>> scratch_;
  Stmb7Size z_{};
  Root* root_ = nullptr;
  IdIndex<A> atomic_index_, comp_index_;
  Totals base_;                    // at setup()/attach()
  std::atomic<uint64_t> sink_{0};  // what the queries read
};

template <class A, uint64_t FullApc, const Info& INFO>
void Stmbench7<A, FullApc, INFO>::setup() {
  A& a = acc_[0];
  z_ = stmb7_size(FullApc, INFO.default_scale, p_.scale);
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    const Root init{0, z_.atomic_per_composite, z_.levels, 0, 2 * z_.composites, 0, {}, {}};
    a.write(root_, &init, sizeof init);
    w.commit();
  }
  atomic_index_.create(a, &root_->atomic_index, z_.composites * z_.atomic_per_composite);
  comp_index_.create(a, &root_->comp_index, 2 * z_.composites);
  Rng g(p_.seed);
  std::vector<uint64_t> bases, comps;
  uint64_t next_id = 0, dates = 0;
  const uint64_t top = build_assembly(a, g, z_.levels, 0, &next_id, &bases);
  {
    Wrap<A> w(a);
    a.store(&root_->design_root, top);
    w.commit();
  }
  for (uint64_t i = 0; i < z_.composites; ++i) {
    Wrap<A> w(a);
    comps.push_back(create_composite(a, g, i, &dates));
    w.commit();
  }
  for (uint64_t b : bases) {
    Wrap<A> w(a);
    for (uint64_t k = 0; k < kCompsPerBase; ++k) {
      for (int tries = 0; tries < 8 && !link(a, b, comps[g.below(comps.size())]); ++tries) {
      }
    }
    w.commit();
  }
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
  w.commit();
  adopt();
}

template <class A, uint64_t FullApc, const Info& INFO>
void Stmbench7<A, FullApc, INFO>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, info().label);
  z_ = {a.load(&root_->apc), 0, a.load(&root_->levels)};
  if (z_.atomic_per_composite == 0 || a.load(&root_->id_space) == 0 || z_.levels < 2 || z_.levels > 12 ||
      a.load(&root_->design_root) == 0 || !atomic_index_.open(a, &root_->atomic_index) ||
      !comp_index_.open(a, &root_->comp_index)) {
    throw WorkloadError(err("the root names no module or indexes"));
  }
  adopt();
}

template <class A, uint64_t FullApc, const Info& INFO>
uint64_t Stmbench7<A, FullApc, INFO>::build_assembly(A& a, Rng& g, uint64_t level, uint64_t parent, uint64_t* next_id,
                                                     std::vector<uint64_t>* bases) {
  if (level == 1) {
    Wrap<A> w(a);
    auto* b = static_cast<Base*>(a.alloc(sizeof(Base)));
    const Base init{(*next_id)++, 1000 + g.below(1000), parent, 0, {}};
    a.write(b, &init, sizeof init);
    w.commit();
    bases->push_back(a.off(b));
    return a.off(b);
  }
  Complex* c;
  {
    Wrap<A> w(a);
    c = static_cast<Complex*>(a.alloc(sizeof(Complex)));
    const Complex init{(*next_id)++, 1000 + g.below(1000), parent, level, {}};
    a.write(c, &init, sizeof init);
    w.commit();
  }
  uint64_t subs[kSubs];
  for (uint64_t& s : subs) s = build_assembly(a, g, level - 1, a.off(c), next_id, bases);
  Wrap<A> w(a);
  a.write(c->sub, subs, sizeof subs);
  w.commit();
  return a.off(c);
}

// In the caller's wrap: a new composite part with its document and atomic
// parts, indexed, linked to nothing.  Adds the build dates it sets to
// *dates.
template <class A, uint64_t FullApc, const Info& INFO>
uint64_t Stmbench7<A, FullApc, INFO>::create_composite(A& a, Rng& g, uint64_t cid, uint64_t* dates) {
  const uint64_t n = z_.atomic_per_composite, aid = cid * n;
  a.store(&root_->composites, a.load(&root_->composites) + 1);
  auto* c = static_cast<Composite*>(a.alloc(sizeof(Composite)));
  auto* doc = static_cast<Document*>(a.alloc(sizeof(Document)));
  auto* parts = static_cast<uint64_t*>(a.alloc(n * 8));
  std::vector<uint64_t> offs(n);
  for (uint64_t& o : offs) o = a.off(a.alloc(sizeof(Atomic)));
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t id = aid + i, sum = coord_sum(id), x = g.below(sum + 1);
    const Atomic at{id,
                    1000 + g.below(1000),
                    x,
                    sum - x,
                    a.off(c),
                    {offs[(i + 1) % n], offs[g.below(n)], offs[g.below(n)]},
                    {1 + g.below(100), 1 + g.below(100), 1 + g.below(100)}};
    set_fields(a, atomic(a, offs[i]), at, sizeof at);
    atomic_index_.insert(a, id, offs[i]);
    *dates += at.build_date;
  }
  for (uint64_t i = 0; i < n; ++i) a.store(&parts[i], offs[i]);
  Document d{cid, a.off(c), {}};
  std::snprintf(d.text, sizeof d.text, "Composite part #%llu. I am the documentation of this part.",
                static_cast<unsigned long long>(cid));
  a.write(doc, &d, sizeof d);
  const Composite ci{cid, 1000 + g.below(1000), a.off(doc), offs[0], n, a.off(parts), 0, {}};
  set_fields(a, c, ci, offsetof(Composite, used_in));  // the users' slots are written as they fill
  *dates += ci.build_date;
  comp_index_.insert(a, cid, a.off(c));
  return a.off(c);
}

// In the caller's wrap: unlinks composite part c from its base assemblies,
// removes it and its atomic parts from the indexes and frees them.
// Returns its atomic parts; adds their build dates and its own to *dates
// and the links it had to *links.
template <class A, uint64_t FullApc, const Info& INFO>
uint64_t Stmbench7<A, FullApc, INFO>::delete_composite(A& a, uint64_t c, uint64_t* dates, uint64_t* links) {
  Composite* cp = comp(a, c);
  while (const uint64_t nu = a.load(&cp->nused)) {
    const uint64_t base = a.load(&cp->used_in[nu - 1]);
    Base* b = a.template ptr<Base>(base);
    for (uint64_t s = 0, n = a.load(&b->ncomp); s < n; ++s) {
      if (a.load(&b->comp[s]) == c) {
        unlink(a, base, s);
        ++*links;
        break;
      }
    }
    if (a.load(&cp->nused) == nu) throw WorkloadError(err("a base assembly in used_in does not use its part"));
  }
  const uint64_t n = a.load(&cp->nparts);
  auto* parts = a.template ptr<uint64_t>(a.load(&cp->parts));
  for (uint64_t i = 0; i < n; ++i) {
    Atomic* at = atomic(a, a.load(&parts[i]));
    *dates += a.load(&at->build_date);
    atomic_index_.erase(a, a.load(&at->id));
    a.free(at);
  }
  *dates += a.load(&cp->build_date);
  comp_index_.erase(a, a.load(&cp->id));
  a.store(&root_->composites, a.load(&root_->composites) - 1);
  a.free(parts);
  a.free(a.template ptr<Document>(a.load(&cp->document)));
  a.free(cp);
  return n;
}

// Base assembly `base` uses composite part c, if both have room and it
// does not yet: a slot and a back pointer written, two counts raised.
template <class A, uint64_t FullApc, const Info& INFO>
bool Stmbench7<A, FullApc, INFO>::link(A& a, uint64_t base, uint64_t c) {
  Base* b = a.template ptr<Base>(base);
  Composite* cp = comp(a, c);
  const uint64_t n = a.load(&b->ncomp), nu = a.load(&cp->nused);
  if (n == kMaxComp || nu == kMaxUse) return false;
  for (uint64_t s = 0; s < n; ++s) {
    if (a.load(&b->comp[s]) == c) return false;
  }
  a.store(&b->comp[n], c);
  a.store(&b->ncomp, n + 1);
  a.store(&cp->used_in[nu], base);
  a.store(&cp->nused, nu + 1);
  return true;
}

// Base assembly `base` stops using the composite part in its slot `slot`:
// the last slot and the last back pointer move into the holes.
template <class A, uint64_t FullApc, const Info& INFO>
void Stmbench7<A, FullApc, INFO>::unlink(A& a, uint64_t base, uint64_t slot) {
  Base* b = a.template ptr<Base>(base);
  const uint64_t n = a.load(&b->ncomp), c = a.load(&b->comp[slot]);
  a.store(&b->comp[slot], a.load(&b->comp[n - 1]));
  a.store(&b->ncomp, n - 1);
  Composite* cp = comp(a, c);
  const uint64_t nu = a.load(&cp->nused);
  for (uint64_t u = 0; u < nu; ++u) {
    if (a.load(&cp->used_in[u]) == base) {
      a.store(&cp->used_in[u], a.load(&cp->used_in[nu - 1]));
      a.store(&cp->nused, nu - 1);
      return;
    }
  }
  throw WorkloadError(err("a composite part does not list a base assembly that uses it"));
}

// Down a random path of complex assemblies (kept in *path) to a base
// assembly.
template <class A, uint64_t FullApc, const Info& INFO>
uint64_t Stmbench7<A, FullApc, INFO>::random_base(A& a, Rng& r, std::vector<uint64_t>* path) {
  path->clear();
  uint64_t o = a.load(&root_->design_root);
  for (uint64_t level = z_.levels; level > 1; --level) {
    path->push_back(o);
    o = a.load(&a.template ptr<Complex>(o)->sub[r.below(kSubs)]);
  }
  return o;
}

// A composite part picked by a random id (the next ids tried if it is
// gone), 0 if none was found.
template <class A, uint64_t FullApc, const Info& INFO>
uint64_t Stmbench7<A, FullApc, INFO>::live_composite(A& a, Rng& r) {
  const uint64_t space = a.load(&root_->id_space), id = r.below(space);
  for (uint64_t k = 0; k < kProbe; ++k) {
    if (const uint64_t c = comp_index_.find(a, (id + k) % space)) return c;
  }
  return 0;
}

// A composite part id in use by none (STMBench7's id pool: ids are used
// again), picked like live_composite's; ~0 if none was found.
template <class A, uint64_t FullApc, const Info& INFO>
uint64_t Stmbench7<A, FullApc, INFO>::free_composite_id(A& a, Rng& r) {
  const uint64_t space = a.load(&root_->id_space), id = r.below(space);
  for (uint64_t k = 0; k < kProbe; ++k) {
    if (comp_index_.find(a, (id + k) % space) == 0) return (id + k) % space;
  }
  return ~uint64_t{0};
}

template <class A, uint64_t FullApc, const Info& INFO>
void Stmbench7<A, FullApc, INFO>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  Rng& r = rng_[tid];
  std::vector<uint64_t> path, parts, comps, stack;
  std::unordered_set<uint64_t> seen;
  for (uint64_t t = 0; t < transactions; ++t) {
    const uint64_t op = r.below(1000);
    if (op < 450) {  // atomic parts by id: query (300) or build date + 1 (150)
      const bool update = op >= 300;
      std::shared_lock<std::shared_mutex> ml(module_);
      std::optional<LockTable::Guard> cl;
      Wrap<A> w(a);
      const uint64_t ids = a.load(&root_->id_space) * z_.atomic_per_composite;
      parts.clear();
      comps.clear();
      for (int k = 0; k < 10; ++k) {
        if (const uint64_t o = atomic_index_.find(a, r.below(ids))) {
          parts.push_back(o);
          comps.push_back(a.load(&comp(a, a.load(&atomic(a, o)->part_of))->id));
        }
      }
      cl.emplace(comp_locks_, comps, scratch_[tid]);
      uint64_t sum = 0;
      for (uint64_t o : parts) {
        Atomic* at = atomic(a, o);
        if (update) {
          a.store(&at->build_date, a.load(&at->build_date) + 1);
        } else {
          sum += a.load(&at->x) + a.load(&at->y);
        }
      }
      w.commit();
      if (update) dates_.add(tid, static_cast<int64_t>(parts.size()));
      sink_.fetch_add(sum, std::memory_order_relaxed);
    } else if (op < 650) {  // short traversal: swap x and y of a composite part's atomic parts
      std::shared_lock<std::shared_mutex> ml(module_);
      std::unique_lock<std::mutex> cl;
      Wrap<A> w(a);
      Base* b = a.template ptr<Base>(random_base(a, r, &path));
      if (const uint64_t n = a.load(&b->ncomp)) {
        Composite* cp = comp(a, a.load(&b->comp[r.below(n)]));
        cl = std::unique_lock<std::mutex>(comp_locks_.of(a.load(&cp->id)));
        seen.clear();
        stack.assign(1, a.load(&cp->root_part));
        seen.insert(stack[0]);
        while (!stack.empty()) {
          Atomic* at = atomic(a, stack.back());
          stack.pop_back();
          const uint64_t x = a.load(&at->x), y = a.load(&at->y);
          a.store(&at->x, y);
          a.store(&at->y, x);
          for (uint64_t k = 0; k < kConn; ++k) {
            const uint64_t to = a.load(&at->to[k]);
            if (seen.insert(to).second) stack.push_back(to);
          }
        }
      }
      w.commit();
    } else if (op < 750) {  // assembly update: build dates along a path
      std::unique_lock<std::shared_mutex> ml(module_);
      Wrap<A> w(a);
      Base* b = a.template ptr<Base>(random_base(a, r, &path));
      uint64_t bumped = 0;
      for (uint64_t o : path) {
        Complex* c = a.template ptr<Complex>(o);
        a.store(&c->build_date, a.load(&c->build_date) + 1);
        ++bumped;
      }
      a.store(&b->build_date, a.load(&b->build_date) + 1);
      ++bumped;
      for (uint64_t s = 0, n = a.load(&b->ncomp); s < n; ++s) {
        Composite* cp = comp(a, a.load(&b->comp[s]));
        a.store(&cp->build_date, a.load(&cp->build_date) + 1);
        ++bumped;
      }
      w.commit();
      dates_.add(tid, static_cast<int64_t>(bumped));
    } else if (op < 900) {  // document query
      std::shared_lock<std::shared_mutex> ml(module_);
      Wrap<A> w(a);
      Base* b = a.template ptr<Base>(random_base(a, r, &path));
      if (const uint64_t n = a.load(&b->ncomp)) {
        Composite* cp = comp(a, a.load(&b->comp[r.below(n)]));
        char text[kDocWords * 8];
        a.read(text, a.template ptr<Document>(a.load(&cp->document))->text, sizeof text);
        sink_.fetch_add(static_cast<uint64_t>(std::count(text, text + sizeof text, 'a')), std::memory_order_relaxed);
      }
      w.commit();
    } else {  // structural modifications
      std::unique_lock<std::shared_mutex> ml(module_);
      Wrap<A> w(a);
      uint64_t dates = 0, links = 0, c;
      int64_t dc = 0, da = 0, dd = 0, dl = 0;
      const uint64_t base = random_base(a, r, &path);
      const uint64_t n = a.load(&a.template ptr<Base>(base)->ncomp);
      if (op < 925) {  // create a composite part, linked to the base assembly if it has room
        const uint64_t cid = free_composite_id(a, r);
        if (cid != ~uint64_t{0}) {
          c = create_composite(a, r, cid, &dates);
          dc = 1;
          da = static_cast<int64_t>(z_.atomic_per_composite);
          dd = static_cast<int64_t>(dates);
          dl = link(a, base, c) ? 1 : 0;
        }
      } else if (op < 950) {  // delete a composite part
        if ((c = live_composite(a, r)) != 0) {
          da = -static_cast<int64_t>(delete_composite(a, c, &dates, &links));
          dc = -1;
          dd = -static_cast<int64_t>(dates);
          dl = -static_cast<int64_t>(links);
        }
      } else if (op < 975) {  // link
        if ((c = live_composite(a, r)) != 0 && link(a, base, c)) dl = 1;
      } else if (n != 0) {  // unlink
        unlink(a, base, r.below(n));
        dl = -1;
      }
      w.commit();
      comps_.add(tid, dc);
      atomics_.add(tid, da);
      dates_.add(tid, dd);
      links_.add(tid, dl);
    }
  }
}

// Checks the whole graph (see the header comment) and counts what verify()
// compares with the run: "" or what is wrong.
template <class A, uint64_t FullApc, const Info& INFO>
std::string Stmbench7<A, FullApc, INFO>::walk(Totals* t) {
  A& a = acc_[0];
  *t = Totals{};
  std::set<std::pair<uint64_t, uint64_t>> uses, used;  // (base, composite) seen from either side
  uint64_t bases = 0, assemblies = 0;
  const uint64_t max_assemblies = (uint64_t{1} << (2 * z_.levels)) + 1;  // > 3^levels
  struct Todo {
    uint64_t o, level, parent;
  };
  std::vector<Todo> todo{{a.load(&root_->design_root), z_.levels, 0}};
  while (!todo.empty()) {
    const Todo x = todo.back();
    todo.pop_back();
    if (x.o == 0) return err("an assembly has an empty subassembly slot");
    if (++assemblies > max_assemblies) return err("the assembly tree has more assemblies than its levels allow");
    if (x.level == 1) {
      Base* b = a.template ptr<Base>(x.o);
      if (a.load(&b->parent) != x.parent) return err("a base assembly's parent link is wrong");
      t->dates += a.load(&b->build_date);
      const uint64_t n = a.load(&b->ncomp);
      if (n > kMaxComp) return mismatch(err("a base assembly's composite parts"), n, kMaxComp);
      for (uint64_t s = 0; s < n; ++s) {
        if (!uses.insert({x.o, a.load(&b->comp[s])}).second) return err("a base assembly uses a part twice");
      }
      ++bases;
      continue;
    }
    Complex* c = a.template ptr<Complex>(x.o);
    if (a.load(&c->parent) != x.parent) return err("a complex assembly's parent link is wrong");
    if (a.load(&c->level) != x.level) return mismatch(err("a complex assembly's level"), a.load(&c->level), x.level);
    t->dates += a.load(&c->build_date);
    for (uint64_t s = 0; s < kSubs; ++s) todo.push_back({a.load(&c->sub[s]), x.level - 1, x.o});
  }
  uint64_t want_bases = 1;
  for (uint64_t l = 1; l < z_.levels; ++l) want_bases *= kSubs;
  if (bases != want_bases) return mismatch(err("base assemblies"), bases, want_bases);
  t->links = uses.size();

  std::vector<std::pair<uint64_t, uint64_t>> comps;
  std::string why = comp_index_.each(a, kWalkLimit, [&](uint64_t id, uint64_t c) { comps.push_back({id, c}); });
  if (!why.empty()) return err("composite index: " + why);
  std::unordered_set<uint64_t> mine;
  std::vector<uint64_t> stack;
  for (const auto& [id, c] : comps) {
    Composite* cp = comp(a, c);
    const std::string cn = "composite part " + std::to_string(id) + ": ";
    if (c == 0 || a.load(&cp->id) != id) return err(cn + "the index names another object");
    Document* d = a.template ptr<Document>(a.load(&cp->document));
    if (d == nullptr || a.load(&d->id) != id || a.load(&d->composite) != c) return err(cn + "its document is not its");
    const uint64_t nu = a.load(&cp->nused);
    if (nu > kMaxUse) return mismatch(err(cn + "users"), nu, kMaxUse);
    for (uint64_t u = 0; u < nu; ++u) {
      if (!used.insert({a.load(&cp->used_in[u]), c}).second) return err(cn + "lists a user twice");
    }
    t->dates += a.load(&cp->build_date);
    const uint64_t n = a.load(&cp->nparts);
    if (n != z_.atomic_per_composite) return mismatch(err(cn + "atomic parts"), n, z_.atomic_per_composite);
    const uint64_t* parts = a.template ptr<uint64_t>(a.load(&cp->parts));
    mine.clear();
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t o = a.load(&parts[i]);
      Atomic* at = atomic(a, o);
      const uint64_t aid = a.load(&at->id);
      const std::string an = cn + "atomic part " + std::to_string(aid) + ": ";
      if (!mine.insert(o).second) return err(cn + "owns an atomic part twice");
      if (a.load(&at->part_of) != c) return err(an + "belongs to another composite part");
      if (atomic_index_.find(a, aid) != o) return err(an + "the index does not find it");
      if (a.load(&at->x) + a.load(&at->y) != coord_sum(aid)) {
        return mismatch(err(an + "x + y"), a.load(&at->x) + a.load(&at->y), coord_sum(aid));
      }
      t->dates += a.load(&at->build_date);
    }
    for (uint64_t o : mine) {
      for (uint64_t k = 0; k < kConn; ++k) {
        if (!mine.count(a.load(&atomic(a, o)->to[k]))) return err(cn + "a connection leaves the composite part");
      }
    }
    // Every atomic part is reached from the root part.
    std::unordered_set<uint64_t> seen{a.load(&cp->root_part)};
    if (!mine.count(*seen.begin())) return err(cn + "its root part is not among its atomic parts");
    stack.assign(1, *seen.begin());
    while (!stack.empty()) {
      const uint64_t o = stack.back();
      stack.pop_back();
      for (uint64_t k = 0; k < kConn; ++k) {
        const uint64_t to = a.load(&atomic(a, o)->to[k]);
        if (seen.insert(to).second) stack.push_back(to);
      }
    }
    if (seen.size() != n) return mismatch(err(cn + "atomic parts reached from the root part"), seen.size(), n);
    t->atomics += n;
  }
  t->comps = comps.size();
  if (a.load(&root_->composites) != t->comps) {
    return mismatch(err("the module's composite count"), a.load(&root_->composites), t->comps);
  }
  if (uses != used) return err("base assemblies and the composite parts' users disagree");
  uint64_t indexed = 0;
  why = atomic_index_.each(a, t->atomics, [&](uint64_t, uint64_t) { ++indexed; });
  if (!why.empty()) return err("atomic index: " + why);
  if (indexed != t->atomics) return mismatch(err("atomic parts indexed"), indexed, t->atomics);
  return "";
}

template <class A, uint64_t FullApc, const Info& INFO>
std::string Stmbench7<A, FullApc, INFO>::verify() {
  Totals t;
  const std::string why = walk(&t);
  if (!why.empty()) return why;
  const auto want = [](uint64_t base, const ThreadCounts& d) {
    return static_cast<uint64_t>(static_cast<int64_t>(base) + d.sum());
  };
  if (t.comps != want(base_.comps, comps_)) return mismatch(err("composite parts"), t.comps, want(base_.comps, comps_));
  if (t.atomics != want(base_.atomics, atomics_)) {
    return mismatch(err("atomic parts"), t.atomics, want(base_.atomics, atomics_));
  }
  if (t.links != want(base_.links, links_)) return mismatch(err("links"), t.links, want(base_.links, links_));
  if (t.dates != want(base_.dates, dates_)) {
    return mismatch(err("build dates add up to"), t.dates, want(base_.dates, dates_));
  }
  return "";
}

template <class A, uint64_t FullApc, const Info& INFO>
void Stmbench7<A, FullApc, INFO>::adopt() {
  walk(&base_);  // a broken graph: verify() says so
  comps_.clear();
  atomics_.clear();
  links_.clear();
  dates_.clear();
}

// The three registered sizes.
template <class A>
using Stmb7Small = Stmbench7<A, 100, kStmb7SmallInfo>;
template <class A>
using Stmb7Medium = Stmbench7<A, 250, kStmb7MediumInfo>;
template <class A>
using Stmb7Big = Stmbench7<A, 400, kStmb7BigInfo>;

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_STMBENCH7_H_
