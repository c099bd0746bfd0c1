// btree_workload.cc — the B+tree workload of the crash simulator.
//
// Approach.  The simulator's oracle compares owned byte ranges of the
// recovered image with the golden states before and after each wrap.  The
// tree writes the pool itself (through the wrap API, not the Driver), so
// after its operations, still inside the wrap, the workload re-declares as
// owned exactly the bytes that make up the tree (btree::for_each_extent:
// the header, and each node's head, links and used slots) and the live
// allocation count.  A recovered image that matches a golden state holds
// the same tree, byte for byte over everything a reader or verify() looks
// at, as the tree that was verify()'d before the wrap closed.  Nodes of 4
// slots make splits, borrows and merges (and root changes) frequent.  The
// string workload runs the same on a btree_map<std::string, std::string>
// whose keys and values are 0-20 bytes (so inline and out-of-line ones
// mix, and separators own copies), and also overwrites values in place
// through operator[] (a new string block, the old one freed).
#include "crashsim/btree_workload.h"

#include <cstdint>
#include <functional>
#include <string>

#include "softwrap/btree_map.hpp"

namespace softwrap::crashsim {
namespace {

struct small_traits {
  static constexpr bool self_verify = false;
  static constexpr unsigned leaf_slots = 4;
  static constexpr unsigned inner_slots = 4;
};
using tree_t = softwrap::btree_map<uint32_t, uint64_t, std::less<uint32_t>, small_traits>;
using string_tree_t = softwrap::btree_map<std::string, std::string, std::less<std::string>, small_traits>;

constexpr size_t kRootSize = 64;
constexpr uint32_t kKeys = 48;

uint64_t* root_word(Driver& d) { return static_cast<uint64_t*>(sw_pool_root(d.pool(), kRootSize)); }

// A key or value: 0-20 bytes, from few distinct strings for keys.
std::string some_string(Rng& rng, uint32_t distinct) {
  const auto n = static_cast<uint32_t>(rng.below(distinct));
  return std::string(n % 21, static_cast<char>('a' + n % 7)) + (n % 3 ? std::to_string(n) : "");
}

// Owns the root word and the tree's bytes; returns the number of
// allocations (nodes and string blocks).
template <class Tree>
size_t own_tree(Driver& d, const Tree& t) {
  d.disown_all();
  d.own(root_word(d), sizeof(uint64_t));
  return t.for_each_extent([&](uint64_t off, size_t n) {
    if (n) d.own(sw_pool_ptr(d.pool(), off), n);
  });
}

// One random operation on each kind of tree.
void random_op(tree_t& t, Rng& rng) {
  const auto k = static_cast<uint32_t>(rng.below(kKeys));
  if (rng.chance(55)) t.insert(k, rng.next());
  else t.erase_one(k);
}
void random_op(string_tree_t& t, Rng& rng) {
  const std::string k = some_string(rng, kKeys);
  if (rng.chance(45)) t.insert(k, some_string(rng, 1000));
  else if (rng.chance(30)) t[k] = some_string(rng, 1000);
  else t.erase_one(k);
}

template <class Tree>
void setup_btree(std::vector<Driver*>& dv, Rng& rng) {
  Driver& d = *dv[0];
  sw_pool* p = d.pool();
  uint64_t* r = root_word(d);
  sw_wrap_open(p);
  Tree t(p);
  sw_store64(p, r, t.header_offset());
  for (int i = 0; i < 24; ++i) random_op(t, rng);
  sw_wrap_close(p);
  own_tree(d, t);
}

template <class Tree>
void run_btree(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  Tree t(d.pool(), softwrap::attach, sw_load64(d.pool(), root_word(d)));
  const uint64_t others = d.live() - own_tree(d, t);  // allocations besides the tree's
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t ops = 1 + rng.below(3); ops-- > 0;) random_op(t, rng);
    if (rng.chance(10)) {
      d.abort();
      continue;
    }
    t.verify();
    d.set_live(others + own_tree(d, t));
    d.close();
  }
}

}  // namespace

const Workload& btree_workload() {
  static const Workload w{"btree", "btree_map inserts and erases, 4-slot nodes, 1-3 per wrap; 10% aborted",
                          1024, 8, 1024, 8, 1, setup_btree<tree_t>, run_btree<tree_t>};
  return w;
}

const Workload& btree_string_workload() {
  static const Workload w{"btree-strings",
                          "btree_map<string, string> inserts, value overwrites and erases, 0-20 byte strings, "
                          "4-slot nodes, 1-3 per wrap; 10% aborted",
                          1024, 8, 1024, 8, 1, setup_btree<string_tree_t>, run_btree<string_tree_t>};
  return w;
}

}  // namespace softwrap::crashsim
