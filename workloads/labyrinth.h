// labyrinth.h — labyrinth (WCL, Table 3): maze routing with Lee's
// algorithm on a persistent 3-D grid.
//
// The pool holds a grid of scale x scale x 3 cells (one 64-bit word each:
// 0 empty, kWall, or the id of the path through it, pair + 1; setup walls
// off 10 % of the cells), a work queue of `scale` source/destination pairs
// {src, dst, route} (route 0: queued) and a doubly linked list of routes
// {prev, next, pair, length, cells[length]} (cell indexes, source first).
// Routes never share a cell.
//
// A transaction is one of:
//   route: a queued pair (the next one round robin that no other thread
//     holds) is routed on a private DRAM copy of the grid (the object
//     mirrors the pool's grid in DRAM; a thread copies the mirror, as
//     STAMP copies the grid): breadth-first expansion from the source
//     over empty cells (6 neighbours) until the destination, then the
//     traceback along decreasing distances.  Then, in the wrap, the path's
//     cells are checked in the pool (another thread may have taken one
//     since the copy: then the wrap is aborted before any store and the
//     routing retried, at most 3 times) and written with the path id, the
//     route is allocated and written cell by cell and linked at the list's
//     head, the pair names it and the routed count goes up.  A pair with no
//     path (or 3 collisions) only raises the failure count: it stays
//     queued.
//   rip-up: when three quarters of the pairs are routed (or none is
//     queued), a random routed pair's cells are cleared, its route unlinked
//     and freed and the pair queued again (as a router rips up a net to
//     make room), so a run of any length keeps routing.
// Stores: a cell from empty to a small path id and back, cell indexes,
// list links and the pair's route (pool offsets), counters ± 1: nearly
// all change one 32-bit half.
//
// One DRAM mutex guards the pool's grid, the list, the pairs and the
// mirror; the expansion runs outside it on the thread's copy.
//
// verify(): every route in the list is its pair's, starts at its source,
// ends at its destination, steps between adjacent cells, and its cells
// hold its path id; every cell holding a path id lies on that pair's
// route; no cell is on two routes; the walls are setup's; routed pairs,
// routes and the routed count agree; routings, failures and rip-ups are
// what setup and the committed transactions make.
#ifndef SOFTWRAP_WORKLOADS_LABYRINTH_H_
#define SOFTWRAP_WORKLOADS_LABYRINTH_H_

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline constexpr uint64_t kLabyrinthDepth = 3;

inline uint64_t labyrinth_heap_bytes(const Params& p) {
  const uint64_t cells = p.scale * p.scale * kLabyrinthDepth;
  return 2 * cells * 8 + p.scale * (24 + 96) + 65536;
}

inline const Info kLabyrinthInfo{"labyrinth", "labyrinth", "WCL, Table 3 (STAMP labyrinth)",
                                 "routes a queued source/destination pair through a 3-D grid (Lee's algorithm on a "
                                 "private copy, the path's cells written), or rips up a route",
                                 nullptr, 1, "grid side (scale x scale x 3 cells) and pairs", 96, 8,
                                 labyrinth_heap_bytes};

template <class A>
class Labyrinth {
 public:
  static const Info& info() { return kLabyrinthInfo; }
  Labyrinth(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), routed_(p_.threads), failed_(p_.threads),
        ripped_(p_.threads), work_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    for (uint64_t c = 0; c < ncells_; ++c) {
      if (a.load(&grid_[c]) == 0) {
        a.store(&grid_[c], uint64_t{1});  // pair 0's id on a cell off its route
        break;
      }
    }
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x4C41425952494E54ull;  // "LABYRINT"
  static constexpr uint64_t kWall = ~uint64_t{0};
  static constexpr uint64_t kNone = ~uint64_t{0};
  static constexpr int kTries = 3;
  struct Pair {
    uint64_t src, dst, route;
  };
  struct Route {
    uint64_t prev, next, pair, length;
    uint64_t cells[1];  // `length` of them
  };
  struct Root {
    uint64_t magic, side, depth, npairs, walls;
    uint64_t grid, pairs, head;
    uint64_t routed, failures, ripups;  // routes in the list; routings that failed; rip-ups
  };
  // A thread's private state: the grid copy and the expansion's buffers.
  struct Work {
    std::vector<uint64_t> grid, path;
    std::vector<uint32_t> dist, frontier;
  };

  static uint64_t route_bytes(uint64_t length) { return sizeof(Route) + (length - 1) * 8; }
  Route* route(A& a, uint64_t o) { return a.template ptr<Route>(o); }
  std::string err(const std::string& what) const { return std::string(info().label) + ": " + what; }
  uint64_t coord(uint64_t c, int axis) const {
    return axis == 0 ? c % side_ : axis == 1 ? c / side_ % side_ : c / (side_ * side_);
  }
  bool adjacent(uint64_t c, uint64_t d) const {
    uint64_t steps = 0;
    for (int k = 0; k < 3; ++k) {
      const uint64_t x = coord(c, k), y = coord(d, k);
      steps += x > y ? x - y : y - x;
    }
    return steps == 1;
  }

  bool expand(Work& wk, uint64_t src, uint64_t dst);
  uint64_t pick(Rng& r, bool* rip);
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  ThreadCounts routed_, failed_, ripped_;  // committed since setup()/attach()
  std::vector<Work> work_;
  std::mutex mu_;                    // the pool's grid, list and pairs; mirror_, route_of_, held_, cursor_
  std::vector<uint64_t> mirror_;     // the pool's grid
  std::vector<uint64_t> route_of_;   // the pairs' routes
  std::vector<bool> held_;           // pairs a thread is working on
  std::vector<uint64_t> src_, dst_;  // the pairs' endpoints (fixed at setup)
  uint64_t cursor_ = 0, routed_now_ = 0;
  Root* root_ = nullptr;
  uint64_t* grid_ = nullptr;
  Pair* pairs_ = nullptr;
  uint64_t side_ = 0, ncells_ = 0, npairs_ = 0;
  uint64_t base_routed_ = 0, base_failures_ = 0, base_ripups_ = 0;
};

template <class A>
void Labyrinth<A>::setup() {
  A& a = acc_[0];
  side_ = std::max<uint64_t>(p_.scale, 4);
  ncells_ = side_ * side_ * kLabyrinthDepth;
  npairs_ = side_;
  Rng g(p_.seed);
  std::vector<uint64_t> cells(ncells_, 0);
  uint64_t walls = 0;
  for (uint64_t& c : cells) {
    if (g.percent(10)) {
      c = kWall;
      ++walls;
    }
  }
  // Endpoints: distinct empty cells.
  std::vector<Pair> pairs(npairs_);
  std::vector<bool> used(ncells_, false);
  auto endpoint = [&] {
    for (;;) {
      const uint64_t c = g.below(ncells_);
      if (cells[c] == 0 && !used[c]) {
        used[c] = true;
        return c;
      }
    }
  };
  for (Pair& pr : pairs) pr = {endpoint(), endpoint(), 0};
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    grid_ = static_cast<uint64_t*>(a.alloc(ncells_ * 8));
    pairs_ = static_cast<Pair*>(a.alloc(npairs_ * sizeof(Pair)));
    const Root init{0, side_, kLabyrinthDepth, npairs_, walls, a.off(grid_), a.off(pairs_), 0, 0, 0, 0};
    a.write(root_, &init, sizeof init);
    w.commit();
  }
  write_words(a, grid_, ncells_, [&](uint64_t i) { return cells[i]; });
  in_wraps(a, npairs_, 64, [&](uint64_t i) { a.write(&pairs_[i], &pairs[i], sizeof(Pair)); });
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
  w.commit();
  adopt();
}

template <class A>
void Labyrinth<A>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, info().label);
  side_ = a.load(&root_->side);
  npairs_ = a.load(&root_->npairs);
  grid_ = a.template ptr<uint64_t>(a.load(&root_->grid));
  pairs_ = a.template ptr<Pair>(a.load(&root_->pairs));
  if (side_ == 0 || side_ > (uint64_t{1} << 20) || a.load(&root_->depth) != kLabyrinthDepth || npairs_ == 0 ||
      grid_ == nullptr || pairs_ == nullptr) {
    throw WorkloadError(err("the root names no grid or work queue"));
  }
  ncells_ = side_ * side_ * kLabyrinthDepth;
  adopt();
}

template <class A>
void Labyrinth<A>::adopt() {
  A& a = acc_[0];
  mirror_.resize(ncells_);
  for (uint64_t c = 0; c < ncells_; ++c) mirror_[c] = a.load(&grid_[c]);
  route_of_.resize(npairs_);
  src_.resize(npairs_);
  dst_.resize(npairs_);
  routed_now_ = 0;
  for (uint64_t i = 0; i < npairs_; ++i) {
    routed_now_ += (route_of_[i] = a.load(&pairs_[i].route)) != 0;
    src_[i] = a.load(&pairs_[i].src);
    dst_[i] = a.load(&pairs_[i].dst);
    if (src_[i] >= ncells_ || dst_[i] >= ncells_) throw WorkloadError(err("a pair's endpoint is off the grid"));
  }
  held_.assign(npairs_, false);
  cursor_ = 0;
  base_routed_ = a.load(&root_->routed);
  base_failures_ = a.load(&root_->failures);
  base_ripups_ = a.load(&root_->ripups);
  routed_.clear();
  failed_.clear();
  ripped_.clear();
}

// Lee's expansion on wk.grid (the thread's copy): breadth first from src
// over empty cells until dst, then back along decreasing distances.
// Leaves the path, src first, in wk.path; false if dst is not reached.
template <class A>
bool Labyrinth<A>::expand(Work& wk, uint64_t src, uint64_t dst) {
  constexpr uint32_t kUnseen = ~uint32_t{0};
  if (wk.grid[src] != 0 || wk.grid[dst] != 0) return false;  // another route runs through an endpoint
  wk.dist.assign(ncells_, kUnseen);
  wk.frontier.clear();
  wk.dist[src] = 0;
  wk.frontier.push_back(static_cast<uint32_t>(src));
  const int64_t step[6] = {1, -1, static_cast<int64_t>(side_), -static_cast<int64_t>(side_),
                           static_cast<int64_t>(side_ * side_), -static_cast<int64_t>(side_ * side_)};
  // The neighbour of c in direction k, or kNone at the grid's edge.
  auto neighbour = [&](uint64_t c, int k) -> uint64_t {
    const int axis = k / 2;
    const uint64_t x = coord(c, axis), end = axis == 2 ? kLabyrinthDepth : side_;
    if ((k % 2 == 0 && x + 1 == end) || (k % 2 == 1 && x == 0)) return kNone;
    return static_cast<uint64_t>(static_cast<int64_t>(c) + step[k]);
  };
  bool found = false;
  for (size_t i = 0; i < wk.frontier.size() && !found; ++i) {
    const uint64_t c = wk.frontier[i];
    for (int k = 0; k < 6; ++k) {
      const uint64_t n = neighbour(c, k);
      if (n == kNone || wk.dist[n] != kUnseen || wk.grid[n] != 0) continue;
      wk.dist[n] = wk.dist[c] + 1;
      if (n == dst) {
        found = true;
        break;
      }
      wk.frontier.push_back(static_cast<uint32_t>(n));
    }
  }
  if (!found) return false;
  wk.path.assign(wk.dist[dst] + 1, 0);
  uint64_t c = dst;
  for (uint64_t i = wk.path.size(); i-- > 0;) {
    wk.path[i] = c;
    if (i == 0) break;
    for (int k = 0; k < 6; ++k) {
      const uint64_t n = neighbour(c, k);
      if (n != kNone && wk.dist[n] == wk.dist[c] - 1) {
        c = n;
        break;
      }
    }
  }
  return true;
}

// Under mu_: the pair this transaction works on (held until it ends) and
// whether it rips its route up; kNone if every candidate is held.
template <class A>
uint64_t Labyrinth<A>::pick(Rng& r, bool* rip) {
  *rip = 4 * routed_now_ >= 3 * npairs_;
  for (int pass = 0; pass < 2; ++pass, *rip = !*rip) {
    const uint64_t start = *rip ? r.below(npairs_) : cursor_;
    for (uint64_t k = 0; k < npairs_; ++k) {
      const uint64_t i = (start + k) % npairs_;
      if (held_[i] || (route_of_[i] != 0) != *rip) continue;
      if (!*rip) cursor_ = (i + 1) % npairs_;
      held_[i] = true;
      return i;
    }
  }
  return kNone;
}

template <class A>
void Labyrinth<A>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  Rng& r = rng_[tid];
  Work& wk = work_[tid];
  for (uint64_t t = 0; t < transactions; ++t) {
    bool rip = false;
    uint64_t i;
    {
      std::lock_guard<std::mutex> g(mu_);
      i = pick(r, &rip);
      if (i == kNone) {  // the other threads hold every pair: an empty transaction
        Wrap<A> w(a);
        w.commit();
        continue;
      }
    }
    if (rip) {
      std::lock_guard<std::mutex> g(mu_);
      Wrap<A> w(a);
      Route* rt = route(a, route_of_[i]);
      const uint64_t len = a.load(&rt->length);
      for (uint64_t k = 0; k < len; ++k) a.store(&grid_[a.load(&rt->cells[k])], uint64_t{0});
      const uint64_t prev = a.load(&rt->prev), next = a.load(&rt->next);
      a.store(prev ? &route(a, prev)->next : &root_->head, next);
      if (next) a.store(&route(a, next)->prev, prev);
      a.store(&pairs_[i].route, uint64_t{0});
      a.store(&root_->routed, a.load(&root_->routed) - 1);
      a.store(&root_->ripups, a.load(&root_->ripups) + 1);
      for (uint64_t k = 0; k < len; ++k) mirror_[a.load(&rt->cells[k])] = 0;
      a.free(rt);
      w.commit();
      route_of_[i] = 0;
      --routed_now_;
      held_[i] = false;
      routed_.add(tid, -1);
      ripped_.add(tid, 1);
      continue;
    }
    const uint64_t src = src_[i], dst = dst_[i];
    bool done = false;
    for (int attempt = 0; attempt < kTries && !done; ++attempt) {
      {
        std::lock_guard<std::mutex> g(mu_);
        wk.grid = mirror_;  // the private copy
      }
      if (!expand(wk, src, dst)) break;
      std::lock_guard<std::mutex> g(mu_);
      Wrap<A> w(a);
      bool free = true;
      for (uint64_t c : wk.path) free = free && a.load(&grid_[c]) == 0;
      if (!free) {  // another route took a cell since the copy
        w.abort();
        continue;
      }
      const uint64_t id = i + 1, len = wk.path.size();
      for (uint64_t c : wk.path) a.store(&grid_[c], id);
      auto* rt = static_cast<Route*>(a.alloc(route_bytes(len)));
      const uint64_t head = a.load(&root_->head), off = a.off(rt);
      a.store(&rt->prev, uint64_t{0});
      a.store(&rt->next, head);
      a.store(&rt->pair, i);
      a.store(&rt->length, len);
      for (uint64_t k = 0; k < len; ++k) a.store(&rt->cells[k], wk.path[k]);
      if (head) a.store(&route(a, head)->prev, off);
      a.store(&root_->head, off);
      a.store(&pairs_[i].route, off);
      a.store(&root_->routed, a.load(&root_->routed) + 1);
      w.commit();
      for (uint64_t c : wk.path) mirror_[c] = id;
      route_of_[i] = off;
      ++routed_now_;
      held_[i] = false;
      done = true;
    }
    if (done) {
      routed_.add(tid, 1);
      continue;
    }
    std::lock_guard<std::mutex> g(mu_);
    Wrap<A> w(a);
    a.store(&root_->failures, a.load(&root_->failures) + 1);
    w.commit();
    held_[i] = false;
    failed_.add(tid, 1);
  }
}

template <class A>
std::string Labyrinth<A>::verify() {
  A& a = acc_[0];
  std::vector<uint64_t> on(ncells_, 0);  // the path id of the route through each cell
  uint64_t routes = 0, prev = 0;
  for (uint64_t o = a.load(&root_->head); o != 0; prev = o, o = a.load(&route(a, o)->next)) {
    if (++routes > npairs_) return err("the route list is longer than the work queue (a cycle?)");
    Route* rt = route(a, o);
    if (a.load(&rt->prev) != prev) return err("a route's prev link is wrong");
    const uint64_t i = a.load(&rt->pair), len = a.load(&rt->length);
    if (i >= npairs_) return err("a route names no pair");
    const std::string rn = "route of pair " + std::to_string(i) + ": ";
    if (a.load(&pairs_[i].route) != o) return err(rn + "its pair does not name it");
    if (len < 2 || len > ncells_) return mismatch(err(rn + "length"), len, 2);
    if (a.load(&rt->cells[0]) != a.load(&pairs_[i].src)) return err(rn + "does not start at the source");
    if (a.load(&rt->cells[len - 1]) != a.load(&pairs_[i].dst)) return err(rn + "does not end at the destination");
    for (uint64_t k = 0; k < len; ++k) {
      const uint64_t c = a.load(&rt->cells[k]);
      if (c >= ncells_) return err(rn + "a cell is off the grid");
      if (k > 0 && !adjacent(a.load(&rt->cells[k - 1]), c)) return err(rn + "steps between cells that do not touch");
      if (on[c] != 0) return err(rn + "shares cell " + std::to_string(c) + " with another route");
      on[c] = i + 1;
      if (a.load(&grid_[c]) != i + 1) return mismatch(err(rn + "cell " + std::to_string(c)), a.load(&grid_[c]), i + 1);
    }
  }
  uint64_t walls = 0, named = 0;
  for (uint64_t c = 0; c < ncells_; ++c) {
    const uint64_t v = a.load(&grid_[c]);
    if (v == kWall) {
      ++walls;
    } else if (v != on[c]) {
      return mismatch(err("cell " + std::to_string(c) + " holds path id"), v, on[c]);
    }
  }
  for (uint64_t i = 0; i < npairs_; ++i) named += a.load(&pairs_[i].route) != 0;
  if (walls != a.load(&root_->walls)) return mismatch(err("walls"), walls, a.load(&root_->walls));
  if (named != routes) return mismatch(err("pairs with a route"), named, routes);
  if (a.load(&root_->routed) != routes) return mismatch(err("the routed count"), a.load(&root_->routed), routes);
  const auto want = [](uint64_t base, const ThreadCounts& d) {
    return static_cast<uint64_t>(static_cast<int64_t>(base) + d.sum());
  };
  if (routes != want(base_routed_, routed_)) return mismatch(err("routes"), routes, want(base_routed_, routed_));
  if (a.load(&root_->failures) != want(base_failures_, failed_)) {
    return mismatch(err("failed routings"), a.load(&root_->failures), want(base_failures_, failed_));
  }
  if (a.load(&root_->ripups) != want(base_ripups_, ripped_)) {
    return mismatch(err("rip-ups"), a.load(&root_->ripups), want(base_ripups_, ripped_));
  }
  return "";
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_LABYRINTH_H_
