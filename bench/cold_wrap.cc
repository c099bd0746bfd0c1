// cold_wrap.cc — sw_bench_cold_wrap: wraps whose per-thread and per-pool
// state has gone cold, for counting under cachegrind the cache lines a
// cold wrap touches (issue 41, "Cold wraps that touch little";
// docs/results.md, "Cold wraps").
//
//   sw_bench_cold_wrap ENGINE WRAPS N [SWEEP_MIB] [MEDIUM]
//
// ENGINE: softwrap, softwrap-local, undo, undo-themis, nonatomic.  Each of
// WRAPS wraps makes N 8-byte stores (sw_store64) to random words
// (xorshift64) of a 64 MiB array that existed before the run; between
// wraps, sweep() reads and writes SWEEP_MIB (default 64) MiB of private
// memory, a line at a time, which evicts from a simulated first-level and
// last-level cache everything the previous wrap left there (the open loop
// of Fig. 11 at 1,000 wraps/s sleeps that long between wraps and comes
// back to a cold cache).  MEDIUM: x86 (default; valgrind runs its
// persistence instructions) or scm-emu.  The pool has the paper's 8K-entry
// tables retired from 512 entries on, as in Fig. 11.
//
// Under `valgrind --tool=callgrind --cache-sim=yes --collect-atstart=no
// --toggle-collect='*one_wrap*'` (cachegrind's cache simulator; the caches
// are simulated all the time, events are counted only inside one_wrap()),
// callgrind_annotate gives the first-level and last-level misses per
// function of the wraps alone; under plain cachegrind, everything but
// sweep() (setup included).  Run natively, it prints the wraps' median and
// mean time (the sweep evicts the real caches too: a cold wrap's time, free
// of the open loop's sleep).  The final words are checked against a replay
// of the stream.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "random_words.h"
#include "softwrap/softwrap.h"

namespace {

constexpr uint64_t kWords = (64u << 20) / 8;

using Stream = softwrap::bench::WordStream<kWords>;
using softwrap::bench::engine_of;

int fail(const char* what) {
  std::fprintf(stderr, "sw_bench_cold_wrap: %s\n", what);
  return 2;
}

// Touches every line of buf (a read and a write each): the simulated
// caches keep nothing of what ran before.  Kept out of line so that
// cg_annotate shows its misses apart.
[[gnu::noinline]] uint64_t sweep(std::vector<uint64_t>& buf) {
  uint64_t sum = 0;
  for (size_t i = 0; i < buf.size(); i += 8) {
    sum += buf[i];
    buf[i] = sum;
  }
  return sum;
}

// One wrap of n stores: what the count attributes to the wraps
// (callgrind --toggle-collect=*one_wrap*).
[[gnu::noinline]] int one_wrap(sw_pool* p, uint64_t* a, std::vector<uint64_t>& want, Stream& st, long w, int n) {
  sw_wrap_open(p);
  for (int k = 0; k < n; ++k) {
    const uint64_t i = st.next();
    want[i] = static_cast<uint64_t>(w);
    sw_store64(p, &a[i], static_cast<uint64_t>(w));
  }
  return sw_wrap_close(p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sw_bench_cold_wrap ENGINE WRAPS N [SWEEP_MIB] [x86|scm-emu]\n");
    return 2;
  }
  sw_config c{};
  if (!engine_of(argv[1], &c.engine)) return fail("unknown engine");
  const long wraps = std::atol(argv[2]);
  const int n = std::atoi(argv[3]);
  const uint64_t sweep_mib = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 64;
  const std::string medium = argc > 5 ? argv[5] : "x86";
  if (medium == "x86") {
    c.medium = SW_MEDIUM_X86;
  } else if (medium == "scm-emu") {
    c.medium = SW_MEDIUM_SCM_EMU;
    c.scm_write_ns = 1000;
    c.scm_serialize_ns = 220;
  } else {
    return fail("unknown medium");
  }
  c.alias_entries = 8192;
  c.retire_divisor = 16;
  c.flags |= SW_CONFIG_NO_WCL;  // as the SoftWrAP paper's benches (bench/suite/harness.cc)
  const std::string path = "/dev/shm/sw_cold_wrap_" + std::to_string(getpid());
  unlink(path.c_str());
  sw_pool* p = sw_pool_create(path.c_str(), 256u << 20, &c);
  if (!p) return fail(sw_errormsg());
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, kWords * 8));
  if (!a) return fail(sw_errormsg());
  std::vector<uint64_t> want(kWords);
  for (uint64_t i = 0; i < kWords; ++i) want[i] = i;
  if (sw_write(p, a, want.data(), kWords * 8) != 0) return fail(sw_errormsg());
  if (sw_pool_quiesce(p) != 0) return fail(sw_errormsg());
  std::vector<uint64_t> buf(sweep_mib << 17, 1);
  uint64_t sink = 0;
  Stream st;
  std::vector<double> ns(static_cast<size_t>(wraps));
  for (long w = 0; w < wraps; ++w) {
    sink += sweep(buf);
    const auto t0 = std::chrono::steady_clock::now();
    if (one_wrap(p, a, want, st, w, n) != 0) return fail(sw_errormsg());
    ns[static_cast<size_t>(w)] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }
  if (wraps > 0) {
    double sum = 0;
    for (double x : ns) sum += x;
    std::sort(ns.begin(), ns.end());
    std::printf("%s n=%d %s: %ld cold wraps, median %.0f ns, mean %.0f ns\n", argv[1], n, medium.c_str(), wraps,
                ns[ns.size() / 2], sum / static_cast<double>(ns.size()));
  }
  if (sw_pool_quiesce(p) != 0) return fail(sw_errormsg());
  std::vector<uint64_t> got(kWords);
  if (sw_read(p, got.data(), a, kWords * 8) != 0) return fail(sw_errormsg());
  int rc = 0;
  for (uint64_t i = 0; i < kWords && rc == 0; ++i) {
    if (want[i] != got[i]) rc = fail("the array does not hold what the stream stored");
  }
  sw_pool_close(p);
  unlink(path.c_str());
  return rc + (sink == 42 ? 1 : 0);
}
