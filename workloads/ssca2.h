// ssca2.h — ssca2 (WCL, Table 3: STAMP's ssca2): SSCA2 kernel 1, turning
// a generated list of weighted edges into per-vertex adjacency arrays.
//
// setup() generates the graph as SSCA2's scalable data generator does in
// spirit (written from its description): `scale` vertices, 8 directed
// edges per vertex whose endpoints are drawn by recursive quadrant choice
// (R-MAT, probabilities 0.55/0.10/0.10/0.25, no self loops), vertex ids
// permuted at random, integer weights 1..scale; and stores it in the pool
// as the kernel's input, an edge list {u, v, weight}.  It allocates the
// adjacency store (one slot {v, weight} per edge) and the vertex index,
// one record per vertex {offset, count, out_degree, in_degree, epoch}.
//
// Kernel 1 runs in three passes, each a stream of transactions that take
// the next items from a persistent cursor (tx_size of them, default 8):
//   count   per edge: u's out-degree and v's in-degree go up by one;
//   place   per vertex (8 x tx_size to a transaction): its offset in the
//           adjacency store is the out-degrees before it (a running sum
//           kept in the root), its fill count 0;
//   fill    per edge: {v, weight} goes into u's slot offset + count, and
//           count goes up by one.
// Its stores are counters going up by one, offsets and small ids and
// weights written over earlier values: half writes, as WCL's Fig. 2 finds
// for ssca2.  After the fill pass the kernel starts over on the same list:
// the epoch goes up, and a vertex record from an earlier epoch counts as
// empty, reset the first time the new epoch touches it (no transaction
// clears the whole graph).  One DRAM lock serializes the transactions
// (the cursor is shared; STAMP's ssca2 is as serial at its cursor).
//
// verify(): per pass, every vertex's degrees are the edges counted so far,
// its offset the running sum of the out-degrees before it, its slots hold
// exactly the edges of the list filled so far that leave it (a multiset);
// no record is from a later epoch; and the items the passes went through
// since setup()/attach() are what the committed transactions counted.
#ifndef SOFTWRAP_WORKLOADS_SSCA2_H_
#define SOFTWRAP_WORKLOADS_SSCA2_H_

#include <algorithm>
#include <mutex>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline constexpr uint64_t kSsca2EdgeFactor = 8;

inline uint64_t ssca2_heap_bytes(const Params& p) {
  const uint64_t n = std::max<uint64_t>(p.scale, 2), e = kSsca2EdgeFactor * n;
  return n * 40 + e * (24 + 16) + 65536;  // vertex index, edge list, adjacency store
}

inline const Info kSsca2Info{"ssca2",
                             "ssca2",
                             "WCL, Table 3 (STAMP ssca2)",
                             "SSCA2 kernel 1: counts degrees of, places, or fills in the next edges of "
                             "a generated list",
                             "edges per transaction (vertices in the place pass: 8 x)",
                             8,
                             "vertices (8 edges each)",
                             65'536,
                             16,
                             ssca2_heap_bytes};

template <class A>
class Ssca2 {
 public:
  static const Info& info() { return kSsca2Info; }
  Ssca2(std::vector<A>* access, const Params& p) : acc_(*access), p_(resolve(info(), p)), steps_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    Vertex* x = &verts_[0];
    a.store(&x->epoch, a.load(&root_->epoch));
    a.store(&x->in_degree, a.load(&x->in_degree) + (uint64_t{1} << 40));
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x53534341324B3031ull;  // "SSCA2K01"
  enum Pass : uint64_t { kCount = 0, kPlace = 1, kFill = 2 };
  struct Root {
    uint64_t magic, vertices, edges, edge_list, vertex_index, adjacency;
    uint64_t epoch, pass, cursor,
        placed;  // placed: out-degrees of the vertices placed so far
  };
  struct Edge {
    uint64_t u, v, weight;
  };
  struct Vertex {
    uint64_t offset, count, out_degree, in_degree, epoch;
  };
  struct Slot {
    uint64_t v, weight;
  };

  uint64_t pass_length(uint64_t pass) const { return pass == kPlace ? vertices_ : edges_; }
  // Items of all passes before (epoch, pass, cursor).
  uint64_t progress(uint64_t epoch, uint64_t pass, uint64_t cursor) const {
    return epoch * (2 * edges_ + vertices_) + (pass >= kPlace ? edges_ : 0) + (pass >= kFill ? vertices_ : 0) + cursor;
  }
  // A record from an earlier epoch is empty: reset it before its first
  // change in epoch `e`.
  void renew(A& a, Vertex* x, uint64_t e) {
    if (a.load(&x->epoch) == e) return;
    a.store(&x->epoch, e);
    a.store(&x->count, uint64_t{0});
    a.store(&x->out_degree, uint64_t{0});
    a.store(&x->in_degree, uint64_t{0});
  }
  void step(A& a, uint64_t epoch, uint64_t pass, uint64_t item, uint64_t* placed);
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  ThreadCounts steps_;  // items the committed transactions went through since
                        // setup()/attach()
  std::mutex mu_;
  Root* root_ = nullptr;
  Edge* list_ = nullptr;
  Vertex* verts_ = nullptr;
  Slot* adj_ = nullptr;
  uint64_t vertices_ = 0, edges_ = 0, progress0_ = 0;
};

template <class A>
void Ssca2<A>::setup() {
  A& a = acc_[0];
  vertices_ = std::max<uint64_t>(p_.scale, 2);
  edges_ = kSsca2EdgeFactor * vertices_;
  Rng g(p_.seed);
  std::vector<uint64_t> perm(vertices_);
  std::iota(perm.begin(), perm.end(), uint64_t{0});
  for (uint64_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[g.below(i)]);
  unsigned bits = 0;
  while ((uint64_t{1} << bits) < vertices_) ++bits;
  std::vector<uint64_t> words;
  words.reserve(3 * edges_);
  while (words.size() < 3 * edges_) {
    uint64_t u = 0, v = 0;
    for (unsigned b = 0; b < bits; ++b) {
      const uint64_t r = g.below(100);  // quadrant: 0-54 top left, 55-64 top
                                        // right, 65-74 bottom left, rest
      u = 2 * u + (r >= 65);
      v = 2 * v + ((r >= 55 && r < 65) || r >= 75);
    }
    if (u >= vertices_ || v >= vertices_ || u == v) continue;
    words.push_back(perm[u]);
    words.push_back(perm[v]);
    words.push_back(g.between(1, vertices_));
  }
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    list_ = static_cast<Edge*>(a.alloc(edges_ * sizeof(Edge)));
    verts_ = static_cast<Vertex*>(a.alloc(vertices_ * sizeof(Vertex)));
    adj_ = static_cast<Slot*>(a.alloc(edges_ * sizeof(Slot)));
    const Root r{0, vertices_, edges_, a.off(list_), a.off(verts_), a.off(adj_), 0, kCount, 0, 0};
    a.write(root_, &r, sizeof r);
    w.commit();
  }
  write_words(a, &list_[0].u, 3 * edges_, [&](uint64_t i) { return words[i]; });
  write_words(a, &verts_[0].offset, 5 * vertices_, [](uint64_t) { return uint64_t{0}; });
  write_words(a, &adj_[0].v, 2 * edges_, [](uint64_t) { return uint64_t{0}; });
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
  w.commit();
  adopt();
}

template <class A>
void Ssca2<A>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, "ssca2");
  vertices_ = a.load(&root_->vertices);
  edges_ = a.load(&root_->edges);
  list_ = a.template ptr<Edge>(a.load(&root_->edge_list));
  verts_ = a.template ptr<Vertex>(a.load(&root_->vertex_index));
  adj_ = a.template ptr<Slot>(a.load(&root_->adjacency));
  if (vertices_ == 0 || edges_ == 0 || !list_ || !verts_ || !adj_) {
    throw WorkloadError("ssca2: the root names an empty graph");
  }
  adopt();
}

template <class A>
void Ssca2<A>::adopt() {
  A& a = acc_[0];
  progress0_ = progress(a.load(&root_->epoch), a.load(&root_->pass), a.load(&root_->cursor));
  steps_.clear();
}

template <class A>
void Ssca2<A>::step(A& a, uint64_t epoch, uint64_t pass, uint64_t item, uint64_t* placed) {
  if (pass == kPlace) {
    Vertex* x = &verts_[item];
    renew(a, x, epoch);
    a.store(&x->offset, *placed);
    a.store(&x->count, uint64_t{0});
    *placed += a.load(&x->out_degree);
    return;
  }
  Edge ed;
  a.read(&ed, &list_[item], sizeof ed);
  Vertex* x = &verts_[ed.u];
  if (pass == kCount) {
    Vertex* y = &verts_[ed.v];
    renew(a, x, epoch);
    renew(a, y, epoch);
    a.store(&x->out_degree, a.load(&x->out_degree) + 1);
    a.store(&y->in_degree, a.load(&y->in_degree) + 1);
    return;
  }
  const uint64_t n = a.load(&x->count);
  Slot* s = &adj_[a.load(&x->offset) + n];
  a.store(&s->v, ed.v);
  a.store(&s->weight, ed.weight);
  a.store(&x->count, n + 1);
}

template <class A>
void Ssca2<A>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  for (uint64_t t = 0; t < transactions; ++t) {
    std::lock_guard<std::mutex> g(mu_);
    Wrap<A> w(a);
    uint64_t epoch = a.load(&root_->epoch), pass = a.load(&root_->pass), cursor = a.load(&root_->cursor);
    uint64_t placed = a.load(&root_->placed);
    const uint64_t items = pass == kPlace ? 8 * p_.tx_size : p_.tx_size;
    for (uint64_t k = 0; k < items; ++k) {
      if (cursor == pass_length(pass)) {  // the next pass; after the fill pass, the next epoch
        cursor = 0;
        if (pass == kFill) {
          a.store(&root_->epoch, ++epoch);
          pass = kCount;
        } else {
          ++pass;
        }
        a.store(&root_->pass, pass);
        if (pass == kPlace) placed = 0;
      }
      step(a, epoch, pass, cursor++, &placed);
    }
    a.store(&root_->cursor, cursor);
    a.store(&root_->placed, placed);
    w.commit();
    steps_.add(tid, static_cast<int64_t>(items));
  }
}

template <class A>
std::string Ssca2<A>::verify() {
  A& a = acc_[0];
  const uint64_t epoch = a.load(&root_->epoch), pass = a.load(&root_->pass), cursor = a.load(&root_->cursor);
  if (pass > kFill || cursor > pass_length(pass))
    return mismatch("ssca2: the cursor of pass " + std::to_string(pass), cursor, 0);
  const uint64_t got = progress(epoch, pass, cursor), want = progress0_ + static_cast<uint64_t>(steps_.sum());
  if (got != want) return mismatch("ssca2: items the passes went through", got, want);
  // What the passes so far make of the list.
  const uint64_t counted = pass == kCount ? cursor : edges_, filled = pass == kFill ? cursor : 0;
  const uint64_t placed_to = pass == kPlace ? cursor : pass == kFill ? vertices_ : 0;
  std::vector<Edge> list(edges_);
  a.read(list.data(), list_, edges_ * sizeof(Edge));
  std::vector<uint64_t> out(vertices_), in(vertices_), fill(vertices_), offset(vertices_);
  for (uint64_t i = 0; i < edges_; ++i) {
    const Edge& ed = list[i];
    if (ed.u >= vertices_ || ed.v >= vertices_) return "ssca2: an edge of the list names no vertex";
    if (i < counted) ++out[ed.u], ++in[ed.v];
    if (i < filled) ++fill[ed.u];
  }
  std::exclusive_scan(out.begin(), out.end(), offset.begin(), uint64_t{0});
  if (pass == kPlace && a.load(&root_->placed) != (cursor ? offset[cursor - 1] + out[cursor - 1] : 0)) {
    return mismatch("ssca2: the running sum of out-degrees", a.load(&root_->placed),
                    cursor ? offset[cursor - 1] + out[cursor - 1] : 0);
  }
  list.resize(filled);
  auto by_edge = [](const Edge& x, const Edge& y) {
    return std::tie(x.u, x.v, x.weight) < std::tie(y.u, y.v, y.weight);
  };
  std::sort(list.begin(), list.end(), by_edge);
  std::vector<Slot> have;
  size_t at = 0;  // u's edges in the sorted list start here
  for (uint64_t u = 0; u < vertices_; ++u) {
    const Vertex* x = &verts_[u];
    const std::string vn = "ssca2: vertex " + std::to_string(u);
    const uint64_t ve = a.load(&x->epoch);
    if (ve > epoch) return mismatch(vn + ": epoch", ve, epoch);
    const bool live = ve == epoch;  // else empty
    const uint64_t od = live ? a.load(&x->out_degree) : 0, id = live ? a.load(&x->in_degree) : 0;
    const uint64_t n = live ? a.load(&x->count) : 0;
    if (od != out[u]) return mismatch(vn + ": out-degree", od, out[u]);
    if (id != in[u]) return mismatch(vn + ": in-degree", id, in[u]);
    if (n != fill[u]) return mismatch(vn + ": slots filled", n, fill[u]);
    if (u < placed_to && a.load(&x->offset) != offset[u])
      return mismatch(vn + ": offset", a.load(&x->offset), offset[u]);
    have.resize(n);
    if (n) a.read(have.data(), &adj_[a.load(&x->offset)], n * sizeof(Slot));
    std::sort(have.begin(), have.end(),
              [](const Slot& p, const Slot& q) { return std::tie(p.v, p.weight) < std::tie(q.v, q.weight); });
    for (uint64_t k = 0; k < n; ++k, ++at) {
      if (have[k].v != list[at].v || have[k].weight != list[at].weight) {
        return vn + ": its slots do not hold the edges of the list that leave it";
      }
    }
  }
  return "";
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_SSCA2_H_
