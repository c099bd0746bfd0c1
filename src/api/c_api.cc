// c_api.cc — the C API: argument checks, nesting, thread contexts, and the
// assembly of the layers at create/open (medium, recovery, lanes, engine,
// allocator, the pool's public face for the inline reads).  Everything
// here is a thin shell over the engine; the one place that decides what an
// address may be is check_user().
//
// This file defines the exported sw_load*, sw_read and sw_peek that the
// header makes inline elsewhere: it sees them as plain declarations.
#define SW_NO_INLINE 1
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

#include "alias/alias_filter.h"
#include "api/attach.h"
#include "api/runtime.h"
#include "common/error.h"
#include "common/thread_state.h"
#include "medium/trace_label.h"
#include "recovery/recovery.h"

using namespace softwrap;

namespace {

std::atomic<uint64_t> g_next_pool_id{1};

// Pools open in this process.  Leaked on purpose (never destroyed), so a
// pool closed by an exit handler or a static destructor still finds it.
// Its mutex also keeps a pool from being closed while an exiting thread
// rolls back a wrap it left open there.
struct LivePools {
  std::mutex mu;
  std::vector<sw_pool*> pools;
  bool has(const sw_pool* p) const { return std::find(pools.begin(), pools.end(), p) != pools.end(); }
};
LivePools& live_pools() {
  static LivePools* r = new LivePools;
  return *r;
}

struct TlsSlot {
  sw_pool* pool = nullptr;
  uint64_t id = 0;  // pool ids are never reused: a slot of a closed pool never matches
  ThreadCtx* ctx = nullptr;
};

// Per-thread cache of contexts.  Trivially destructible, so it is never
// destroyed before its thread is gone: code running in thread_local
// destructors, exit handlers and static destructors can still use pools.
struct TlsCache {
  static constexpr int kSlots = 8;
  TlsSlot slot[kSlots];
};
thread_local constinit TlsCache tls_cache;

int end_outer(sw_pool* p, ThreadCtx& c, bool abort);
void commit_objects(sw_pool* p, ThreadCtx& c);
void commit_heap_words(sw_pool* p, ThreadCtx& c);

// Hands the thread's contexts back when the thread exits (thread_state.h:
// after the thread's C++ thread_local destructors; never for the main
// thread, whose contexts simply stay owned), after rolling back a wrap the
// thread left open (it can never be closed: wraps belong to their thread).
struct ContextReaper {
  ~ContextReaper() {
    LivePools& live = live_pools();
    std::lock_guard<std::mutex> g(live.mu);
    for (TlsSlot& s : tls_cache.slot) {
      if (s.ctx && live.has(s.pool) && s.pool->id == s.id) {
        if (s.ctx->depth > 0) {
          tls_counters = &s.ctx->counters;
          end_outer(s.pool, *s.ctx, true);
        }
        s.ctx->owned.store(false, std::memory_order_release);
      }
      s = TlsSlot{};
    }
    tls_counters = nullptr;
  }
};

ThreadCtx& slow_ctx(sw_pool* p) {
  ThreadState<ContextReaper>::get();  // this thread now holds contexts
  ThreadCtx* ctx = nullptr;
  {
    std::lock_guard<std::mutex> g(p->ctx_mu);
    for (auto& c : p->ctxs) {
      bool expected = false;
      if (c->owned.compare_exchange_strong(expected, true)) {
        ctx = c.get();
        break;
      }
    }
    if (!ctx) {
      p->ctxs.push_back(std::make_unique<ThreadCtx>());
      ctx = p->ctxs.back().get();
      ctx->engine = p->engine.get();
      ctx->preferred_lane = static_cast<uint32_t>((p->ctxs.size() - 1) % p->lanes->count());
      ctx->fresh.control = p->cfg.fresh_control;
      ctx->fresh.compare = (p->cfg.flags & SW_CONFIG_WCL) != 0 && p->cfg.wcl_words;  // not where only pages are
      ctx->batch_heap_words = p->engine->batches_heap_words();
      if (p->cfg.alloc_unlogged) {
        ctx->alloc_unlogged = p->medium.get();
        ctx->alloc_base = p->file->base();
      }
      p->engine->attach(*ctx);
    }
  }
  // Evict the last slot; move the new one to the front.
  for (int i = TlsCache::kSlots - 1; i > 0; --i) tls_cache.slot[i] = tls_cache.slot[i - 1];
  tls_cache.slot[0] = TlsSlot{p, p->id, ctx};
  return *ctx;
}

// The cache's other slots, then a context of the pool's (slow_ctx).
[[gnu::noinline]] ThreadCtx& ctx_of_miss(sw_pool* p, TlsCache& cache) {
  for (TlsSlot& t : cache.slot) {
    if (t.pool == p && t.id == p->id) {
      std::swap(t, cache.slot[0]);
      return *cache.slot[0].ctx;
    }
  }
  return slow_ctx(p);
}

// The calling thread's context on p: the first slot of the cache in the
// common case (one thread-local address, two compares).
inline ThreadCtx& ctx_of(sw_pool* p) {
  TlsCache& cache = tls_cache;
  const TlsSlot& s = cache.slot[0];
  ThreadCtx* c = s.pool == p && s.id == p->id ? s.ctx : &ctx_of_miss(p, cache);
  tls_counters = &c->counters;
  return *c;
}

// Validates a user address range; returns its offset or reports misuse.
inline bool check_user(sw_pool* p, const char* fn, const void* addr, size_t n, unsigned align, uint64_t* off) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr), b = reinterpret_cast<uintptr_t>(p->file->base());
  const uint64_t size = p->file->size();
  if (a < b + p->user_lo || a - b > size || n > size - (a - b)) {
    misuse(p->strict, SW_ERANGE, "%s: address %p (+%zu bytes) is outside the pool's heap [%p, %p)", fn, addr, n,
           static_cast<void*>(p->file->base() + p->user_lo), static_cast<void*>(p->file->base() + size));
    return false;
  }
  if (align > 1 && (a & (align - 1))) {
    misuse(p->strict, SW_EINVAL, "%s: address %p is not aligned to %u bytes", fn, addr, align);
    return false;
  }
  *off = a - b;
  return true;
}

// A handle a forked child inherited (share.h: the child must open the pool
// itself).
[[gnu::cold]] int forked_misuse(sw_pool* p, const char* fn) {
  return misuse(p->strict, SW_EINVAL, "%s: pool '%s' was opened by the parent of this forked process; a child must "
                "open the pool itself (see \"Pools shared between processes\" in softwrap.h)", fn,
                p->file->path().c_str());
}

#define SW_NEED_POOL(p, fn, ret) \
  do {                                                                              \
    if (!(p)) return misuse(process_strict(), SW_EINVAL, "%s: pool is NULL", fn), ret; \
  } while (0)

// Strict mode: the words [off, off+n) join the calling wrap's claims; a
// word another thread's open wrap holds is misuse.
void claim(sw_pool* p, ThreadCtx& c, const char* fn, uint64_t off, uint64_t n) {
  uint64_t w;
  if (p->claims->claim(off, n, &c, &c.claims, &w)) return;
  misuse(true, SW_EINVAL,
         "%s: the 8-byte word at pool offset 0x%llx (address %p) was stored to by another thread's wrap that is "
         "still open: two wraps open at once must not touch the same word unless the caller serializes them "
         "with a lock released only after sw_wrap_close (\"close before you unlock\")",
         fn, static_cast<unsigned long long>(w), static_cast<void*>(p->file->at(w)));
}

[[gnu::cold]] int refuse_wrap(sw_pool* p) {
  if (p->forked) return forked_misuse(p, "sw_wrap_open");
  return misuse(p->strict, SW_EINVAL, "pool '%s' was opened read-only (SW_CONFIG_READONLY): it takes no wraps",
                p->file->path().c_str());
}

// The engine's part of an outermost wrap: a log lane, the engine's begin
// (softwrap: its colour, its frame), and on a shared pool the session of
// write access.  0 or an SW_E* code (nothing held then).
int begin_engine(sw_pool* p, ThreadCtx& c) {
  // A shared pool: the wrap is a session of write access (share.h).
  if (p->shared) [[unlikely]] {
    if (int rc = p->share->enter(-1)) return rc;
  }
  c.lane = p->lanes->acquire(
      c.preferred_lane, [](void* e, Lane& l) { return static_cast<Engine*>(e)->lane_usable(l); }, p->engine.get());
  c.preferred_lane = c.lane;
  ++c.wrap_serial;
  const int rc = p->engine->begin(c);
  if (rc != 0) {
    p->lanes->release(c.lane);
    c.lane = ~0u;
    if (p->shared) p->share->exit();
    return rc;
  }
  c.begun = true;
  return 0;
}

// An outermost wrap of its own (a store, write or allocation outside any
// wrap): the engine's part at once.
int begin_outer(sw_pool* p, ThreadCtx& c) {
  if (p->read_only) [[unlikely]] return refuse_wrap(p);
  c.fail_code = 0;
  if (int rc = begin_engine(p, c)) return rc;
  c.depth = 1;
  return 0;
}

// sw_wrap_open's outermost level: a depth count.  The engine's part waits
// for the wrap's first change (begun_for_change), so a wrap that only
// reads — or does nothing — takes no lane, no colour and no frame, and
// its close has nothing to commit.  A shared pool begins at once: there
// the wrap is a session of write access from its open, which keeps other
// handles from writing between its reads.
int open_outer(sw_pool* p, ThreadCtx& c) {
  if (p->read_only) [[unlikely]] return refuse_wrap(p);
  if (p->shared) [[unlikely]] return begin_outer(p, c);
  c.fail_code = 0;
  c.depth = 1;
  return 0;
}

// Before a change in the open wrap (depth > 0): the engine's part, if the
// wrap has not begun it yet.  On failure the wrap is failed (its close
// returns SW_EABORTED) and false is returned with the thread's error set.
inline bool begun_for_change(sw_pool* p, ThreadCtx& c) {
  if (c.begun) [[likely]] return true;
  if (const int rc = begin_engine(p, c)) {
    c.fail_code = rc;
    return false;
  }
  return true;
}

int end_outer(sw_pool* p, ThreadCtx& c, bool abort) {
  if (!c.begun) {
    // Nothing changed (every change begins the engine's part first): no
    // commit, no rollback, nothing held.
    c.depth = 0;
    const int code = c.fail_code;
    c.fail_code = 0;
    if (code && !abort) {
      return set_error(SW_EABORTED, "the wrap failed to begin (%s); nothing of it was committed",
                       sw_strerror(code));
    }
    if (code || abort) {
      c.counters.aborts.add();
    } else {
      c.counters.wraps.add();
    }
    return 0;
  }
  const bool objects = !c.objects.empty();
  if (objects && !abort && c.fail_code == 0) commit_objects(p, c);
  if (!c.heap_words.empty()) {
    if (!abort && c.fail_code == 0) commit_heap_words(p, c);
    c.heap_words.clear();
  }
  c.depth = 0;
  int rc;
  if (c.fail_code) {
    rc = abort ? 0 : SW_EABORTED;
    if (rc) set_error(SW_EABORTED, "the wrap was rolled back earlier (%s); nothing of it was committed",
                      sw_strerror(c.fail_code));
    c.run_abort_actions();
    c.counters.aborts.add();
  } else if (abort) {
    rc = p->engine->rollback(c);
    if (rc == SW_ENOTSUP) {
      c.run_commit_actions();  // nonatomic: the stores (and allocations) stay
    } else {
      c.run_abort_actions();
      c.counters.aborts.add();
    }
  } else {
    rc = p->engine->commit(c);
    if (rc == 0) {
      c.run_commit_actions();
      c.counters.wraps.add();
    } else {
      c.run_abort_actions();
      c.counters.aborts.add();
    }
  }
  if (p->strict) p->claims->release(&c, &c.claims);  // strict: claims exist
  if (objects) {
    c.objects.clear();
    p->engine->objects_ended(c);
  }
  c.fresh.clear();  // committed (flushed by the engine) or freed with the aborted allocations
  c.fail_code = 0;
  c.begun = false;
  p->lanes->release(c.lane);
  c.lane = ~0u;
  // Gives write access up if this was the last session and another handle
  // has the pool open (after making every commit home); a failure to do so
  // keeps it, and the wrap's own result stands.
  if (p->shared) [[unlikely]] p->share->exit();
  return rc;
}

// After a mutating engine call: a failed wrap has been rolled back by the
// engine; undo the allocator's DRAM reservations now.
inline void after_mutation(ThreadCtx& c) {
  if (c.fail_code && !c.abort_actions.empty()) c.run_abort_actions();
}

// Runs body() — engine calls that change the pool, returning false on
// failure with the thread error set — in the calling thread's open wrap,
// or, when none is open, in a wrap of its own: committed if body succeeds,
// rolled back if not (an allocation outside a wrap is a wrap of its own,
// like a store).  Returns whether body, and the commit of an own wrap,
// succeeded.  An engine call that fails rolls the wrap back and sets
// c.fail_code: body must then make no further engine store or write (the
// engine has ended the wrap; a store would land outside any wrap).
template <class Body>
bool in_wrap(sw_pool* p, ThreadCtx& c, const char* fn, Body&& body, bool always_may_own = false) {
  const bool own = c.depth == 0;
  if (own) {
    if (p->require_wrap && !always_may_own) {
      return misuse(p->strict, SW_ENOWRAP, "%s outside a wrap (the pool was opened with SW_CONFIG_REQUIRE_WRAP)",
                    fn),
             false;
    }
    if (begin_outer(p, c) != 0) return false;
  } else if (c.fail_code) {
    return set_error(SW_EABORTED, "%s: the open wrap has failed (%s) and was rolled back", fn,
                     sw_strerror(c.fail_code)),
           false;
  } else if (!begun_for_change(p, c)) {
    return false;
  }
  bool ok = body();
  after_mutation(c);
  ok = ok && c.fail_code == 0;
  if (!own) return ok;
  if (!ok) {
    const int code = last_error() ? last_error() : c.fail_code;
    const std::string msg = last_error_message();
    end_outer(p, c, true);
    set_error(code, "%s", msg.c_str());
    return false;
  }
  return end_outer(p, c, false) == 0;
}

// Calls part(o, len, fresh) for the pieces of [off, off+n) in order: the
// pieces inside a fresh block of the open wrap (engine/fresh.h) and those
// outside any, until the wrap fails.
template <class Part>
void for_fresh_parts(ThreadCtx& c, uint64_t off, size_t n, Part&& part) {
  const uint64_t end = off + n;
  for (uint64_t o = off; o < end && !c.fail_code;) {
    uint64_t lo, hi;
    if (!c.fresh.first_overlap(o, end, &lo, &hi)) {
      part(o, end - o, false);
      return;
    }
    const uint64_t e = lo > o ? lo : std::min(hi, end);
    part(o, e - o, lo <= o);
    o = e;
  }
}

// Writes [off, off+n) in the open wrap: the bytes of fresh blocks in
// place, the rest through the engine.
void write_parts(sw_pool* p, ThreadCtx& c, uint64_t off, const void* src, size_t n) {
  if (c.fresh.empty()) return p->engine->write(c, off, src, n);
  const auto* in = static_cast<const unsigned char*>(src);
  for_fresh_parts(c, off, n, [&](uint64_t o, size_t len, bool fresh) {
    if (fresh) {
      c.fresh.write(*p->medium, p->file->at(o), in + (o - off), len);
    } else {
      p->engine->write(c, o, in + (o - off), len);
    }
  });
}

// The open wrap is about to commit: each run of bytes the program changed
// in its objects (engine/objects.h) is written like an sw_write, so the
// engine logs exactly those bytes.  A failure rolls the wrap back
// (c.fail_code), and end_outer reports it.
void commit_objects(sw_pool* p, ThreadCtx& c) {
  SW_TRACE_LABEL("objects:commit");
  c.objects.for_changed([&](uint64_t o, const unsigned char* b, uint64_t len) {
    if (p->cfg.objects_unlogged) [[unlikely]] {  // crash-simulator control: home before the commit record
      p->medium->write(p->file->at(o), b, len);
      p->medium->flush(p->file->at(o), len);
      return true;
    }
    write_parts(p, c, o, b, len);
    return c.fail_code == 0;
  });
  after_mutation(c);
}

// The open wrap is about to commit: the allocator's words it changed go to
// the engine in one write_words call, in the order the wrap changed them
// (a word changed twice — a block allocated and freed again — ends with
// its last value, as with stores; a block's two header words are
// adjacent, so an engine that groups adjacent words finds them so).
// A failure rolls the wrap back (c.fail_code).
void commit_heap_words(sw_pool* p, ThreadCtx& c) {
  SW_TRACE_LABEL("alloc");
  p->engine->write_words(c, c.heap_words.data(), c.heap_words.size());
  after_mutation(c);
}

// sw_modify in the open wrap: the home bytes on an engine that stores in
// place, else a DRAM copy (engine/objects.h).
void* modify_object(sw_pool* p, ThreadCtx& c, uint64_t off, size_t n) {
  if (p->engine->modify_in_place(c, off, n)) return c.fail_code ? nullptr : p->file->at(off);
  bool made;
  uint64_t mo, mn;
  unsigned char* v = c.objects.modify(
      off, n, [&](unsigned char* dst, uint64_t o, uint64_t len) { p->engine->read(c, dst, o, len); }, &made, &mo,
      &mn);
  if (!v) return set_error(SW_ENOMEM, "sw_modify: out of memory for a copy of %zu bytes", n), nullptr;
  if (made) p->engine->object_made(c, mo, mn);
  return v;
}

// Writes n copies of byte ch at off in the open wrap (no n-byte buffer).
void fill(sw_pool* p, ThreadCtx& c, uint64_t off, int ch, size_t n) {
  if (ch == 0) {
    return for_fresh_parts(c, off, n, [&](uint64_t o, size_t len, bool fresh) {
      fresh ? c.fresh.write(*p->medium, p->file->at(o), nullptr, len) : p->engine->zero(c, o, len);
    });
  }
  unsigned char chunk[4096];
  std::memset(chunk, ch, std::min(n, sizeof chunk));
  for (size_t done = 0; done < n && !c.fail_code; done += sizeof chunk) {
    write_parts(p, c, off + done, chunk, std::min(sizeof chunk, n - done));
  }
}

// A block the open wrap has just allocated: fresh (written in place until
// the wrap ends) if no log frame or alias table can still hold its bytes —
// bytes never written since they were zero, or freed by a commit the
// engine has put out of replay's reach.  Its first `zero` bytes are then
// zeroed, unless known to be zero already.
//
// On a medium that syncs pages (msync: a file not on DAX) a block smaller
// than kFreshInPlaceMin goes through the engine instead, logged with the
// wrap's other stores: the commit then syncs the lane's few contiguous
// pages, not a page per scattered small block (batches of 100 B+tree
// inserts on ext4: 8-29 % more inserts/s, single inserts 8-15 %, measured
// side by side).  Larger blocks stay in place (logging a big zero-fill
// would cost far more than its pages).
inline constexpr uint64_t kFreshInPlaceMin = 16 << 10;
// On a medium whose foreground pays for each home line it writes (scm-emu:
// Tw per line at the next pcommit) the redo engines alias and log a block
// of at most kFreshAliasedMax bytes instead (a B+tree node: about five
// lines; the log streams them in the lane), and retirement writes it home
// off the committing thread (Engine::retires_home).  The B+tree's inserts
// on scm-emu, 1M keys, side by side with the block in place: sequential
// 5.01 -> 4.59 us, home lines flushed per insert 2.0 -> 0.7; thresholds of
// 512 B and 4 KiB did no better than 1 KiB (docs/results.md).
inline constexpr uint64_t kFreshAliasedMax = 1 << 10;

void alloc_fresh(sw_pool* p, ThreadCtx& c, uint64_t off, const AllocInfo& info, size_t zero) {
  if (info.usable >= p->fresh_in_place_min && p->engine->writes_fresh_apart() &&
      (info.zero || p->engine->reuse_safe(info.reuse_seq))) {
    c.fresh.add(off, off + info.usable);
    c.counters.fresh_blocks.add();
  }
  if (zero && !info.zero) fill(p, c, off, 0, zero);
}

template <class T>
T load_n(sw_pool* p, const void* addr) {
  uint64_t off;
  SW_NEED_POOL(p, "sw_load", T{0});
  if (!check_user(p, "sw_load", addr, sizeof(T), sizeof(T), &off)) return T{0};
  ThreadCtx& c = ctx_of(p);
  if (!c.objects.empty()) [[unlikely]] {
    if (const ObjectSet::Object* o = c.objects.holding(off, sizeof(T))) {
      T v;
      std::memcpy(&v, o->copy + (off - o->off), sizeof v);
      return v;
    }
    T v = static_cast<T>(p->engine->load(c, off, sizeof(T)));
    c.objects.overlay(off, sizeof v, &v);
    return v;
  }
  return static_cast<T>(p->engine->load(c, off, sizeof(T)));
}

template <class T>
void store_n(sw_pool* p, void* addr, T v) {
  uint64_t off;
  SW_NEED_POOL(p, "sw_store", (void)0);
  if (!check_user(p, "sw_store", addr, sizeof(T), sizeof(T), &off)) return;
  ThreadCtx& c = ctx_of(p);
  if (c.begun && c.fail_code == 0 && !p->strict) [[likely]] {  // in a healthy begun wrap, not strict
    if (c.fresh.contains(off, sizeof(T))) {  // a block this wrap allocated: in place (engine/fresh.h)
      c.fresh.store(*p->medium, addr, v, sizeof(T));
    } else {
      p->engine->store(c, off, v, sizeof(T));
      after_mutation(c);
    }
    if (!c.objects.empty()) [[unlikely]] c.objects.patch(off, &v, sizeof v);
    return;
  }
  if (c.depth == 0) {  // a wrap of its own
    if (p->require_wrap) {
      misuse(p->strict, SW_ENOWRAP, "sw_store outside a wrap (the pool was opened with SW_CONFIG_REQUIRE_WRAP)");
      return;
    }
    if (begin_outer(p, c) != 0) return;
    if (p->strict) claim(p, c, "sw_store", off, sizeof(T));
    p->engine->store(c, off, v, sizeof(T));
    end_outer(p, c, false);
    return;
  }
  if (c.fail_code || !begun_for_change(p, c)) return;
  if (p->strict) claim(p, c, "sw_store", off, sizeof(T));
  if (c.fresh.contains(off, sizeof(T))) {
    c.fresh.store(*p->medium, addr, v, sizeof(T));
  } else {
    p->engine->store(c, off, v, sizeof(T));
    after_mutation(c);
  }
  if (!c.objects.empty() && !c.fail_code) c.objects.patch(off, &v, sizeof v);
}

// The filter of an engine that stores in place: one slot, always clear
// (live 1); and of a pool whose every access must call the library: one
// slot, always raised.
constexpr uint32_t kNoAliases = 0;
constexpr uint32_t kAlwaysRaised = 1;
// Their regions are the face's own: 0 (no filter), or set to 1.
static_assert(SW_HOT_REGION_SHIFT == AliasFilter::kCoarseShift && SW_HOT_REGIONS == AliasFilter::kCoarseSlots &&
                  std::size(sw_pool_hot{}.regions) == SW_HOT_REGIONS,
              "the header's inline check maps addresses to regions as the filter does");
static_assert(offsetof(sw_pool_hot, regions) % 64 == 0, "the regions start a cache line");

// Whether every access must call the library: where every check must stay
// (strict mode), where every load is counted, and where the medium
// records loads (the Themis simulator's traces).
bool accesses_call_library(const sw_pool* p) {
  return p->strict || (p->cfg.flags & SW_CONFIG_COUNT_LOADS) || p->medium->records_loads();
}

// Fills in the pool's public face (softwrap.h, "Inline access").  The
// engine has published its filter's live word there already (unless every
// access calls the library: then the engine keeps its live word to
// itself).
void publish_hot(sw_pool* p) {
  static_assert(std::is_standard_layout_v<sw_pool_hot>);
  // The inline code casts the handle to its face: the face must sit at the
  // handle's address (sw_pool is not standard-layout, so the language does
  // not promise it; every ABI we build for places a first base there).
  if (static_cast<void*>(static_cast<sw_pool_hot*>(p)) != static_cast<void*>(p)) {
    std::fprintf(stderr, "softwrap: sw_pool_hot is not at the start of sw_pool; inline access cannot work\n");
    std::abort();
  }
  p->version = SW_POOL_HOT_VERSION;
  p->reserved = 0;
  for (uint64_t& r : p->reserved2) r = 0;
  p->base = reinterpret_cast<char*>(p->file->base());
  p->heap = p->base + p->user_lo;
  // A filter of one slot, which every address maps to (live 1).
  const auto one_slot = [p](const uint32_t* slot, uint64_t region) {
    p->filter = slot;
    p->filter_shift = 8 * sizeof(uintptr_t) - 1;
    p->filter_mask = 0;
    for (uint64_t& r : p->regions) __atomic_store_n(&r, region, __ATOMIC_RELEASE);
    __atomic_store_n(&p->live, 1u, __ATOMIC_RELEASE);
  };
  const AliasFilter* f = p->engine->filter();
  if (accesses_call_library(p)) {
    one_slot(&kAlwaysRaised, 1);
    return;  // span 0: no inline range read either
  }
  if (f) {
    p->filter = f->slots();
    p->filter_shift = f->shift();
    p->filter_mask = f->mask();
  } else {
    one_slot(&kNoAliases, 0);
  }
  p->file->mirror_size(&p->span, p->user_lo);  // span: the heap's size, followed by every growth
}

// fork(): handles a child inherits are its parent's.  The child closes
// their descriptors (a child holding the parent's open file description
// would keep the parent's locks, write access included, alive after the
// parent dies), and they refuse every use but sw_pool_close, which forgets
// them without touching the pool (the parent's threads do not exist in
// the child).  The registry's lock is held across fork, so the child finds
// the list whole.
bool register_fork_handlers() {
  pthread_atfork([] { live_pools().mu.lock(); }, [] { live_pools().mu.unlock(); },
                 [] {
                   LivePools& live = live_pools();
                   for (sw_pool* p : live.pools) {
                     p->forked = true;
                     p->read_only = true;  // begin_outer refuses wraps (refuse_wrap says why)
                     if (p->share) p->share->forget_after_fork();
                     p->file->drop_after_fork();
                   }
                   live.mu.unlock();
                 });
  return true;
}

// Write-combined logging on or off for a pool on medium props (softwrap.h,
// sw_pool_wcl): a flag or SOFTWRAP_WCL decides if set, else the medium
// (MediumProperties::wcl_default).
// Sets SW_CONFIG_WCL in cfg->flags when on, and clears cfg->wcl_words when
// only ranges are compared.
const char* wcl_policy(const MediumProperties& props, ResolvedConfig* cfg) {
  if (cfg->flags & SW_CONFIG_WCL) return cfg->wcl_from_env ? "SOFTWRAP_WCL=1" : "SW_CONFIG_WCL";
  if (cfg->flags & SW_CONFIG_NO_WCL) return cfg->wcl_from_env ? "SOFTWRAP_WCL=0" : "SW_CONFIG_NO_WCL";
  if (props.wcl_default != WclDefault::kOff) cfg->flags |= SW_CONFIG_WCL;
  cfg->wcl_words = props.wcl_default == WclDefault::kAll;
  const std::string_view name = props.name;
  if (props.wcl_default == WclDefault::kRanges) {
    if (name == "msync") return "the msync medium's default (pages: ranges of 4 KiB or more; stores logged whole)";
    if (name == "scm-emu") return "the scm-emu medium's default (pages only: Tw < 200 ns)";
    return "the x86 medium's default (pages: ranges of 4 KiB or more; stores logged whole)";
  }
  if (props.wcl_default == WclDefault::kAll) {
    return name == "scm-emu" ? "the scm-emu medium's default (everything: Tw >= 200 ns, each streamed line costs Tw)"
                             : "the medium's default (everything)";
  }
  return "the medium's default (off)";
}

sw_pool* assemble(std::unique_ptr<PoolFile> file, const ResolvedConfig& cfg) {
  auto p = std::unique_ptr<sw_pool>(new (std::nothrow) sw_pool);
  if (!p) return set_error(SW_ENOMEM, "out of memory"), nullptr;
  p->id = g_next_pool_id.fetch_add(1);
  p->cfg = cfg;
  p->file = std::move(file);
  {
    std::string err;
    if (!resolve_persistence_domain(p->file->fd(), &p->domain, &err)) {
      return set_error(SW_EINVAL, "%s", err.c_str()), nullptr;
    }
  }
  MediumOptions mo;
  mo.kind = cfg.medium;
  mo.cpu_cache.on = p->domain.domain == PersistenceDomain::kCpuCache;
  if (std::string err; !read_cpu_cache_env(&mo.cpu_cache, &err)) return set_error(SW_EINVAL, "%s", err.c_str()), nullptr;
  mo.is_dax = p->file->is_dax();
  mo.fd = p->file->fd();
  mo.scm_write_ns = cfg.scm_write_ns;
  mo.scm_serialize_ns = cfg.scm_serialize_ns;
  mo.scm_wc_entries = cfg.scm_wc_entries;
  mo.scm_shared_queue = (cfg.flags & SW_CONFIG_SCM_SHARED_QUEUE) != 0;
  p->medium = make_medium(mo, p->file->base(), p->file->size());
  if (!p->medium) return nullptr;
  if (check_engine_medium(cfg, p->medium->properties()) != 0) return nullptr;
  p->wcl_why = wcl_policy(p->medium->properties(), &p->cfg);
  // A shared pool is opened with write access held: recovery and the pool
  // layer's open-time writes need it, and the heap scanned below must not
  // change meanwhile.
  if (p->file->shared()) {
    p->share = std::make_unique<Sharing>(p.get());
    p->shared = true;
    if (p->share->open_begin() != 0) return nullptr;
  }
  if (p->file->bind(p->medium.get()) != 0) return nullptr;
  RecoveryOptions ro;
  ro.redo_skip_commit_validation = cfg.redo_skip_commit_validation;
  ro.fresh_skip_check = cfg.fresh_control == FreshControl::kSkipVouchCheck;
  ro.wcl_misread_pairs = cfg.wcl_misread_pairs;
  if (recover(*p->file, *p->medium, &p->report, ro) != 0) return nullptr;
  if (Allocator::open(p->file.get(), &p->alloc) != 0) return nullptr;
  p->lanes = std::make_unique<LaneSet>(p->file.get());
  EngineEnv env{&p->cfg, p->file.get(), p->medium.get(), p->lanes.get(), p->alloc.get(), nullptr};
  p->strict = (cfg.flags & SW_CONFIG_STRICT) != 0;  // accesses_call_library() asks
  // The face's regions start clear; an engine with a filter keeps its own
  // there (it may raise them before publish_hot).
  for (uint64_t& r : p->regions) __atomic_store_n(&r, 0, __ATOMIC_RELAXED);
  if (!accesses_call_library(p.get())) {
    env.filter_live = &p->live;
    env.filter_regions = p->regions;
  }
  p->engine = make_engine(env);
  if (!p->engine) return nullptr;
  p->fresh_in_place_min = p->medium->properties().syncs_pages ? kFreshInPlaceMin : 0;
  if (p->medium->properties().emulated_timing && p->engine->retires_home()) {
    p->fresh_in_place_min = kFreshAliasedMax + 1;
  }
  p->user_lo = p->file->header().heap_offset;
  p->require_wrap = (cfg.flags & SW_CONFIG_REQUIRE_WRAP) != 0;
  p->read_only = p->file->read_only();
  if (p->strict) p->claims = std::make_unique<WordClaims>();
  publish_hot(p.get());
  if (p->share) {
    // Marks the pool ours, then gives write access up unless alone.  A
    // handle made by create held the open lock exclusively: now it shares it.
    p->share->open_end();
    if (p->file->share_open_lock() != 0) return nullptr;
  }
  {
    LivePools& live = live_pools();
    std::lock_guard<std::mutex> g(live.mu);
    live.pools.push_back(p.get());
  }
  static const bool fork_handlers = register_fork_handlers();
  (void)fork_handlers;
  clear_error();
  return p.release();
}

}  // namespace

namespace softwrap {
ThreadCtx& thread_ctx(sw_pool* p) { return ctx_of(p); }
sw_pool* assemble_pool(std::unique_ptr<PoolFile> file, const ResolvedConfig& cfg) {
  return assemble(std::move(file), cfg);
}
}  // namespace softwrap

extern "C" {

#define SW_ONES8 1, 1, 1, 1, 1, 1, 1, 1
#define SW_ONES64 SW_ONES8, SW_ONES8, SW_ONES8, SW_ONES8, SW_ONES8, SW_ONES8, SW_ONES8, SW_ONES8
const uint64_t sw_hot_raised_regions[SW_HOT_REGIONS] = {SW_ONES64, SW_ONES64, SW_ONES64, SW_ONES64,
                                                        SW_ONES64, SW_ONES64, SW_ONES64, SW_ONES64};
#undef SW_ONES64
#undef SW_ONES8
static_assert(SW_HOT_REGIONS == 512, "sw_hot_raised_regions: one initialiser per region");

sw_pool* sw_pool_create(const char* path, size_t size, const sw_config* cfg) {
  if (!path) return set_error(SW_EINVAL, "path is NULL"), nullptr;
  ResolvedConfig rc;
  if (resolve_config(cfg, &rc) != 0) return nullptr;
  if (rc.flags & SW_CONFIG_READONLY) {
    return set_error(SW_EINVAL, "sw_pool_create: SW_CONFIG_READONLY is for sw_pool_open (a new pool must be "
                     "written)"), nullptr;
  }
  {
    // A bad SOFTWRAP_PERSISTENCE is refused before any file is touched
    // (assemble() reads it again, for open and attach too).
    PersistenceOverride ov;
    std::string err;
    CpuCacheForm cc;
    if (!parse_persistence_override(getenv("SOFTWRAP_PERSISTENCE"), &ov, &err) || !read_cpu_cache_env(&cc, &err)) {
      return set_error(SW_EINVAL, "%s", err.c_str()), nullptr;
    }
  }
  auto file = PoolFile::create(path, size, rc);
  if (!file) return nullptr;
  const bool device = file->on_device();
  sw_pool* p = assemble(std::move(file), rc);
  if (!p && !device) unlink(path);  // the new, empty file is ours: leave nothing behind (a device stays)
  return p;
}

sw_pool* sw_pool_open(const char* path, const sw_config* cfg) {
  if (!path) return set_error(SW_EINVAL, "path is NULL"), nullptr;
  ResolvedConfig rc;
  if (resolve_config(cfg, &rc) != 0) return nullptr;
  auto file = PoolFile::open(path, rc);  // a new maximum (cfg->max_size, SOFTWRAP_POOL_MAX) applies at open
  if (!file) return nullptr;
  return assemble(std::move(file), rc);
}

int sw_pool_close(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_close", SW_EINVAL);
  {
    // Checked and unlisted in one step: an exiting thread that rolls back
    // a wrap of this pool holds the same lock (ContextReaper).
    LivePools& live = live_pools();
    std::lock_guard<std::mutex> g(live.mu);
    if (!live.has(p)) {
      return misuse(process_strict(), SW_EINVAL,
                    "sw_pool_close: %p is not an open pool (closed already, or never opened)",
                    static_cast<void*>(p));
    }
    if (p->forked) {
      // The parent's handle: its threads and locks are the parent's.  Leak
      // it (destroying it would join threads this process does not have).
      live.pools.erase(std::find(live.pools.begin(), live.pools.end(), p));
      for (TlsSlot& s : tls_cache.slot) {
        if (s.pool == p) s = TlsSlot{};
      }
      return 0;
    }
    {
      std::lock_guard<std::mutex> gc(p->ctx_mu);
      for (auto& c : p->ctxs) {
        if (c->depth > 0) {
          return misuse(p->strict, SW_EBUSY,
                        "sw_pool_close: a thread still has a wrap open on the pool (close or abort it first); "
                        "the pool stays open");
        }
      }
    }
    live.pools.erase(std::find(live.pools.begin(), live.pools.end(), p));
  }
  if (p->share) p->share->stop_watcher();
  ctx_of(p);  // count the final retirement somewhere sensible
  int rc = p->engine->shutdown();
  p->medium->drain();
  if (p->share) p->share->close();  // everything is home: mark the pool clean, give write access up
  {
    std::lock_guard<std::mutex> g(p->ctx_mu);
    for (auto& c : p->ctxs) p->engine->detach(*c);
  }
  for (TlsSlot& s : tls_cache.slot) {
    if (s.pool == p) s = TlsSlot{};
  }
  tls_counters = nullptr;
  delete p;
  return rc;
}

int sw_pool_write_begin(sw_pool* p, int timeout_ms) {
  SW_NEED_POOL(p, "sw_pool_write_begin", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_write_begin");
  if (p->file->read_only()) {
    return misuse(p->strict, SW_EINVAL, "sw_pool_write_begin: pool '%s' was opened read-only (SW_CONFIG_READONLY)",
                  p->file->path().c_str());
  }
  if (!p->share) return 0;  // an exclusive handle always has write access
  return p->share->enter(timeout_ms, true);
}

int sw_pool_write_end(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_write_end", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_write_end");
  if (!p->share) return 0;
  const int rc = p->share->exit(true);
  if (rc == SW_EINVAL) {
    return misuse(p->strict, SW_EINVAL, "sw_pool_write_end: no sw_pool_write_begin of this pool is open");
  }
  return rc;
}

int sw_pool_write_pause(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_write_pause", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_write_pause");
  if (!p->share) return 0;
  const int rc = p->share->exit(true, true);
  if (rc == SW_EINVAL) {
    return misuse(p->strict, SW_EINVAL, "sw_pool_write_pause: no sw_pool_write_begin of this pool is open");
  }
  return rc;
}

int sw_pool_refresh(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_refresh", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_refresh");
  if (!p->share) return 0;
  return p->share->refresh();
}

int sw_pool_publish(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_publish", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_publish");
  // Not shared, or alone: nobody else reads home now, and a newcomer's
  // open waits for write access, which goes only with every commit home.
  if (!p->share || !p->share->held_with_company()) return 0;
  return p->engine->publish(ctx_of(p));
}

int sw_pool_uuid(sw_pool* p, uint8_t out[16]) {
  SW_NEED_POOL(p, "sw_pool_uuid", SW_EINVAL);
  std::memcpy(out, p->file->header().uuid, 16);
  return 0;
}

int sw_pool_follow(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_follow", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_follow");
  if (!p->share) return 0;
  return p->share->refresh(false);
}

int sw_pool_write_held(sw_pool* p) {
  if (!p || p->forked) return 0;
  if (!p->share) return p->file->read_only() ? 0 : 1;
  return p->share->held() ? 1 : 0;
}

static_assert(SW_APP_LOCK_BASE == static_cast<int64_t>(softwrap::kAppLockBase));

int sw_pool_set_alone_hook(sw_pool* p, int (*hook)(void*), void* arg) {
  SW_NEED_POOL(p, "sw_pool_set_alone_hook", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_set_alone_hook");
  if (!p->share) {
    return misuse(p->strict, SW_EINVAL, "sw_pool_set_alone_hook: pool '%s' is not shared (SW_CONFIG_SHARED)",
                  p->file->path().c_str());
  }
  p->share->set_alone_hook(hook, arg);
  return 0;
}

int sw_pool_if_alone(sw_pool* p, void (*fn)(void*), void* arg) {
  SW_NEED_POOL(p, "sw_pool_if_alone", SW_EINVAL);
  if (p->forked) return forked_misuse(p, "sw_pool_if_alone");
  if (fn == nullptr) return misuse(p->strict, SW_EINVAL, "sw_pool_if_alone: fn is NULL");
  if (!p->share) return 0;
  return p->share->if_alone(fn, arg) ? 1 : 0;
}

int sw_pool_quiesce(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_quiesce", SW_EINVAL);
  {
    std::lock_guard<std::mutex> g(p->ctx_mu);
    for (auto& c : p->ctxs) {
      if (c->depth > 0) {
        return misuse(p->strict, SW_EBUSY, "sw_pool_quiesce: a thread has a wrap open on the pool");
      }
    }
  }
  ctx_of(p);
  return p->engine->quiesce();
}

void* sw_pool_root(sw_pool* p, size_t size) {
  SW_NEED_POOL(p, "sw_pool_root", nullptr);
  ThreadCtx& c = ctx_of(p);
  std::lock_guard<std::mutex> g(p->root_mu);
  const uint64_t slot = p->file->header().meta_offset;  // PoolMeta::root_offset, then root_size
  uint64_t off = p->engine->load(c, slot, 8);
  if (off != 0) {
    const uint64_t have = p->engine->load(c, slot + 8, 8);
    if (size > have) {
      return misuse(p->strict, SW_EINVAL, "sw_pool_root: the root object is %llu bytes; %zu requested",
                    static_cast<unsigned long long>(have), size),
             nullptr;
    }
    return p->file->at(off);
  }
  if (size == 0) return set_error(SW_EINVAL, "pool has no root object yet"), nullptr;
  bool found = false;
  const bool ok = in_wrap(p, c, "sw_pool_root", [&] {
    // A shared pool: another handle may have made the root since the
    // load above; in the wrap, with write access, this one sees it.
    if (p->share && (off = p->engine->load(c, slot, 8)) != 0) return found = true;
    AllocInfo info;
    off = p->alloc->alloc(c, size, &info);
    if (off == 0) return false;
    alloc_fresh(p, c, off, info, size);
    if (c.fail_code) return false;  // rolled back by the engine: no store may join it (see in_wrap)
    p->engine->store(c, slot, off, 8);
    p->engine->store(c, slot + 8, size, 8);
    return true;
  }, /*always_may_own=*/true);  // creating the root is setup, even under SW_CONFIG_REQUIRE_WRAP
  if (ok && found && size > p->engine->load(c, slot + 8, 8)) {
    return misuse(p->strict, SW_EINVAL, "sw_pool_root: the root object another handle made is %llu bytes; %zu "
                  "requested", static_cast<unsigned long long>(p->engine->load(c, slot + 8, 8)), size),
           nullptr;
  }
  return ok ? p->file->at(off) : nullptr;
}

uint64_t sw_pool_offset(sw_pool* p, const void* addr) {
  if (!p || !addr) return 0;
  return p->file->offset_of(addr);
}
void* sw_pool_ptr(sw_pool* p, uint64_t off) { return p && off ? p->file->at(off) : nullptr; }
void* sw_pool_base(sw_pool* p) { return p ? p->file->base() : nullptr; }
size_t sw_pool_size(sw_pool* p) { return p ? p->file->size() : 0; }
size_t sw_pool_max_size(sw_pool* p) { return p ? p->file->max_size() : 0; }

int sw_pool_recovery_report(sw_pool* p, sw_recovery_report* out) {
  if (!p || !out) return misuse(p ? p->strict : process_strict(), SW_EINVAL, "sw_pool_recovery_report: NULL argument");
  *out = p->report;
  return 0;
}

const char* sw_pool_engine_name(sw_pool* p) { return p ? p->engine->name() : ""; }
const char* sw_pool_medium_name(sw_pool* p) { return p ? p->medium->properties().name : ""; }

namespace {

// The kernel's page size for the mapping that holds addr (KernelPageSize in
// /proc/self/smaps: 2 MiB where a DAX mapping got huge pages), 0 if not found.
size_t mapping_page_size(const void* addr) {
  FILE* f = std::fopen("/proc/self/smaps", "re");
  if (!f) return 0;
  const auto a = reinterpret_cast<uintptr_t>(addr);
  char line[512];
  bool inside = false;
  unsigned long kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = a >= lo && a < hi;
      continue;
    }
    unsigned long v;
    if (inside && std::sscanf(line, "KernelPageSize: %lu kB", &v) == 1) {
      kb = v;
      break;
    }
  }
  std::fclose(f);
  return static_cast<size_t>(kb) * 1024;
}

}  // namespace

int sw_pool_platform(sw_pool* p, sw_pool_platform_info* out) {
  if (!p || !out) return misuse(p ? p->strict : process_strict(), SW_EINVAL, "sw_pool_platform: NULL argument");
  const MediumProperties& props = p->medium->properties();
  *out = sw_pool_platform_info{};
  out->medium = props.name;
  out->flush_insn = std::string_view(props.name) == "msync" ? "msync" : *props.flush_insn ? props.flush_insn : "none";
  out->persistence_domain = persistence_domain_name(p->domain.domain);
  out->domain_source = p->domain.source.c_str();
  out->domain_detail = p->domain.detail.c_str();
  out->synchronous = p->file->is_dax() ? 1 : 0;
  const size_t page = mapping_page_size(p->file->base());
  out->page_size = page ? page : kPageSize;
  return 0;
}

int sw_pool_wcl(sw_pool* p, const char** why) {
  if (why) *why = p ? p->wcl_why : "";
  if (!p) return -1;
  if (!(p->cfg.flags & SW_CONFIG_WCL)) return 0;
  return p->cfg.wcl_words ? 1 : 2;
}

int sw_wrap_open(sw_pool* p) {
  SW_NEED_POOL(p, "sw_wrap_open", SW_EINVAL);
  ThreadCtx& c = ctx_of(p);
  if (c.depth > 0) {
    ++c.depth;
    return 0;
  }
  return open_outer(p, c);
}

int sw_wrap_close(sw_pool* p) {
  SW_NEED_POOL(p, "sw_wrap_close", SW_EINVAL);
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) return misuse(p->strict, SW_ENOWRAP, "sw_wrap_close without an open wrap");
  if (c.depth > 1) {
    --c.depth;
    return 0;
  }
  if (!c.begun && c.fail_code == 0) {  // changed nothing: nothing to commit (open_outer)
    c.depth = 0;
    c.counters.wraps.add();
    return 0;
  }
  return end_outer(p, c, false);
}

int sw_wrap_abort(sw_pool* p) {
  SW_NEED_POOL(p, "sw_wrap_abort", SW_EINVAL);
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) return misuse(p->strict, SW_ENOWRAP, "sw_wrap_abort without an open wrap");
  return end_outer(p, c, true);
}

int sw_wrap_depth(sw_pool* p) { return p ? ctx_of(p).depth : 0; }

// The inline reads' library side (softwrap.h, "Inline access"): each
// *_slow is the exported function of the same name without the suffix.
uint8_t sw_load8(sw_pool* p, const void* a) { return load_n<uint8_t>(p, a); }
uint16_t sw_load16(sw_pool* p, const void* a) { return load_n<uint16_t>(p, a); }
uint32_t sw_load32(sw_pool* p, const void* a) { return load_n<uint32_t>(p, a); }
uint64_t sw_load64(sw_pool* p, const void* a) { return load_n<uint64_t>(p, a); }
uint8_t sw_load8_slow(sw_pool* p, const void* a) { return load_n<uint8_t>(p, a); }
uint16_t sw_load16_slow(sw_pool* p, const void* a) { return load_n<uint16_t>(p, a); }
uint32_t sw_load32_slow(sw_pool* p, const void* a) { return load_n<uint32_t>(p, a); }
uint64_t sw_load64_slow(sw_pool* p, const void* a) { return load_n<uint64_t>(p, a); }
int sw_read_slow(sw_pool* p, void* dst, const void* src, size_t n) { return sw_read(p, dst, src, n); }
const void* sw_peek_slow(sw_pool* p, const void* src, size_t n, void* scratch) {
  return sw_peek(p, src, n, scratch);
}
void sw_store8(sw_pool* p, void* a, uint8_t v) { store_n<uint8_t>(p, a, v); }
void sw_store16(sw_pool* p, void* a, uint16_t v) { store_n<uint16_t>(p, a, v); }
void sw_store32(sw_pool* p, void* a, uint32_t v) { store_n<uint32_t>(p, a, v); }
void sw_store64(sw_pool* p, void* a, uint64_t v) { store_n<uint64_t>(p, a, v); }

void* sw_modify(sw_pool* p, void* addr, size_t n) {
  SW_NEED_POOL(p, "sw_modify", nullptr);
  if (n == 0) return misuse(p->strict, SW_EINVAL, "sw_modify of 0 bytes"), nullptr;
  uint64_t off;
  if (!check_user(p, "sw_modify", addr, n, 1, &off)) return nullptr;
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) {
    return misuse(p->strict, SW_ENOWRAP, "sw_modify outside a wrap: the pointer it returns is written until the "
                  "wrap closes, so it needs an open wrap (sw_wrap_open)"),
           nullptr;
  }
  void* view = nullptr;
  in_wrap(p, c, "sw_modify", [&] {  // the open wrap's: a failed one refused, the engine's part begun
    if (p->strict) claim(p, c, "sw_modify", off, n);
    view = modify_object(p, c, off, n);
    return view != nullptr;
  });
  return view;
}

int sw_read(sw_pool* p, void* dst, const void* src, size_t n) {
  uint64_t off;
  SW_NEED_POOL(p, "sw_read", SW_EINVAL);
  if (!dst && n) return misuse(p->strict, SW_EINVAL, "sw_read: dst is NULL");
  if (n == 0) return 0;
  if (!check_user(p, "sw_read", src, n, 1, &off)) return last_error();
  ThreadCtx& c = ctx_of(p);
  if (!c.objects.empty()) [[unlikely]] {
    if (const ObjectSet::Object* o = c.objects.holding(off, n)) {
      std::memcpy(dst, o->copy + (off - o->off), n);
      return 0;
    }
    p->engine->read(c, dst, off, n);
    c.objects.overlay(off, n, dst);
    return 0;
  }
  p->engine->read(c, dst, off, n);
  return 0;
}

const void* sw_peek(sw_pool* p, const void* src, size_t n, void* scratch) {
  uint64_t off;
  SW_NEED_POOL(p, "sw_peek", nullptr);
  if (!scratch && n) return misuse(p->strict, SW_EINVAL, "sw_peek: scratch is NULL"), nullptr;
  if (!check_user(p, "sw_peek", src, n, 1, &off)) return nullptr;
  if (n == 0) return src;
  ThreadCtx& c = ctx_of(p);
  if (!c.objects.empty()) [[unlikely]] {
    // An object of the wrap holding the range: its copy (no copying).
    if (const ObjectSet::Object* o = c.objects.holding(off, n)) return o->copy + (off - o->off);
    if (c.objects.overlaps(off, n)) {
      p->engine->read(c, scratch, off, n);
      c.objects.overlay(off, n, scratch);
      return scratch;
    }
  }
  if (p->engine->home_visible(c, off, n)) {
    c.counters.loads.add();
    p->medium->load(src, n);  // a medium that records loads sees it (the engine's read would report it)
    return src;
  }
  p->engine->read(c, scratch, off, n);
  return scratch;
}

// sw_write / sw_write_whole / sw_memset: src is the bytes, or nullptr for
// n copies of ch; whole: no write-combined compare (ThreadCtx::write_whole).
static int write_common(sw_pool* p, const char* fn, void* dst, const void* src, int ch, size_t n,
                        bool whole = false) {
  uint64_t off;
  if (!check_user(p, fn, dst, n, 1, &off)) return last_error();
  ThreadCtx& c = ctx_of(p);
  const bool ok = in_wrap(p, c, fn, [&] {
    if (p->strict) claim(p, c, fn, off, n);
    if (src && whole) {
      const bool compare = c.fresh.compare;
      c.write_whole = true;
      c.fresh.compare = false;
      write_parts(p, c, off, src, n);
      c.write_whole = false;
      c.fresh.compare = compare;
    } else if (src) {
      write_parts(p, c, off, src, n);
    } else {
      fill(p, c, off, ch, n);
    }
    if (!c.objects.empty() && !c.fail_code) {
      if (src) {
        c.objects.patch(off, src, n);
      } else {
        c.objects.patch_fill(off, ch, n);
      }
    }
    return true;
  });
  return ok ? 0 : last_error();
}

int sw_write(sw_pool* p, void* dst, const void* src, size_t n) {
  SW_NEED_POOL(p, "sw_write", SW_EINVAL);
  if (!src && n) return misuse(p->strict, SW_EINVAL, "sw_write: src is NULL");
  if (n == 0) return 0;
  return write_common(p, "sw_write", dst, src, 0, n);
}

int sw_write_whole(sw_pool* p, void* dst, const void* src, size_t n) {
  SW_NEED_POOL(p, "sw_write_whole", SW_EINVAL);
  if (!src && n) return misuse(p->strict, SW_EINVAL, "sw_write_whole: src is NULL");
  if (n == 0) return 0;
  return write_common(p, "sw_write_whole", dst, src, 0, n, true);
}

int sw_memset(sw_pool* p, void* dst, int ch, size_t n) {
  SW_NEED_POOL(p, "sw_memset", SW_EINVAL);
  if (n == 0) return 0;
  return write_common(p, "sw_memset", dst, nullptr, ch, n);
}

// sw_pmalloc and its forms: n bytes, zero-filled or not, their offset
// stored into *slot (when given) in the same wrap.
static void* alloc_common(sw_pool* p, const char* fn, size_t n, bool zero, uint64_t* slot) {
  SW_NEED_POOL(p, fn, nullptr);
  if (n == 0) return misuse(p->strict, SW_EINVAL, "%s of 0 bytes", fn), nullptr;
  uint64_t slot_off = 0;
  if (slot && !check_user(p, fn, slot, 8, 8, &slot_off)) return nullptr;
  ThreadCtx& c = ctx_of(p);
  uint64_t off = 0;
  const bool ok = in_wrap(p, c, fn, [&] {
    AllocInfo info;
    off = p->alloc->alloc(c, n, &info);
    if (off == 0) return false;
    alloc_fresh(p, c, off, info, zero ? n : 0);
    if (c.fail_code) return false;  // rolled back by the engine: no store may join it (see in_wrap)
    if (slot) {
      if (p->strict) claim(p, c, fn, slot_off, 8);
      p->engine->store(c, slot_off, off, 8);
    }
    return true;
  });
  return ok ? p->file->at(off) : nullptr;
}

void* sw_pmalloc(sw_pool* p, size_t n) { return alloc_common(p, "sw_pmalloc", n, false, nullptr); }
void* sw_pzalloc(sw_pool* p, size_t n) { return alloc_common(p, "sw_pzalloc", n, true, nullptr); }
void* sw_pmalloc_slot(sw_pool* p, uint64_t* slot, size_t n) {
  if (!slot) return misuse(p ? p->strict : process_strict(), SW_EINVAL, "sw_pmalloc_slot: slot is NULL"), nullptr;
  return alloc_common(p, "sw_pmalloc_slot", n, false, slot);
}
void* sw_pzalloc_slot(sw_pool* p, uint64_t* slot, size_t n) {
  if (!slot) return misuse(p ? p->strict : process_strict(), SW_EINVAL, "sw_pzalloc_slot: slot is NULL"), nullptr;
  return alloc_common(p, "sw_pzalloc_slot", n, true, slot);
}

// Frees the allocation at off in the open wrap; a bad offset is misuse.
// A fresh block (allocated by this wrap) is returned at once: the wrap
// may allocate it again (fresh again).
static bool free_at(sw_pool* p, ThreadCtx& c, uint64_t off) {
  if (!c.objects.empty()) [[unlikely]] {
    // Objects overlapping the block end here: what the program wrote to
    // them so far is written now, before the block is freed.
    const size_t n = p->alloc->usable_size(c, off);
    if (n && !c.objects.end_overlapping(off, n, [&](uint64_t o, const unsigned char* b, uint64_t len) {
          write_parts(p, c, o, b, len);
          return c.fail_code == 0;
        })) {
      return false;
    }
  }
  const bool fresh = c.fresh.contains(off, 1);
  const int rc = p->alloc->free(c, off, fresh);
  if (rc == SW_EINVAL) misuse(p->strict, rc, "%s", std::string(last_error_message()).c_str());
  if (rc == 0 && fresh) {
    c.fresh.remove(off);
    p->engine->fresh_released(c);
  }
  return rc == 0;
}

int sw_pfree(sw_pool* p, void* ptr) {
  SW_NEED_POOL(p, "sw_pfree", SW_EINVAL);
  if (!ptr) return 0;
  uint64_t off;
  if (!check_user(p, "sw_pfree", ptr, 1, 16, &off)) {
    return set_error(SW_EINVAL, "sw_pfree of %p: not a pool allocation (%s)", ptr,
                     std::string(last_error_message()).c_str());
  }
  ThreadCtx& c = ctx_of(p);
  return in_wrap(p, c, "sw_pfree", [&] { return free_at(p, c, off); }) ? 0 : last_error();
}

int sw_pfree_slot(sw_pool* p, uint64_t* slot) {
  SW_NEED_POOL(p, "sw_pfree_slot", SW_EINVAL);
  uint64_t slot_off;
  if (!slot) return misuse(p->strict, SW_EINVAL, "sw_pfree_slot: slot is NULL");
  if (!check_user(p, "sw_pfree_slot", slot, 8, 8, &slot_off)) return last_error();
  ThreadCtx& c = ctx_of(p);
  const bool ok = in_wrap(p, c, "sw_pfree_slot", [&] {
    const uint64_t off = p->engine->load(c, slot_off, 8);
    if (off == 0) return true;
    if (off < p->user_lo || off >= p->file->size()) {
      return misuse(p->strict, SW_EINVAL, "sw_pfree_slot: the slot at %p holds 0x%llx, not a pool allocation",
                    static_cast<void*>(slot), static_cast<unsigned long long>(off)),
             false;
    }
    if (!free_at(p, c, off) || c.fail_code) return false;
    if (p->strict) claim(p, c, "sw_pfree_slot", slot_off, 8);
    p->engine->store(c, slot_off, 0, 8);
    return true;
  });
  return ok ? 0 : last_error();
}

size_t sw_pusable_size(sw_pool* p, const void* ptr) {
  uint64_t off;
  SW_NEED_POOL(p, "sw_pusable_size", 0);
  if (!ptr || !check_user(p, "sw_pusable_size", ptr, 1, 16, &off)) return 0;
  return p->alloc->usable_size(ctx_of(p), off);
}

int sw_pool_stats(sw_pool* p, sw_stats* out) {
  SW_NEED_POOL(p, "sw_pool_stats", SW_EINVAL);
  if (!out) return misuse(p->strict, SW_EINVAL, "sw_pool_stats: out is NULL");
  *out = sw_stats{};
  std::lock_guard<std::mutex> g(p->ctx_mu);
  for (auto& c : p->ctxs) c->counters.add_to(out);
  p->engine->add_stats(out);
  return 0;
}

int sw_pool_stats_reset(sw_pool* p) {
  SW_NEED_POOL(p, "sw_pool_stats_reset", SW_EINVAL);
  std::lock_guard<std::mutex> g(p->ctx_mu);
  for (auto& c : p->ctxs) c->counters.reset();
  p->engine->reset_stats();
  return 0;
}

}  // extern "C"
