// c_api.cc — the C API: argument checks, nesting, thread contexts, and the
// assembly of the layers at create/open (medium, recovery, lanes, engine,
// allocator).  Everything here is a thin shell over the engine; the one
// place that decides what an address may be is check_user().
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "api/attach.h"
#include "api/runtime.h"
#include "common/error.h"
#include "recovery/recovery.h"

using namespace softwrap;

namespace {

std::atomic<uint64_t> g_next_pool_id{1};

struct TlsSlot {
  sw_pool* pool = nullptr;
  uint64_t id = 0;
  ThreadCtx* ctx = nullptr;
  std::weak_ptr<int> alive;
};

int end_outer(sw_pool* p, ThreadCtx& c, bool abort);

// Per-thread cache of contexts; on thread exit the contexts of pools still
// open are handed back for reuse, after rolling back a wrap the thread left
// open (it can never be closed: wraps belong to their thread).  The pool
// cannot go away meanwhile: sw_pool_close refuses while a wrap is open.
struct TlsCache {
  static constexpr int kSlots = 8;
  TlsSlot slot[kSlots];
  ~TlsCache() {
    for (TlsSlot& s : slot) {
      if (!s.ctx || !s.alive.lock()) continue;
      if (s.ctx->depth > 0) {
        tls_counters = &s.ctx->counters;
        end_outer(s.pool, *s.ctx, true);
      }
      s.ctx->owned.store(false, std::memory_order_release);
    }
    tls_counters = scratch_counters();
  }
};
thread_local TlsCache tls_cache;

ThreadCtx& slow_ctx(sw_pool* p) {
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
      p->engine->attach(*ctx);
    }
  }
  // Evict the last slot; move the new one to the front.
  for (int i = TlsCache::kSlots - 1; i > 0; --i) tls_cache.slot[i] = tls_cache.slot[i - 1];
  tls_cache.slot[0] = TlsSlot{p, p->id, ctx, p->alive};
  return *ctx;
}

inline ThreadCtx& ctx_of(sw_pool* p) {
  TlsSlot& s = tls_cache.slot[0];
  ThreadCtx* c;
  if (s.pool == p && s.id == p->id) {
    c = s.ctx;
  } else {
    c = nullptr;
    for (TlsSlot& t : tls_cache.slot) {
      if (t.pool == p && t.id == p->id) {
        std::swap(t, tls_cache.slot[0]);
        c = tls_cache.slot[0].ctx;
        break;
      }
    }
    if (!c) c = &slow_ctx(p);
  }
  tls_counters = &c->counters;
  return *c;
}

// Validates a user address range; returns its offset or sets the error.
inline bool check_user(sw_pool* p, const void* addr, size_t n, unsigned align, uint64_t* off) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr), b = reinterpret_cast<uintptr_t>(p->file->base());
  const uint64_t size = p->file->size();
  if (a < b + p->user_lo || a - b > size || n > size - (a - b)) {
    set_error(SW_ERANGE, "address %p (+%zu bytes) is outside the pool's heap [%p, %p)", addr, n,
              static_cast<void*>(p->file->base() + p->user_lo), static_cast<void*>(p->file->base() + size));
    return false;
  }
  if (align > 1 && (a & (align - 1))) {
    set_error(SW_EINVAL, "address %p is not aligned to %u bytes", addr, align);
    return false;
  }
  *off = a - b;
  return true;
}

int begin_outer(sw_pool* p, ThreadCtx& c) {
  c.lane = p->lanes->acquire(c.preferred_lane);
  c.preferred_lane = c.lane;
  c.fail_code = 0;
  ++c.wrap_serial;
  const int rc = p->engine->begin(c);
  if (rc != 0) {
    p->lanes->release(c.lane);
    return rc;
  }
  c.depth = 1;
  return 0;
}

int end_outer(sw_pool* p, ThreadCtx& c, bool abort) {
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
  c.fail_code = 0;
  p->lanes->release(c.lane);
  c.lane = ~0u;
  return rc;
}

// After a mutating engine call: a failed wrap has been rolled back by the
// engine; undo the allocator's DRAM reservations now.
inline void after_mutation(ThreadCtx& c) {
  if (c.fail_code && !c.abort_actions.empty()) c.run_abort_actions();
}

template <class T>
T load_n(sw_pool* p, const void* addr) {
  uint64_t off;
  if (!p) return set_error(SW_EINVAL, "pool is NULL"), T{0};
  if (!check_user(p, addr, sizeof(T), sizeof(T), &off)) return T{0};
  ThreadCtx& c = ctx_of(p);
  return static_cast<T>(p->engine->load(c, off, sizeof(T)));
}

template <class T>
void store_n(sw_pool* p, void* addr, T v) {
  uint64_t off;
  if (!p) return (void)set_error(SW_EINVAL, "pool is NULL");
  if (!check_user(p, addr, sizeof(T), sizeof(T), &off)) return;
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) {  // a wrap of its own
    if (begin_outer(p, c) != 0) return;
    p->engine->store(c, off, v, sizeof(T));
    end_outer(p, c, false);
    return;
  }
  if (c.fail_code) return;
  p->engine->store(c, off, v, sizeof(T));
  after_mutation(c);
}

sw_pool* assemble(std::unique_ptr<PoolFile> file, const ResolvedConfig& cfg) {
  auto p = std::unique_ptr<sw_pool>(new (std::nothrow) sw_pool);
  if (!p) return set_error(SW_ENOMEM, "out of memory"), nullptr;
  p->id = g_next_pool_id.fetch_add(1);
  p->cfg = cfg;
  p->file = std::move(file);
  MediumOptions mo;
  mo.kind = cfg.medium;
  mo.is_dax = p->file->is_dax();
  mo.scm_write_ns = cfg.scm_write_ns;
  mo.scm_serialize_ns = cfg.scm_serialize_ns;
  mo.scm_wc_entries = cfg.scm_wc_entries;
  mo.scm_shared_queue = (cfg.flags & SW_CONFIG_SCM_SHARED_QUEUE) != 0;
  p->medium = make_medium(mo, p->file->base(), p->file->size());
  if (!p->medium) return nullptr;
  if (check_engine_medium(cfg, p->medium->properties()) != 0) return nullptr;
  RecoveryOptions ro;
  ro.redo_skip_commit_validation = cfg.redo_skip_commit_validation;
  if (recover(*p->file, *p->medium, &p->report, ro) != 0) return nullptr;
  p->lanes = std::make_unique<LaneSet>(p->file.get());
  EngineEnv env{&p->cfg, p->file.get(), p->medium.get(), p->lanes.get()};
  p->engine = make_engine(env);
  if (!p->engine) return nullptr;
  if (Allocator::open(p->file.get(), &p->alloc) != 0) return nullptr;
  p->user_lo = p->file->header().heap_offset;
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

sw_pool* sw_pool_create(const char* path, size_t size, const sw_config* cfg) {
  if (!path) return set_error(SW_EINVAL, "path is NULL"), nullptr;
  ResolvedConfig rc;
  if (resolve_config(cfg, &rc) != 0) return nullptr;
  auto file = PoolFile::create(path, size, rc);
  if (!file) return nullptr;
  sw_pool* p = assemble(std::move(file), rc);
  if (!p) unlink(path);  // the new, empty file is ours: leave nothing behind
  return p;
}

sw_pool* sw_pool_open(const char* path, const sw_config* cfg) {
  if (!path) return set_error(SW_EINVAL, "path is NULL"), nullptr;
  ResolvedConfig rc;
  if (resolve_config(cfg, &rc) != 0) return nullptr;
  auto file = PoolFile::open(path);
  if (!file) return nullptr;
  return assemble(std::move(file), rc);
}

int sw_pool_close(sw_pool* p) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL");
  {
    std::lock_guard<std::mutex> g(p->ctx_mu);
    for (auto& c : p->ctxs) {
      if (c->depth > 0) return set_error(SW_EBUSY, "cannot close the pool: a thread has a wrap open on it");
    }
  }
  ctx_of(p);  // count the final retirement somewhere sensible
  int rc = p->engine->shutdown();
  p->medium->drain();
  {
    std::lock_guard<std::mutex> g(p->ctx_mu);
    for (auto& c : p->ctxs) p->engine->detach(*c);
  }
  for (TlsSlot& s : tls_cache.slot) {
    if (s.pool == p) s = TlsSlot{};
  }
  tls_counters = scratch_counters();
  delete p;
  return rc;
}

int sw_pool_quiesce(sw_pool* p) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL");
  {
    std::lock_guard<std::mutex> g(p->ctx_mu);
    for (auto& c : p->ctxs) {
      if (c->depth > 0) return set_error(SW_EBUSY, "cannot quiesce: a thread has a wrap open on the pool");
    }
  }
  ctx_of(p);
  return p->engine->quiesce();
}

void* sw_pool_root(sw_pool* p, size_t size) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL"), nullptr;
  ThreadCtx& c = ctx_of(p);
  std::lock_guard<std::mutex> g(p->root_mu);
  const uint64_t slot = p->file->header().meta_offset;  // PoolMeta::root_offset, then root_size
  uint64_t off = p->engine->load(c, slot, 8);
  if (off != 0) {
    const uint64_t have = p->engine->load(c, slot + 8, 8);
    if (size > have) {
      return set_error(SW_EINVAL, "root object is %llu bytes; %zu requested", static_cast<unsigned long long>(have),
                       size),
             nullptr;
    }
    return p->file->at(off);
  }
  if (size == 0) return set_error(SW_EINVAL, "pool has no root object yet"), nullptr;
  const bool own = c.depth == 0;
  if (own && begin_outer(p, c) != 0) return nullptr;
  if (c.fail_code) return set_error(SW_EABORTED, "the open wrap has failed"), nullptr;
  off = p->alloc->alloc(c, size);
  if (off != 0) {
    static const unsigned char zeros[4096] = {};
    for (size_t done = 0; done < size && !c.fail_code; done += sizeof zeros) {
      p->engine->write(c, off + done, zeros, std::min(sizeof zeros, size - done));
    }
    p->engine->store(c, slot, off, 8);
    p->engine->store(c, slot + 8, size, 8);
  }
  after_mutation(c);
  const bool failed = off == 0 || c.fail_code;
  if (own) {
    if (failed) {
      end_outer(p, c, true);
      return nullptr;
    }
    if (end_outer(p, c, false) != 0) return nullptr;
  } else if (failed) {
    return nullptr;
  }
  return p->file->at(off);
}

uint64_t sw_pool_offset(sw_pool* p, const void* addr) {
  if (!p || !addr) return 0;
  return p->file->offset_of(addr);
}
void* sw_pool_ptr(sw_pool* p, uint64_t off) { return p && off ? p->file->at(off) : nullptr; }
void* sw_pool_base(sw_pool* p) { return p ? p->file->base() : nullptr; }
size_t sw_pool_size(sw_pool* p) { return p ? p->file->size() : 0; }

int sw_pool_recovery_report(sw_pool* p, sw_recovery_report* out) {
  if (!p || !out) return set_error(SW_EINVAL, "NULL argument");
  *out = p->report;
  return 0;
}

const char* sw_pool_engine_name(sw_pool* p) { return p ? p->engine->name() : ""; }
const char* sw_pool_medium_name(sw_pool* p) { return p ? p->medium->properties().name : ""; }

int sw_wrap_open(sw_pool* p) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL");
  ThreadCtx& c = ctx_of(p);
  if (c.depth > 0) {
    ++c.depth;
    return 0;
  }
  return begin_outer(p, c);
}

int sw_wrap_close(sw_pool* p) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL");
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) return set_error(SW_ENOWRAP, "sw_wrap_close without an open wrap");
  if (c.depth > 1) {
    --c.depth;
    return 0;
  }
  return end_outer(p, c, false);
}

int sw_wrap_abort(sw_pool* p) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL");
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) return set_error(SW_ENOWRAP, "sw_wrap_abort without an open wrap");
  return end_outer(p, c, true);
}

int sw_wrap_depth(sw_pool* p) { return p ? ctx_of(p).depth : 0; }

uint8_t sw_load8(sw_pool* p, const void* a) { return load_n<uint8_t>(p, a); }
uint16_t sw_load16(sw_pool* p, const void* a) { return load_n<uint16_t>(p, a); }
uint32_t sw_load32(sw_pool* p, const void* a) { return load_n<uint32_t>(p, a); }
uint64_t sw_load64(sw_pool* p, const void* a) { return load_n<uint64_t>(p, a); }
void sw_store8(sw_pool* p, void* a, uint8_t v) { store_n<uint8_t>(p, a, v); }
void sw_store16(sw_pool* p, void* a, uint16_t v) { store_n<uint16_t>(p, a, v); }
void sw_store32(sw_pool* p, void* a, uint32_t v) { store_n<uint32_t>(p, a, v); }
void sw_store64(sw_pool* p, void* a, uint64_t v) { store_n<uint64_t>(p, a, v); }

int sw_read(sw_pool* p, void* dst, const void* src, size_t n) {
  uint64_t off;
  if (!p || (!dst && n)) return set_error(SW_EINVAL, "NULL argument");
  if (n == 0) return 0;
  if (!check_user(p, src, n, 1, &off)) return last_error();
  p->engine->read(ctx_of(p), dst, off, n);
  return 0;
}

static int write_common(sw_pool* p, void* dst, const void* src, size_t n) {
  uint64_t off;
  if (!check_user(p, dst, n, 1, &off)) return last_error();
  ThreadCtx& c = ctx_of(p);
  const bool own = c.depth == 0;
  if (own) {
    if (int rc = begin_outer(p, c)) return rc;
  } else if (c.fail_code) {
    return set_error(SW_EABORTED, "the open wrap has failed (%s)", sw_strerror(c.fail_code));
  }
  p->engine->write(c, off, src, n);
  after_mutation(c);
  if (own) return end_outer(p, c, false);
  return c.fail_code ? c.fail_code : 0;
}

int sw_write(sw_pool* p, void* dst, const void* src, size_t n) {
  if (!p || (!src && n)) return set_error(SW_EINVAL, "NULL argument");
  if (n == 0) return 0;
  return write_common(p, dst, src, n);
}

int sw_memset(sw_pool* p, void* dst, int ch, size_t n) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL");
  if (n == 0) return 0;
  std::unique_ptr<unsigned char[]> buf(new (std::nothrow) unsigned char[n]);
  if (!buf) return set_error(SW_ENOMEM, "out of memory");
  std::memset(buf.get(), ch, n);
  return write_common(p, dst, buf.get(), n);
}

void* sw_pmalloc(sw_pool* p, size_t n) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL"), nullptr;
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) return set_error(SW_ENOWRAP, "sw_pmalloc outside a wrap"), nullptr;
  if (c.fail_code) return set_error(SW_EABORTED, "the open wrap has failed"), nullptr;
  if (n == 0) return set_error(SW_EINVAL, "sw_pmalloc of 0 bytes"), nullptr;
  const uint64_t off = p->alloc->alloc(c, n);
  after_mutation(c);
  return off && !c.fail_code ? p->file->at(off) : nullptr;
}

void* sw_pzalloc(sw_pool* p, size_t n) {
  void* a = sw_pmalloc(p, n);
  if (a && sw_memset(p, a, 0, n) != 0) return nullptr;
  return a;
}

int sw_pfree(sw_pool* p, void* ptr) {
  if (!p) return set_error(SW_EINVAL, "pool is NULL");
  if (!ptr) return 0;
  uint64_t off;
  if (!check_user(p, ptr, 1, 16, &off)) return set_error(SW_EINVAL, "sw_pfree of %p: not a pool allocation", ptr);
  ThreadCtx& c = ctx_of(p);
  if (c.depth == 0) return set_error(SW_ENOWRAP, "sw_pfree outside a wrap");
  if (c.fail_code) return set_error(SW_EABORTED, "the open wrap has failed");
  const int rc = p->alloc->free(c, off);
  after_mutation(c);
  return rc;
}

size_t sw_pusable_size(sw_pool* p, const void* ptr) {
  uint64_t off;
  if (!p || !ptr || !check_user(p, ptr, 1, 16, &off)) return 0;
  return p->alloc->usable_size(ctx_of(p), off);
}

int sw_pool_stats(sw_pool* p, sw_stats* out) {
  if (!p || !out) return set_error(SW_EINVAL, "NULL argument");
  *out = sw_stats{};
  std::lock_guard<std::mutex> g(p->ctx_mu);
  for (auto& c : p->ctxs) c->counters.add_to(out);
  p->engine->add_stats(out);
  return 0;
}

int sw_pool_stats_reset(sw_pool* p) {
  if (!p) return set_error(SW_EINVAL, "NULL argument");
  std::lock_guard<std::mutex> g(p->ctx_mu);
  for (auto& c : p->ctxs) c->counters.reset();
  p->engine->reset_stats();
  return 0;
}

}  // extern "C"
