// btree_iterator.hpp — the iterators of softwrap::btree (included by
// btree.hpp; not for direct use): positions (leaf offset, slot) whose
// reads go through the tree's accessor, with tlx's typedefs, key() and
// data(), and every conversion tlx has between the four kinds.
//
// Approach.  A set's operator* returns the key by value.  A map's returns
// a reference to a pair kept in the iterator (btree_ref.hpp), refreshed on
// each dereference: its .second is a proxy bound to the value's slot, so
// it->second = x stores in a wrap.  The reverse iterators are our own (a
// std::reverse_iterator would hand out a reference into a temporary
// iterator); they keep the element's position while a reference is out.
#ifndef SOFTWRAP_BTREE_ITERATOR_HPP_
#define SOFTWRAP_BTREE_ITERATOR_HPP_

#include <iterator>

#include "softwrap/btree.hpp"

namespace softwrap {

// Bidirectional; Const selects const_iterator.  A position (leaf offset,
// slot); end() is (0, 0).
template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
template <bool Const>
class btree<Key, Data, Compare, Traits, Multi, IsSet>::basic_iterator {
 public:
  using iterator_category = std::bidirectional_iterator_tag;
  using key_type = Key;
  using data_type = Data;
  using value_type = btree::value_type;
  using difference_type = std::ptrdiff_t;
  using self = basic_iterator;
  // Sets: the key by value.  Maps: the pair cached in the iterator, whose
  // .second assigns through to the pool (mutable iterators).
  using reference = std::conditional_t<IsSet, Key, std::conditional_t<Const, const pair_t&, pair_t&>>;
  using pointer = std::conditional_t<IsSet, btree_detail::arrow_proxy<Key>,
                                     std::conditional_t<Const, const pair_t*, pair_t*>>;

  basic_iterator() = default;
  template <bool C = Const>
    requires C
  basic_iterator(const basic_iterator<false>& o)  // NOLINT: iterator -> const_iterator
      : a_(o.a_), tail_(o.tail_), leaf_(o.leaf_), slot_(o.slot_) {}
  // From a reverse iterator: the position its base() names (tlx).
  template <bool C>
    requires(Const || !C)
  basic_iterator(const basic_reverse_iterator<basic_iterator<C>>& r)  // NOLINT
      : basic_iterator(r.base()) {}

  [[nodiscard]] Key key() const { return key_of(a_, a_.ld(&leaf()->keys[slot_])); }
  template <bool Ok_ = (kHasData)>
  [[nodiscard]] Data data() const
    requires Ok_
  {
    return data_of(a_, a_.ld(&leaf()->data[slot_]));
  }
  // Stores a new value for this element (in a wrap of its own or the
  // caller's); the same as it->second = d.
  template <bool Ok_ = (kHasData && !Const)>
  void set_data(const Data& d) const
    requires Ok_
  {
    data_ref(a_, &leaf()->data[slot_]) = d;
  }
  reference operator*() const {
    if constexpr (IsSet) {
      return key();
    } else {
      cache_.v.first = key();
      cache_.v.second.rebind(a_, &leaf()->data[slot_]);
      return cache_.v;
    }
  }
  pointer operator->() const {
    if constexpr (IsSet) return pointer{key()};
    else return &**this;
  }

  // end() is the position (0, 0): it costs no read to make or compare,
  // and -- from it reads the last leaf.  Walking off either end stays
  // there (tlx).
  basic_iterator& operator++() {
    if (!leaf_) return *this;
    if (slot_ + 1u < a_.slotuse(leaf_)) {
      ++slot_;
    } else if (uint64_t nx = a_.ld(&leaf()->next)) {
      leaf_ = nx;
      slot_ = 0;
    } else {
      leaf_ = 0;
      slot_ = 0;
    }
    return *this;
  }
  basic_iterator& operator--() {
    if (slot_ > 0) {
      --slot_;
    } else if (!leaf_) {
      if (uint64_t t = tail_ ? a_.ld(tail_) : 0) {
        leaf_ = t;
        slot_ = static_cast<unsigned>(a_.slotuse(t) - 1);
      }
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
  basic_iterator(acc_t a, const uint64_t* tail, uint64_t leaf, unsigned slot)
      : a_(a), tail_(tail), leaf_(leaf), slot_(slot) {}
  leaf_t* leaf() const { return a_.at<leaf_t>(leaf_); }
  acc_t a_;
  const uint64_t* tail_ = nullptr;  // the header's tail_leaf (for --end())
  uint64_t leaf_ = 0;
  unsigned slot_ = 0;
  struct no_cache {};
  mutable std::conditional_t<IsSet, no_cache, btree_detail::iter_cache<pair_t>> cache_;
};

// Reverse iteration over a basic_iterator: dereferences the element
// before its base, as std::reverse_iterator does (own class, so that it
// needs no reference into a temporary).  Converts implicitly from
// forward iterators (tlx).
template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
template <class It>
class btree<Key, Data, Compare, Traits, Multi, IsSet>::basic_reverse_iterator {
 public:
  using iterator_category = std::bidirectional_iterator_tag;
  using key_type = Key;
  using data_type = Data;
  using value_type = btree::value_type;
  using difference_type = std::ptrdiff_t;
  using self = basic_reverse_iterator;
  using reference = typename It::reference;
  using pointer = typename It::pointer;

  basic_reverse_iterator() = default;
  basic_reverse_iterator(It base) : it_(base) {}  // NOLINT: implicit, as in tlx
  template <class O>
    requires(!std::is_same_v<O, It> && std::is_convertible_v<O, It>)
  basic_reverse_iterator(const basic_reverse_iterator<O>& o)  // NOLINT
      : it_(o.base()) {}
  template <bool C>
    requires(!std::is_same_v<basic_iterator<C>, It> && std::is_convertible_v<basic_iterator<C>, It>)
  basic_reverse_iterator(const basic_iterator<C>& o)  // NOLINT
      : it_(o) {}

  [[nodiscard]] It base() const { return it_; }
  [[nodiscard]] Key key() const { return std::prev(it_).key(); }
  template <bool Ok_ = (kHasData)>
  [[nodiscard]] Data data() const
    requires Ok_
  {
    return std::prev(it_).data();
  }
  reference operator*() const {
    cur_ = std::prev(it_);
    return *cur_;
  }
  pointer operator->() const {
    cur_ = std::prev(it_);
    return cur_.operator->();
  }
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
  mutable It cur_;  // the element's position while a reference to it is out
};

}  // namespace softwrap

#endif  // SOFTWRAP_BTREE_ITERATOR_HPP_
