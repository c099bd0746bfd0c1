// relaxed_copy.h — memcpy for memory other threads may touch at once.
//
// Shadow pages are shared by all threads: one thread may copy a page while
// another writes its own object in it.  Under the isolation rule their bytes
// differ, so the result is right either way, but a plain memcpy would still
// be a data race in the C++ model (and to TSan).  These copies use relaxed
// atomic loads and stores: whole aligned words in the middle, bytes at the
// edges.  They compile to ordinary moves.
#ifndef SOFTWRAP_COMMON_RELAXED_COPY_H_
#define SOFTWRAP_COMMON_RELAXED_COPY_H_

#include <cstddef>
#include <cstdint>

namespace softwrap {

#if defined(__SANITIZE_THREAD__)
#define SOFTWRAP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SOFTWRAP_TSAN 1
#endif
#endif

inline void relaxed_copy(void* dst, const void* src, size_t n) {
#ifndef SOFTWRAP_TSAN
  // Bulk copies (whole pages read from home or a shadow page) go through
  // memcpy, which moves 32-64 bytes per instruction: on x86 a racing
  // writer can only make the copy see some bytes old and some new, which
  // the callers tolerate (see above).  Under TSan the word loop below keeps
  // the race visible to the tool as the benign atomic one it is.
  if (n >= 64) {
    __builtin_memcpy(dst, src, n);
    return;
  }
#endif
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  const bool co_aligned = ((reinterpret_cast<uintptr_t>(d) ^ reinterpret_cast<uintptr_t>(s)) & 7) == 0;
  if (co_aligned) {
    while (n && (reinterpret_cast<uintptr_t>(d) & 7)) {
      __atomic_store_n(d++, __atomic_load_n(s++, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
      --n;
    }
    for (; n >= 8; n -= 8, d += 8, s += 8) {
      __atomic_store_n(reinterpret_cast<uint64_t*>(d),
                       __atomic_load_n(reinterpret_cast<const uint64_t*>(s), __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    }
  }
  for (; n; --n) __atomic_store_n(d++, __atomic_load_n(s++, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

// A relaxed load of the aligned 1/2/4/8-byte value at p.
inline uint64_t relaxed_load(const void* p, unsigned size) {
  switch (size) {
    case 1: return __atomic_load_n(static_cast<const uint8_t*>(p), __ATOMIC_RELAXED);
    case 2: return __atomic_load_n(static_cast<const uint16_t*>(p), __ATOMIC_RELAXED);
    case 4: return __atomic_load_n(static_cast<const uint32_t*>(p), __ATOMIC_RELAXED);
    default: return __atomic_load_n(static_cast<const uint64_t*>(p), __ATOMIC_RELAXED);
  }
}

// Whether the aligned `size`-byte value at p already is v (its low bytes):
// write-combined logging's compare of a store done in place.
inline bool holds_value(const void* p, uint64_t v, unsigned size) {
  return relaxed_load(p, size) == (size == 8 ? v : v & ((uint64_t{1} << (8 * size)) - 1));
}

}  // namespace softwrap

#endif  // SOFTWRAP_COMMON_RELAXED_COPY_H_
