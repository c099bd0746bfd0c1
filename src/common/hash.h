// hash.h — the checksums of on-media structures and the alias-table hash.
//
// Log frames are checksummed while they are written, one 8-byte word at a
// time, so the checksum is a word-incremental mix (multiply-xorshift, in the
// spirit of wyhash/xxh64's rounds) rather than a byte-serial CRC.  It is for
// detecting torn and stale data, not an adversary.
#ifndef SOFTWRAP_COMMON_HASH_H_
#define SOFTWRAP_COMMON_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace softwrap {

inline constexpr uint64_t kHashSeed = 0x9E3779B97F4A7C15ull;

inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return x;
}

// Incremental word hash: h = hash_word(h, w) for each word.
inline uint64_t hash_word(uint64_t h, uint64_t w) {
  h ^= w + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xD6E8FEB86659FD93ull;
}

inline uint64_t hash_finish(uint64_t h) { return mix64(h) | 1;  /* never 0 */ }

// Hash of an arbitrary byte range (tail bytes zero-padded).
inline uint64_t hash64(const void* data, size_t n, uint64_t seed = kHashSeed) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed ^ n;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = hash_word(h, w);
    p += 8;
    n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = hash_word(h, w);
  }
  return hash_finish(h);
}

}  // namespace softwrap

#endif  // SOFTWRAP_COMMON_HASH_H_
