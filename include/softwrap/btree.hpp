// btree.hpp — a persistent B+tree in a softwrap pool, modelled on the STX /
// tlx B+tree: the engine behind btree_map, btree_multimap, btree_set and
// btree_multiset (one header each, which is what applications include).
//
// Approach.  The tree keeps no state in DRAM beyond the pool handle and the
// offset of its header, so a wrap that aborts (or a crash) can never leave
// the C++ object out of step with the pool.  Every operation reads the
// pool through the wrap API (btree_detail::accessor); a descent reads
// each node with one sw_read into DRAM and searches it there, mutations
// write the changed slots and shifted ranges with sw_store/sw_write.  Each
// mutating call runs in a wrap of its own, which is flattened into the caller's wrap when one
// is open — so "insert a, erase b" in one caller wrap is one atomic unit,
// and an exception in the middle of an operation aborts it.
//
// Shape: leaves are doubly linked; leaves and inner nodes other than the
// root hold at least half their slots.  Separator keys follow the weak
// rule max(child i) <= key[i] <= min(child i+1) (strict on the right for
// unique trees); splits compute both halves in DRAM and write them whole,
// erases borrow from a sibling or merge with it.  verify() checks all of
// this, the leaf links, levels and the element count.
//
// Iterators are (leaf offset, slot) positions; operator* returns the
// element by value (a map's std::pair<Key, Data>), and set_data() on a
// mutable iterator of a map stores a new value in a wrap.  Iterators are
// invalidated by any insert or erase, as in STX.
//
// Thread safety: none, as in STX.  Callers that share a tree serialize all
// access with their own lock, held until their wrap closes.
#ifndef SOFTWRAP_BTREE_HPP_
#define SOFTWRAP_BTREE_HPP_

#include <functional>
#include <iterator>

#include "softwrap/btree_detail.hpp"

namespace softwrap {

template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
class btree {
  static_assert(std::is_trivially_copyable_v<Key> && std::is_default_constructible_v<Key>,
                "btree keys must be trivially copyable and default constructible");
  static_assert(std::is_trivially_copyable_v<Data> && std::is_default_constructible_v<Data>,
                "btree values must be trivially copyable and default constructible");
  static_assert(alignof(Key) <= 16 && alignof(Data) <= 16);

 public:
  using key_type = Key;
  using data_type = Data;
  using mapped_type = Data;
  using value_type = typename btree_detail::value_of<Key, Data, IsSet>::type;
  using key_compare = Compare;
  using traits = Traits;
  using size_type = size_t;
  static constexpr bool allow_duplicates = Multi;
  static constexpr unsigned leaf_slotmax = Traits::leaf_slots;
  static constexpr unsigned inner_slotmax = Traits::inner_slots;
  static constexpr unsigned leaf_slotmin = leaf_slotmax / 2;
  static constexpr unsigned inner_slotmin = inner_slotmax / 2;
  static_assert(leaf_slotmax >= 4 && leaf_slotmax <= 65535 && inner_slotmax >= 4 &&
                    inner_slotmax <= 65535,
                "slot counts must lie in [4, 65535]");

 private:
  static constexpr bool kHasData = !IsSet;
  using leaf_t = btree_detail::leaf_node<Key, Data, leaf_slotmax, kHasData>;
  using inner_t = btree_detail::inner_node<Key, inner_slotmax>;
  using header_t = btree_detail::header;
  using acc_t = btree_detail::accessor;
  static constexpr uint32_t kFlags = (Multi ? btree_detail::kMulti : 0) | (IsSet ? btree_detail::kSet : 0);

 public:
  /* ------------------------------------------------------------ iterators */

  // Bidirectional; Const selects const_iterator.  end() is the position
  // after the last slot of the last leaf.
  template <bool Const>
  class basic_iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = btree::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = value_type;
    using pointer = btree_detail::arrow_proxy<value_type>;

    basic_iterator() = default;
    template <bool C = Const>
      requires C
    basic_iterator(const basic_iterator<false>& o)  // NOLINT: iterator -> const_iterator
        : a_(o.a_), leaf_(o.leaf_), slot_(o.slot_) {}

    [[nodiscard]] Key key() const { return a_.ld(&leaf()->keys[slot_]); }
    [[nodiscard]] Data data() const
      requires kHasData
    {
      return a_.ld(&leaf()->data[slot_]);
    }
    // Stores a new value for this element (in a wrap of its own or the
    // caller's).
    void set_data(const Data& d) const
      requires(kHasData && !Const)
    {
      wrap w(a_.handle());
      a_.st(&leaf()->data[slot_], d);
      w.commit();
    }
    value_type operator*() const {
      if constexpr (IsSet) return key();
      else return value_type(key(), data());
    }
    pointer operator->() const { return pointer{**this}; }

    basic_iterator& operator++() {
      if (slot_ + 1u < a_.slotuse(leaf_)) {
        ++slot_;
      } else if (uint64_t nx = a_.ld(&leaf()->next)) {
        leaf_ = nx;
        slot_ = 0;
      } else {
        slot_ = a_.slotuse(leaf_);
      }
      return *this;
    }
    basic_iterator& operator--() {
      if (slot_ > 0) {
        --slot_;
      } else if (uint64_t pv = a_.ld(&leaf()->prev)) {
        leaf_ = pv;
        slot_ = static_cast<unsigned>(a_.slotuse(pv) - 1);
      }
      return *this;
    }
    basic_iterator operator++(int) {
      basic_iterator t = *this;
      ++*this;
      return t;
    }
    basic_iterator operator--(int) {
      basic_iterator t = *this;
      --*this;
      return t;
    }
    friend bool operator==(const basic_iterator& x, const basic_iterator& y) noexcept {
      return x.leaf_ == y.leaf_ && x.slot_ == y.slot_;
    }

   private:
    friend class btree;
    template <bool>
    friend class basic_iterator;
    basic_iterator(acc_t a, uint64_t leaf, unsigned slot) : a_(a), leaf_(leaf), slot_(slot) {}
    leaf_t* leaf() const { return a_.at<leaf_t>(leaf_); }
    acc_t a_;
    uint64_t leaf_ = 0;
    unsigned slot_ = 0;
  };

  // Reverse iteration over a basic_iterator (own class: std::reverse_iterator
  // would return a reference into a temporary).
  template <class It>
  class basic_reverse_iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = btree::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = value_type;
    using pointer = btree_detail::arrow_proxy<value_type>;

    basic_reverse_iterator() = default;
    explicit basic_reverse_iterator(It base) : it_(base) {}
    template <class O>
      requires(!std::is_same_v<O, It> && std::is_convertible_v<O, It>)
    basic_reverse_iterator(const basic_reverse_iterator<O>& o)  // NOLINT
        : it_(o.base()) {}

    [[nodiscard]] It base() const { return it_; }
    [[nodiscard]] Key key() const { return std::prev(it_).key(); }
    [[nodiscard]] Data data() const
      requires kHasData
    {
      return std::prev(it_).data();
    }
    value_type operator*() const { return *std::prev(it_); }
    pointer operator->() const { return pointer{**this}; }
    basic_reverse_iterator& operator++() {
      --it_;
      return *this;
    }
    basic_reverse_iterator& operator--() {
      ++it_;
      return *this;
    }
    basic_reverse_iterator operator++(int) {
      auto t = *this;
      --it_;
      return t;
    }
    basic_reverse_iterator operator--(int) {
      auto t = *this;
      ++it_;
      return t;
    }
    friend bool operator==(const basic_reverse_iterator& x, const basic_reverse_iterator& y) {
      return x.it_ == y.it_;
    }

   private:
    It it_;
  };

  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;
  using reverse_iterator = basic_reverse_iterator<iterator>;
  using const_reverse_iterator = basic_reverse_iterator<const_iterator>;

  /* -------------------------------------------------------- construction */

  // Creates an empty tree in pl (its header allocated in the caller's
  // wrap, or a wrap of its own).  Keep header_offset() somewhere reachable
  // from the pool root to find the tree again.  Throws error (SW_ENOSPC).
  explicit btree(pool& pl, const Compare& cmp = Compare()) : btree(pl.handle(), cmp) {}
  // Attaches to the tree whose header is at header_offset (after reopening
  // the pool).  Throws error(SW_EINVAL) if no tree of this type is there.
  btree(pool& pl, uint64_t header_offset, const Compare& cmp = Compare())
      : btree(pl.handle(), header_offset, cmp) {}
  // The same on a pool handle of the C API.
  explicit btree(sw_pool* handle, const Compare& cmp = Compare()) : a_(handle), cmp_(cmp) {
    wrap w(handle);
    void* m = sw_pmalloc(handle, sizeof(header_t));
    if (!m) detail::throw_last();
    header_t h{};
    h.magic = btree_detail::kMagic;
    h.version = btree_detail::kVersion;
    h.flags = kFlags;
    h.leaf_slots = leaf_slotmax;
    h.inner_slots = inner_slotmax;
    h.key_size = sizeof(Key);
    h.data_size = kHasData ? sizeof(Data) : 0;
    a_.wr(m, &h, sizeof h);
    w.commit();
    hdr_ = a_.offset_of(m);
  }
  btree(sw_pool* handle, uint64_t header_offset, const Compare& cmp = Compare())
      : a_(handle), hdr_(header_offset), cmp_(cmp) {
    if (header_offset % 8 != 0 || header_offset < 4096 ||
        header_offset > sw_pool_size(handle) - sizeof(header_t))
      throw error(SW_EINVAL, "btree header offset is outside the pool");
    header_t h;
    a_.rd(&h, hdr(), sizeof h);
    if (h.magic != btree_detail::kMagic || h.version != btree_detail::kVersion ||
        h.flags != kFlags || h.leaf_slots != leaf_slotmax || h.inner_slots != inner_slotmax ||
        h.key_size != sizeof(Key) || h.data_size != (kHasData ? sizeof(Data) : 0))
      throw error(SW_EINVAL, "no btree of this type at the given offset");
  }

  // The pool offset of the tree header (what to keep in the root object).
  [[nodiscard]] uint64_t header_offset() const noexcept { return hdr_; }
  [[nodiscard]] key_compare key_comp() const { return cmp_; }

  /* --------------------------------------------------------------- reading */

  [[nodiscard]] size_type size() const { return a_.ld(&hdr()->size); }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] static constexpr size_type max_size() { return SIZE_MAX; }

  iterator begin() { return make_begin<false>(); }
  iterator end() { return make_end<false>(); }
  const_iterator begin() const { return make_begin<true>(); }
  const_iterator end() const { return make_end<true>(); }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  [[nodiscard]] bool exists(const Key& k) const { return find(k) != end(); }
  iterator find(const Key& k) { return find_impl<false>(k); }
  const_iterator find(const Key& k) const { return find_impl<true>(k); }
  [[nodiscard]] size_type count(const Key& k) const {
    size_type n = 0;
    for (auto it = lower_bound(k), e = end(); it != e && !less(k, it.key()); ++it) ++n;
    return n;
  }
  iterator lower_bound(const Key& k) { return bound<false, false>(k); }
  const_iterator lower_bound(const Key& k) const { return bound<true, false>(k); }
  iterator upper_bound(const Key& k) { return bound<false, true>(k); }
  const_iterator upper_bound(const Key& k) const { return bound<true, true>(k); }
  std::pair<iterator, iterator> equal_range(const Key& k) { return {lower_bound(k), upper_bound(k)}; }
  std::pair<const_iterator, const_iterator> equal_range(const Key& k) const {
    return {lower_bound(k), upper_bound(k)};
  }

  /* ------------------------------------------------------------- inserting */

  // Inserts an element; a unique tree refuses a key it holds (second =
  // false, iterator to the existing element).  Runs in a wrap; throws error
  // (SW_ENOSPC, SW_EABORTED, ...) with the tree unchanged.
  std::pair<iterator, bool> insert(const Key& k)
    requires IsSet
  {
    return insert_start(k, Data());
  }
  std::pair<iterator, bool> insert(const value_type& v)
    requires(!IsSet)
  {
    return insert_start(v.first, v.second);
  }
  std::pair<iterator, bool> insert(const Key& k, const Data& d)
    requires(!IsSet)
  {
    return insert_start(k, d);
  }
  std::pair<iterator, bool> insert2(const Key& k, const Data& d)
    requires(!IsSet)
  {
    return insert_start(k, d);
  }
  // Inserts a range, all in one wrap.
  template <std::input_iterator InputIt>
  void insert(InputIt first, InputIt last) {
    wrap w(a_.handle());
    for (; first != last; ++first) insert(*first);
    w.commit();
  }

  // Fills an empty tree from a sorted range (ascending, and without
  // duplicates for a unique tree) in one wrap, packing the leaves.
  // Throws error(SW_EINVAL) if the tree is not empty; a range too large for
  // one wrap fails with SW_EABORTED (raise the pool's lane_size).
  template <class InputIt>
  void bulk_load(InputIt first, InputIt last);

  /* --------------------------------------------------------------- erasing */

  // Erases one element with key k; false if there is none.
  bool erase_one(const Key& k) {
    wrap w(a_.handle());
    const bool found = erase_start(k, 0, 0);
    w.commit();
    return found;
  }
  // Erases all elements with key k and returns how many (one wrap).
  size_type erase(const Key& k) {
    wrap w(a_.handle());
    size_type n = 0;
    while (erase_start(k, 0, 0)) ++n;
    w.commit();
    return n;
  }
  // Erases the element at it (which must be dereferenceable).
  void erase(iterator it) {
    wrap w(a_.handle());
    if (!erase_start(it.key(), it.leaf_, it.slot_))
      throw error(SW_EINVAL, "btree::erase: iterator does not point to an element");
    w.commit();
  }
  // Erases [first, last) (one wrap).
  void erase(iterator first, iterator last) {
    wrap w(a_.handle());
    size_type n = static_cast<size_type>(std::distance(first, last));
    const_iterator pos = first;
    // Every erase invalidates iterators: erase by rank instead.
    size_type rank = static_cast<size_type>(std::distance(cbegin(), pos));
    for (; n > 0; --n) {
      iterator it = begin();
      std::advance(it, rank);
      erase(it);
    }
    w.commit();
  }
  // Frees every node (one wrap).
  void clear() {
    wrap w(a_.handle());
    if (uint64_t r = a_.ld(&hdr()->root)) free_subtree(r);
    const uint64_t zero[4] = {0, 0, 0, 0};
    a_.wr(&hdr()->root, zero, sizeof zero);  // root, head, tail, size
    w.commit();
  }

  // Checks every invariant; throws btree_verify_error naming the first
  // that fails.
  void verify() const;

  // For crash testing: calls f(offset, bytes) for every pool byte range
  // that holds the tree's state — the header, and of each node its head,
  // links and used slots (not its unused slots) — and returns the number
  // of nodes.  Two trees whose ranges hold equal bytes are equal.
  template <class F>
  size_t for_each_extent(F&& f) const {
    f(hdr_, sizeof(header_t));
    const uint64_t r = a_.ld(&hdr()->root);
    return r ? extents_of(r, f) : 0;
  }

 private:
  header_t* hdr() const { return a_.at<header_t>(hdr_); }
  leaf_t* lf(uint64_t off) const { return a_.at<leaf_t>(off); }
  inner_t* in(uint64_t off) const { return a_.at<inner_t>(off); }
  bool less(const Key& x, const Key& y) const { return cmp_(x, y); }
  bool equal(const Key& x, const Key& y) const { return !cmp_(x, y) && !cmp_(y, x); }

  // First slot in [0, n) whose key is >= k (Upper: > k), over keys in DRAM.
  template <bool Upper>
  unsigned search_local(const Key* keys, unsigned n, const Key& k) const {
    unsigned lo = 0, hi = n;
    while (lo < hi) {
      const unsigned mid = (lo + hi) / 2;
      if (Upper ? !less(k, keys[mid]) : less(keys[mid], k)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // A node read into DRAM for a descent.  Both node kinds begin with the
  // head and keep their keys right after it (a leaf after its two links).
  // When both kinds are small (kWhole: at most kWholeMax bytes, as with the
  // default traits) a node is read whole with one sw_read — head, keys and
  // the children or the data — so a descent costs one engine call per
  // level and a leaf insert or erase needs no further read.  A node whose
  // kind the caller does not know yet (the root) is read up to the smaller
  // kind's size first, then the rest if it is the bigger kind.  Otherwise
  // the head and keys are read (one call when the common prefix fits both
  // kinds) and children one slot at a time.
  static constexpr size_t kLeafKeysAt = offsetof(leaf_t, keys);
  static constexpr size_t kInnerKeysAt = offsetof(inner_t, keys);
  static constexpr size_t kInnerChildrenAt = offsetof(inner_t, children);
  static constexpr size_t kKeysPrefix = std::max(kLeafKeysAt + sizeof(Key) * leaf_slotmax,
                                                 kInnerKeysAt + sizeof(Key) * inner_slotmax);
  static constexpr bool kOneRead = kKeysPrefix <= sizeof(leaf_t) && kKeysPrefix <= sizeof(inner_t) &&
                                   kKeysPrefix <= 2048;
  static constexpr size_t kWholeMax = 1024;
  static constexpr bool kWhole = sizeof(leaf_t) <= kWholeMax && sizeof(inner_t) <= kWholeMax;
  static constexpr size_t kSmallerNode = std::min(sizeof(leaf_t), sizeof(inner_t));
  static constexpr size_t kViewBytes = kWhole ? std::max(sizeof(leaf_t), sizeof(inner_t)) : kKeysPrefix;
  struct node_view {
    alignas(16) unsigned char raw[kViewBytes];
    btree_detail::node_head head() const {
      btree_detail::node_head h;
      std::memcpy(&h, raw, sizeof h);
      return h;
    }
    const Key* keys() const {
      return reinterpret_cast<const Key*>(raw + (head().level == 0 ? kLeafKeysAt : kInnerKeysAt));
    }
    // An inner node's children and a leaf's data, if the node was read
    // whole (kWhole), else nullptr; its keys are always here.
    const uint64_t* children() const {
      if constexpr (kWhole) return reinterpret_cast<const uint64_t*>(raw + kInnerChildrenAt);
      else return nullptr;
    }
    template <bool D = kHasData>
    const Data* data() const {
      static_assert(D);
      if constexpr (kWhole) return reinterpret_cast<const Data*>(raw + offsetof(leaf_t, data));
      else return nullptr;
    }
    // kWhole only: a leaf's next link.
    uint64_t next() const {
      uint64_t n;
      std::memcpy(&n, raw + offsetof(leaf_t, next), sizeof n);
      return n;
    }
  };
  // level: the node's level if the caller knows it (a child's is its
  // parent's minus one), else -1.
  void read_node(uint64_t node, int level, node_view* out) const {
    const char* at = a_.at<char>(node);
    if constexpr (kWhole) {
      const size_t first = level < 0 ? kSmallerNode : level == 0 ? sizeof(leaf_t) : sizeof(inner_t);
      a_.rd(out->raw, at, first);
      if (level < 0) {
        const size_t full = out->head().level == 0 ? sizeof(leaf_t) : sizeof(inner_t);
        if (full > first) a_.rd(out->raw + first, at + first, full - first);
      }
    } else if constexpr (kOneRead) {
      a_.rd(out->raw, at, kKeysPrefix);
    } else {
      a_.rd(out->raw, at, sizeof(btree_detail::node_head));
      const btree_detail::node_head h = out->head();
      const size_t k = h.level == 0 ? kLeafKeysAt : kInnerKeysAt;
      a_.rd(out->raw + k, at + k, sizeof(Key) * h.slotuse);
    }
  }
  // Child `slot` of the inner node `node` read into v.
  uint64_t child_of(const node_view& v, uint64_t node, unsigned slot) const {
    if (const uint64_t* c = v.children()) return c[slot];
    return a_.ld(&in(node)->children[slot]);
  }
  // The next leaf of the leaf `node` read into v.
  uint64_t next_of(const node_view& v, uint64_t node) const {
    if constexpr (kWhole) return v.next();
    else return a_.ld(&lf(node)->next);
  }

  template <bool Const>
  basic_iterator<Const> make_begin() const {
    return basic_iterator<Const>(a_, a_.ld(&hdr()->head_leaf), 0);
  }
  template <bool Const>
  basic_iterator<Const> make_end() const {
    const uint64_t t = a_.ld(&hdr()->tail_leaf);
    return basic_iterator<Const>(a_, t, t ? a_.slotuse(t) : 0);
  }
  template <bool Const, bool Upper>
  basic_iterator<Const> bound(const Key& k) const {
    uint64_t n = a_.ld(&hdr()->root);
    if (!n) return make_end<Const>();
    node_view v;
    read_node(n, -1, &v);
    while (v.head().level > 0) {
      const unsigned s = search_local<Upper>(v.keys(), v.head().slotuse, k);
      const int below = v.head().level - 1;
      n = child_of(v, n, s);
      read_node(n, below, &v);
    }
    const unsigned use = v.head().slotuse;
    const unsigned s = search_local<Upper>(v.keys(), use, k);
    if (s >= use) {
      if (uint64_t nx = next_of(v, n)) return basic_iterator<Const>(a_, nx, 0);
    }
    return basic_iterator<Const>(a_, n, s);
  }
  template <bool Const>
  basic_iterator<Const> find_impl(const Key& k) const {
    auto it = bound<Const, false>(k);
    if (it != make_end<Const>() && !less(k, it.key())) return it;
    return make_end<Const>();
  }

  std::pair<iterator, bool> insert_start(const Key& k, const Data& d);
  bool insert_descend(uint64_t node, int level, const Key& k, const Data& d, Key* split_key,
                      uint64_t* split_node, iterator* pos);
  void split_leaf_insert(uint64_t leaf, const node_view& v, unsigned slot, const Key& k, const Data& d,
                         Key* split_key,
                         uint64_t* split_node, iterator* pos);
  void split_inner_insert(uint64_t node, const node_view& v, unsigned slot, const Key& k, uint64_t child,
                          Key* split_key, uint64_t* split_node);
  bool erase_start(const Key& k, uint64_t target_leaf, unsigned target_slot);
  bool erase_descend(uint64_t node, int level, const Key& k, uint64_t target_leaf, unsigned target_slot,
                     bool* underflow);
  void fix_child(uint64_t parent, unsigned slot);
  void merge_leaves(uint64_t parent, unsigned sep, uint64_t left, uint64_t right);
  void merge_inners(uint64_t parent, unsigned sep, uint64_t left, uint64_t right);
  void free_subtree(uint64_t node);
  void after_change() const {
    if constexpr (Traits::self_verify) verify();
  }
  template <class F>
  size_t extents_of(uint64_t node, F& f) const {
    const btree_detail::node_head hd = a_.head(node);
    const unsigned use = hd.slotuse;
    if (hd.level == 0) {
      f(node, offsetof(leaf_t, keys));  // head, prev, next
      f(a_.offset_of(lf(node)->keys), use * sizeof(Key));
      if constexpr (kHasData) f(a_.offset_of(lf(node)->data), use * sizeof(Data));
      return 1;
    }
    f(node, sizeof(btree_detail::node_head));
    f(a_.offset_of(in(node)->keys), use * sizeof(Key));
    f(a_.offset_of(in(node)->children), (use + 1) * sizeof(uint64_t));
    size_t n = 1;
    for (unsigned s = 0; s <= use; ++s) n += extents_of(a_.ld(&in(node)->children[s]), f);
    return n;
  }
  Key verify_node(uint64_t node, unsigned level, bool is_root, Key* min_key, uint64_t* leaves,
                  uint64_t* prev_leaf, size_type* count) const;

  acc_t a_;
  uint64_t hdr_ = 0;
  Compare cmp_;
};

}  // namespace softwrap

#include "softwrap/btree_modify.hpp"
#include "softwrap/btree_verify.hpp"

#endif  // SOFTWRAP_BTREE_HPP_
