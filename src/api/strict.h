// strict.h — reporting API misuse, and strict mode.
//
// Misuse (a NULL or closed pool, an address outside the pool or misaligned,
// closing a wrap that is not open, a store outside a wrap on a pool opened
// with SW_CONFIG_REQUIRE_WRAP, ...) is reported like any failure: an SW_E*
// code and a message in the thread's error slot.  Calls that return void or
// a loaded value can only report it there, where a program that does not
// check sw_errno() never looks.  In strict mode (SW_CONFIG_STRICT or
// SOFTWRAP_STRICT=1) misuse instead prints the message and a backtrace to
// stderr and aborts the process, so the bug shows at the line that made it.
//
// Strict mode also runs two checks that cost something and are therefore
// off otherwise: WordClaims (below) catches a store to a word that another
// thread's open wrap has stored to — two wraps touching one word at once,
// which "close before you unlock" forbids — and the softwrap engine's
// retirement compares each home location with the value it had when it was
// aliased, catching plain (non-sw_store) stores that retirement would
// silently overwrite (alias_ring.cc).
#ifndef SOFTWRAP_API_STRICT_H_
#define SOFTWRAP_API_STRICT_H_

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace softwrap {

// Sets the thread's error to (code, message) and returns code; in strict
// mode prints the message and aborts instead.
int misuse(bool strict, int code, const char* fmt, ...) __attribute__((format(printf, 3, 4), cold));
// SOFTWRAP_STRICT=1 in the environment: strictness of calls that have no
// pool to ask (a NULL pool argument).
bool process_strict();

// The 8-byte words that open wraps have stored to, and which wrap (owner)
// each belongs to; strict mode only.  A wrap claims each word it stores to
// and releases them all when it ends.
class WordClaims {
 public:
  // Claims the words overlapping [off, off+n) for owner, appending new
  // claims to *mine.  Returns false, with *word set, if a word is held by
  // another owner (nothing more is claimed then).
  bool claim(uint64_t off, uint64_t n, const void* owner, std::vector<uint64_t>* mine, uint64_t* word);
  // Releases every word in *mine (held by owner) and clears it.
  void release(const void* owner, std::vector<uint64_t>* mine);

 private:
  static constexpr unsigned kShards = 64;
  struct Shard {
    std::mutex mu;
    std::unordered_map<uint64_t, const void*> owner;
  };
  static unsigned shard_of(uint64_t w) { return static_cast<unsigned>((w >> 3) * 0x9E3779B97F4A7C15ull >> 58); }
  Shard shards_[kShards];
};

}  // namespace softwrap

#endif  // SOFTWRAP_API_STRICT_H_
