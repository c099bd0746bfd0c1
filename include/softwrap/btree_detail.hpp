// btree_detail.hpp — the persistent layout of softwrap's B+tree
// (btree.hpp): the traits, the tree header and the node images, the slot
// format of std::string keys and values, and the small helpers through
// which every access to them goes.
//
// Approach.  A node is a fixed-layout struct in pool memory (allocated with
// sw_pmalloc) whose fields are never touched directly: reads go through
// sw_peek (the home bytes in place when no alias table holds anything of
// them, else a copy in a DRAM buffer), single slots are written with
// sw_store*/sw_write (through softwrap::detail::store_value), and ranges of
// slots (shifts, splits, merges) are written with one sw_write.  Nodes
// refer to each other by pool offset, so the tree survives remapping.  The
// tree header (root, first and last leaf, size, and the parameters the
// tree was built with, checked when a tree is attached again) is itself a
// pool object; its offset is what an application keeps in its root object.
//
// Keys and values of trivially copyable types are stored as they are.  A
// std::string is stored as a 16-byte slot (str_slot): its first 8 bytes as
// a big-endian integer, so that comparing two slots' prefixes as integers
// orders them as std::less<std::string> does unless the prefixes are equal,
// and a reference: the string itself if it has at most 8 bytes, else the
// pool offset of an out-of-line block [uint64 length][bytes].
#ifndef SOFTWRAP_BTREE_DETAIL_HPP_
#define SOFTWRAP_BTREE_DETAIL_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "softwrap/softwrap.hpp"

namespace softwrap {

// Tuning of a B+tree, with the members of tlx's btree_default_traits:
// slots per leaf and per inner node (defaults: about 256 bytes of keys and
// values per node, at least 8 slots; a std::string takes a 16-byte slot), self_verify (every mutating
// operation ends with verify(); for tests, very slow), debug (every
// mutating operation prints the tree to std::cerr) and binsearch_threshold
// (nodes whose keys take fewer bytes are searched linearly).  Slot counts
// are part of the persistent format: a tree must be attached with the
// traits it was created with.  debug and binsearch_threshold may be left
// out of a user's traits; STX's names (selfverify, leafslots, innerslots)
// are refused at compile time rather than ignored.
namespace btree_detail {
// Bytes a key, value or (key, value) pair takes in a node.
template <class T>
struct slot_bytes : std::integral_constant<size_t, sizeof(T)> {};
template <>
struct slot_bytes<std::string> : std::integral_constant<size_t, 16> {};
template <class A, class B>
struct slot_bytes<std::pair<A, B>> : std::integral_constant<size_t, slot_bytes<A>::value + slot_bytes<B>::value> {};
}  // namespace btree_detail

template <class Key, class Value>
struct btree_default_traits {
  static constexpr bool self_verify = false;
  static constexpr bool debug = false;
  static constexpr int leaf_slots = std::max<int>(8, 256 / static_cast<int>(btree_detail::slot_bytes<Value>::value));
  static constexpr int inner_slots =
      std::max<int>(8, 256 / static_cast<int>(btree_detail::slot_bytes<Key>::value + sizeof(uint64_t)));
  static constexpr size_t binsearch_threshold = 256;
};

// Thrown by verify() when an invariant of the tree does not hold.
class btree_verify_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Tag of the constructors that attach to an existing tree:
//     softwrap::btree_map<K, V> m(pl, softwrap::attach, header_offset);
// (a tag, so that no comparator constructible from an integer is mistaken
// for a header offset).
struct attach_t {
  explicit attach_t() = default;
};
inline constexpr attach_t attach{};

namespace btree_detail {

inline constexpr uint64_t kMagic = 0x3145455254425753ull;  // "SWBTREE1"
inline constexpr uint32_t kVersion = 1;

// The tree header, version 1 (all fields 8-byte words or pairs of 4-byte
// words; offsets are pool offsets, 0 = none).
struct header {
  uint64_t magic;
  uint32_t version;
  uint32_t flags;  // kMulti, kSet, kStringKey, kStringData
  uint32_t leaf_slots;
  uint32_t inner_slots;
  uint32_t key_size;
  uint32_t data_size;
  uint64_t root;
  uint64_t head_leaf;  // leftmost leaf
  uint64_t tail_leaf;  // rightmost leaf
  uint64_t size;       // elements
};
inline constexpr uint32_t kMulti = 1, kSet = 2, kStringKey = 4, kStringData = 8;

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

/* ----------------------------------------------------------- string slots */

// A std::string in a node: see the comment at the top.  ref's low bit set:
// inline, length in bits 1-4, the bytes in prefix; else the offset of the
// out-of-line block (16-byte aligned).
struct str_slot {
  uint64_t prefix;
  uint64_t ref;
};
inline constexpr size_t kInlineMax = 8;

inline uint64_t prefix_of(std::string_view s) noexcept {
  uint64_t p = 0;
  const size_t n = std::min(s.size(), kInlineMax);
  for (size_t i = 0; i < n; ++i) p |= uint64_t{static_cast<unsigned char>(s[i])} << (56 - 8 * i);
  return p;
}
inline bool is_inline(const str_slot& s) noexcept { return s.ref & 1; }
inline size_t inline_size(const str_slot& s) noexcept { return static_cast<size_t>(s.ref >> 1) & 15; }
inline void inline_bytes(const str_slot& s, char* out) noexcept {
  for (size_t i = 0; i < kInlineMax; ++i) out[i] = static_cast<char>(s.prefix >> (56 - 8 * i));
}

// How a key or value type is kept in a node.
template <class T>
struct stored {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "btree keys and values must be trivially copyable and default constructible, or std::string");
  static_assert(alignof(T) <= 16, "btree keys and values must have alignment <= 16");
  using type = T;
  static constexpr bool is_string = false;
};
template <>
struct stored<std::string> {
  using type = str_slot;
  static constexpr bool is_string = true;
};

/* ---------------------------------------------------------------- traits */

template <class T>
concept stx_traits = requires { T::selfverify; } || requires { T::leafslots; } || requires { T::innerslots; };

template <class Traits>
struct traits_of {
  static_assert(!stx_traits<Traits>,
                "btree traits use STX's names (selfverify, leafslots, innerslots): softwrap reads tlx's "
                "(self_verify, leaf_slots, inner_slots, debug, binsearch_threshold) and would ignore these");
  static constexpr bool self_verify = Traits::self_verify;
  static constexpr long leaf_slots = Traits::leaf_slots;
  static constexpr long inner_slots = Traits::inner_slots;
  static constexpr bool debug = [] {
    if constexpr (requires { Traits::debug; }) return static_cast<bool>(Traits::debug);
    else return false;
  }();
  static constexpr size_t binsearch_threshold = [] {
    if constexpr (requires { Traits::binsearch_threshold; }) return static_cast<size_t>(Traits::binsearch_threshold);
    else return size_t{256};
  }();
};

/* -------------------------------------------------------------- accessor */

// A DRAM buffer of n bytes: on the stack when small.
class scratch {
 public:
  explicit scratch(size_t n) {
    if (n > sizeof(local_)) heap_ = std::make_unique<unsigned char[]>(n);
  }
  void* data() noexcept { return heap_ ? static_cast<void*>(heap_.get()) : static_cast<void*>(local_); }

 private:
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
  // n bytes at src as a reader sees them: src itself or buf (sw_peek).
  // Valid until this thread next writes the range.
  const void* peek(const void* src, size_t n, void* buf) const {
    const void* p = sw_peek(h_, src, n, buf);
    if (!p) detail::throw_last();
    return p;
  }
  template <class T>
  T ld(const T* a) const {
    T v;
    const void* p = peek(a, sizeof(T), &v);
    if (p != &v) std::memcpy(static_cast<void*>(&v), p, sizeof(T));
    return v;
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
  // the caller's view of arr[0, use) (a node it peeked), which spares
  // reading the moved slots.
  template <class T>
  void insert_at(T* arr, unsigned from, unsigned use, const T& v, const T* cur = nullptr) const {
    scratch buf((use - from + 1) * sizeof(T));
    T* b = static_cast<T*>(buf.data());
    b[0] = v;
    if (cur) std::memcpy(static_cast<void*>(b + 1), cur + from, (use - from) * sizeof(T));
    else rd(b + 1, arr + from, (use - from) * sizeof(T));
    wr(arr + from, b, (use - from + 1) * sizeof(T));
  }
  // arr[from] is removed: arr[from + 1, use) moves one slot left.  cur as
  // for insert_at (it may be arr itself: a peek of home bytes).
  template <class T>
  void remove_at(T* arr, unsigned from, unsigned use, const T* cur = nullptr) const {
    if (from + 1 >= use) return;
    const size_t bytes = (use - from - 1) * sizeof(T);
    scratch buf(bytes);
    if (cur) std::memcpy(buf.data(), cur + from + 1, bytes);
    else rd(buf.data(), arr + from + 1, bytes);
    wr(arr + from, buf.data(), bytes);
  }
  // n slots from src to dst (different nodes or non-overlapping).
  template <class T>
  void copy(T* dst, const T* src, unsigned n) const {
    if (!n) return;
    scratch buf(n * sizeof(T));
    rd(buf.data(), src, n * sizeof(T));
    wr(dst, buf.data(), n * sizeof(T));
  }
  uint16_t slotuse(uint64_t node) const { return head(node).slotuse; }
  // Level and slotuse in one load (they share a word).
  node_head head(uint64_t node) const { return ld(at<node_head>(node)); }
  uint16_t level(uint64_t node) const { return head(node).level; }
  void set_slotuse(uint64_t node, unsigned n) const {
    st(&at<node_head>(node)->slotuse, static_cast<uint16_t>(n));
  }
  // Allocates a node in the open wrap and writes its head (and links).
  uint64_t alloc(size_t size, uint16_t level, uint16_t slotuse, uint64_t prev = 0, uint64_t next = 0) const {
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

  /* ---- string slots */

  // A slot holding s: inline, or a new out-of-line block (in the open wrap).
  str_slot make_str(std::string_view s) const {
    str_slot r{prefix_of(s), 0};
    if (s.size() <= kInlineMax) {
      r.ref = uint64_t{s.size()} << 1 | 1;
      return r;
    }
    void* m = sw_pmalloc(h_, sizeof(uint64_t) + s.size());
    if (!m) detail::throw_last();
    const uint64_t len = s.size();
    scratch buf(sizeof len + s.size());
    std::memcpy(buf.data(), &len, sizeof len);
    std::memcpy(static_cast<char*>(buf.data()) + sizeof len, s.data(), s.size());
    wr(m, buf.data(), sizeof len + s.size());
    r.ref = offset_of(m);
    return r;
  }
  // The string of a slot; tmp may provide the bytes (valid while tmp lives
  // and until the block is next written).
  std::string_view view_str(const str_slot& s, std::string& tmp) const {
    if (is_inline(s)) {
      tmp.resize(kInlineMax);
      inline_bytes(s, tmp.data());
      return std::string_view(tmp.data(), inline_size(s));
    }
    const uint64_t len = ld(at<uint64_t>(s.ref));
    tmp.resize(len);
    const void* p = peek(at<char>(s.ref + sizeof(uint64_t)), len, tmp.data());
    return std::string_view(static_cast<const char*>(p), len);
  }
  void free_str(const str_slot& s) const {
    if (!is_inline(s)) free(s.ref);
  }
  // A copy of s with a block of its own (in this accessor's pool).
  str_slot dup_str(const str_slot& s, const accessor& from) const {
    if (is_inline(s)) return s;
    std::string tmp;
    return make_str(from.view_str(s, tmp));
  }

 private:
  sw_pool* h_ = nullptr;
  char* base_ = nullptr;
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

struct no_data {
  friend bool operator==(no_data, no_data) { return true; }
  friend bool operator<(no_data, no_data) { return false; }
};

// A pool handle given as softwrap::pool& or as the C API's sw_pool*.
struct pool_ref {
  pool_ref(pool& p) : h(p.handle()) {}  // NOLINT: implicit by design
  pool_ref(sw_pool* p) : h(p) {}        // NOLINT
  sw_pool* h;
};

}  // namespace btree_detail
}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_DETAIL_HPP_
