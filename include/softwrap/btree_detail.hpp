// btree_detail.hpp — the persistent layout of softwrap's B+tree
// (btree.hpp): the traits struct, the tree header and the node images, and
// the small helpers through which every access to them goes.
//
// Approach.  A node is a fixed-layout struct in pool memory (allocated with
// sw_pmalloc) whose fields are never touched directly: single slots are
// read with sw_load*/sw_read and written with sw_store*/sw_write (through
// softwrap::detail::load_value/store_value), and ranges of slots (shifts,
// splits, merges) are read into a DRAM buffer with sw_read and written back
// with one sw_write.  Nodes refer to each other by pool offset, so the tree
// survives remapping.  The tree header (root, first and last leaf, size,
// and the parameters the tree was built with, checked when a tree is
// attached again) is itself a pool object; its offset is what an
// application keeps in its root object.
#ifndef SOFTWRAP_BTREE_DETAIL_HPP_
#define SOFTWRAP_BTREE_DETAIL_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "softwrap/softwrap.hpp"

namespace softwrap {

// Tuning of a B+tree, as in the STX/tlx B+tree: slots per leaf and per
// inner node (defaults: about 256 bytes of keys and values per node, at
// least 8 slots) and self_verify, which makes every mutating operation end
// with verify() (for tests; very slow).  Slot counts are part of the
// persistent format: a tree must be attached with the traits it was
// created with.
template <class Key, class Value>
struct btree_default_traits {
  static constexpr bool self_verify = false;
  static constexpr unsigned leaf_slots =
      std::max<unsigned>(8, 256 / static_cast<unsigned>(sizeof(Value)));
  static constexpr unsigned inner_slots =
      std::max<unsigned>(8, 256 / static_cast<unsigned>(sizeof(Key) + sizeof(uint64_t)));
};

// Thrown by verify() when an invariant of the tree does not hold.
class btree_verify_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace btree_detail {

inline constexpr uint64_t kMagic = 0x3145455254425753ull;  // "SWBTREE1"
inline constexpr uint32_t kVersion = 1;

// The tree header, version 1 (all fields 8-byte words or pairs of 4-byte
// words; offsets are pool offsets, 0 = none).
struct header {
  uint64_t magic;
  uint32_t version;
  uint32_t flags;  // kMulti, kSet
  uint32_t leaf_slots;
  uint32_t inner_slots;
  uint32_t key_size;
  uint32_t data_size;
  uint64_t root;
  uint64_t head_leaf;  // leftmost leaf
  uint64_t tail_leaf;  // rightmost leaf
  uint64_t size;       // elements
};
inline constexpr uint32_t kMulti = 1, kSet = 2;

// Every node starts with level (0 = leaf) and slotuse (keys in the node).
struct alignas(8) node_head {
  uint16_t level;
  uint16_t slotuse;
  uint32_t reserved;
};

template <class Key, class Data, unsigned L, bool HasData>
struct leaf_node {
  node_head head;
  uint64_t prev;
  uint64_t next;
  Key keys[L];
  Data data[L];
};
template <class Key, class Data, unsigned L>
struct leaf_node<Key, Data, L, false> {
  node_head head;
  uint64_t prev;
  uint64_t next;
  Key keys[L];
};

// An inner node with n keys has n + 1 children; child i holds elements
// <= keys[i] and child i + 1 elements >= keys[i] (> for unique trees).
template <class Key, unsigned I>
struct inner_node {
  node_head head;
  Key keys[I];
  uint64_t children[I + 1];
};

// A DRAM buffer of n trivially copyable T: on the stack when small.
template <class T>
class scratch {
 public:
  explicit scratch(size_t n) : n_(n) {
    if (n * sizeof(T) > sizeof(local_)) heap_ = std::make_unique<unsigned char[]>(n * sizeof(T));
  }
  T* data() noexcept { return reinterpret_cast<T*>(heap_ ? heap_.get() : local_); }
  size_t bytes() const noexcept { return n_ * sizeof(T); }

 private:
  size_t n_;
  alignas(16) unsigned char local_[1024];
  std::unique_ptr<unsigned char[]> heap_;
};

// The access helpers: one pool handle, typed loads/stores and ranges.
class accessor {
 public:
  accessor() = default;
  explicit accessor(sw_pool* h) : h_(h), base_(static_cast<char*>(sw_pool_base(h))) {}

  sw_pool* handle() const noexcept { return h_; }
  template <class T>
  T* at(uint64_t off) const noexcept {
    return reinterpret_cast<T*>(base_ + off);
  }
  uint64_t offset_of(const void* p) const noexcept {
    return static_cast<uint64_t>(static_cast<const char*>(p) - base_);
  }
  template <class T>
  T ld(const T* a) const {
    return detail::load_value(h_, a);
  }
  template <class T>
  void st(T* a, const T& v) const {
    detail::store_value(h_, a, v);
  }
  // Ranges go through sw_read / sw_write: one call and one log record per
  // range.  (Word-by-word sw_load64/sw_store64 was measured slower: 20
  // stores and 40% more log bytes per random insert.)
  void rd(void* dst, const void* src, size_t n) const {
    if (n) detail::check(sw_read(h_, dst, src, n));
  }
  void wr(void* dst, const void* src, size_t n) const {
    if (n) detail::check(sw_write(h_, dst, src, n));
  }
  // arr[from, use) moves one slot right and v goes into arr[from].  cur:
  // the caller's DRAM copy of arr[0, use) if it holds one (a node read
  // whole), which spares reading the moved slots.
  template <class T>
  void insert_at(T* arr, unsigned from, unsigned use, const T& v, const T* cur = nullptr) const {
    scratch<T> buf(use - from + 1);
    buf.data()[0] = v;
    if (cur) {
      std::memcpy(static_cast<void*>(buf.data() + 1), cur + from, (use - from) * sizeof(T));
    } else {
      rd(buf.data() + 1, arr + from, (use - from) * sizeof(T));
    }
    wr(arr + from, buf.data(), buf.bytes());
  }
  // arr[from] is removed: arr[from + 1, use) moves one slot left.  cur as
  // for insert_at.
  template <class T>
  void remove_at(T* arr, unsigned from, unsigned use, const T* cur = nullptr) const {
    if (from + 1 >= use) return;
    if (cur) {
      wr(arr + from, cur + from + 1, (use - from - 1) * sizeof(T));
      return;
    }
    scratch<T> buf(use - from - 1);
    rd(buf.data(), arr + from + 1, buf.bytes());
    wr(arr + from, buf.data(), buf.bytes());
  }
  // n slots from src to dst (different nodes or non-overlapping).
  template <class T>
  void copy(T* dst, const T* src, unsigned n) const {
    if (!n) return;
    scratch<T> buf(n);
    rd(buf.data(), src, buf.bytes());
    wr(dst, buf.data(), buf.bytes());
  }
  uint16_t slotuse(uint64_t node) const { return ld(&at<node_head>(node)->slotuse); }
  // Level and slotuse in one load (they share a word).
  node_head head(uint64_t node) const { return ld(at<node_head>(node)); }
  uint16_t level(uint64_t node) const { return ld(&at<node_head>(node)->level); }
  void set_slotuse(uint64_t node, unsigned n) const {
    st(&at<node_head>(node)->slotuse, static_cast<uint16_t>(n));
  }
  // Allocates a node in the open wrap and writes its head (and links).
  uint64_t alloc(size_t size, uint16_t level, uint16_t slotuse, uint64_t prev = 0,
                 uint64_t next = 0) const {
    void* m = sw_pmalloc(h_, size);
    if (!m) detail::throw_last();
    struct {
      node_head head;
      uint64_t prev, next;
    } init{{level, slotuse, 0}, prev, next};
    wr(m, &init, level == 0 ? sizeof(init) : sizeof(node_head));
    return offset_of(m);
  }
  void free(uint64_t node) const { detail::check(sw_pfree(h_, at<void>(node))); }

 private:
  sw_pool* h_ = nullptr;
  char* base_ = nullptr;
};

// operator-> of iterators whose operator* returns a value.
template <class T>
struct arrow_proxy {
  T value;
  const T* operator->() const noexcept { return &value; }
};

// The element an iterator yields: std::pair<Key, Data> for maps, Key for
// sets.
template <class Key, class Data, bool IsSet>
struct value_of {
  using type = std::pair<Key, Data>;
};
template <class Key, class Data>
struct value_of<Key, Data, true> {
  using type = Key;
};

struct no_data {};

}  // namespace btree_detail
}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_DETAIL_HPP_
