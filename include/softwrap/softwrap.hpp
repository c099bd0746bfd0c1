// softwrap.hpp — the C++ API of softwrap, header-only, on top of the C API
// (softwrap.h), in the spirit of libpmemobj-cpp.
//
//     struct account_root { softwrap::p<uint64_t> balance[2]; };
//
//     auto pl = softwrap::pool::open("/mnt/pmem/bank");
//     auto *r = pl.root<account_root>();
//     softwrap::run(pl, [&] {        // one wrap: all or nothing
//       r->balance[0] -= 10;
//       r->balance[1] += 10;
//     });                            // durable when run() returns
//
// Pieces:
//   error            exception carrying an SW_E* code and sw_errormsg().
//   pool             owns an sw_pool (RAII): create/open throw, close().
//   wrap             RAII scope of a wrap: commits when the scope is left
//                    normally, aborts when it is left by an exception.
//   run(pool, f)     runs f in a wrap and commits it.
//   persistent_ptr   a pool offset (8 bytes, trivially copyable): the only
//                    kind of pointer that may be stored in a pool.
//   p<T>             a "wrapped field": a T that lives in pool memory and
//                    whose reads and writes go through sw_loadN/sw_storeN
//                    (or sw_read/sw_write for other sizes).
//   make_persistent / delete_persistent   sw_pmalloc/sw_pfree in a wrap.
//
// How p<T> finds its pool.  A wrapped field must know which sw_pool its
// address belongs to.  Instead of a thread-local "current pool" (which
// breaks as soon as two pools are in use, or a field is read outside any
// scope) or a pool& argument on every access (which makes p<T> unusable as
// an ordinary field), every pool opened through this header registers its
// mapping [base, base+size) in a process-wide table; p<T> looks its own
// address up.  A per-thread one-entry cache, validated by a generation
// number, makes the lookup a load and two compares in the common case; the
// table's lock is taken only on a cache miss.  A p<T> that is not inside
// any registered pool (a copy on the stack, the DRAM staging copy built by
// make_persistent) is an ordinary variable.  Hot loops can skip the lookup
// with the get(pool&) / set(pool&, v) overloads.  Pools opened with the C
// API directly are unknown to the table: adopt them with pool(sw_pool*).
//
// Because reads of a pool-resident p<T> must see aliased (not yet retired)
// values, p<T> is deliberately *not* trivially copyable: copying one reads
// through sw_load, assigning one writes through sw_store.  Never memcpy a
// persistent object out of the pool; read its fields.  persistent_ptr is a
// plain value; a persistent_ptr stored in a pool must be a
// p<persistent_ptr<T>> field.
//
// Persistent types: objects in a pool are never constructed in place by C++
// and are never destroyed, so they must be standard-layout and trivially
// destructible (the `persistent_type` concept), with alignment <= 16 (the
// allocator's).  make_persistent builds the object in DRAM and copies its
// bytes into the wrap with sw_write.
//
// Errors: everything that can fail throws softwrap::error, except loads of
// a single word (which cannot fail for an in-pool, aligned p<T>) and
// destructors of pool.  A store that overflows the wrap's log (SW_ETOOBIG)
// rolls the wrap back inside the library; the wrap's commit then throws
// error(SW_EABORTED).
#ifndef SOFTWRAP_SOFTWRAP_HPP_
#define SOFTWRAP_SOFTWRAP_HPP_

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "softwrap/softwrap.h"

namespace softwrap {

/* ------------------------------------------------------------------ error */

// An SW_E* code with the library's message for it.
class error : public std::runtime_error {
 public:
  error(int code, const std::string& message)
      : std::runtime_error(std::string(sw_strerror(code)) + ": " + message), code_(code) {}
  // The SW_E* code (negative).
  [[nodiscard]] int code() const noexcept { return code_; }
  // Its static name, e.g. "SW_ENOSPC".
  [[nodiscard]] const char* name() const noexcept { return sw_strerror(code_); }

 private:
  int code_;
};

namespace detail {

// Throws error(code) with the calling thread's last library message.
[[noreturn]] inline void throw_error(int code) {
  const char* msg = sw_errormsg();
  throw error(code, (msg && *msg) ? msg : sw_strerror(code));
}
// Throws error for the thread's last failure (after a NULL return).
[[noreturn]] inline void throw_last() {
  int code = sw_errno();
  throw_error(code != 0 ? code : SW_EINVAL);
}
inline void check(int rc) {
  if (rc != 0) throw_error(rc);
}

// ---- the table of open pools, for p<T> (see the comment at the top).
struct pool_range {
  uintptr_t base = 0;
  size_t size = 0;
  sw_pool* handle = nullptr;
};

struct pool_registry {
  std::shared_mutex mu;
  std::vector<pool_range> pools;  // guarded by mu
  std::atomic<uint64_t> generation{1};
};

// Never destroyed, so pools closed from static destructors still find it.
inline pool_registry& registry() {
  static pool_registry* r = new pool_registry;
  return *r;
}

struct pool_cache {
  uint64_t generation = 0;
  pool_range range;
};
inline thread_local pool_cache tls_pool_cache;

inline void register_pool(sw_pool* h) {
  pool_registry& r = registry();
  std::unique_lock lock(r.mu);
  // The whole reserved range: the pool may grow into it while open.
  r.pools.push_back({reinterpret_cast<uintptr_t>(sw_pool_base(h)), sw_pool_max_size(h), h});
  r.generation.fetch_add(1, std::memory_order_release);
}

// Closes h and removes it from the table in one step, so a handle address
// reused by a concurrent open is never confused with the closed one.
inline int close_registered_pool(sw_pool* h) {
  pool_registry& r = registry();
  std::unique_lock lock(r.mu);
  int rc = sw_pool_close(h);
  if (rc == 0) {
    std::erase_if(r.pools, [h](const pool_range& e) { return e.handle == h; });
    r.generation.fetch_add(1, std::memory_order_release);
  }
  return rc;
}

// The registered pool holding [addr, addr+n), or nullptr.
inline sw_pool* pool_of(const void* addr, size_t n) noexcept {
  const auto a = reinterpret_cast<uintptr_t>(addr);
  pool_cache& c = tls_pool_cache;
  pool_registry& r = registry();
  const uint64_t gen = r.generation.load(std::memory_order_acquire);
  if (c.generation == gen && a - c.range.base < c.range.size && c.range.size - (a - c.range.base) >= n)
    return c.range.handle;
  std::shared_lock lock(r.mu);
  for (const pool_range& e : r.pools) {
    if (a - e.base < e.size && e.size - (a - e.base) >= n) {
      c.generation = r.generation.load(std::memory_order_relaxed);
      c.range = e;
      return e.handle;
    }
  }
  return nullptr;
}

// Values that travel as one aligned machine word (sw_loadN/sw_storeN).
template <class T>
inline constexpr bool is_word_value =
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) && alignof(T) >= sizeof(T);

template <class U>
using word_for = std::conditional_t<
    sizeof(U) == 1, uint8_t,
    std::conditional_t<sizeof(U) == 2, uint16_t, std::conditional_t<sizeof(U) == 4, uint32_t, uint64_t>>>;

template <class T>
T load_value(sw_pool* h, const T* addr) {
  if constexpr (is_word_value<T>) {
    using W = word_for<T>;
    W w;
    if constexpr (sizeof(T) == 1) w = sw_load8(h, addr);
    else if constexpr (sizeof(T) == 2) w = sw_load16(h, addr);
    else if constexpr (sizeof(T) == 4) w = sw_load32(h, addr);
    else w = sw_load64(h, addr);
    return std::bit_cast<T>(w);
  } else {
    std::array<unsigned char, sizeof(T)> bytes;
    check(sw_read(h, bytes.data(), addr, sizeof(T)));
    return std::bit_cast<T>(bytes);
  }
}

template <class T>
void store_value(sw_pool* h, T* addr, const T& v) {
  if constexpr (is_word_value<T>) {
    const auto w = std::bit_cast<word_for<T>>(v);
    if constexpr (sizeof(T) == 1) sw_store8(h, addr, w);
    else if constexpr (sizeof(T) == 2) sw_store16(h, addr, w);
    else if constexpr (sizeof(T) == 4) sw_store32(h, addr, w);
    else sw_store64(h, addr, w);
  } else {
    check(sw_write(h, addr, &v, sizeof(T)));
  }
}

}  // namespace detail

// Types that may live in a pool (see the comment at the top).
template <class T>
concept persistent_type = std::is_standard_layout_v<T> && std::is_trivially_destructible_v<T> &&
                          alignof(T) <= 16 && !std::is_reference_v<T>;

/* ------------------------------------------------------------------- pool */

// Owns an open pool.  Move-only.  The destructor closes the pool and
// ignores errors; call close() to see them.
class pool {
 public:
  pool() noexcept = default;
  // Adopts a handle opened with the C API (registers it for p<T>).
  explicit pool(sw_pool* handle) : h_(handle) {
    if (h_) detail::register_pool(h_);
  }
  pool(pool&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  pool& operator=(pool&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;
  ~pool() { reset(); }

  // sw_pool_create; throws error (SW_EEXIST, SW_EINVAL, SW_EIO, ...).
  [[nodiscard]] static pool create(const std::string& path, size_t size, const sw_config* cfg = nullptr) {
    sw_pool* h = sw_pool_create(path.c_str(), size, cfg);
    if (!h) detail::throw_last();
    return pool(h);
  }
  [[nodiscard]] static pool create(const std::string& path, size_t size, const sw_config& cfg) {
    return create(path, size, &cfg);
  }
  // sw_pool_open (runs recovery); throws error (SW_EFOREIGN, SW_ECORRUPT,
  // SW_EVERSION, SW_EBUSY, SW_EIO, ...).
  [[nodiscard]] static pool open(const std::string& path, const sw_config* cfg = nullptr) {
    sw_pool* h = sw_pool_open(path.c_str(), cfg);
    if (!h) detail::throw_last();
    return pool(h);
  }
  [[nodiscard]] static pool open(const std::string& path, const sw_config& cfg) { return open(path, &cfg); }

  // sw_pool_close.  On failure (SW_EBUSY: a wrap is open) throws and the
  // pool stays open.  No-op on an empty pool object.
  void close() {
    if (!h_) return;
    detail::check(detail::close_registered_pool(h_));
    h_ = nullptr;
  }

  [[nodiscard]] bool is_open() const noexcept { return h_ != nullptr; }
  explicit operator bool() const noexcept { return is_open(); }
  [[nodiscard]] sw_pool* handle() const noexcept { return h_; }

  // The root object, zeroed and allocated on first use; throws if the
  // existing root is smaller than T.
  template <persistent_type T>
  [[nodiscard]] T* root() {
    void* r = sw_pool_root(checked(), sizeof(T));
    if (!r) detail::throw_last();
    return static_cast<T*>(r);
  }

  // sw_modify: the object *obj made writable for the calling thread's open
  // wrap — plain loads and stores through the returned pointer until the
  // wrap ends, committed with it (softwrap.h, "Object writes").  Throws
  // error (SW_ENOWRAP outside a wrap, SW_ERANGE, SW_ENOMEM, ...).
  template <persistent_type T>
  [[nodiscard]] T* modify(T* obj) const {
    return static_cast<T*>(modify(static_cast<void*>(obj), sizeof(T)));
  }
  // The same for n elements starting at first (an array's slots).
  template <persistent_type T>
  [[nodiscard]] T* modify(T* first, size_t n) const {
    return static_cast<T*>(modify(static_cast<void*>(first), n * sizeof(T)));
  }
  [[nodiscard]] void* modify(void* addr, size_t bytes) const {
    void* v = sw_modify(checked(), addr, bytes);
    if (!v) detail::throw_last();
    return v;
  }

  // Retires all aliases (plain reads then see committed values).
  void quiesce() { detail::check(sw_pool_quiesce(checked())); }
  [[nodiscard]] sw_stats stats() const {
    sw_stats s{};
    detail::check(sw_pool_stats(checked(), &s));
    return s;
  }
  void reset_stats() { detail::check(sw_pool_stats_reset(checked())); }
  [[nodiscard]] sw_recovery_report recovery_report() const {
    sw_recovery_report r{};
    detail::check(sw_pool_recovery_report(checked(), &r));
    return r;
  }
  [[nodiscard]] std::string engine_name() const { return sw_pool_engine_name(checked()); }
  [[nodiscard]] std::string medium_name() const { return sw_pool_medium_name(checked()); }
  // What the platform promises and how stores are made durable (sw_pool_platform).
  [[nodiscard]] sw_pool_platform_info platform() const {
    sw_pool_platform_info r{};
    detail::check(sw_pool_platform(checked(), &r));
    return r;
  }
  // What wraps compare (write-combined logging: 1 everything, 2 ranges of
  // a page or more, 0 nothing) and what decided it (softwrap.h,
  // sw_pool_wcl).
  [[nodiscard]] int write_combined() const { return sw_pool_wcl(checked(), nullptr); }
  [[nodiscard]] std::string write_combined_why() const {
    const char* why = "";
    sw_pool_wcl(checked(), &why);
    return why;
  }

  // REQUIRES for the rest: the pool is open.

  [[nodiscard]] void* base() const noexcept { return sw_pool_base(h_); }
  [[nodiscard]] size_t size() const noexcept { return sw_pool_size(h_); }  // grows (sw_pool_create)
  [[nodiscard]] size_t max_size() const noexcept { return sw_pool_max_size(h_); }
  [[nodiscard]] bool contains(const void* addr, size_t n = 1) const noexcept {
    const auto a = reinterpret_cast<uintptr_t>(addr);
    const auto b = reinterpret_cast<uintptr_t>(base());
    const size_t s = size();
    return a >= b && a - b < s && s - (a - b) >= n;
  }
  [[nodiscard]] uint64_t offset(const void* addr) const noexcept { return sw_pool_offset(h_, addr); }
  [[nodiscard]] void* ptr(uint64_t off) const noexcept { return sw_pool_ptr(h_, off); }

 private:
  sw_pool* checked() const {
    if (!h_) throw error(SW_EINVAL, "the pool object is empty (closed or moved from)");
    return h_;
  }
  void reset() noexcept {
    if (h_) detail::close_registered_pool(h_);  // errors ignored: see close()
    h_ = nullptr;
  }
  sw_pool* h_ = nullptr;
};

/* ------------------------------------------------------------------- wrap */

// One nesting level of the calling thread's wrap on a pool.
//
// The constructor opens it (sw_wrap_open).  Leaving the scope normally
// commits it (sw_wrap_close) and throws error if that fails, e.g.
// SW_EABORTED after SW_ETOOBIG; leaving it because an exception unwinds
// aborts the whole wrap (nested wraps are flattened, so an abort at any
// level discards the outermost wrap).  If a nested scope already aborted
// the wrap, commit() and a normal scope exit throw error(SW_EABORTED).
// Not copyable or movable; use on one thread.
class wrap {
 public:
  explicit wrap(pool& pl) : wrap(pl.handle()) {}
  explicit wrap(sw_pool* handle) : h_(handle), exceptions_(std::uncaught_exceptions()) {
    if (!h_) throw error(SW_EINVAL, "cannot open a wrap on an empty pool object");
    detail::check(sw_wrap_open(h_));
    depth_ = sw_wrap_depth(h_);
    active_ = true;
  }
  wrap(const wrap&) = delete;
  wrap& operator=(const wrap&) = delete;

  ~wrap() noexcept(false) {
    if (!active_) return;
    if (std::uncaught_exceptions() > exceptions_) {
      active_ = false;
      if (sw_wrap_depth(h_) >= depth_) (void)sw_wrap_abort(h_);  // nonatomic: SW_ENOTSUP, ended anyway
      return;
    }
    commit();
  }

  // Closes this level; at the outermost level the wrap is durable when
  // commit() returns.  Throws error; the scope has ended either way.
  void commit() {
    end_scope();
    if (sw_wrap_depth(h_) < depth_)
      throw error(SW_EABORTED, "the wrap was aborted by a nested scope");
    detail::check(sw_wrap_close(h_));
  }

  // Discards the whole wrap (outermost level included).  Throws
  // error(SW_ENOTSUP) under the nonatomic engine, whose stores stay; the
  // wrap has ended either way.
  void abort() {
    end_scope();
    if (sw_wrap_depth(h_) < depth_) return;  // already aborted by a nested scope
    detail::check(sw_wrap_abort(h_));
  }

  [[nodiscard]] bool active() const noexcept { return active_; }
  // Nesting depth of the calling thread's wrap on pl (0 = none).
  [[nodiscard]] static int depth(const pool& pl) noexcept { return sw_wrap_depth(pl.handle()); }

 private:
  void end_scope() {
    if (!active_) throw error(SW_ENOWRAP, "this wrap scope has already ended");
    active_ = false;
  }
  sw_pool* h_;
  int exceptions_;
  int depth_ = 0;
  bool active_ = false;
};

// Runs f() in a wrap on pl and commits; returns what f returns.  If f
// throws, the wrap is aborted and the exception propagates.
template <class F>
auto run(pool& pl, F&& f) -> std::invoke_result_t<F&> {
  wrap w(pl);
  if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
    std::invoke(f);
    w.commit();
  } else {
    std::invoke_result_t<F&> r = std::invoke(f);
    w.commit();
    return r;
  }
}

/* --------------------------------------------------------- persistent_ptr */

// A typed pool offset: 8 bytes, trivially copyable, valid across runs and
// mapping addresses.  Null is offset 0.
template <class T>
class persistent_ptr {
 public:
  using element_type = T;

  constexpr persistent_ptr() noexcept = default;
  constexpr persistent_ptr(std::nullptr_t) noexcept {}
  constexpr explicit persistent_ptr(uint64_t offset) noexcept : off_(offset) {}
  // From an address in pl (nullptr gives null); throws error(SW_ERANGE)
  // for an address outside the pool.
  persistent_ptr(const pool& pl, T* addr) {
    if (!addr) return;
    if (!pl.contains(addr, sizeof(std::conditional_t<std::is_void_v<T>, char, T>)))
      throw error(SW_ERANGE, "address is not inside the pool");
    off_ = pl.offset(addr);
  }
  // Adds const or erases the type (never changes the offset).
  template <class U>
    requires(!std::is_same_v<U, T> &&
             (std::is_same_v<std::remove_cv_t<U>, std::remove_cv_t<T>> || std::is_void_v<T>) &&
             std::is_convertible_v<U*, T*>)
  constexpr persistent_ptr(persistent_ptr<U> o) noexcept : off_(o.offset()) {}

  // The object's address in pl's current mapping (nullptr for null).
  [[nodiscard]] T* get(const pool& pl) const noexcept { return static_cast<T*>(pl.ptr(off_)); }
  [[nodiscard]] constexpr uint64_t offset() const noexcept { return off_; }
  constexpr explicit operator bool() const noexcept { return off_ != 0; }
  friend constexpr bool operator==(persistent_ptr a, persistent_ptr b) noexcept = default;

 private:
  uint64_t off_ = 0;
};
static_assert(sizeof(persistent_ptr<int>) == 8);
static_assert(std::is_trivially_copyable_v<persistent_ptr<int>>);
static_assert(std::is_standard_layout_v<persistent_ptr<int>>);

/* ---------------------------------------------------------------------- p */

// A wrapped field: a trivially copyable T in pool memory.  Reads use
// sw_load*/sw_read, writes sw_store*/sw_write (joining the calling
// thread's open wrap, or forming a wrap of their own outside one).  The
// pool is found from the field's own address (see the top of this file);
// outside every registered pool, p<T> is a plain variable.
template <class T>
class p {
  static_assert(std::is_trivially_copyable_v<T>, "p<T> needs a trivially copyable T");
  static_assert(!std::is_const_v<T> && !std::is_volatile_v<T>);

 public:
  using value_type = T;

  p() : p(T{}) {}
  p(const T& v) { assign(v); }  // NOLINT(google-explicit-constructor): p<int> x = 1;
  p(const p& o) { assign(o.get()); }
  p& operator=(const p& o) {
    assign(o.get());
    return *this;
  }
  p& operator=(const T& v) {
    assign(v);
    return *this;
  }
  ~p() = default;

  [[nodiscard]] T get() const {
    if (sw_pool* h = detail::pool_of(&v_, sizeof(T))) return detail::load_value(h, &v_);
    return v_;
  }
  void set(const T& v) { assign(v); }
  // Variants that skip the address lookup.  REQUIRES: the field is in pl.
  [[nodiscard]] T get(const pool& pl) const { return detail::load_value(pl.handle(), &v_); }
  void set(const pool& pl, const T& v) { detail::store_value(pl.handle(), &v_, v); }

  operator T() const { return get(); }  // NOLINT(google-explicit-constructor)

  // Read-modify-write helpers for arithmetic values.
  p& operator+=(const T& d) requires std::is_arithmetic_v<T> { return *this = T(get() + d); }
  p& operator-=(const T& d) requires std::is_arithmetic_v<T> { return *this = T(get() - d); }
  p& operator*=(const T& d) requires std::is_arithmetic_v<T> { return *this = T(get() * d); }
  p& operator/=(const T& d) requires std::is_arithmetic_v<T> { return *this = T(get() / d); }
  p& operator|=(const T& d) requires std::is_integral_v<T> { return *this = T(get() | d); }
  p& operator&=(const T& d) requires std::is_integral_v<T> { return *this = T(get() & d); }
  p& operator^=(const T& d) requires std::is_integral_v<T> { return *this = T(get() ^ d); }
  p& operator++() requires std::is_arithmetic_v<T> { return *this += T(1); }
  p& operator--() requires std::is_arithmetic_v<T> { return *this -= T(1); }
  T operator++(int) requires std::is_arithmetic_v<T> {
    T old = get();
    *this = T(old + 1);
    return old;
  }
  T operator--(int) requires std::is_arithmetic_v<T> {
    T old = get();
    *this = T(old - 1);
    return old;
  }

 private:
  void assign(const T& v) {
    if (sw_pool* h = detail::pool_of(&v_, sizeof(T))) detail::store_value(h, &v_, v);
    else v_ = v;
  }
  T v_;
};

/* ------------------------------------------------------------- allocation */

// Allocates a T in pl and initializes it with T(args...), in the calling
// thread's open wrap or, without one, in a wrap of its own: if that wrap
// aborts, the allocation never happened.  Throws error (SW_ENOSPC, ...);
// an exception from T's constructor aborts the wrap.
template <persistent_type T, class... Args>
[[nodiscard]] persistent_ptr<T> make_persistent(pool& pl, Args&&... args) {
  wrap w(pl);
  void* mem = sw_pmalloc(pl.handle(), sizeof(T));
  if (!mem) detail::throw_last();
  // Built in DRAM (p<T> members are then plain variables), copied in whole.
  constexpr size_t kStackLimit = 4096;
  if constexpr (sizeof(T) <= kStackLimit) {
    alignas(T) unsigned char staging[sizeof(T)];
    ::new (static_cast<void*>(staging)) T(std::forward<Args>(args)...);
    detail::check(sw_write(pl.handle(), mem, staging, sizeof(T)));
  } else {
    auto staging = std::make_unique<unsigned char[]>(sizeof(T));  // new[] is 16-aligned
    ::new (static_cast<void*>(staging.get())) T(std::forward<Args>(args)...);
    detail::check(sw_write(pl.handle(), mem, staging.get(), sizeof(T)));
  }
  w.commit();
  return persistent_ptr<T>(pl.offset(mem));
}

// Frees an object from make_persistent, in the open wrap or a wrap of its
// own (takes effect at commit).  Null is a no-op.  Throws error(SW_EINVAL)
// for a pointer that is not a live allocation.
template <persistent_type T>
void delete_persistent(pool& pl, persistent_ptr<T> ptr) {
  if (!ptr) return;
  wrap w(pl);
  detail::check(sw_pfree(pl.handle(), const_cast<std::remove_cv_t<T>*>(ptr.get(pl))));
  w.commit();
}

}  // namespace softwrap

#endif  // SOFTWRAP_SOFTWRAP_HPP_
