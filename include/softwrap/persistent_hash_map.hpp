// persistent_hash_map.hpp — softwrap::persistent_hash_map<K, V>: a hash
// map of trivially copyable keys and values in a softwrap pool (the
// workshop paper's WrapMap): put, get, remove and iteration, each mutating
// call a wrap (flattened into the caller's open wrap).
//
//     softwrap::persistent_hash_map<uint64_t, double> m(pl);  // keep m.header_offset()
//     m.put(7, 1.5);
//     std::optional<double> v = m.get(7);
//     softwrap::run(pl, [&] { m.remove(7); m.put(8, 2.5); });  // one unit
//
// Approach.  Separate chaining: a bucket array of entry offsets and one
// pool allocation per entry {next, hash, key, value}; the header holds
// the size, the bucket count and the bucket array's offset.  When the size
// exceeds the bucket count, put() doubles the buckets and relinks every
// entry, inside its own wrap (so a crash or abort during a rehash leaves
// the old table).  Entries never move, which keeps put/remove to a handful
// of word stores.  All reads go through sw_load*/sw_read.  Hash and
// KeyEqual must give the same results in every run (std::hash of integers
// does).  Not thread-safe; iterators are invalidated by put and remove.
#ifndef SOFTWRAP_PERSISTENT_HASH_MAP_HPP_
#define SOFTWRAP_PERSISTENT_HASH_MAP_HPP_

#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>

#include "softwrap/softwrap.hpp"

namespace softwrap {

template <class K, class V, class Hash = std::hash<K>, class KeyEqual = std::equal_to<K>>
class persistent_hash_map {
  static_assert(std::is_trivially_copyable_v<K> && std::is_trivially_copyable_v<V>,
                "persistent_hash_map needs trivially copyable keys and values");
  static_assert(alignof(K) <= 8 && alignof(V) <= 8);

  struct header {
    uint64_t magic;
    uint32_t version;
    uint32_t key_size;
    uint32_t value_size;
    uint32_t reserved;
    uint64_t size;
    uint64_t bucket_count;  // a power of two
    uint64_t buckets;       // offset of uint64_t[bucket_count]
  };
  struct entry {
    uint64_t next;
    uint64_t hash;
    K key;
    V value;
  };
  static constexpr uint64_t kMagic = 0x3150414d48415753ull;  // "SWHAMAP1"
  static constexpr uint64_t kInitialBuckets = 16;

 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using size_type = size_t;

  // Forward iterator over the entries (in no particular order); yields
  // pairs by value.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::pair<K, V>;
    using difference_type = std::ptrdiff_t;
    using reference = value_type;
    using pointer = void;

    const_iterator() = default;
    value_type operator*() const {
      const entry* e = m_->at<entry>(e_);
      return {detail::load_value(m_->h_, &e->key), detail::load_value(m_->h_, &e->value)};
    }
    K key() const { return detail::load_value(m_->h_, &m_->at<entry>(e_)->key); }
    V value() const { return detail::load_value(m_->h_, &m_->at<entry>(e_)->value); }
    const_iterator& operator++() {
      e_ = sw_load64(m_->h_, &m_->at<entry>(e_)->next);
      if (!e_) seek(b_ + 1);
      return *this;
    }
    const_iterator operator++(int) {
      auto t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const const_iterator& x, const const_iterator& y) noexcept {
      return x.e_ == y.e_;
    }

   private:
    friend class persistent_hash_map;
    explicit const_iterator(const persistent_hash_map* m) : m_(m) {}
    // The first entry in bucket b or later (or end).
    void seek(uint64_t b) {
      const uint64_t n = sw_load64(m_->h_, &m_->hdr()->bucket_count);
      const uint64_t* bk = m_->buckets();
      for (; b < n; ++b) {
        if ((e_ = sw_load64(m_->h_, &bk[b])) != 0) {
          b_ = b;
          return;
        }
      }
      e_ = 0;
      b_ = n;
    }
    const persistent_hash_map* m_ = nullptr;
    uint64_t b_ = 0;
    uint64_t e_ = 0;
  };
  using iterator = const_iterator;

  // Creates an empty map (in the caller's wrap or one of its own).
  explicit persistent_hash_map(pool& pl, const Hash& hash = Hash(), const KeyEqual& eq = KeyEqual())
      : h_(pl.handle()), hash_(hash), eq_(eq) {
    wrap w(pl);
    void* m = sw_pmalloc(h_, sizeof(header));
    void* b = sw_pzalloc(h_, kInitialBuckets * sizeof(uint64_t));
    if (!m || !b) detail::throw_last();
    header hd{kMagic, 1, static_cast<uint32_t>(sizeof(K)), static_cast<uint32_t>(sizeof(V)), 0, 0,
              kInitialBuckets, sw_pool_offset(h_, b)};
    detail::check(sw_write(h_, m, &hd, sizeof hd));
    w.commit();
    hdr_ = sw_pool_offset(h_, m);
  }
  // Attaches to an existing map; throws error(SW_EINVAL) if there is no
  // map of these key and value sizes at header_offset.
  persistent_hash_map(pool& pl, uint64_t header_offset, const Hash& hash = Hash(),
                      const KeyEqual& eq = KeyEqual())
      : h_(pl.handle()), hdr_(header_offset), hash_(hash), eq_(eq) {
    if (header_offset % 8 || !pl.contains(pl.ptr(header_offset), sizeof(header)))
      throw error(SW_EINVAL, "persistent_hash_map header offset is outside the pool");
    header hd;
    detail::check(sw_read(h_, &hd, hdr(), sizeof hd));
    if (hd.magic != kMagic || hd.version != 1 || hd.key_size != sizeof(K) || hd.value_size != sizeof(V))
      throw error(SW_EINVAL, "no persistent_hash_map of this type at the given offset");
  }

  [[nodiscard]] uint64_t header_offset() const noexcept { return hdr_; }
  [[nodiscard]] size_type size() const { return sw_load64(h_, &hdr()->size); }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] size_type bucket_count() const { return sw_load64(h_, &hdr()->bucket_count); }

  // Sets key k to v; true if k was new, false if an old value was replaced.
  // Throws error (SW_ENOSPC, ...) with the map unchanged.
  bool put(const K& k, const V& v) {
    wrap w(h_);
    const uint64_t hv = hash_(k);
    if (uint64_t e = find_entry(k, hv)) {
      detail::store_value(h_, &at<entry>(e)->value, v);
      w.commit();
      return false;
    }
    const uint64_t n = size() + 1;
    if (n > bucket_count()) rehash(2 * bucket_count());
    void* m = sw_pmalloc(h_, sizeof(entry));
    if (!m) detail::throw_last();
    uint64_t* slot = &buckets()[hv & (bucket_count() - 1)];
    entry e{sw_load64(h_, slot), hv, k, v};
    detail::check(sw_write(h_, m, &e, sizeof e));
    sw_store64(h_, slot, sw_pool_offset(h_, m));
    sw_store64(h_, &hdr()->size, n);
    w.commit();
    return true;
  }
  // The value of k, if present.
  [[nodiscard]] std::optional<V> get(const K& k) const {
    if (uint64_t e = find_entry(k, hash_(k))) return detail::load_value(h_, &at<entry>(e)->value);
    return std::nullopt;
  }
  [[nodiscard]] bool contains(const K& k) const { return find_entry(k, hash_(k)) != 0; }
  // Removes k; false if it was absent.
  bool remove(const K& k) {
    wrap w(h_);
    const uint64_t hv = hash_(k);
    uint64_t* link = &buckets()[hv & (bucket_count() - 1)];
    for (uint64_t e = sw_load64(h_, link); e; e = sw_load64(h_, link)) {
      entry* p = at<entry>(e);
      if (sw_load64(h_, &p->hash) == hv && eq_(detail::load_value(h_, &p->key), k)) {
        sw_store64(h_, link, sw_load64(h_, &p->next));
        detail::check(sw_pfree(h_, p));
        sw_store64(h_, &hdr()->size, size() - 1);
        w.commit();
        return true;
      }
      link = &p->next;
    }
    w.commit();
    return false;
  }
  // Removes every entry (one wrap).
  void clear() {
    wrap w(h_);
    const uint64_t n = bucket_count();
    uint64_t* bk = buckets();
    for (uint64_t b = 0; b < n; ++b) {
      for (uint64_t e = sw_load64(h_, &bk[b]); e;) {
        const uint64_t next = sw_load64(h_, &at<entry>(e)->next);
        detail::check(sw_pfree(h_, at<entry>(e)));
        e = next;
      }
    }
    detail::check(sw_memset(h_, bk, 0, n * sizeof(uint64_t)));
    sw_store64(h_, &hdr()->size, 0);
    w.commit();
  }

  const_iterator begin() const {
    const_iterator it(this);
    it.seek(0);
    return it;
  }
  const_iterator end() const { return const_iterator(this); }

 private:
  template <class T>
  T* at(uint64_t off) const {
    return static_cast<T*>(sw_pool_ptr(h_, off));
  }
  header* hdr() const { return at<header>(hdr_); }
  uint64_t* buckets() const { return at<uint64_t>(sw_load64(h_, &hdr()->buckets)); }
  uint64_t find_entry(const K& k, uint64_t hv) const {
    uint64_t e = sw_load64(h_, &buckets()[hv & (bucket_count() - 1)]);
    for (; e; e = sw_load64(h_, &at<entry>(e)->next)) {
      const entry* p = at<entry>(e);
      if (sw_load64(h_, &p->hash) == hv && eq_(detail::load_value(h_, &p->key), k)) return e;
    }
    return 0;
  }
  // In the open wrap: moves every entry to a new bucket array of n buckets.
  void rehash(uint64_t n) {
    void* nb = sw_pzalloc(h_, n * sizeof(uint64_t));
    if (!nb) detail::throw_last();
    uint64_t* fresh = static_cast<uint64_t*>(nb);
    const uint64_t old_n = bucket_count();
    uint64_t* old = buckets();
    for (uint64_t b = 0; b < old_n; ++b) {
      for (uint64_t e = sw_load64(h_, &old[b]); e;) {
        entry* p = at<entry>(e);
        const uint64_t next = sw_load64(h_, &p->next);
        uint64_t* slot = &fresh[sw_load64(h_, &p->hash) & (n - 1)];
        sw_store64(h_, &p->next, sw_load64(h_, slot));
        sw_store64(h_, slot, e);
        e = next;
      }
    }
    detail::check(sw_pfree(h_, old));
    sw_store64(h_, &hdr()->buckets, sw_pool_offset(h_, nb));
    sw_store64(h_, &hdr()->bucket_count, n);
  }

  sw_pool* h_;
  uint64_t hdr_ = 0;
  Hash hash_;
  KeyEqual eq_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_PERSISTENT_HASH_MAP_HPP_
