// runtime.h — what an sw_pool handle is: the layers of one open pool.
//
// The C API (c_api.cc) validates arguments, keeps nesting and the
// per-thread contexts, and forwards to the engine.  A thread finds its
// context through a small thread-local cache keyed by pool id, so the fast
// path is a compare and a pointer load.  A context outlives its thread (its
// counters still count) and is reused by the next thread that needs one.
// Handles of open pools are listed in a registry (c_api.cc), so a thread
// that exits, or a close, can tell an open pool from a closed one.
#ifndef SOFTWRAP_API_RUNTIME_H_
#define SOFTWRAP_API_RUNTIME_H_

#include <memory>
#include <mutex>
#include <vector>

#include "api/share.h"
#include "api/strict.h"
#include "engine/engine.h"
#include "log/lanes.h"
#include "medium/medium.h"
#include "medium/persistence_domain.h"
#include "pool/allocator.h"
#include "pool/pool.h"
#include "softwrap/softwrap.h"

// The public face (sw_pool_hot, softwrap.h's "Inline access") is the base
// subobject at offset 0: the inline reads cast the handle to it.  It is
// written only by assemble() (before the handle is returned), by growth
// (size) and by the engine's alias filter (live).
struct alignas(64) sw_pool : sw_pool_hot {
  sw_pool() : sw_pool_hot{} {}  // filled in by assemble() before the handle is returned
  softwrap::ResolvedConfig cfg;
  // What every wrap reads of the handle (ctx_of, open, begin, end, the
  // checks of an address) shares one cache line.  The layers are declared
  // in the order they are built (and destroyed in reverse).
  alignas(64) uint64_t id = 0;  // unique per process, never reused
  std::unique_ptr<softwrap::PoolFile> file;
  std::unique_ptr<softwrap::Medium> medium;
  std::unique_ptr<softwrap::LaneSet> lanes;
  std::unique_ptr<softwrap::Allocator> alloc;  // before engine: outlives it (log extents)
  std::unique_ptr<softwrap::Engine> engine;
  uint64_t user_lo = 0;  // user addresses: [user_lo, size)
  bool strict = false;        // SW_CONFIG_STRICT: misuse aborts (strict.h); `claims` exists
  bool require_wrap = false;  // SW_CONFIG_REQUIRE_WRAP: no implicit wraps
  bool read_only = false;     // SW_CONFIG_READONLY: no wraps at all (file->read_only(), kept here
                              // beside what begin_outer reads anyway)
  bool forked = false;        // this is a forked child's copy of its parent's handle: unusable
  bool shared = false;        // SW_CONFIG_SHARED: `share` exists
  // Smallest block a wrap writes in place (fresh, c_api.cc alloc_fresh):
  // 0, or kFreshInPlaceMin where the medium syncs pages.  Set at open.
  uint64_t fresh_in_place_min = 0;
  // What set write-combined logging on or off (sw_pool_wcl; wcl_policy()).
  const char* wcl_why = "";
  // The persistence domain read or given at open (sw_pool_platform).
  softwrap::DomainReport domain;
  sw_recovery_report report{};
  std::mutex ctx_mu;
  std::vector<std::unique_ptr<softwrap::ThreadCtx>> ctxs;
  std::mutex root_mu;
  // SW_CONFIG_SHARED: write access (share.h); destroyed before the layers.
  std::unique_ptr<softwrap::Sharing> share;
  std::unique_ptr<softwrap::WordClaims> claims;  // strict mode only
};

namespace softwrap {

// The calling thread's context on pool p (created on first use).
ThreadCtx& thread_ctx(sw_pool* p);

}  // namespace softwrap

#endif  // SOFTWRAP_API_RUNTIME_H_
