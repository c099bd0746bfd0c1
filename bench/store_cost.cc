// store_cost.cc — sw_bench_store_cost: the program `bench/store-cost`
// runs under callgrind to count the instructions a wrap and a store to old
// data cost on each engine and on PMDK (docs/results.md, "What a store
// costs").
//
//   sw_bench_store_cost SYSTEM WRAPS STORES [MODE]
//
// SYSTEM: softwrap, softwrap-local, undo, undo-themis, nonatomic, pmdk (if
// built with libpmemobj), or none (the loop alone: the index stream and
// nothing else).  Each of WRAPS wraps makes STORES 8-byte stores to random
// words (xorshift64) of an 8 MiB array that existed before the run (filled
// and made home before the counted part).  MODE:
//   store   sw_store64 per word (PMDK: pmemobj_tx_add_range_direct of the
//           word, then a plain store — the way PMDK's documentation writes
//           a transaction);
//   modify  sw_modify of the word, then a plain store through the view
//           (PMDK: the same as store);
//   alloc   no array: each of the STORES steps allocates a 48-byte block,
//           stores one word into it and frees the block the previous wrap
//           allocated in that step (PMDK: pmemobj_tx_alloc, a plain store,
//           pmemobj_tx_free), so the heap stays the same size.
// The array's final words (alloc: the live blocks) are checked against a
// replay of the stream.
// The script runs each cell twice, with WRAPS and 2 x WRAPS, and takes the
// difference, so setup (pool creation, filling, thread start) cancels;
// instructions of every thread count (retirement included).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "random_words.h"
#include "softwrap/softwrap.h"
#ifdef SW_STORE_COST_PMDK
#include <libpmemobj.h>
#endif

namespace {

constexpr uint64_t kWords = (8u << 20) / 8;

using Stream = softwrap::bench::WordStream<kWords>;
using softwrap::bench::engine_of;

int fail(const char* what) {
  std::fprintf(stderr, "sw_bench_store_cost: %s\n", what);
  return 2;
}

int check(const std::vector<uint64_t>& want, const uint64_t* got) {
  for (uint64_t i = 0; i < kWords; ++i) {
    if (want[i] != got[i]) return fail("the array does not hold what the stream stored");
  }
  return 0;
}

#ifdef SW_STORE_COST_PMDK
int run_pmdk_alloc(PMEMobjpool* pop, long wraps, int stores) {
  std::vector<PMEMoid> live(static_cast<size_t>(stores), OID_NULL);
  for (long w = 0; w < wraps; ++w) {
    if (pmemobj_tx_begin(pop, nullptr, TX_PARAM_NONE) != 0) return fail("pmemobj_tx_begin");
    for (int k = 0; k < stores; ++k) {
      const PMEMoid o = pmemobj_tx_alloc(48, 1);
      if (OID_IS_NULL(o)) return fail("pmemobj_tx_alloc");
      *static_cast<uint64_t*>(pmemobj_direct(o)) = static_cast<uint64_t>(w);
      if (!OID_IS_NULL(live[k]) && pmemobj_tx_free(live[k]) != 0) return fail("pmemobj_tx_free");
      live[k] = o;
    }
    pmemobj_tx_commit();
    pmemobj_tx_end();
  }
  for (const PMEMoid& o : live) {
    if (*static_cast<uint64_t*>(pmemobj_direct(o)) != static_cast<uint64_t>(wraps - 1)) {
      return fail("a live block does not hold what the last wrap stored");
    }
  }
  return 0;
}

int run_pmdk(const std::string& path, long wraps, int stores, bool alloc) {
  setenv("PMEM_IS_PMEM_FORCE", "1", 0);
  PMEMobjpool* pop = pmemobj_create(path.c_str(), "store_cost", 64u << 20, 0600);
  if (!pop) return fail(pmemobj_errormsg());
  if (alloc) {
    const int rc = run_pmdk_alloc(pop, wraps, stores);
    pmemobj_close(pop);
    unlink(path.c_str());
    return rc;
  }
  PMEMoid root = pmemobj_root(pop, kWords * 8);
  auto* a = static_cast<uint64_t*>(pmemobj_direct(root));
  std::vector<uint64_t> want(kWords);
  for (uint64_t i = 0; i < kWords; ++i) want[i] = a[i] = i;
  pmemobj_persist(pop, a, kWords * 8);
  Stream st;
  for (long w = 0; w < wraps; ++w) {
    if (pmemobj_tx_begin(pop, nullptr, TX_PARAM_NONE) != 0) return fail("pmemobj_tx_begin");
    for (int k = 0; k < stores; ++k) {
      const uint64_t i = st.next();
      pmemobj_tx_add_range_direct(&a[i], 8);
      a[i] = want[i] = static_cast<uint64_t>(w);
    }
    pmemobj_tx_commit();
    pmemobj_tx_end();
  }
  const int rc = check(want, a);
  pmemobj_close(pop);
  unlink(path.c_str());
  return rc;
}
#endif

int run_alloc(sw_pool* p, long wraps, int stores) {
  std::vector<uint64_t*> live(static_cast<size_t>(stores), nullptr);
  for (long w = 0; w < wraps; ++w) {
    sw_wrap_open(p);
    for (int k = 0; k < stores; ++k) {
      auto* b = static_cast<uint64_t*>(sw_pmalloc(p, 48));
      if (!b) return fail(sw_errormsg());
      sw_store64(p, b, static_cast<uint64_t>(w));
      if (live[k] && sw_pfree(p, live[k]) != 0) return fail(sw_errormsg());
      live[k] = b;
    }
    if (sw_wrap_close(p) != 0) return fail(sw_errormsg());
  }
  if (sw_pool_quiesce(p) != 0) return fail(sw_errormsg());
  for (uint64_t* b : live) {
    if (sw_load64(p, b) != static_cast<uint64_t>(wraps - 1)) {
      return fail("a live block does not hold what the last wrap stored");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sw_bench_store_cost SYSTEM WRAPS STORES [store|modify|alloc]\n");
    return 2;
  }
  const std::string sys = argv[1];
  const long wraps = std::atol(argv[2]);
  const int stores = std::atoi(argv[3]);
  const std::string mode = argc > 4 ? argv[4] : "store";
  const bool modify = mode == "modify";
  const bool alloc = mode == "alloc";
  if (mode != "store" && !modify && !alloc) return fail("unknown mode");
  const std::string path = "/dev/shm/sw_store_cost_" + std::to_string(getpid());
  unlink(path.c_str());
  if (sys == "none") {
    std::vector<uint64_t> a(kWords);
    Stream st;
    for (long w = 0; w < wraps; ++w) {
      for (int k = 0; k < stores; ++k) {
        const uint64_t i = st.next();
        __atomic_store_n(&a[i], static_cast<uint64_t>(w), __ATOMIC_RELAXED);
      }
    }
    return a[0] == 12345 ? 1 : 0;
  }
  if (sys == "pmdk") {
#ifdef SW_STORE_COST_PMDK
    return run_pmdk(path, wraps, stores, alloc);
#else
    return fail("built without libpmemobj");
#endif
  }
  sw_config c{};
  if (!engine_of(sys, &c.engine)) return fail("unknown system");
  c.medium = SW_MEDIUM_X86;
  if (c.engine == SW_ENGINE_UNDO_THEMIS) c.flags |= SW_CONFIG_THEMIS_IDEAL;
  sw_pool* p = sw_pool_create(path.c_str(), 64u << 20, &c);
  if (!p) return fail(sw_errormsg());
  if (alloc) {
    const int rc = run_alloc(p, wraps, stores);
    sw_pool_close(p);
    unlink(path.c_str());
    return rc;
  }
  auto* a = static_cast<uint64_t*>(sw_pool_root(p, kWords * 8));
  if (!a) return fail(sw_errormsg());
  std::vector<uint64_t> want(kWords);
  for (uint64_t i = 0; i < kWords; ++i) want[i] = i;
  if (sw_write(p, a, want.data(), kWords * 8) != 0) return fail(sw_errormsg());
  if (sw_pool_quiesce(p) != 0) return fail(sw_errormsg());
  Stream st;
  for (long w = 0; w < wraps; ++w) {
    sw_wrap_open(p);
    for (int k = 0; k < stores; ++k) {
      const uint64_t i = st.next();
      want[i] = static_cast<uint64_t>(w);
      if (modify) {
        *static_cast<uint64_t*>(sw_modify(p, &a[i], 8)) = static_cast<uint64_t>(w);
      } else {
        sw_store64(p, &a[i], static_cast<uint64_t>(w));
      }
    }
    if (sw_wrap_close(p) != 0) return fail(sw_errormsg());
  }
  if (sw_pool_quiesce(p) != 0) return fail(sw_errormsg());
  std::vector<uint64_t> got(kWords);
  if (sw_read(p, got.data(), a, kWords * 8) != 0) return fail(sw_errormsg());
  const int rc = check(want, got.data());
  sw_pool_close(p);
  unlink(path.c_str());
  return rc;
}
