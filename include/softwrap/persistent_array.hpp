// persistent_array.hpp — softwrap::persistent_array<T>: a growable array
// of trivially copyable T in a softwrap pool (the workshop paper's
// WrapArray).
//
//     softwrap::persistent_array<uint64_t> a(pl);   // new; keep a.header_offset()
//     a.push_back(7);
//     a[0] = a[0] + 1;                              // each access is wrapped
//     softwrap::run(pl, [&] { a.resize(100); a[99] = 1; });   // one unit
//     softwrap::run(pl, [&] { auto s = a.modify(0, a.size()); std::sort(s.begin(), s.end()); });
//     softwrap::persistent_array<uint64_t> again(pl, offset);  // after reopen
//
// Approach.  A header object in the pool (magic, element size, size,
// capacity, offset of the element block) and one element block from
// sw_pmalloc.  Element reads and writes go through sw_load*/sw_store* (or
// sw_read/sw_write for other sizes); every mutating call is a wrap, joined
// to the caller's open wrap when there is one, so a caller can group many
// of them atomically.  Growing allocates a block of twice the capacity,
// copies the elements over in 4 KiB sw_read/sw_write chunks and frees the
// old block, all in the same wrap — so a very large array can outgrow one
// wrap's log (SW_EABORTED; reserve() early or raise lane_size).  The array
// object holds no state beyond the pool handle and the header offset, so
// aborts and crashes cannot leave it stale.  Not thread-safe.
#ifndef SOFTWRAP_PERSISTENT_ARRAY_HPP_
#define SOFTWRAP_PERSISTENT_ARRAY_HPP_

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "softwrap/softwrap.hpp"

namespace softwrap {

template <class T>
class persistent_array {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "persistent_array needs a trivially copyable, default constructible T");
  static_assert(alignof(T) <= 16);

  struct header {
    uint64_t magic;
    uint32_t version;
    uint32_t elem_size;
    uint64_t size;
    uint64_t capacity;
    uint64_t data;  // pool offset of the element block (0 when capacity 0)
  };
  static constexpr uint64_t kMagic = 0x3159415252415753ull;  // "SWARRAY1"

 public:
  using value_type = T;
  using size_type = size_t;

  // An element of the array: reads and assigns through the wrap API.
  class reference {
   public:
    operator T() const { return a_->get(i_); }  // NOLINT(google-explicit-constructor)
    reference& operator=(const T& v) {
      a_->set(i_, v);
      return *this;
    }
    reference& operator=(const reference& o) { return *this = static_cast<T>(o); }

   private:
    friend class persistent_array;
    reference(persistent_array* a, size_t i) : a_(a), i_(i) {}
    persistent_array* a_;
    size_t i_;
  };

  // Creates an empty array (in the caller's wrap or one of its own).
  // Throws error (SW_ENOSPC).
  explicit persistent_array(pool& pl) : h_(pl.handle()) {
    wrap w(pl);
    void* m = sw_pmalloc(h_, sizeof(header));
    if (!m) detail::throw_last();
    header hd{kMagic, 1, static_cast<uint32_t>(sizeof(T)), 0, 0, 0};
    detail::check(sw_write(h_, m, &hd, sizeof hd));
    hdr_ = sw_pool_offset(h_, m);
    w.commit();
  }
  // Attaches to an existing array; throws error(SW_EINVAL) if there is no
  // array of this element size at header_offset.
  persistent_array(pool& pl, uint64_t header_offset) : h_(pl.handle()), hdr_(header_offset) {
    if (header_offset % 8 || !pl.contains(pl.ptr(header_offset), sizeof(header)))
      throw error(SW_EINVAL, "persistent_array header offset is outside the pool");
    header hd;
    detail::check(sw_read(h_, &hd, hdr(), sizeof hd));
    if (hd.magic != kMagic || hd.version != 1 || hd.elem_size != sizeof(T))
      throw error(SW_EINVAL, "no persistent_array of this type at the given offset");
  }

  [[nodiscard]] uint64_t header_offset() const noexcept { return hdr_; }
  [[nodiscard]] size_type size() const { return sw_load64(h_, &hdr()->size); }
  [[nodiscard]] size_type capacity() const { return sw_load64(h_, &hdr()->capacity); }
  [[nodiscard]] bool empty() const { return size() == 0; }

  // Element i; throws std::out_of_range past the end.
  [[nodiscard]] T get(size_type i) const {
    check_index(i);
    return detail::load_value(h_, elem(i));
  }
  void set(size_type i, const T& v) {
    check_index(i);
    detail::store_value(h_, elem(i), v);  // a store outside a wrap is a wrap
  }
  [[nodiscard]] T operator[](size_type i) const { return get(i); }
  [[nodiscard]] reference operator[](size_type i) { return reference(this, i); }
  // Elements [first, first + n) as a writable span for the calling
  // thread's open wrap (sw_modify): plain loads and stores, std::sort or a
  // memmove over them, committed with the wrap; an abort drops them.  The
  // span is valid until the wrap ends or the array grows in it (growth
  // moves the elements; take a new span after push_back, resize or
  // reserve).  Throws std::out_of_range past the end, error(SW_ENOWRAP)
  // outside a wrap.
  [[nodiscard]] std::span<T> modify(size_type first, size_type n) {
    if (n == 0) return {};
    if (first > size() || n > size() - first) throw std::out_of_range("persistent_array::modify past the end");
    void* v = sw_modify(h_, elem(first), n * sizeof(T));
    if (!v) detail::throw_last();
    return {static_cast<T*>(v), n};
  }
  [[nodiscard]] T front() const { return get(0); }
  [[nodiscard]] T back() const { return get(size() - 1); }

  void push_back(const T& v) {
    wrap w(h_);
    const size_type n = size();
    if (n == capacity()) grow(n + 1);
    detail::store_value(h_, elem(n), v);
    sw_store64(h_, &hdr()->size, n + 1);
    w.commit();
  }
  // Removes the last element; throws std::out_of_range when empty.
  void pop_back() {
    const size_type n = size();
    if (n == 0) throw std::out_of_range("persistent_array::pop_back on an empty array");
    sw_store64(h_, &hdr()->size, n - 1);
  }
  // New elements (when growing) are `fill`.
  void resize(size_type n, const T& fill = T()) {
    wrap w(h_);
    const size_type old = size();
    if (n > capacity()) grow(n);
    if (n > old) {
      std::vector<T> buf(std::min<size_type>(n - old, kChunk / sizeof(T) + 1), fill);
      for (size_type i = old; i < n;) {
        const size_type c = std::min<size_type>(buf.size(), n - i);
        detail::check(sw_write(h_, elem(i), buf.data(), c * sizeof(T)));
        i += c;
      }
    }
    sw_store64(h_, &hdr()->size, n);
    w.commit();
  }
  void reserve(size_type n) {
    if (n <= capacity()) return;
    wrap w(h_);
    grow(n);
    w.commit();
  }
  void clear() { sw_store64(h_, &hdr()->size, 0); }
  // All elements, read into DRAM.
  [[nodiscard]] std::vector<T> to_vector() const {
    std::vector<T> v(size());
    if (!v.empty()) detail::check(sw_read(h_, v.data(), elem(0), v.size() * sizeof(T)));
    return v;
  }
  // Frees the element block and the header (in a wrap); the object must
  // not be used afterwards.
  void destroy() {
    wrap w(h_);
    if (uint64_t d = sw_load64(h_, &hdr()->data)) detail::check(sw_pfree(h_, sw_pool_ptr(h_, d)));
    detail::check(sw_pfree(h_, hdr()));
    w.commit();
  }

 private:
  static constexpr size_t kChunk = 4096;
  header* hdr() const { return static_cast<header*>(sw_pool_ptr(h_, hdr_)); }
  T* elem(size_type i) const {
    return static_cast<T*>(sw_pool_ptr(h_, sw_load64(h_, &hdr()->data))) + i;
  }
  void check_index(size_type i) const {
    if (i >= size()) throw std::out_of_range("persistent_array index out of range");
  }
  // In the open wrap: a block of at least `need` elements replaces the old.
  void grow(size_type need) {
    const size_type cap = std::max<size_type>({need, 2 * capacity(), 8});
    void* nb = sw_pmalloc(h_, cap * sizeof(T));
    if (!nb) detail::throw_last();
    const uint64_t old = sw_load64(h_, &hdr()->data);
    if (old) {
      const char* src = static_cast<const char*>(sw_pool_ptr(h_, old));
      char* dst = static_cast<char*>(nb);
      std::vector<char> buf(kChunk);
      const size_t bytes = size() * sizeof(T);
      for (size_t at = 0; at < bytes; at += kChunk) {
        const size_t c = std::min(kChunk, bytes - at);
        detail::check(sw_read(h_, buf.data(), src + at, c));
        detail::check(sw_write(h_, dst + at, buf.data(), c));
      }
      detail::check(sw_pfree(h_, sw_pool_ptr(h_, old)));
    }
    sw_store64(h_, &hdr()->data, sw_pool_offset(h_, nb));
    sw_store64(h_, &hdr()->capacity, cap);
  }

  sw_pool* h_;
  uint64_t hdr_ = 0;
};

}  // namespace softwrap

#endif  // SOFTWRAP_PERSISTENT_ARRAY_HPP_
