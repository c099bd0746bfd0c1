// bench_common.h — what the B+tree benchmarks (sw_bench_btree,
// sw_bench_kv) share: list and engine parsing, pre-faulting a pool's
// mapping, and the restart that makes libpmem treat /dev/shm as pmem.
#ifndef SOFTWRAP_BENCH_BTREE_BENCH_COMMON_H_
#define SOFTWRAP_BENCH_BTREE_BENCH_COMMON_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace softwrap::bench {

// A decimal count: false unless text is all digits (for the programs'
// option parsers).
inline bool parse_count(const std::string& text, uint64_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-') return false;
  *out = v;
  return true;
}

// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  for (size_t at = 0;;) {
    const size_t c = s.find(',', at);
    v.push_back(s.substr(at, c == std::string::npos ? std::string::npos : c - at));
    if (c == std::string::npos) return v;
    at = c + 1;
  }
}

// An engine's name -> its kind; exits with status 2 on an unknown name.
inline sw_engine_kind engine_kind(const std::string& e) {
  if (e == "softwrap") return SW_ENGINE_SOFTWRAP;
  if (e == "softwrap-local") return SW_ENGINE_SOFTWRAP_LOCAL;
  if (e == "undo") return SW_ENGINE_UNDO;
  if (e == "nonatomic") return SW_ENGINE_NONATOMIC;
  std::fprintf(stderr, "unknown engine %s\n", e.c_str());
  std::exit(2);
}

// Faults the whole mapping in, so page faults do not land in timed loops.
inline void prefault(void* base, size_t size) { (void)madvise(base, size, MADV_POPULATE_WRITE); }

// PMDK's pools are not on DAX here: libpmem reads PMEM_IS_PMEM_FORCE when
// it is loaded, so set it and restart the program (then it flushes with
// cache-line instructions, as our x86 medium does, instead of msync).
inline void force_pmem_restart(char** argv) {
  if (!getenv("PMEM_IS_PMEM_FORCE")) {
    setenv("PMEM_IS_PMEM_FORCE", "1", 1);
    execv("/proc/self/exe", argv);
  }
}

}  // namespace softwrap::bench

#endif  // SOFTWRAP_BENCH_BTREE_BENCH_COMMON_H_
