// btree.hpp — a persistent B+tree in a softwrap pool with the STX / tlx
// B+tree's interface: the engine behind btree_map, btree_multimap,
// btree_set and btree_multiset (one header each, which is what
// applications include).  docs/containers.md lists the API and every way
// it differs from tlx's because the tree is persistent.
//
// Approach.  The tree keeps no state in DRAM beyond the pool handle, the
// offset of its header and the comparator, so a wrap that aborts (or a
// crash) can never leave the C++ object out of step with the pool.  Every
// operation reads the pool through the wrap API: a descent peeks each node
// whole (sw_peek: the home bytes in place when no alias table holds any of
// them, one Bloom-filter check per node; else a copy) and searches it
// there; mutations write the changed slots and shifted ranges with
// sw_store/sw_write.  Each mutating call runs in a wrap of its own, which
// is flattened into the caller's wrap when one is open — so "insert a,
// erase b" in one caller wrap is one atomic unit, and an exception in the
// middle of an operation aborts it.
//
// Shape: leaves are doubly linked; leaves and inner nodes other than the
// root hold at least half their slots.  Separator keys follow the weak
// rule max(child i) <= key[i] <= min(child i+1) (strict on the right for
// unique trees); splits compute both halves in DRAM and write them whole,
// erases borrow from a sibling or merge with it.  verify() checks all of
// this, the leaf links, levels and the element count.  std::string keys
// and values live out of line (btree_detail.hpp); every separator owns its
// own copy, so erasing an element frees its strings at once.
//
// Iterators are (leaf offset, slot) positions.  A set's operator* returns
// the key by value; a map's returns a reference to a pair cached in the
// iterator whose .second is a proxy (btree_detail::data_ref): assigning to
// it stores the new value in a wrap; copying it copies the value.
// Iterators are invalidated by any insert or erase, as in STX.
//
// Thread safety: none, as in STX.  Callers that share a tree serialize all
// access with their own lock, held until their wrap closes.
#ifndef SOFTWRAP_BTREE_HPP_
#define SOFTWRAP_BTREE_HPP_

#include <iosfwd>
#include <iterator>

#include "softwrap/btree_detail.hpp"
#include "softwrap/btree_ref.hpp"

namespace softwrap {

template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
class btree {
  using tr = btree_detail::traits_of<Traits>;
  using key_st = btree_detail::stored<Key>;
  using data_st = btree_detail::stored<Data>;
  using SK = typename key_st::type;
  using SD = typename data_st::type;
  static constexpr bool kStrKey = key_st::is_string;
  static constexpr bool kStrData = data_st::is_string;

 public:
  using key_type = Key;
  using data_type = Data;
  using mapped_type = Data;
  using value_type = typename btree_detail::value_of<Key, Data, IsSet>::type;
  using key_compare = Compare;
  using traits = Traits;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  static constexpr bool allow_duplicates = Multi;
  static constexpr bool self_verify = tr::self_verify;
  static constexpr bool debug = tr::debug;
  static_assert(tr::leaf_slots >= 4 && tr::leaf_slots <= 65535 && tr::inner_slots >= 4 && tr::inner_slots <= 65535,
                "slot counts must lie in [4, 65535]");
  static constexpr unsigned short leaf_slotmax = static_cast<unsigned short>(tr::leaf_slots);
  static constexpr unsigned short inner_slotmax = static_cast<unsigned short>(tr::inner_slots);
  static constexpr unsigned short leaf_slotmin = leaf_slotmax / 2;
  static constexpr unsigned short inner_slotmin = inner_slotmax / 2;
  // Lookups take a std::string_view for std::string keys (any string-like
  // argument, without building a std::string), else a key.
  using key_arg = std::conditional_t<kStrKey, std::string_view, const Key&>;
  // What insert returns: STX's pair<iterator, bool>, or an iterator for
  // trees that allow duplicates.
  template <class It>
  using insert_result_t = std::conditional_t<Multi, It, std::pair<It, bool>>;

  // Orders elements by their keys (tlx's value_compare).
  class value_compare {
   public:
    bool operator()(const value_type& x, const value_type& y) const {
      if constexpr (IsSet) return cmp_(x, y);
      else return cmp_(x.first, y.first);
    }

   private:
    friend class btree;
    explicit value_compare(Compare c) : cmp_(std::move(c)) {}
    Compare cmp_;
  };

  // What get_stats() reports (tlx's tree_stats).
  struct tree_stats {
    size_type size = 0;
    size_type leaves = 0;
    size_type inner_nodes = 0;
    static constexpr unsigned short leaf_slots = leaf_slotmax;
    static constexpr unsigned short inner_slots = inner_slotmax;
    [[nodiscard]] size_type nodes() const { return inner_nodes + leaves; }
    [[nodiscard]] double avgfill_leaves() const {
      return leaves ? static_cast<double>(size) / static_cast<double>(leaves * leaf_slots) : 0.0;
    }
  };

 private:
  static constexpr bool kHasData = !IsSet;
  using leaf_t = btree_detail::leaf_node<SK, SD, leaf_slotmax, kHasData>;
  using inner_t = btree_detail::inner_node<SK, inner_slotmax>;
  using header_t = btree_detail::header;
  using acc_t = btree_detail::accessor;
  using pool_ref = btree_detail::pool_ref;
  using data_ref = btree_detail::data_ref<Data>;
  using pair_t = btree_detail::ref_pair<Key, Data>;
  static constexpr uint32_t kFlags = (Multi ? btree_detail::kMulti : 0) | (IsSet ? btree_detail::kSet : 0) |
                                     (kStrKey ? btree_detail::kStringKey : 0) |
                                     (kStrData && kHasData ? btree_detail::kStringData : 0);

  /* ---------------------------------------------------- key/value codecs */

  static Key key_of(const acc_t& a, const SK& s) {
    if constexpr (kStrKey) {
      std::string tmp;
      return std::string(a.view_str(s, tmp));
    } else {
      return s;
    }
  }
  static Data data_of(const acc_t& a, const SD& s) {
    if constexpr (kStrData) {
      std::string tmp;
      return std::string(a.view_str(s, tmp));
    } else {
      return s;
    }
  }
  SK store_key(key_arg k) const {
    if constexpr (kStrKey) return a_.make_str(k);
    else return k;
  }
  SD store_data(const Data& d) const {
    if constexpr (kStrData) return a_.make_str(d);
    else return d;
  }
  void free_key(const SK& s) const {
    if constexpr (kStrKey) a_.free_str(s);
  }
  void free_data(const SD& s) const {
    if constexpr (kStrData && kHasData) a_.free_str(s);
  }
  SK dup_key(const SK& s, const acc_t& from) const {
    if constexpr (kStrKey) return a_.dup_str(s, from);
    else return s;
  }
  // A new separator (owned by the caller) for a leaf boundary between lo,
  // the left side's largest key, and hi, the right side's smallest: lo <=
  // s < hi (s <= hi with duplicates).  Under std::less on strings the
  // shortest such prefix of hi usually fits the slot inline, so a split
  // allocates no string block; otherwise a copy of lo.
  SK separator(const SK& lo, const SK& hi) const {
    if constexpr (kPrefixOrder) {
      std::string ta, tb;
      const std::string_view a = a_.view_str(lo, ta), b = a_.view_str(hi, tb);
      const size_t i = static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
      if (i < a.size() && i + 1 <= btree_detail::kInlineMax && (Multi || i + 1 < b.size()))
        return a_.make_str(b.substr(0, i + 1));
      return a_.make_str(a);
    } else {
      return dup_key(lo, a_);
    }
  }
  SD dup_data(const SD& s, const acc_t& from) const {
    if constexpr (kStrData) return a_.dup_str(s, from);
    else return s;
  }

 public:
  /* ------------------------------------------------------------ iterators */

  // Bidirectional (btree_iterator.hpp); Const selects const_iterator.
  template <bool Const>
  class basic_iterator;
  // Reverse iteration over a basic_iterator (btree_iterator.hpp).
  template <class It>
  class basic_reverse_iterator;

  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;
  using reverse_iterator = basic_reverse_iterator<iterator>;
  using const_reverse_iterator = basic_reverse_iterator<const_iterator>;
  using insert_result = insert_result_t<iterator>;

  /* -------------------------------------------------------- construction */

  // Creates an empty tree in the pool (its header allocated in the
  // caller's wrap, or a wrap of its own): the pool-taking counterparts of
  // tlx's default and comparator constructors.  Keep header_offset()
  // somewhere reachable from the pool root to find the tree again.  Throws
  // error (SW_ENOSPC, ...).
  explicit btree(pool_ref p) : btree(p, Compare()) {}
  btree(pool_ref p, const Compare& cmp) : a_(p.h), cmp_(cmp) { create_header(); }
  // A new tree filled from [first, last), in one wrap (tlx's range
  // constructors).
  template <std::input_iterator InputIt>
    requires std::constructible_from<value_type, std::iter_reference_t<InputIt>>
  btree(pool_ref p, InputIt first, InputIt last, const Compare& cmp = Compare()) : a_(p.h), cmp_(cmp) {
    wrap w(a_.handle());
    create_header();
    insert(first, last);
    w.commit();
  }
  // Attaches to the tree whose header is at header_offset (after reopening
  // the pool).  Throws error(SW_EINVAL) if no tree of this type is there.
  btree(pool_ref p, attach_t, uint64_t header_offset, const Compare& cmp = Compare())
      : a_(p.h), hdr_(header_offset), cmp_(cmp) {
    if (header_offset % 8 != 0 || header_offset < 4096 || header_offset > sw_pool_size(p.h) - sizeof(header_t))
      throw error(SW_EINVAL, "btree header offset is outside the pool");
    header_t h;
    a_.rd(&h, hdr(), sizeof h);
    if (h.magic != btree_detail::kMagic || h.version != btree_detail::kVersion || h.flags != kFlags ||
        h.leaf_slots != leaf_slotmax || h.inner_slots != inner_slotmax || h.key_size != sizeof(SK) ||
        h.data_size != (kHasData ? sizeof(SD) : 0))
      throw error(SW_EINVAL, "no btree of this type at the given offset");
  }
  // Deep copies (STX/tlx semantics): a new, independent tree with the same
  // elements — in the source's pool, or in p — built in one wrap.
  btree(const btree& other) : btree(pool_ref(other.a_.handle()), other) {}
  btree(pool_ref p, const btree& other) : a_(p.h), cmp_(other.cmp_) {
    wrap w(a_.handle());
    create_header();
    copy_from(other);
    w.commit();
  }
  // Replaces this tree's elements with a copy of other's (one wrap; this
  // tree keeps its header, so its header_offset() stays valid).
  btree& operator=(const btree& other) {
    if (this == &other) return *this;
    if (!hdr_) {
      a_ = other.a_;
      cmp_ = other.cmp_;
      wrap w(a_.handle());
      create_header();
      copy_from(other);
      w.commit();
      return *this;
    }
    wrap w(a_.handle());
    clear();
    cmp_ = other.cmp_;
    copy_from(other);
    w.commit();
    return *this;
  }
  // Moves take over the handle: the moved-from object refers to no tree
  // (header_offset() == 0) until it is assigned to.  Move assignment to an
  // object with a tree moves the elements when both are in one pool
  // (clear, then swap), else copies them.
  btree(btree&& other) noexcept : a_(other.a_), hdr_(other.hdr_), cmp_(std::move(other.cmp_)) { other.hdr_ = 0; }
  btree& operator=(btree&& other) {
    if (this == &other) return *this;
    if (!hdr_) {
      a_ = other.a_;
      hdr_ = other.hdr_;
      cmp_ = std::move(other.cmp_);
      other.hdr_ = 0;
    } else if (a_.handle() == other.a_.handle()) {
      wrap w(a_.handle());
      clear();
      swap(other);
      w.commit();
    } else {
      *this = static_cast<const btree&>(other);
    }
    return *this;
  }
  // The tree stays in the pool when the object goes: destroy() frees it.
  ~btree() = default;

  // Exchanges the two trees' elements (one wrap, O(1): the headers' root,
  // leaves and sizes are swapped, so each header_offset() keeps naming the
  // tree its owner stored).  Both must be in the same pool, else
  // error(SW_EINVAL).
  void swap(btree& other) {
    if (this == &other) return;
    if (a_.handle() != other.a_.handle())
      throw error(SW_EINVAL, "btree::swap: the trees are in different pools (copy-assign instead)");
    if (!hdr_ || !other.hdr_) {
      std::swap(hdr_, other.hdr_);
    } else {
      wrap w(a_.handle());
      uint64_t x[4], y[4];
      a_.rd(x, &hdr()->root, sizeof x);
      a_.rd(y, &other.hdr()->root, sizeof y);
      a_.wr(&hdr()->root, y, sizeof y);
      a_.wr(&other.hdr()->root, x, sizeof x);
      w.commit();
    }
    std::swap(cmp_, other.cmp_);
  }
  friend void swap(btree& x, btree& y) { x.swap(y); }

  // The pool offset of the tree header (what to keep in the root object;
  // 0 for an object that refers to no tree).
  [[nodiscard]] uint64_t header_offset() const noexcept { return hdr_; }
  [[nodiscard]] sw_pool* pool_handle() const noexcept { return a_.handle(); }
  [[nodiscard]] key_compare key_comp() const { return cmp_; }
  [[nodiscard]] value_compare value_comp() const { return value_compare(cmp_); }

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
  const_reverse_iterator crbegin() const { return rbegin(); }
  const_reverse_iterator crend() const { return rend(); }

  [[nodiscard]] bool exists(key_arg k) const { return find(k) != end(); }
  iterator find(key_arg k) { return find_impl<false>(k); }
  const_iterator find(key_arg k) const { return find_impl<true>(k); }
  [[nodiscard]] size_type count(key_arg k) const {
    size_type n = 0;
    for (auto it = lower_bound(k), e = upper_bound(k); it != e; ++it) ++n;
    return n;
  }
  iterator lower_bound(key_arg k) { return bound<false, false>(make_probe(k)); }
  const_iterator lower_bound(key_arg k) const { return bound<true, false>(make_probe(k)); }
  iterator upper_bound(key_arg k) { return bound<false, true>(make_probe(k)); }
  const_iterator upper_bound(key_arg k) const { return bound<true, true>(make_probe(k)); }
  std::pair<iterator, iterator> equal_range(key_arg k) { return {lower_bound(k), upper_bound(k)}; }
  std::pair<const_iterator, const_iterator> equal_range(key_arg k) const { return {lower_bound(k), upper_bound(k)}; }

  // Walks the tree: elements, leaves and inner nodes (O(n / slots); the
  // tree keeps no counts besides its size).
  [[nodiscard]] tree_stats get_stats() const;

  /* ------------------------------------------------------------- inserting */

  // Inserts an element; a unique tree refuses a key it holds (second =
  // false, iterator to the existing element).  Trees that allow duplicates
  // return just the iterator (STX/tlx); a new duplicate goes before the
  // elements with an equal key.  Runs in a wrap; throws error (SW_ENOSPC,
  // SW_EABORTED, ...) with the tree unchanged.
  insert_result insert(const value_type& v) {
    if constexpr (IsSet) return result(insert_start(v, Data()));
    else return result(insert_start(v.first, v.second));
  }
  template <bool Ok_ = (!IsSet)>
  insert_result insert(key_arg k, const Data& d)
    requires Ok_
  {
    return result(insert_start(k, d));
  }
  template <bool Ok_ = (!IsSet)>
  insert_result insert2(key_arg k, const Data& d)
    requires Ok_
  {
    return result(insert_start(k, d));
  }
  // Hinted inserts: the hint is ignored (as in tlx); the element's position.
  iterator insert(const_iterator /*hint*/, const value_type& v) { return insert_start_v(v).first; }
  template <bool Ok_ = (!IsSet)>
  iterator insert2(const_iterator /*hint*/, key_arg k, const Data& d)
    requires Ok_
  {
    return insert_start(k, d).first;
  }
  // Inserts a range, all in one wrap.
  template <std::input_iterator InputIt>
    requires std::constructible_from<value_type, std::iter_reference_t<InputIt>>
  void insert(InputIt first, InputIt last) {
    wrap w(a_.handle());
    for (; first != last; ++first) insert_start_v(static_cast<value_type>(*first));
    w.commit();
  }
  // The value of key k, inserted with Data() first if absent (unique maps).
  // A proxy: assigning to it stores in a wrap, converting it loads.
  template <bool Ok_ = (!IsSet && !Multi)>
  data_ref operator[](key_arg k)
    requires Ok_
  {
    iterator it = insert_start(k, Data()).first;
    return data_ref(a_, &it.leaf()->data[it.slot_]);
  }

  // Fills an empty tree from a sorted range (ascending, and without
  // duplicates for a unique tree) in one wrap, packing the leaves.
  // Throws error(SW_EINVAL) if the tree is not empty or the range is not
  // sorted; a range too large for one wrap fails with SW_EABORTED (raise
  // the pool's lane_size).
  template <class InputIt>
  void bulk_load(InputIt first, InputIt last);

  /* --------------------------------------------------------------- erasing */

  // Erases one element with key k; false if there is none.
  bool erase_one(key_arg k) {
    wrap w(a_.handle());
    const bool found = erase_start(make_probe(k), 0, 0);
    w.commit();
    return found;
  }
  // Erases all elements with key k and returns how many (one wrap).
  size_type erase(key_arg k) {
    wrap w(a_.handle());
    size_type n = 0;
    while (erase_start(make_probe(k), 0, 0)) ++n;
    w.commit();
    return n;
  }
  // Erases the element at it (which must be dereferenceable).
  void erase(iterator it) {
    if (!it.leaf_) throw error(SW_EINVAL, "btree::erase: end() is not an element");
    wrap w(a_.handle());
    const Key k = it.key();
    if (!erase_start(make_probe(k), it.leaf_, it.slot_))
      throw error(SW_EINVAL, "btree::erase: iterator does not point to an element");
    w.commit();
  }
  // Erases [first, last) (one wrap).
  void erase(iterator first, iterator last) {
    wrap w(a_.handle());
    size_type n = static_cast<size_type>(std::distance(first, last));
    const_iterator pos = first;
    // Every erase invalidates iterators: erase by rank instead.
    const auto rank = std::distance(cbegin(), pos);
    for (; n > 0; --n) {
      iterator it = begin();
      std::advance(it, rank);
      erase(it);
    }
    w.commit();
  }
  // Frees every node and string (one wrap); the header stays.
  void clear() {
    wrap w(a_.handle());
    if (uint64_t r = a_.ld(&hdr()->root)) free_subtree(r);
    const uint64_t zero[4] = {0, 0, 0, 0};
    a_.wr(&hdr()->root, zero, sizeof zero);  // root, head, tail, size
    w.commit();
  }
  // Frees the whole tree, header included (one wrap); afterwards this
  // object refers to no tree (header_offset() == 0), and the offset it had
  // must no longer be attached.
  void destroy() {
    wrap w(a_.handle());
    clear();
    a_.free(hdr_);
    w.commit();
    hdr_ = 0;
  }

  /* --------------------------------------------------- checking and output */

  // Checks every invariant; throws btree_verify_error naming the first
  // that fails.
  void verify() const;
  // The tree node by node (tlx's print) and the leaves in order
  // (print_leaves); keys and values that have operator<< are shown.
  void print(std::ostream& os) const;
  void print_leaves(std::ostream& os) const;
  // STX's dump/restore: writes the elements in the versioned stream format
  // of docs/containers.md; restore() replaces this tree's elements with a
  // dump's (one wrap) and returns false, the tree unchanged, if the stream
  // is not a dump of a tree of this type.
  void dump(std::ostream& os) const;
  bool restore(std::istream& is);

  // For crash testing: calls f(offset, bytes) for every pool byte range
  // that holds the tree's state — the header, of each node its head, links
  // and used slots (not its unused slots), and every out-of-line string —
  // and returns the number of allocations (nodes and strings).  Two trees
  // whose ranges hold equal bytes are equal.
  template <class F>
  size_t for_each_extent(F&& f) const {
    f(hdr_, sizeof(header_t));
    const uint64_t r = a_.ld(&hdr()->root);
    return r ? extents_of(r, f) : 0;
  }

  /* ------------------------------------------------ relational operators */

  friend bool operator==(const btree& x, const btree& y) {
    if (x.size() != y.size()) return false;
    for (auto i = x.begin(), j = y.begin(), e = x.end(); i != e; ++i, ++j) {
      if (!(i.key() == j.key())) return false;
      if constexpr (kHasData) {
        if (!(i.data() == j.data())) return false;
      }
    }
    return true;
  }
  // Lexicographic over (key, value), as std::lexicographical_compare.
  friend bool operator<(const btree& x, const btree& y) {
    auto i = x.begin(), ie = x.end();
    auto j = y.begin(), je = y.end();
    for (; i != ie && j != je; ++i, ++j) {
      const Key a = i.key(), b = j.key();
      if (a < b) return true;
      if (b < a) return false;
      if constexpr (kHasData) {
        const Data c = i.data(), d = j.data();
        if (c < d) return true;
        if (d < c) return false;
      }
    }
    return i == ie && j != je;
  }
  friend bool operator>(const btree& x, const btree& y) { return y < x; }
  friend bool operator<=(const btree& x, const btree& y) { return !(y < x); }
  friend bool operator>=(const btree& x, const btree& y) { return !(x < y); }

 private:
  header_t* hdr() const { return a_.at<header_t>(hdr_); }
  leaf_t* lf(uint64_t off) const { return a_.at<leaf_t>(off); }
  inner_t* in(uint64_t off) const { return a_.at<inner_t>(off); }

  void create_header() {
    wrap w(a_.handle());
    void* m = sw_pmalloc(a_.handle(), sizeof(header_t));
    if (!m) detail::throw_last();
    header_t h{};
    h.magic = btree_detail::kMagic;
    h.version = btree_detail::kVersion;
    h.flags = kFlags;
    h.leaf_slots = leaf_slotmax;
    h.inner_slots = inner_slotmax;
    h.key_size = sizeof(SK);
    h.data_size = kHasData ? sizeof(SD) : 0;
    a_.wr(m, &h, sizeof h);
    w.commit();
    hdr_ = a_.offset_of(m);
  }

  /* ---- comparisons: a probe (the searched key) against stored keys */

  // std::less on strings: compare the 8-byte prefixes first.
  static constexpr bool kPrefixOrder =
      kStrKey && (std::is_same_v<Compare, std::less<std::string>> || std::is_same_v<Compare, std::less<>>);
  struct probe {
    std::conditional_t<kStrKey, std::string_view, const Key*> k;
    uint64_t prefix = 0;
  };
  probe make_probe(key_arg k) const {
    if constexpr (kStrKey) return probe{k, btree_detail::prefix_of(k)};
    else return probe{&k, 0};
  }
  bool cmp_str(std::string_view x, std::string_view y) const {
    if constexpr (kPrefixOrder) return x < y;
    else if constexpr (std::is_invocable_r_v<bool, const Compare&, std::string_view, std::string_view>) return cmp_(x, y);
    else if constexpr (kStrKey) return cmp_(Key(x), Key(y));
    else return false;  // not used: only string keys are viewed
  }
  // Three-way for strings under prefix order: <0, 0 (undecided), >0.
  template <bool ProbeLeft>
  bool less_mixed(const SK& s, const probe& p) const {
    if constexpr (kStrKey) {
      if constexpr (kPrefixOrder) {
        if (s.prefix != p.prefix) return ProbeLeft ? p.prefix < s.prefix : s.prefix < p.prefix;
        if (btree_detail::is_inline(s) && p.k.size() <= btree_detail::kInlineMax) {
          const size_t n = btree_detail::inline_size(s);
          return ProbeLeft ? p.k.size() < n : n < p.k.size();
        }
      }
      std::string tmp;
      const std::string_view v = a_.view_str(s, tmp);
      return ProbeLeft ? cmp_str(p.k, v) : cmp_str(v, p.k);
    } else {
      return ProbeLeft ? cmp_(*p.k, s) : cmp_(s, *p.k);
    }
  }
  bool less_sp(const SK& s, const probe& p) const { return less_mixed<false>(s, p); }
  bool less_ps(const probe& p, const SK& s) const { return less_mixed<true>(s, p); }
  // Two stored keys (verify, bulk load).
  bool less_ss(const SK& x, const SK& y) const {
    if constexpr (kStrKey) {
      std::string tmp;
      const std::string_view v = a_.view_str(y, tmp);
      return less_sp(x, probe{v, btree_detail::prefix_of(v)});
    } else {
      return cmp_(x, y);
    }
  }

  // First slot in [0, n) whose key is >= p (Upper: > p).  Nodes whose keys
  // take fewer than binsearch_threshold bytes are scanned (tlx's rule).
  template <bool Upper>
  unsigned search_local(const SK* keys, unsigned n, const probe& p) const {
    auto before = [&](const SK& s) { return Upper ? !less_ps(p, s) : less_sp(s, p); };
    if constexpr (sizeof(SK) * std::max(leaf_slotmax, inner_slotmax) < tr::binsearch_threshold) {
      unsigned lo = 0;
      while (lo < n && before(keys[lo])) ++lo;
      return lo;
    } else {
      unsigned lo = 0, hi = n;
      while (lo < hi) {
        const unsigned mid = (lo + hi) / 2;
        if (before(keys[mid])) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    }
  }

  // A node as a descent sees it: peeked whole (sw_peek), so p points at
  // the node's home bytes or at buf.  Valid until the node is written.
  static constexpr size_t kLeafKeysAt = offsetof(leaf_t, keys);
  static constexpr size_t kInnerKeysAt = offsetof(inner_t, keys);
  static constexpr size_t kInnerChildrenAt = offsetof(inner_t, children);
  static constexpr size_t kMaxNode = std::max(sizeof(leaf_t), sizeof(inner_t));
  // Nodes this small are changed by one sw_write of their image up to the
  // last used slot (head, links and the unused key slots in between
  // included), instead of one call per shifted array and one for slotuse:
  // the engines' cost per call is what a small tree operation pays most.
  static constexpr bool kOneWrite = kMaxNode <= 512;
  static constexpr size_t kLeafDataAt = [] {
    if constexpr (kHasData) return offsetof(leaf_t, data);
    else return sizeof(leaf_t);
  }();
  // Bytes of a leaf's image up to its last used slot when it holds n.
  static constexpr size_t leaf_used_end(unsigned n) {
    return kHasData ? kLeafDataAt + n * sizeof(SD) : kLeafKeysAt + n * sizeof(SK);
  }
  static void set_head_slotuse(unsigned char* img, unsigned n) {
    const auto u = static_cast<uint16_t>(n);
    std::memcpy(img + offsetof(btree_detail::node_head, slotuse), &u, sizeof u);
  }
  // In an array image of `use` slots: x goes into slot, the rest shifts
  // right (shift_in) / slot is removed, the rest shifts left (shift_out).
  template <class T>
  static void shift_in(unsigned char* arr, unsigned slot, unsigned use, const T& x) {
    std::memmove(arr + (slot + 1) * sizeof(T), arr + slot * sizeof(T), (use - slot) * sizeof(T));
    std::memcpy(arr + slot * sizeof(T), &x, sizeof(T));
  }
  template <class T>
  static void shift_out(unsigned char* arr, unsigned slot, unsigned use) {
    std::memmove(arr + slot * sizeof(T), arr + (slot + 1) * sizeof(T), (use - slot - 1) * sizeof(T));
  }
  static constexpr size_t kLocalView = kMaxNode <= 2048 ? kMaxNode : 16;
  struct node_view {
    const unsigned char* p = nullptr;
    alignas(16) unsigned char local[kLocalView];
    std::unique_ptr<unsigned char[]> heap;
    void* buf(size_t n) {
      if (n <= kLocalView) return local;
      if (!heap) heap = std::make_unique<unsigned char[]>(kMaxNode);
      return heap.get();
    }
    btree_detail::node_head head() const {
      btree_detail::node_head h;
      std::memcpy(&h, p, sizeof h);
      return h;
    }
    const SK* keys() const { return reinterpret_cast<const SK*>(p + (head().level == 0 ? kLeafKeysAt : kInnerKeysAt)); }
    const uint64_t* children() const { return reinterpret_cast<const uint64_t*>(p + kInnerChildrenAt); }
    template <bool D = kHasData>
    const SD* data() const {
      static_assert(D);
      return reinterpret_cast<const SD*>(p + offsetof(leaf_t, data));
    }
    uint64_t next() const {
      uint64_t n;
      std::memcpy(&n, p + offsetof(leaf_t, next), sizeof n);
      return n;
    }
  };
  // level: the node's level if the caller knows it (a child's is its
  // parent's minus one), else -1: then the smaller kind's size is peeked
  // first, and the rest only if the node is of the bigger kind.
  void read_node(uint64_t node, int level, node_view* out) const {
    const char* at = a_.at<char>(node);
    if (level < 0) {
      constexpr size_t small = std::min(sizeof(leaf_t), sizeof(inner_t));
      out->p = static_cast<const unsigned char*>(a_.peek(at, small, out->buf(kMaxNode)));
      level = out->head().level;
      if ((level == 0 ? sizeof(leaf_t) : sizeof(inner_t)) == small) return;
    }
    const size_t n = level == 0 ? sizeof(leaf_t) : sizeof(inner_t);
    out->p = static_cast<const unsigned char*>(a_.peek(at, n, out->buf(n)));
  }

  template <bool Const>
  basic_iterator<Const> make_begin() const {
    return make_it<Const>(a_.ld(&hdr()->head_leaf), 0);
  }
  template <bool Const>
  basic_iterator<Const> make_end() const {
    return make_it<Const>(0, 0);
  }
  template <bool Const>
  basic_iterator<Const> make_it(uint64_t leaf, unsigned slot) const {
    return basic_iterator<Const>(a_, &hdr()->tail_leaf, leaf, slot);
  }
  iterator make_it(uint64_t leaf, unsigned slot) const { return make_it<false>(leaf, slot); }
  // Descends to the leaf of p's lower (Upper: upper) bound; *found tells
  // (lower bounds) whether that slot holds a key equal to p.
  template <bool Const, bool Upper>
  basic_iterator<Const> bound(const probe& p, bool* found = nullptr) const {
    uint64_t n = a_.ld(&hdr()->root);
    if (!n) return make_end<Const>();
    node_view v;
    read_node(n, -1, &v);
    while (v.head().level > 0) {
      const unsigned s = search_local<Upper>(v.keys(), v.head().slotuse, p);
      const int below = v.head().level - 1;
      n = v.children()[s];
      read_node(n, below, &v);
    }
    const unsigned use = v.head().slotuse;
    const unsigned s = search_local<Upper>(v.keys(), use, p);
    if (s < use) {
      if (found) *found = !less_ps(p, v.keys()[s]);
      return make_it<Const>(n, s);
    }
    if (uint64_t nx = v.next()) {
      if (found) *found = !less_ps(p, a_.ld(&lf(nx)->keys[0]));
      return make_it<Const>(nx, 0);
    }
    return make_end<Const>();
  }
  template <bool Const>
  basic_iterator<Const> find_impl(key_arg k) const {
    bool found = false;
    auto it = bound<Const, false>(make_probe(k), &found);
    return found ? it : make_end<Const>();
  }
  template <class It>
  static insert_result_t<It> result(const std::pair<It, bool>& r) {
    if constexpr (Multi) return r.first;
    else return r;
  }
  std::pair<iterator, bool> insert_start_v(const value_type& v) {
    if constexpr (IsSet) return insert_start(v, Data());
    else return insert_start(v.first, v.second);
  }

  std::pair<iterator, bool> insert_start(key_arg k, const Data& d);
  bool insert_descend(uint64_t node, int level, const probe& p, key_arg k, const Data& d, SK* split_key,
                      uint64_t* split_node, iterator* pos);
  void split_leaf_insert(uint64_t leaf, const node_view& v, unsigned slot, const SK& k, const SD& d, SK* split_key,
                         uint64_t* split_node, iterator* pos);
  void split_inner_insert(uint64_t node, const node_view& v, unsigned slot, const SK& k, uint64_t child,
                          SK* split_key, uint64_t* split_node);
  bool erase_start(const probe& p, uint64_t target_leaf, unsigned target_slot);
  bool erase_descend(uint64_t node, int level, const probe& p, uint64_t target_leaf, unsigned target_slot,
                     bool* underflow);
  void fix_child(uint64_t parent, unsigned slot);
  void merge_leaves(uint64_t parent, unsigned sep, uint64_t left, uint64_t right);
  void merge_inners(uint64_t parent, unsigned sep, uint64_t left, uint64_t right);
  void free_subtree(uint64_t node);
  void build(std::vector<SK>& keys, std::vector<SD>& data);
  void copy_from(const btree& other);
  void after_change() const;
  template <class F>
  size_t extents_of(uint64_t node, F& f) const {
    const btree_detail::node_head hd = a_.head(node);
    const unsigned use = hd.slotuse;
    size_t n = 1;
    auto strings = [&](const auto* arr) {
      if constexpr (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(arr)>>, btree_detail::str_slot>) {
        for (unsigned s = 0; s < use; ++s) {
          const btree_detail::str_slot x = a_.ld(&arr[s]);
          if (btree_detail::is_inline(x)) continue;
          f(x.ref, sizeof(uint64_t) + a_.ld(a_.at<uint64_t>(x.ref)));
          ++n;
        }
      }
    };
    if (hd.level == 0) {
      f(node, offsetof(leaf_t, keys));  // head, prev, next
      f(a_.offset_of(lf(node)->keys), use * sizeof(SK));
      strings(lf(node)->keys);
      if constexpr (kHasData) {
        f(a_.offset_of(lf(node)->data), use * sizeof(SD));
        strings(lf(node)->data);
      }
      return n;
    }
    f(node, sizeof(btree_detail::node_head));
    f(a_.offset_of(in(node)->keys), use * sizeof(SK));
    strings(in(node)->keys);
    f(a_.offset_of(in(node)->children), (use + 1) * sizeof(uint64_t));
    for (unsigned s = 0; s <= use; ++s) n += extents_of(a_.ld(&in(node)->children[s]), f);
    return n;
  }
  SK verify_node(uint64_t node, unsigned level, bool is_root, SK* min_key, uint64_t* leaves, uint64_t* prev_leaf,
                 size_type* count) const;
  void stats_node(uint64_t node, tree_stats* s) const;
  void print_node(std::ostream& os, uint64_t node, unsigned depth, bool recurse) const;

  acc_t a_;
  uint64_t hdr_ = 0;
  Compare cmp_;
};

}  // namespace softwrap

#include "softwrap/btree_io.hpp"
#include "softwrap/btree_iterator.hpp"
#include "softwrap/btree_modify.hpp"
#include "softwrap/btree_verify.hpp"

#endif  // SOFTWRAP_BTREE_HPP_
