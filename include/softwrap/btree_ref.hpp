// btree_ref.hpp — the proxies through which a persistent B+tree's values
// are assigned in place (included by btree.hpp; not for direct use).
//
// Approach.  A map's values live in pool memory and may only be written
// through the wrap API, so `it->second = x`, `(*it).second += 1` and
// `m[k] = x` cannot hand out a Data&.  data_ref stands for one value slot:
// converting it loads the value, assigning it stores the new value in a
// wrap (its own, or the caller's open wrap).  Copying a data_ref copies the
// *value* (the copy is detached from the pool), so `auto v = it->second;
// v = 1;` changes only v, as with tlx's Data&; a reference to it
// (`auto& v = it->second`) stays bound to the slot.  ref_pair is what a map
// iterator's operator* refers to: first (the key, a copy) and second (a
// data_ref); the iterator keeps it, so `auto& e = *it` is valid while the
// iterator lives.  docs/containers.md lists what this means for users.
#ifndef SOFTWRAP_BTREE_REF_HPP_
#define SOFTWRAP_BTREE_REF_HPP_

#include <compare>
#include <ostream>
#include <utility>

#include "softwrap/btree_detail.hpp"

namespace softwrap {
template <class Key, class Data, class Compare, class Traits, bool Multi, bool IsSet>
class btree;
}  // namespace softwrap

namespace softwrap::btree_detail {

// operator-> of values returned by value (set iterators, data_ref).
template <class T>
struct arrow_proxy {
  T value;
  const T* operator->() const noexcept { return &value; }
};

template <class Data>
class data_ref {
  using SD = typename stored<Data>::type;

 public:
  using value_type = Data;

  // A detached Data().
  data_ref() = default;
  // Bound to the value slot at slot (pool memory of a's pool).
  data_ref(accessor a, SD* slot) : a_(a), slot_(slot) {}
  // Copies hold the value, detached from the pool.
  data_ref(const data_ref& o) : value_(o.get()) {}
  // Stores o's value (into the slot, or into this detached copy).
  data_ref& operator=(const data_ref& o) { return *this = o.get(); }
  data_ref& operator=(const Data& v) {
    set(v);
    return *this;
  }
  ~data_ref() = default;

  // The value: loaded from the pool if bound.
  [[nodiscard]] Data get() const {
    if (!slot_) return value_;
    const SD s = a_.ld(slot_);
    if constexpr (stored<Data>::is_string) {
      std::string tmp;
      return std::string(a_.view_str(s, tmp));
    } else {
      return s;
    }
  }
  operator Data() const { return get(); }  // NOLINT: a proxy converts implicitly
  // Reads a member of a struct value: it->second->field (a copy).
  arrow_proxy<Data> operator->() const { return {get()}; }
  // Whether this proxy writes to the pool (false for copies).
  [[nodiscard]] bool bound() const noexcept { return slot_ != nullptr; }

  // Compound assignment: load, apply, store (one wrap).
#define SW_DATA_REF_OP(op)                          \
  template <class U>                                \
    requires requires(Data d, const U& u) { d op u; } \
  data_ref& operator op(const U& u) {               \
    Data v = get();                                 \
    v op u;                                         \
    return *this = v;                               \
  }
  SW_DATA_REF_OP(+=)
  SW_DATA_REF_OP(-=)
  SW_DATA_REF_OP(*=)
  SW_DATA_REF_OP(/=)
  SW_DATA_REF_OP(%=)
  SW_DATA_REF_OP(&=)
  SW_DATA_REF_OP(|=)
  SW_DATA_REF_OP(^=)
  SW_DATA_REF_OP(<<=)
  SW_DATA_REF_OP(>>=)
#undef SW_DATA_REF_OP
  data_ref& operator++()
    requires requires(Data d) { ++d; }
  {
    Data v = get();
    return *this = ++v;
  }
  data_ref& operator--()
    requires requires(Data d) { --d; }
  {
    Data v = get();
    return *this = --v;
  }
  Data operator++(int)
    requires requires(Data d) { ++d; }
  {
    Data v = get();
    ++*this;
    return v;
  }
  Data operator--(int)
    requires requires(Data d) { --d; }
  {
    Data v = get();
    --*this;
    return v;
  }

  friend bool operator==(const data_ref& x, const data_ref& y) { return x.get() == y.get(); }
  template <class U>
    requires(!std::is_same_v<U, data_ref>) && requires(const Data& d, const U& u) {
      { d == u } -> std::convertible_to<bool>;
    }
  friend bool operator==(const data_ref& x, const U& y) {
    return x.get() == y;
  }
  template <class U>
    requires(!std::is_same_v<U, data_ref>) && requires(const Data& d, const U& u) { d <=> u; }
  friend auto operator<=>(const data_ref& x, const U& y) {
    return x.get() <=> y;
  }
  friend auto operator<=>(const data_ref& x, const data_ref& y)
    requires std::three_way_comparable<Data>
  {
    return x.get() <=> y.get();
  }
  friend std::ostream& operator<<(std::ostream& os, const data_ref& r)
    requires requires(std::ostream& o, const Data& d) { o << d; }
  {
    return os << r.get();
  }

 private:
  template <class, class, class, class, bool, bool>
  friend class ::softwrap::btree;
  template <class, class>
  friend struct ref_pair;
  void set(const Data& v) {
    if (!slot_) {
      value_ = v;
      return;
    }
    wrap w(a_.handle());
    if constexpr (stored<Data>::is_string) {
      const SD old = a_.ld(slot_);
      a_.st(slot_, a_.make_str(v));
      a_.free_str(old);
    } else {
      a_.st(slot_, v);
    }
    w.commit();
  }
  // Points this proxy at another slot (the iterator's cache).
  void rebind(accessor a, SD* slot) {
    a_ = a;
    slot_ = slot;
  }

  accessor a_;
  SD* slot_ = nullptr;
  Data value_{};
};

// What a map iterator's operator* refers to (see the top of the file).
template <class Key, class Data>
struct ref_pair {
  Key first{};
  data_ref<Data> second;

  ref_pair() = default;
  ref_pair(const ref_pair&) = default;  // a copy: the value, detached
  ref_pair(Key k, Data d) : first(std::move(k)), second() { second.value_ = std::move(d); }
  // *it = value_type(k, d): stores d; k must equal the element's key (a
  // key cannot change in place), else error(SW_EINVAL).
  ref_pair& operator=(const std::pair<Key, Data>& v) {
    if (!(v.first == first)) throw error(SW_EINVAL, "btree: *it = pair with a different key (erase and insert instead)");
    second = v.second;
    return *this;
  }
  ref_pair& operator=(const ref_pair& o) { return *this = std::pair<Key, Data>(o); }
  operator std::pair<Key, Data>() const { return {first, second.get()}; }  // NOLINT

  friend bool operator==(const ref_pair& x, const ref_pair& y) {
    return x.first == y.first && x.second.get() == y.second.get();
  }
  friend bool operator==(const ref_pair& x, const std::pair<Key, Data>& y) {
    return x.first == y.first && x.second.get() == y.second;
  }
  friend bool operator<(const ref_pair& x, const ref_pair& y) {
    return std::pair<Key, Data>(x) < std::pair<Key, Data>(y);
  }
};

// Holds an iterator's ref_pair; copying an iterator does not copy it (a
// copy would load the value).
template <class T>
struct iter_cache {
  iter_cache() = default;
  iter_cache(const iter_cache&) {}
  iter_cache& operator=(const iter_cache&) { return *this; }
  T v;
};

}  // namespace softwrap::btree_detail

#endif  // SOFTWRAP_BTREE_REF_HPP_
