// random_words.h — what the programs that count a wrap's instructions or
// cache lines share (store_cost.cc, cold_wrap.cc): the stream of random
// word indexes their wraps store to, and the engines' names.
#ifndef SOFTWRAP_BENCH_RANDOM_WORDS_H_
#define SOFTWRAP_BENCH_RANDOM_WORDS_H_

#include <cstdint>
#include <string>

#include "softwrap/softwrap.h"

namespace softwrap::bench {

// xorshift64 (13/7/17) from a fixed seed: indexes into an array of
// `words` words (a power of two), the same sequence on every run.
template <uint64_t words>
struct WordStream {
  static_assert((words & (words - 1)) == 0, "a power of two");
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s & (words - 1);
  }
};

// The engine a command-line name means; false for none.
inline bool engine_of(const std::string& s, sw_engine_kind* e) {
  if (s == "softwrap") *e = SW_ENGINE_SOFTWRAP;
  else if (s == "softwrap-local") *e = SW_ENGINE_SOFTWRAP_LOCAL;
  else if (s == "undo") *e = SW_ENGINE_UNDO;
  else if (s == "undo-themis") *e = SW_ENGINE_UNDO_THEMIS;
  else if (s == "nonatomic") *e = SW_ENGINE_NONATOMIC;
  else return false;
  return true;
}

}  // namespace softwrap::bench

#endif  // SOFTWRAP_BENCH_RANDOM_WORDS_H_
