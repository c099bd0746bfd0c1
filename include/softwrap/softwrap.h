/*
 * softwrap.h — the C API of softwrap: failure-atomic, durable transactions
 * ("wraps") over byte-addressable persistent memory.
 *
 * A program creates or opens a *pool* (a file mapped into memory), then
 * groups stores to pool memory into *wraps*:
 *
 *     sw_pool *p = sw_pool_open("/mnt/pmem/bank", NULL);
 *     struct bank *b = sw_pool_root(p, sizeof *b);
 *     sw_wrap_open(p);
 *     sw_store64(p, &b->acct[1], sw_load64(p, &b->acct[1]) - 10);
 *     sw_store64(p, &b->acct[2], sw_load64(p, &b->acct[2]) + 10);
 *     if (sw_wrap_close(p) != 0) fprintf(stderr, "%s\n", sw_errormsg());
 *
 * After sw_wrap_close returns 0, every store of the wrap survives any crash;
 * a crash before that leaves none of them.  Nested wraps are flattened into
 * the outermost one.
 *
 * Error handling: functions returning int give 0 on success and a negative
 * SW_E* code on failure; functions returning pointers give NULL.  In both
 * cases sw_errormsg() describes the last failure of the calling thread.
 * Functions returning values (sw_load*) cannot fail loudly: on misuse the
 * library's return 0 and set the thread's error (see sw_errno()), or abort
 * in strict mode (below); the inline loads leave the misuse checks to
 * strict mode (see "Inline access").
 *
 * Concurrency: many threads may run wraps on one pool at once.  Isolation
 * is the caller's, as in the SoftWrAP paper: two wraps that are open at the
 * same time must not touch the same 8-byte word unless the caller serializes
 * them with its own lock, and the lock must be released only *after*
 * sw_wrap_close returns ("close before you unlock").  Loads under such a
 * lock see the newest committed (or own uncommitted) values.
 *
 * Addresses passed to the access functions are pointers into the pool's
 * mapping (as returned by sw_pool_root, sw_pmalloc or computed from them).
 * Persistent data must refer to other persistent data by offset
 * (sw_pool_offset / sw_pool_ptr), because the mapping address may change
 * between runs.
 *
 * Plain stores: write pool memory only through sw_store*, sw_write,
 * sw_memset and the allocation functions.  A plain C store (`*p = v`,
 * memset, memcpy) into the mapping is part of no wrap, under every engine:
 * it is not atomic, not durable (nothing flushes it) and, under the
 * default engine `softwrap`, a word that has a live alias (stored by a
 * wrap whose values are not yet retired home) is overwritten later by
 * retirement, so the plain store is silently lost.  To initialise fresh
 * memory use sw_pzalloc, sw_memset or sw_write (inside a wrap or as a wrap
 * of their own).  Plain *loads* are fine under `undo`, `nonatomic` and
 * `softwrap-local` (values are home by the time a wrap closes); under
 * `softwrap` they see the newest committed values only after
 * sw_pool_quiesce.  Strict mode (below) reports a plain store that
 * retirement would overwrite.
 *
 * Strict mode (SW_CONFIG_STRICT, or SOFTWRAP_STRICT=1 in the environment):
 * API misuse aborts the process with a message and a backtrace instead of
 * only setting the thread's error — an address outside the pool or
 * misaligned, a NULL or closed pool, closing or aborting without an open
 * wrap, a store outside a wrap on a pool opened with
 * SW_CONFIG_REQUIRE_WRAP, sw_pfree of something not allocated, closing or
 * quiescing a pool while a wrap is open, a store to a word that another
 * thread's open wrap has stored to ("close before you unlock" broken), and,
 * under `softwrap`, a plain store to a word with a live alias (found when
 * retirement compares home with the value it had when aliased).  Failures
 * that are not misuse (pool full, I/O errors, a wrap too large, a busy
 * pool file) are reported as usual.  Strict mode costs a lock per stored
 * word; off (the default), misuse checks cost nothing on the fast path.
 */
#ifndef SOFTWRAP_SOFTWRAP_H_
#define SOFTWRAP_SOFTWRAP_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SW_API __attribute__((visibility("default")))
#else
#define SW_API
#endif

/* sw_load*, sw_read and sw_peek are inline functions with GCC and Clang
 * (see "Inline access" below) unless SW_NO_INLINE is defined before this
 * header is included; they are then plain calls of the library, as with
 * other compilers. */
#if defined(__GNUC__) && !defined(SW_NO_INLINE)
#define SW_INLINE_ACCESS 1
#endif

/* ---------------------------------------------------------------- errors */

#define SW_OK 0
#define SW_EINVAL (-1)    /* bad argument or API misuse */
#define SW_EIO (-2)       /* operating-system I/O failure (see message) */
#define SW_ENOMEM (-3)    /* DRAM allocation failed */
#define SW_ENOSPC (-4)    /* the pool's heap is full */
#define SW_ECORRUPT (-5)  /* the pool's metadata fails validation */
#define SW_EFOREIGN (-6)  /* the file is not a softwrap pool */
#define SW_EVERSION (-7)  /* pool layout version not supported */
#define SW_ENOWRAP (-8)   /* operation needs an open wrap */
#define SW_ETOOBIG (-9)   /* wrap needs more log space than the pool has free
                             (or more alias entries than DRAM holds); aborted */
#define SW_ENOTSUP (-10)  /* not supported by this engine / medium */
#define SW_EBUSY (-11)    /* pool in use (locked by another process, open wraps) */
#define SW_EEXIST (-12)   /* file exists (sw_pool_create) */
#define SW_ERANGE (-13)   /* address outside the pool */
#define SW_EABORTED (-14) /* the wrap had failed earlier and was rolled back */

/* Thread-local message describing the calling thread's last failure; never
 * NULL ("" when there was none).  Valid until the thread's next failure. */
SW_API const char *sw_errormsg(void);
/* Thread-local SW_E* code of the last failure (0 if none). */
SW_API int sw_errno(void);
/* Static name of an SW_E* code ("SW_ENOSPC"). */
SW_API const char *sw_strerror(int code);

/* ---------------------------------------------------------------- config */

typedef enum sw_engine_kind {
  SW_ENGINE_DEFAULT = 0,     /* softwrap unless SOFTWRAP_ENGINE says otherwise */
  SW_ENGINE_SOFTWRAP = 1,    /* global alias tables + redo log (the paper) */
  SW_ENGINE_SOFTWRAP_LOCAL = 2, /* per-thread alias table, recycled at close */
  SW_ENGINE_UNDO = 3,        /* undo log, PMDK style (baseline) */
  SW_ENGINE_NONATOMIC = 4,   /* durable but not atomic (baseline, control) */
  SW_ENGINE_UNDO_THEMIS = 5  /* undo log without the fences that order each
                                streamed undo record before the store it
                                protects: crash-consistent only where a
                                non-temporal store persists before every later
                                temporal store of its thread (the Themis
                                persistency model).  No x86 CPU keeps that rule
                                today, so on the x86, msync and scm-emu media
                                sw_pool_create/sw_pool_open refuse it
                                (SW_ENOTSUP) unless SW_CONFIG_THEMIS_IDEAL is
                                set; it then runs, fast and NOT crash-safe: the
                                Themis paper's "Ideal" upper bound. */
} sw_engine_kind;

typedef enum sw_medium_kind {
  SW_MEDIUM_AUTO = 0,   /* x86 on DAX (MAP_SYNC), msync elsewhere */
  SW_MEDIUM_X86 = 1,    /* clwb/clflushopt/clflush + movnt + sfence */
  SW_MEDIUM_MSYNC = 2,  /* x86 instructions plus msync at each fence */
  SW_MEDIUM_SCM_EMU = 3 /* x86 plus the papers' emulated SCM timing */
} sw_medium_kind;

/* Options for create/open.  Zero-initialize and set what you need; zero
 * fields take defaults.  Environment variables override (so any program
 * can be switched without recompiling): SOFTWRAP_ENGINE
 * (softwrap|softwrap-local|undo|undo-themis|nonatomic), SOFTWRAP_MEDIUM
 * (auto|x86|msync|scm-emu), SOFTWRAP_SCM_WRITE_NS, SOFTWRAP_SCM_SERIAL_NS,
 * SOFTWRAP_SCM_QUEUE (per-thread|shared), SOFTWRAP_ALIAS_ENTRIES,
 * SOFTWRAP_WCL (1: SW_CONFIG_WCL, 0: SW_CONFIG_NO_WCL, auto: neither, the
 * medium's choice: sw_pool_wcl),
 * SOFTWRAP_SHADOW_BUDGET_KIB, SOFTWRAP_ALIAS_FILTER_GRANULE (bytes of address per
 * alias-filter slot, a power of two 64..65536; default 64), SOFTWRAP_SPILL_MIB (DRAM a wrap of the softwrap
 * engines may hold before it spills: writes in place behind undo records;
 * default 64), SOFTWRAP_STRICT (1|0: set or clear
 * SW_CONFIG_STRICT), SOFTWRAP_REQUIRE_WRAP (1|0: SW_CONFIG_REQUIRE_WRAP),
 * SOFTWRAP_THEMIS_IDEAL (1|0: SW_CONFIG_THEMIS_IDEAL), SOFTWRAP_COUNT_LOADS
 * (1|0: SW_CONFIG_COUNT_LOADS), SOFTWRAP_RETIRE_HELP (1|0: clear or set
 * SW_CONFIG_NO_RETIRE_HELP), SOFTWRAP_RETIRE_THREADS (softwrap: threads
 * that write retired alias tables home, 1..8; default 1). */
typedef struct sw_config {
  sw_engine_kind engine;
  sw_medium_kind medium;
  uint32_t scm_write_ns;      /* scm-emu: Tw per cache line (default 1000) */
  uint32_t scm_serialize_ns;  /* scm-emu: Ts per pcommit (default 220) */
  uint32_t scm_wc_entries;    /* scm-emu: write-combining queue (default 8) */
  uint32_t alias_entries;     /* softwrap: entries per alias table, power of
                                 two (default 16384) */
  uint32_t retire_divisor;    /* softwrap: retire when a table holds
                                 entries/retire_divisor (default 8) */
  uint32_t shadow_page_size;  /* softwrap: sw_read/sw_write page, power of
                                 two, 64..65536 (default 1024) */
  uint32_t max_alias_tables;  /* softwrap: tables in the ring, >= 2 (default
                                 8; more than 2 only for outsized wraps) */
  /* Creation only (ignored by open, which reads them from the pool): */
  uint32_t lanes;             /* log lanes = wraps open at once (default 32) */
  uint64_t lane_size;         /* fixed log bytes per lane (default: the
                                 lanes share min(pool/16, 24 MiB), at least
                                 64 KiB each; at most 64 GiB); a wrap whose
                                 log outgrows it continues in log space
                                 taken from the heap, so lanes do not bound
                                 wraps: only free pool space does */
  uint32_t flags;             /* SW_CONFIG_* */
  uint32_t shadow_budget_kib; /* softwrap: a table is also retired once its
                                 shadow pages hold this many KiB (default
                                 2048) */
  uint64_t max_size;          /* growth limit in bytes.  At create: 0 = the
                                 pool does not grow (default); else >= size,
                                 or SW_POOL_SIZE_UNLIMITED.  At open: 0 =
                                 keep the pool's recorded limit; else a new
                                 limit (>= the pool's size), recorded in the
                                 pool.  SOFTWRAP_POOL_MAX overrides. */
} sw_config;

/* sw_config.max_size of a pool that grows as far as the file system allows.
 * Its address range is reserved at open: the file system's size, at most
 * 1 TiB (SOFTWRAP_POOL_RESERVE changes that bound); sw_pool_max_size() says
 * how far the open pool can grow. */
#define SW_POOL_SIZE_UNLIMITED UINT64_MAX

#define SW_CONFIG_NO_RETIRE_THREAD 0x1u /* retire inline in wrap_close (tests) */
#define SW_CONFIG_OVERWRITE 0x2u        /* sw_pool_create may replace a file */
#define SW_CONFIG_SCM_SHARED_QUEUE 0x4u /* scm-emu: one write queue for all
                                           threads (default: one per thread,
                                           as in the papers' emulator) */
#define SW_CONFIG_STRICT 0x8u           /* misuse aborts the process with a
                                           message (see the top of this file) */
#define SW_CONFIG_REQUIRE_WRAP 0x10u    /* stores, writes and allocations
                                           outside a wrap are refused
                                           (SW_ENOWRAP) instead of being wraps
                                           of their own */
#define SW_CONFIG_WCL 0x20u             /* write-combined logging on, on any
                                           medium (softwrap, softwrap-local;
                                           undo skips unchanged stores): each
                                           stored word is compared with the
                                           value the wrap sees; unchanged
                                           words are dropped, words changed
                                           in one 32-bit half are logged two
                                           to a record (docs/log-format.md).
                                           With neither this flag nor
                                           SW_CONFIG_NO_WCL the medium
                                           decides (by default only
                                           ranges of 4 KiB or more are
                                           compared): see sw_pool_wcl */
#define SW_CONFIG_THEMIS_IDEAL 0x40u    /* let SW_ENGINE_UNDO_THEMIS run on a
                                           medium that does not keep the
                                           Themis rule (x86, msync, scm-emu):
                                           the paper's "Ideal", for measuring
                                           what the removed fences cost.  A
                                           power failure may then leave a wrap
                                           half done.  Without the flag such
                                           an open fails with SW_ENOTSUP. */
#define SW_CONFIG_NO_RETIRE_HELP 0x100u /* softwrap: wraps never write
                                           home lines for retirement (by
                                           default they do when it falls
                                           behind: see "Wraps and
                                           retirement" below) */
#define SW_CONFIG_COUNT_LOADS 0x80u     /* count every load in sw_stats.loads
                                           (and the alias hits and misses of
                                           every load): inline loads then
                                           call the library instead of
                                           reading home themselves (see
                                           "Inline access" below) */
#define SW_CONFIG_READONLY 0x200u       /* sw_pool_open: a pool this process
                                           may only read.  The file is opened
                                           read-only and mapped copy-on-write:
                                           recovery and retirement change
                                           only this process's view, nothing
                                           is ever written to the file, the
                                           pool never grows, and a wrap (or
                                           an implicit one: a store outside a
                                           wrap, an allocation) fails with
                                           SW_EINVAL.  sw_pool_create refuses
                                           it (SW_EINVAL). */
#define SW_CONFIG_NO_WCL 0x800u         /* write-combined logging off, on any
                                           medium (with SW_CONFIG_WCL too:
                                           SW_EINVAL) */
#define SW_CONFIG_SHARED 0x400u        /* share the pool with other
                                           processes (and other handles of
                                           this one): every one maps it, one
                                           at a time holds write access.  See
                                           "Pools shared between processes"
                                           below.  Without it an open is
                                           exclusive: a second one fails with
                                           SW_EBUSY. */

/* ------------------------------------------------------------------ pool */

typedef struct sw_pool sw_pool;

/* Creates a pool file of `size` bytes (at least 8 MiB) at `path` and opens
 * it.  Fails with SW_EEXIST if the file exists (unless SW_CONFIG_OVERWRITE),
 * SW_EINVAL for a bad size/config (also a max_size below size), SW_ENOSPC
 * if the file system has no room, SW_EIO for OS errors, SW_ENOTSUP for
 * SW_ENGINE_UNDO_THEMIS on a medium without the Themis rule and without
 * SW_CONFIG_THEMIS_IDEAL (no file is left behind).  cfg may be NULL.
 *
 * Growth: a pool created with cfg->max_size > size grows when its heap is
 * full (an allocation, or log space a large wrap needs): the file is
 * extended and mapped in place, so every pointer into the pool stays valid;
 * each growth doubles the pool (adding at most 1 GiB, at least what the
 * request needs) up to max_size.  A crash during a growth leaves a pool
 * that opens, with every committed wrap.  Growth is not part of a wrap: an
 * aborted wrap leaves the pool grown.
 *
 * Device DAX: `path` may be a device-DAX character device (/dev/daxX.Y, as
 * NVDIMM and CXL namespaces often appear; size and alignment read from
 * sysfs).  The pool then takes the whole device (size 0) or `size` bytes of
 * it (SW_ENOSPC if it does not fit), does not grow (max_size must be 0 or
 * size: SW_EINVAL), is made durable with CPU flushes (x86 medium; no
 * msync), and replaces what the device holds — a pool, or any data in its
 * first page — only with SW_CONFIG_OVERWRITE (SW_EEXIST otherwise); a
 * device is never removed.
 * sw_pool_open opens it the same way (not SW_CONFIG_READONLY: device DAX
 * has no copy-on-write mappings). */
SW_API sw_pool *sw_pool_create(const char *path, size_t size, const sw_config *cfg);

/* Opens an existing pool and runs recovery.  Refuses (NULL) files that are
 * not softwrap pools (SW_EFOREIGN), of an unknown layout version
 * (SW_EVERSION), truncated, with a bad header checksum or a bad zone
 * (SW_ECORRUPT), or already open in another process (SW_EBUSY); SW_EINVAL
 * for a cfg->max_size below the pool's size; SW_ENOTSUP for
 * SW_ENGINE_UNDO_THEMIS on a medium without the Themis rule unless
 * SW_CONFIG_THEMIS_IDEAL is set.  Never writes to a file it
 * refused.  A pool of an older layout version (1 to 3) is upgraded in
 * place to the current one (4), crash-safely, unless other handles share
 * it; older releases then refuse it.  cfg may be NULL. */
SW_API sw_pool *sw_pool_open(const char *path, const sw_config *cfg);

/* Retires everything, makes it durable, unmaps and frees the handle.
 * May be called from any thread, including from atexit handlers and from
 * destructors of static and thread_local objects, and after threads that
 * used the pool have exited (a wrap a thread left open when it exited was
 * rolled back then).  REQUIRES: no thread has a wrap open on the pool (else
 * SW_EBUSY and the pool stays open).  SW_EINVAL for a handle that is not an
 * open pool (closed already).  A process that exits without closing leaves
 * a pool that the next open recovers (committed wraps survive). */
SW_API int sw_pool_close(sw_pool *pool);

/* Returns the root object, allocating and zeroing `size` bytes the first
 * time (durably, in a wrap of its own or the caller's; a wrap of its own
 * even under SW_CONFIG_REQUIRE_WRAP).  Later calls return
 * the same object; asking for more than its size fails (NULL, SW_EINVAL).
 * size 0 returns the existing root or NULL. */
SW_API void *sw_pool_root(sw_pool *pool, size_t size);

/* Retires all aliases so that plain (non-sw_load) reads see the newest
 * committed values.  Until the next wrap stores to a word, nothing
 * overwrites it, so a single-threaded program may also read-modify-write
 * it with plain stores then — but those stores are neither atomic nor
 * durable (nothing flushes them).  REQUIRES: no open wraps on the pool
 * (else SW_EBUSY). */
SW_API int sw_pool_quiesce(sw_pool *pool);

/* ------------------------------------- pools shared between processes
 *
 * A pool opened with SW_CONFIG_SHARED (by sw_pool_open or sw_pool_create)
 * may be open in several processes at once, and in several handles of one
 * process; every one of them must use the flag (an open without it is
 * exclusive and fails with SW_EBUSY while a shared one is open, and the
 * other way round).  Every handle maps the pool shared.  One handle at a
 * time holds *write access*, a lock on the pool file that the kernel
 * releases if its process dies:
 *
 *  - Wraps (and stores, writes and allocations outside one) need write
 *    access.  A wrap opened by a handle that does not hold it takes it
 *    first, waiting up to 10 s (SOFTWRAP_SHARE_WAIT_MS) for the holder to
 *    give it up, and fails with SW_EBUSY after that; it gives it up again
 *    when the wrap closes if another handle has the pool open.
 *    sw_pool_write_begin/sw_pool_write_end hold it across many wraps.
 *  - Taking write access makes the handle current: the pool's growth by
 *    other handles is mapped (the base address never moves), the commits
 *    of a holder that died are recovered, and what the handle keeps of
 *    the pool in DRAM (the allocator's free lists, commit order) is
 *    rebuilt if another handle wrote since it last held write access.
 *  - Giving write access up first makes every wrap the handle committed
 *    home (retired, flushed, fenced), then marks the pool clean.  So the
 *    loads of a handle without write access, which read home, see exactly
 *    the committed state of the last holder.
 *  - A handle alone on its pool keeps write access between sessions and
 *    pays nothing per wrap (no lock, no system call, no retirement forced):
 *    a background thread checks for company once a millisecond and gives
 *    write access up when another handle opens the pool (or after 100 ms
 *    without a wrap: an idle process polls nothing).  Opening a
 *    shared pool waits (up to SOFTWRAP_SHARE_WAIT_MS) for write access too:
 *    recovery and the open-time checks run with it.
 *
 * What a reader may assume.  After sw_pool_refresh returns (0 or 1), home
 * holds the committed state of the last handle that gave write access up:
 * a complete prefix of its wraps, and nothing of a wrap that did not
 * commit, also when that handle died (refresh then recovers it).  Until
 * another handle takes write access; a holder's retirement writes home
 * while it works, so readers and writers must exclude each other for as
 * long as a reader reads (a lock of the application's; the SQLite VFS
 * uses SQLite's own).  Pointers stay valid: the pool never moves.
 *
 * Forking.  A child must not use a handle its parent opened: every call on
 * it fails (SW_EINVAL) except sw_pool_close, which forgets it without
 * touching the pool.  The child opens the pool itself (with
 * SW_CONFIG_SHARED, if the parent keeps it open).  A handle opened with
 * SW_CONFIG_READONLY keeps writers out (they wait, then get SW_EBUSY) for
 * as long as it is open: it reads a private copy. */

/* Takes write access for the calling process's handle and holds it until
 * the matching sw_pool_write_end (calls nest and may come from any
 * thread).  timeout_ms: how long to wait for another handle to give it up
 * (0: do not wait; < 0: SOFTWRAP_SHARE_WAIT_MS, default 10 s).  0, or
 * SW_EBUSY (another handle kept it), SW_EIO (the lock failed), SW_ECORRUPT
 * (recovering a holder that died found corrupt metadata), SW_ENOSPC
 * (another handle grew the pool beyond the address range this one
 * reserved: reopen it), SW_EINVAL (read-only handle, forked child).  On a
 * pool that is not shared it does nothing and returns 0. */
SW_API int sw_pool_write_begin(sw_pool *pool, int timeout_ms);
/* Ends a sw_pool_write_begin.  The last session to end (wraps are sessions
 * too) gives write access up if another handle has the pool open, after
 * making every commit home.  0; SW_EINVAL without an open
 * sw_pool_write_begin; or the error of making commits home (write access
 * is then kept, and the next end tries again). */
SW_API int sw_pool_write_end(sw_pool *pool);
/* Ends a sw_pool_write_begin like sw_pool_write_end, except that the last
 * session to end keeps write access even while other handles have the
 * pool open, as long as none of them asks for it: it is given up (every
 * commit made home first) within about a millisecond of another handle
 * waiting for it (in sw_pool_write_begin, a wrap, an open or
 * sw_pool_refresh), or after 100 ms without a session.  For a program
 * whose readers in other processes never need the writer's commits home
 * at the end of a session (it makes what they read home itself:
 * sw_pool_publish), so that a writer beside readers does not give write
 * access up and take it again at every transaction.  Return values as
 * sw_pool_write_end. */
SW_API int sw_pool_write_pause(sw_pool *pool);
/* For a handle that reads a pool others write: catches up with them.
 * Maps what they grew, and if the last holder of write access died (or
 * still holds it: waits up to SOFTWRAP_SHARE_WAIT_MS for it), takes write
 * access to recover it and gives it back.  Returns 1 if another handle
 * has written since this handle's previous refresh (drop what you cached
 * of the pool), 0 if not, or SW_EBUSY/SW_EIO/SW_ECORRUPT/SW_ENOSPC as
 * sw_pool_write_begin.  0 on a pool that is not shared. */
SW_API int sw_pool_refresh(sw_pool *pool);
/* 1 if this handle holds write access now (an exclusive, writable handle
 * always does), else 0. */
SW_API int sw_pool_write_held(sw_pool *pool);
/* For a program whose own protocol tells readers in other processes what
 * to read (SQLite's WAL index: a reader reads only frames a header it
 * accepted counts), so that readers need not exclude the writer:
 *
 * sw_pool_publish makes every wrap the calling thread has committed on the
 * pool home (retired: written, flushed, fenced) before it returns, keeping
 * write access, so a handle in another process that reads those bytes
 * after learning of them (through shared memory written after this call)
 * reads them.  It waits for the retirement of the alias tables those wraps
 * stored into, and so for wraps other threads have open in them to close.
 * Returns at once (0) on a pool that is not shared or while the handle has
 * no company (nobody else has the pool open: a newcomer's open waits for
 * write access, which goes only with every commit home).  0; SW_EBUSY if
 * retirement did not finish within its bounded wait; SW_EINVAL on a forked
 * child's handle.
 *
 * sw_pool_follow is sw_pool_refresh without the wait: it maps what other
 * handles grew the pool by, so that their newest blocks can be read, and
 * recovers a holder of write access that died, but never waits for a live
 * holder: it promises nothing about what is home while one writes (the
 * program's protocol does).  1 if another handle has written since this
 * handle's previous refresh or follow (as far as a live holder has said
 * so: it says it when it gives write access up), 0 if not; SW_ENOSPC (the
 * pool grew beyond the address range this handle reserved), SW_EIO,
 * SW_ECORRUPT as sw_pool_refresh; 0 on a pool that is not shared. */
SW_API int sw_pool_publish(sw_pool *pool);
SW_API int sw_pool_follow(sw_pool *pool);

/* Locks of the program's own, elided while its process is alone.  A
 * program that coordinates its processes with byte-range locks on the pool
 * file (open-file-description locks, at offsets from SW_APP_LOCK_BASE on:
 * never pool data) need not take them while its handle holds write access
 * and no other handle has the pool open: nobody else can take them then,
 * since opening a shared pool waits for write access.  The SQLite VFS
 * elides SQLite's locks so.
 *
 * sw_pool_if_alone calls fn(arg) and returns 1 if that holds now; else it
 * returns 0 without calling fn.  A handle without write access takes it
 * first if no other handle has the pool open (never waiting; having found
 * company, it does not look again for 10 ms), so a reader alone elides
 * too; it keeps it as after a wrap.  Once it has returned 1, the handle calls
 * the hook set by sw_pool_set_alone_hook before it next gives write access
 * up (to another handle's open, after idling, or at sw_pool_close): the
 * hook takes for real the locks the program skipped, and returns 0, or
 * nonzero if it could not (write access is then kept, the give-up fails
 * with SW_EIO, and is tried again later; at close it is given up anyway).
 * fn and the hook run under the handle's sharing lock, on any thread (the
 * hook often on the handle's background thread): they must not call
 * softwrap on this pool nor wait for a thread that does.  So the program
 * sets its own "elided" flag in fn and clears it in the hook, both under a
 * mutex of its own that it never holds while calling softwrap.
 * sw_pool_if_alone returns 0 on a pool that is not shared (an exclusive
 * pool has no company to fear: such a program takes no locks at all),
 * SW_EINVAL on a forked child's handle; sw_pool_set_alone_hook returns 0
 * (hook NULL: none) or SW_EINVAL on a pool that is not shared. */
#define SW_APP_LOCK_BASE ((int64_t)((UINT64_C(1) << 62) + 4096))
SW_API int sw_pool_set_alone_hook(sw_pool *pool, int (*hook)(void *arg), void *arg);
SW_API int sw_pool_if_alone(sw_pool *pool, void (*fn)(void *arg), void *arg);

/* The pool's identity: 16 random bytes chosen when it was created, kept by
 * every copy and move of the file (a name for things that belong to one
 * pool, such as SQLite's WAL index).  0, or SW_EINVAL. */
SW_API int sw_pool_uuid(sw_pool *pool, uint8_t out[16]);

/* Offset of a pool address (0 for NULL) and the reverse (NULL for 0). */
SW_API uint64_t sw_pool_offset(sw_pool *pool, const void *addr);
SW_API void *sw_pool_ptr(sw_pool *pool, uint64_t offset);
SW_API void *sw_pool_base(sw_pool *pool);
/* The pool's current size in bytes: [base, base + size) is the pool.  It
 * grows (see sw_pool_create); it never shrinks.  0 for NULL. */
SW_API size_t sw_pool_size(sw_pool *pool);
/* How large the pool can grow while it is open: its maximum size, or for a
 * pool created with SW_POOL_SIZE_UNLIMITED, the address range reserved at
 * open.  Equal to sw_pool_size() for a pool that does not grow.  The range
 * [base, base + max) is reserved for the pool while it is open, so no other
 * mapping lands there.  0 for NULL. */
SW_API size_t sw_pool_max_size(sw_pool *pool);

/* What recovery did when the pool was opened. */
typedef struct sw_recovery_report {
  uint64_t redo_wraps_replayed;  /* committed redo wraps copied home */
  uint64_t redo_bytes_replayed;
  uint64_t undo_wraps_rolled_back;
  uint64_t undo_bytes_restored;
  uint64_t torn_frames_skipped;  /* uncommitted/torn log frames ignored */
  uint64_t elapsed_ns;
} sw_recovery_report;
SW_API int sw_pool_recovery_report(sw_pool *pool, sw_recovery_report *out);

/* Names of the engine and medium the pool was opened with. */
SW_API const char *sw_pool_engine_name(sw_pool *pool);
SW_API const char *sw_pool_medium_name(sw_pool *pool);

/* What the platform promises for an open pool, and how softwrap makes its
 * stores durable there (docs/media.md, "Persistence domains").  The strings
 * belong to the pool and live until it is closed; fields are only ever
 * appended in later versions.
 *
 * persistence_domain is read at open from the nd region behind the pool's
 * file (regionN/persistence_domain in sysfs) or given by the user in
 * SOFTWRAP_PERSISTENCE=auto|cpu-cache|memory-controller|none (a bad value
 * fails open and create with SW_EINVAL).  Where it is cpu-cache (eADR, a
 * CXL host's global persistent flush) the x86 medium runs in its cpu-cache
 * form: flush_insn "none" (no line is written back), the ordering fences
 * that x86-TSO makes unneeded not issued (counted in fences_elided), the
 * commit fences kept; SOFTWRAP_CPU_CACHE_STREAMS=temporal (default) or
 * non-temporal chooses how logs are written there, and
 * SOFTWRAP_CPU_CACHE_FENCES=keep issues the ordering fences anyway (bad
 * values fail open and create with SW_EINVAL).  The msync medium (a file
 * in a page cache) and scm-emu (an emulated ADR device) flush as before. */
typedef struct sw_pool_platform_info {
  const char *medium;              /* "x86", "msync", "scm-emu", "trace" */
  const char *flush_insn;          /* "clwb", "clflushopt", "clflush", "msync", "none" */
  const char *persistence_domain;  /* "cpu-cache", "memory-controller", "none", "unknown" */
  const char *domain_source;       /* the sysfs file read, "SOFTWRAP_PERSISTENCE", or "not found" */
  const char *domain_detail;       /* why not found ("" otherwise) */
  int synchronous;                 /* 1: MAP_SYNC (DAX file) or device DAX: no msync needed */
  size_t page_size;                /* the kernel's page size of the mapping (KernelPageSize in
                                      /proc/self/smaps; 2 MiB where DAX gave huge pages), bytes */
} sw_pool_platform_info;
SW_API int sw_pool_platform(sw_pool *pool, sw_pool_platform_info *out);

/* Write-combined logging by medium.  The compare reads each stored word's
 * current value (often a cache miss) and classifies it; what it saves is
 * log (and for an unchanged word its alias entry and home write).  Where a
 * written line costs a few nanoseconds a word store's compare costs more
 * than it saves, while a rewritten page (most of it unchanged) saves far
 * more than its compare on every medium.  So with neither SW_CONFIG_WCL nor
 * SW_CONFIG_NO_WCL (and SOFTWRAP_WCL unset or auto) a pool compares:
 *   x86, msync  sw_write ranges of 4 KiB or more only, by every engine;
 *               word stores and smaller ranges are logged whole.  TPC-C on
 *               the softwrap VFS (pages of 4 KiB): 1.10x-1.14x the
 *               transactions on x86, 1.17x-1.23x on msync in a database on
 *               ext4; a B+tree's shifted leaf entries (small ranges, every
 *               word changed) and word stores run as without WCL;
 *   scm-emu     everything when Tw (scm_write_ns) is at least 200 ns, as
 *               x86 below that: each streamed line costs Tw.
 * On a persistent-memory device whose line writes take hundreds of
 * nanoseconds, set SW_CONFIG_WCL.  Returns 1 if the pool's wraps compare
 * every store and range, 2 if only ranges of 4 KiB or more, 0 if nothing,
 * -1 for NULL; *why (if why is not NULL) is a static string saying what
 * decided ("SW_CONFIG_WCL", "SW_CONFIG_NO_WCL", "SOFTWRAP_WCL=1",
 * "SOFTWRAP_WCL=0", or "the x86 medium's default (...)", and so on). */
SW_API int sw_pool_wcl(sw_pool *pool, const char **why);

/* ----------------------------------------------------------------- wraps */

/* Wraps and retirement (softwrap engine).  A committed wrap's values wait in
 * DRAM alias tables until a background thread writes them home.  When that
 * thread falls behind — the table going home has more entries left than
 * the active table has room for before its next switch — the outermost
 * sw_wrap_close also writes home about as many entries of that table as its
 * wrap aliased, before its commit fence (so the close takes longer by
 * those home lines, and no extra fence), and a wrap whose first change
 * must wait for retirement (its table far past its threshold) writes home
 * while it waits.  Either way the crash contract is unchanged: no home location ever
 * holds a value of a wrap before that wrap is durable, nor an older value
 * after a newer one.  SW_CONFIG_NO_RETIRE_HELP turns the helping off;
 * sw_stats.help_entries and throttle_waits count it. */

/* Opens a wrap (or a nested level of the calling thread's open wrap).  The
 * wrap takes what a commit needs (a log lane, the engine's state) at its
 * first change — a store, write, allocation, free or sw_modify — so a wrap
 * that only reads, or does nothing, costs a depth count and commits
 * nothing.  (On a pool opened with SW_CONFIG_SHARED the wrap takes write
 * access at its open, as before.) */
SW_API int sw_wrap_open(sw_pool *pool);
/* Closes one nesting level; closing the outermost commits: when it returns
 * 0 the wrap is durable.  SW_ENOWRAP without an open wrap.  If the wrap
 * failed earlier (e.g. SW_ETOOBIG) it has already been rolled back: inner
 * closes return 0 and the outermost returns SW_EABORTED.  A wrap still open
 * when its thread exits is rolled back then. */
SW_API int sw_wrap_close(sw_pool *pool);
/* Discards the effects of the calling thread's outermost wrap (whatever the
 * nesting depth) and ends it.  Under the nonatomic engine the stores cannot
 * be taken back: they are flushed, the wrap ends and SW_ENOTSUP is
 * returned (0 if the wrap had changed nothing). */
SW_API int sw_wrap_abort(sw_pool *pool);
/* Current nesting depth of the calling thread (0 = no wrap). */
SW_API int sw_wrap_depth(sw_pool *pool);

/* ---------------------------------------------------------------- access */

/* Loads see the newest value stored by any committed wrap or by the
 * caller's own open wrap.  Sizes must be naturally aligned.  Inline where
 * the compiler allows (see "Inline access" below): a load of a word that
 * no live alias may hold is a few compares and a plain load.  Out-of-pool
 * or misaligned addresses, and another pool's handle, are misuse: strict
 * mode aborts with a message; otherwise the library's loads (the *_slow
 * functions, and these where they are not inline) return 0 and set
 * SW_ERANGE / SW_EINVAL, while the inline ones do not check and load the
 * address as a plain load would (or ask the library, which reports it,
 * when the address's filter slot happens to be raised). */
#ifndef SW_INLINE_ACCESS
SW_API uint8_t sw_load8(sw_pool *pool, const void *addr);
SW_API uint16_t sw_load16(sw_pool *pool, const void *addr);
SW_API uint32_t sw_load32(sw_pool *pool, const void *addr);
SW_API uint64_t sw_load64(sw_pool *pool, const void *addr);
#endif

/* Stores join the calling thread's open wrap; outside a wrap a store is a
 * wrap of its own (or SW_ENOWRAP under SW_CONFIG_REQUIRE_WRAP).  Misuse sets
 * the thread's error and stores nothing (strict mode: aborts). */
SW_API void sw_store8(sw_pool *pool, void *addr, uint8_t v);
SW_API void sw_store16(sw_pool *pool, void *addr, uint16_t v);
SW_API void sw_store32(sw_pool *pool, void *addr, uint32_t v);
SW_API void sw_store64(sw_pool *pool, void *addr, uint64_t v);

/* Copies n bytes pool -> DRAM (read) or DRAM -> pool (write, in the wrap,
 * or as a wrap of its own outside one), any alignment; softwrap stages them
 * in shadow pages.  Return 0 or an SW_E* code. */
#ifndef SW_INLINE_ACCESS
SW_API int sw_read(sw_pool *pool, void *dst, const void *src, size_t n);
#endif
SW_API int sw_write(sw_pool *pool, void *dst, const void *src, size_t n);
/* As sw_write, for bytes that replace unrelated ones (a log's appends over
 * an older generation of itself, a page that takes another page's place):
 * under SW_CONFIG_WCL they are logged and written whole, not compared word
 * by word with what they overwrite first, since such a compare finds
 * nothing to leave out and costs a load and a compare per word.  The
 * same atomicity and durability as sw_write; wcl_* counters do not count
 * them.  Without SW_CONFIG_WCL it is sw_write. */
SW_API int sw_write_whole(sw_pool *pool, void *dst, const void *src, size_t n);
/* Zero-copy read: returns a pointer to n bytes equal to what
 * sw_read(pool, scratch, addr, n) would copy.  That pointer is addr itself
 * when the home bytes are what a reader sees, and scratch (filled by the
 * engine's read) otherwise.
 *
 * When home bytes are used (the overlay rules):
 *   softwrap        no alias table a reader consults (every table not yet
 *                   retired, the active one included, so the caller's own
 *                   uncommitted stores too) may hold any byte of the
 *                   range: the alias filter's slots of the range are clear
 *                   (see "Inline access"), or else, for each shadow page
 *                   the range touches, one Bloom-filter bit per page and
 *                   table is clear; so a store to a neighbouring line or
 *                   another part of the same page, or a filter false
 *                   positive, makes it copy;
 *   softwrap-local  outside a wrap always; inside one, when the caller's
 *                   own alias table may hold nothing of those pages (or
 *                   no open wrap aliases anything of the range);
 *   undo, nonatomic always (they store in place; reads never overlay).
 *
 * Lifetime and concurrency: the bytes at a returned home address are live
 * pool memory, not a copy.  They stay equal to what sw_read would return
 * until the range is next written — by any thread, the caller included:
 * under undo and nonatomic a store changes them at once, under softwrap
 * when the store's table is retired.  So consume (or copy) them before the
 * caller next writes any byte of the range, and, exactly as for sw_read,
 * exclude concurrent writers of the range with your own locking (a racing
 * writer can make any read see a mix of old and new bytes).  Never write
 * through the returned pointer.  Costs no copy and no shared-memory write
 * on the home path (softwrap: a few atomic loads and one filter word per
 * page and table), so it suits read-mostly descents of pool data
 * structures.
 *
 * REQUIRES: [addr, addr + n) inside the pool's heap; scratch has room for
 * n bytes (it may be left untouched).  Returns NULL and sets the thread's
 * error on SW_EINVAL (NULL pool, or NULL scratch with n > 0) or SW_ERANGE
 * (range outside the heap).  n == 0 returns addr. */
#ifndef SW_INLINE_ACCESS
SW_API const void *sw_peek(sw_pool *pool, const void *addr, size_t n, void *scratch);
#endif
/* Like sw_write with a constant byte. */
SW_API int sw_memset(sw_pool *pool, void *dst, int c, size_t n);

/* Object writes: names the n bytes at addr (an object: a struct, a node,
 * an array; any alignment) that the calling thread's open wrap is about to
 * write, and returns a pointer to n bytes the program then reads and
 * writes with plain loads and stores (a memmove, a field assignment) for
 * the rest of the wrap.  They start as what sw_read would return; what the
 * program leaves there when the outermost wrap closes is committed with
 * the wrap, as if by sw_write, and only the bytes it changed are logged.
 * An abort (or a failed wrap) drops them.  The cheap way to make several
 * changes to one object: no library call per store.
 *
 * Per engine the pointer is:
 *   softwrap, softwrap-local  a DRAM copy private to the wrap; other
 *                   threads see the changes when the wrap commits, as for
 *                   sw_write;
 *   undo, undo-themis, nonatomic
 *                   addr itself: the range's old bytes are logged first
 *                   (undo), the stores go home in place and are flushed
 *                   at close (PMDK's pmemobj_tx_add_range, then stores).
 * Either way the wrap's own sw_load*, sw_read and sw_peek of those bytes
 * see its newest values, and its sw_store*, sw_write and sw_memset of them
 * change what the pointer shows too: mixing both ways of writing the same
 * bytes in one wrap is fine.
 *
 * Lifetime: the pointer is valid until the outermost wrap closes or
 * aborts.  Calling sw_modify again for bytes inside an object of the wrap
 * returns a pointer into the same bytes; a range that overlaps objects of
 * the wrap without lying inside one of them makes one object of them all,
 * and the earlier pointers to those objects must no longer be used (their
 * bytes so far are kept).  Freeing (sw_pfree) a block that overlaps an
 * object ends the object the same way.  Never keep the pointer past the
 * wrap, and never hand it to sw_write/sw_read as a pool address.
 *
 * Returns NULL and sets the thread's error on SW_EINVAL (NULL pool, n 0),
 * SW_ERANGE (range outside the heap), SW_ENOWRAP (no open wrap),
 * SW_EABORTED (the wrap failed earlier), SW_ENOMEM (no DRAM for the copy)
 * or SW_ETOOBIG (undo: no log space; the wrap is rolled back).  In strict
 * mode the range is claimed like a store's words. */
SW_API void *sw_modify(sw_pool *pool, void *addr, size_t n);

/* --------------------------------------------------------- inline access
 *
 * A program reads persistent data far more often than it writes it, so the
 * reads are inline functions (with GCC and Clang, unless SW_NO_INLINE is
 * defined): sw_load8/16/32/64 ask the pool's alias filter whether the
 * word's region (and, where the region is raised, the word's slot) is
 * clear and, if it is, load the mapped word directly — one check and a
 * plain load, what PMDK's and Romulus's reads cost; sw_read
 * and sw_peek do the same for a range (also checking that it lies in the
 * heap: a range is worth the compare).  Otherwise they call the library:
 * the *_slow functions below, which are exactly the exported sw_load64,
 * sw_read and sw_peek (what a program that cannot inline, through a
 * foreign-function interface or dlsym, calls).
 *
 * The alias filter has two levels: 512 regions of 8 bytes (4 KiB, which
 * stays in the first-level cache), one per 2 MiB of address (wrapping
 * around every GiB), and beneath them the slots, one per filter_granule
 * bytes.  A region is 0 while no live alias touches it; the check reads
 * the word's slot only where its region is not 0.
 *
 * The alias filter is the engine's promise about order (docs/design.md,
 * "The alias filter"): a region and a slot are raised before an alias of a word in them
 * becomes visible to any reader and cleared only after that word's newest
 * value is home.  A reader that synchronised with the writer's unlock
 * ("close before you unlock", above) therefore finds the slot raised (and
 * asks the library, which consults the alias tables) or finds the newest
 * value at home.  The caller's own uncommitted stores raise their slots
 * too, so a wrap always sees its own stores.  Per engine:
 *   softwrap        a slot holds 1 + the newest alias-table generation that
 *                   aliases something in it, and is clear once that table
 *                   is retired (live = 1 + the oldest generation not yet
 *                   retired); a region likewise (64-bit), set to 0 when
 *                   that table retires;
 *   softwrap-local  a slot counts the open wraps' keys (of any thread) in
 *                   it (live = 1), a region the open wraps that count in
 *                   it: another thread's open wrap sends a load to the
 *                   library, which reads home for it;
 *   undo, undo-themis, nonatomic
 *                   one region and one slot, always clear: they store in
 *                   place.
 *
 * What the inline word load does not check: that the address lies in the
 * pool and is naturally aligned.  Those checks are for misuse only, so they
 * belong to strict mode (SW_CONFIG_STRICT), where every access calls the
 * library, which aborts with a message; without strict mode an inline load
 * of a bad address reads it as a plain load would (the exported sw_load*
 * still return 0 and set SW_ERANGE / SW_EINVAL for it).  Every access also
 * calls the library with SW_CONFIG_COUNT_LOADS and on a medium that records
 * loads (the crash simulator's trace medium, for the Themis simulator): the
 * filter is then regions and a slot that are always raised.  An inline
 * load costs a load of its region (in this struct, at a constant offset: a
 * cache hit in a loop) after a shift and a mask by constants, a compare
 * with 0 and the plain load: no call, no thread-local access, no write to
 * shared memory, and no counting (sw_stats.loads counts only the loads that
 * reach the library; all of them under SW_CONFIG_COUNT_LOADS).  The handle
 * is not tested per load: which regions to read (the handle's, or for NULL
 * regions always raised, which send the load to the library and its error)
 * is a branch-free function of the handle, which a loop over one handle
 * computes once.
 *
 * Views.  A loop over many loads of one pool can take a view instead — sw_view v = sw_view_of(pool); ...
 * sw_view_load64(&v, addr) — a copy of what the check needs, which the
 * compiler keeps in registers (so long as the view's address does not
 * escape): the handle is tested once, not for every load, and the slot's
 * fields, where a region is raised, are not reloaded from this struct
 * (the check's acquire loads keep a compiler from reusing them across a
 * loop's iterations).
 * A view answers exactly as sw_load64 does and stays valid until the pool
 * is closed (what it copies never changes while the handle is open).
 *
 * sw_pool_hot is the first member of every open sw_pool and the only part
 * of it this header sees.  Programs must never write it.  Its layout and
 * meaning are fixed for SW_POOL_HOT_VERSION: the version-1 fields keep
 * their offsets in every later library (new fields go into `reserved`),
 * and a library whose filter means something else keeps this one's filter
 * a single raised slot and span 0, so inline code compiled against this
 * header then calls the library (it stays correct, only slower).
 * Libraries from before sw_pool_hot have SOVERSION 0 (libsoftwrap.so.0);
 * this one is libsoftwrap.so.1, so the loader never pairs a program
 * compiled against this header with one of them. */

#define SW_POOL_HOT_VERSION 2u

typedef struct sw_pool_hot {
  const uint32_t *filter; /* filter_mask + 1 slots; read them atomically */
  uint64_t filter_mask;
  uint32_t filter_shift;  /* slot of address a: ((uintptr_t)a >> filter_shift)
                             & filter_mask */
  uint32_t live;          /* slot value s is raised iff (int32_t)(s - live) >= 0;
                             read it with acquire */
  char *heap;             /* the first user address (base + heap offset) */
  uint64_t span;          /* inline range reads may touch [heap, heap + span):
                             the heap (it grows: read it atomically), or 0 */
  char *base;             /* the mapping: pool offset 0 (sw_pool_base) */
  uint32_t version;       /* SW_POOL_HOT_VERSION */
  uint32_t reserved;
  /* Version 2 (libsoftwrap.so.5 and later): */
  uint64_t reserved2[9];  /* 0; the regions start a cache line */
  uint64_t regions[512];  /* SW_HOT_REGIONS; region of address a:
                             regions[((uintptr_t)a >> SW_HOT_REGION_SHIFT)
                             & (SW_HOT_REGIONS - 1)]; 0 is clear; read them
                             atomically (acquire) */
} sw_pool_hot;

/* The regions' mapping, fixed for SW_POOL_HOT_VERSION 2 (the inline check
 * compiles it in: a region is at a constant offset from the handle). */
#define SW_HOT_REGION_SHIFT 21u
#define SW_HOT_REGIONS 512u

/* SW_HOT_REGIONS regions that are always raised (every value 1). */
SW_API extern const uint64_t sw_hot_raised_regions[SW_HOT_REGIONS];

/* A copy of what the check needs, for loops (see "Views" above). */
typedef struct sw_view {
  const uint64_t *coarse;
  const uint32_t *filter;
  uint64_t filter_mask;
  const uint32_t *live;
  sw_pool *pool;
  uint32_t filter_shift;
  uint32_t reserved;
} sw_view;

/* The out-of-line reads (see above). */
SW_API uint8_t sw_load8_slow(sw_pool *pool, const void *addr);
SW_API uint16_t sw_load16_slow(sw_pool *pool, const void *addr);
SW_API uint32_t sw_load32_slow(sw_pool *pool, const void *addr);
SW_API uint64_t sw_load64_slow(sw_pool *pool, const void *addr);
SW_API int sw_read_slow(sw_pool *pool, void *dst, const void *src, size_t n);
SW_API const void *sw_peek_slow(sw_pool *pool, const void *addr, size_t n, void *scratch);

#ifdef SW_INLINE_ACCESS
/* C code, compiled by C++ programs too: their -Wold-style-cast and
 * -Wzero-as-null-pointer-constant (even with -Werror) must not reject it. */
#if defined(__cplusplus)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wzero-as-null-pointer-constant"
#endif

/* Ranges covering more filter slots than this go to the library. */
#define SW_HOT_RANGE_SLOTS 16u

/* Whether the alias filter's slot i is clear. */
static inline int sw_hot_slot_clear(const sw_pool_hot *h, uintptr_t i) {
  const uint32_t s = __atomic_load_n(&h->filter[i & h->filter_mask], __ATOMIC_ACQUIRE);
  return (int32_t)(s - __atomic_load_n(&h->live, __ATOMIC_ACQUIRE)) < 0;
}
/* Whether address a's region (of the regions at c) is clear (0). */
static inline int sw_hot_region_clear(const uint64_t *c, uintptr_t a) {
  return __atomic_load_n(&c[(a >> SW_HOT_REGION_SHIFT) & (SW_HOT_REGIONS - 1)], __ATOMIC_ACQUIRE) == 0;
}
/* The regions an inline load reads: the handle's, or for NULL regions that
 * are always raised (so the load goes to the library, which reports the
 * misuse).  A select, not a branch: in a loop over one handle the compiler
 * computes it once, before the loop, and each load is then a shift, a mask,
 * a load and compare of its region and a branch beside the plain load. */
static inline const uint64_t *sw_hot_regions_of(sw_pool *pool) {
  const uintptr_t raised = (uintptr_t)sw_hot_raised_regions;
  const uintptr_t own = (uintptr_t)pool + offsetof(sw_pool_hot, regions);
  uintptr_t mask = 0 - (uintptr_t)(pool != 0), r;
  /* Both values opaque to the optimiser: without the first it turns the
   * select back into a branch in every load, without the second it keeps
   * the last xor inside the loop.  Still functions of the handle alone. */
  __asm__("" : "+r"(mask));
  r = raised ^ ((own ^ raised) & mask);
  __asm__("" : "+r"(r));
  return (const uint64_t *)r;
}
/* Whether address a's region, or failing that its slot, is clear (never
 * for a NULL pool). */
static inline int sw_hot_clear(sw_pool *pool, uintptr_t a) {
  const sw_pool_hot *h = (const sw_pool_hot *)(const void *)pool;
  if (__builtin_expect(sw_hot_region_clear(sw_hot_regions_of(pool), a), 1)) return 1;
  return pool != 0 && sw_hot_slot_clear(h, a >> h->filter_shift);
}

/* Whether the n bytes at addr (n > 0, any alignment) lie in the heap and
 * their slots are clear. */
static inline int sw_hot_range(sw_pool *pool, const void *addr, size_t n) {
  const sw_pool_hot *h = (const sw_pool_hot *)(const void *)pool;
  const uintptr_t a = (uintptr_t)addr;
  const uint64_t d = (uint64_t)(a - (uintptr_t)h->heap);
  const uint64_t span = __atomic_load_n(&h->span, __ATOMIC_RELAXED);
  if (__builtin_expect(n > span || d > span - n, 0)) return 0;
  /* Most ranges lie in one region (a region is at least 4 KiB). */
  if (__builtin_expect(((a ^ (a + n - 1)) >> SW_HOT_REGION_SHIFT) == 0 && sw_hot_region_clear(h->regions, a), 1))
    return 1;
  const uintptr_t first = a >> h->filter_shift, last = (a + n - 1) >> h->filter_shift;
  if (last - first >= SW_HOT_RANGE_SLOTS) return 0;
  for (uintptr_t i = first;; ++i) {
    if (!sw_hot_slot_clear(h, i)) return 0;
    if (i == last) return 1;
  }
}

#define SW_HOT_LOAD(pool, addr, T, slow)                                                      \
  do {                                                                                        \
    if (__builtin_expect(sw_hot_clear((pool), (uintptr_t)(addr)), 1))                        \
      return __atomic_load_n((const T *)(addr), __ATOMIC_RELAXED);                            \
    return slow((pool), (addr));                                                              \
  } while (0)

static inline uint8_t sw_load8(sw_pool *pool, const void *addr) { SW_HOT_LOAD(pool, addr, uint8_t, sw_load8_slow); }
static inline uint16_t sw_load16(sw_pool *pool, const void *addr) {
  SW_HOT_LOAD(pool, addr, uint16_t, sw_load16_slow);
}
static inline uint32_t sw_load32(sw_pool *pool, const void *addr) {
  SW_HOT_LOAD(pool, addr, uint32_t, sw_load32_slow);
}
static inline uint64_t sw_load64(sw_pool *pool, const void *addr) {
  SW_HOT_LOAD(pool, addr, uint64_t, sw_load64_slow);
}
static inline int sw_read(sw_pool *pool, void *dst, const void *src, size_t n) {
  if (__builtin_expect(pool != 0 && n != 0 && dst != 0 && sw_hot_range(pool, src, n), 1)) {
    __builtin_memcpy(dst, src, n);
    return 0;
  }
  return sw_read_slow(pool, dst, src, n);
}
static inline const void *sw_peek(sw_pool *pool, const void *addr, size_t n, void *scratch) {
  if (__builtin_expect(pool != 0 && n != 0 && scratch != 0 && sw_hot_range(pool, addr, n), 1)) return addr;
  return sw_peek_slow(pool, addr, n, scratch);
}

#undef SW_HOT_LOAD

/* The view of pool (NULL: a view whose every load calls the library, which
 * fails as sw_load64 does for NULL). */
static inline sw_view sw_view_of(sw_pool *pool) {
  static const uint32_t raised = 1; /* a slot compared with itself as live: raised */
  sw_view v;
  v.reserved = 0;
  if (pool == 0) {
    v.coarse = sw_hot_raised_regions;
    v.filter = &raised;
    v.filter_mask = 0;
    v.filter_shift = 0;
    v.live = &raised;
  } else {
    const sw_pool_hot *h = (const sw_pool_hot *)(const void *)pool;
    v.coarse = h->regions;
    v.filter = h->filter;
    v.filter_mask = h->filter_mask;
    v.filter_shift = h->filter_shift;
    v.live = &h->live;
  }
  v.pool = pool;
  return v;
}
/* Whether address a's region, or failing that its slot, is clear. */
static inline int sw_view_clear(const sw_view *v, uintptr_t a) {
  if (__builtin_expect(sw_hot_region_clear(v->coarse, a), 1)) return 1;
  const uint32_t s = __atomic_load_n(&v->filter[(a >> v->filter_shift) & v->filter_mask], __ATOMIC_ACQUIRE);
  return (int32_t)(s - __atomic_load_n(v->live, __ATOMIC_ACQUIRE)) < 0;
}

#define SW_VIEW_LOAD(v, addr, T, slow)                                              \
  do {                                                                              \
    if (__builtin_expect(sw_view_clear((v), (uintptr_t)(addr)), 1))                 \
      return __atomic_load_n((const T *)(addr), __ATOMIC_RELAXED);                  \
    return slow((v)->pool, (addr));                                                 \
  } while (0)

/* As sw_load8/16/32/64 (the same answer, errors included), through a view. */
static inline uint8_t sw_view_load8(const sw_view *v, const void *addr) { SW_VIEW_LOAD(v, addr, uint8_t, sw_load8_slow); }
static inline uint16_t sw_view_load16(const sw_view *v, const void *addr) {
  SW_VIEW_LOAD(v, addr, uint16_t, sw_load16_slow);
}
static inline uint32_t sw_view_load32(const sw_view *v, const void *addr) {
  SW_VIEW_LOAD(v, addr, uint32_t, sw_load32_slow);
}
static inline uint64_t sw_view_load64(const sw_view *v, const void *addr) {
  SW_VIEW_LOAD(v, addr, uint64_t, sw_load64_slow);
}

#undef SW_VIEW_LOAD

#if defined(__cplusplus)
#pragma GCC diagnostic pop
#endif
#else /* !SW_INLINE_ACCESS: views call the library's loads */
static inline sw_view sw_view_of(sw_pool *pool) {
  static sw_view zero; /* static storage: zero-initialised, never written */
  sw_view v = zero;
  v.pool = pool;
  return v;
}
static inline uint8_t sw_view_load8(const sw_view *v, const void *addr) { return sw_load8(v->pool, addr); }
static inline uint16_t sw_view_load16(const sw_view *v, const void *addr) { return sw_load16(v->pool, addr); }
static inline uint32_t sw_view_load32(const sw_view *v, const void *addr) { return sw_load32(v->pool, addr); }
static inline uint64_t sw_view_load64(const sw_view *v, const void *addr) { return sw_load64(v->pool, addr); }
#endif /* SW_INLINE_ACCESS */

/* ------------------------------------------------------------ allocation */

/* Allocates n bytes (16-byte aligned, uninitialized) in the calling
 * thread's open wrap: if the wrap aborts or a crash interrupts it, the
 * allocation never happened.  Outside a wrap the allocation is a wrap of
 * its own (SW_ENOWRAP under SW_CONFIG_REQUIRE_WRAP) — but a block whose
 * only reference is a DRAM pointer is leaked by a crash before the wrap
 * that stores its offset into the pool commits; sw_pmalloc_slot does both
 * in one wrap.  Initialise the block with sw_write/sw_memset/sw_store*
 * (not plain stores; see the top of this file).  NULL with SW_ENOSPC when
 * the pool is full, SW_EINVAL for n == 0, SW_EABORTED if the open wrap
 * has failed.
 *
 * Until the wrap ends the block is "fresh": no committed state can reach
 * it, so the wrap's stores and writes to it go home in place (no alias;
 * flushed and fenced before the commit, no log record — except that a
 * redo wrap whose fresh blocks hold at most 256 bytes in all copies them
 * into its log instead of paying a fence of their own), on every engine
 * that logs — a new node or record costs what writing it to memory costs.
 * sw_stats.fresh_blocks / fresh_words count them.  (A block freed by a
 * committed wrap becomes fresh for a later one once the redo engines have
 * retired the freeing wrap's log; until then it is logged as before.) */
SW_API void *sw_pmalloc(sw_pool *pool, size_t n);
/* As sw_pmalloc, zero-filled (in the same wrap; in place, and not at all
 * where the pool knows the bytes are zero already, e.g. a new pool's or a
 * growth's chunks: a block as large as the free space costs little). */
SW_API void *sw_pzalloc(sw_pool *pool, size_t n);
/* Leak-free allocation (PMDK's pmemobj_alloc with a destination): in one
 * wrap (the caller's, or one of its own), allocates n bytes and stores the
 * new block's pool offset into the 8-byte persistent word *slot (in the
 * pool, 8-byte aligned).  After a crash either the block exists and *slot
 * holds its offset, or neither.  *slot's previous value is overwritten (a
 * block it referred to is not freed).  Returns the block, or NULL as
 * sw_pmalloc (and SW_ERANGE / SW_EINVAL for a bad slot). */
SW_API void *sw_pmalloc_slot(sw_pool *pool, uint64_t *slot, size_t n);
/* As sw_pmalloc_slot, zero-filled. */
SW_API void *sw_pzalloc_slot(sw_pool *pool, uint64_t *slot, size_t n);
/* Frees in the open wrap (takes effect when it commits; a block the same
 * wrap allocated is returned at once, to that wrap's next allocations of
 * its size), or in a wrap of its own outside one.  NULL is a no-op; a pointer not returned by
 * sw_pmalloc (or already freed) fails with SW_EINVAL. */
SW_API int sw_pfree(sw_pool *pool, void *p);
/* Frees the block whose pool offset *slot holds and stores 0 into *slot,
 * in one wrap; a slot holding 0 is a no-op.  SW_EINVAL if *slot holds
 * something that is not a live allocation. */
SW_API int sw_pfree_slot(sw_pool *pool, uint64_t *slot);
/* Usable size of an allocation. */
SW_API size_t sw_pusable_size(sw_pool *pool, const void *p);

/* -------------------------------------------------------------- counters */

/* Per-pool event counters.  New fields are only ever added at the end.
 * Buckets of the removable-fence distance histograms: */
#define SW_GAP_BUCKETS 96

typedef struct sw_stats {
  uint64_t wraps;          /* outermost wraps committed */
  uint64_t aborts;         /* outermost wraps aborted */
  uint64_t loads;          /* loads and reads that reached the library: an
                              inline load that reads home is not counted
                              (it would cost a thread-local update); with
                              SW_CONFIG_COUNT_LOADS every load reaches the
                              library, so this counts them all */
  uint64_t stores;         /* word stores; sw_write counts one per call */
  uint64_t log_bytes;      /* bytes of log records written */
  uint64_t streamed_lines; /* cache lines written with non-temporal stores */
  uint64_t flushes;        /* cache lines flushed (clwb/clflushopt/clflush) */
  uint64_t fences;         /* persist fences (pcommits on scm-emu) */
  uint64_t fences_commit;  /* ... of which at wrap commit */
  uint64_t fences_log;     /* ... ordering a streamed log record before the
                              data store it protects (non-temporal ->
                              temporal) */
  uint64_t fences_retire;  /* ... retirement / truncation */
  uint64_t home_writes;    /* stores to home locations */
  uint64_t alias_hits;     /* lookups in the alias tables (by loads that
                              reached the library, and by stores that
                              merge or compare) that found the word ... */
  uint64_t alias_misses;   /* ... and that read it at home */
  uint64_t table_switches;
  uint64_t retire_ns;      /* time spent retiring alias tables */
  uint64_t retired_entries;
  /* Write-combined logging (SW_CONFIG_WCL): 8-byte words the redo engines
   * stored, by how they reached the log after the read-and-compare: */
  uint64_t wcl_words_full;       /* changed in both halves: a full record */
  uint64_t wcl_words_half;       /* changed in one 32-bit half only */
  uint64_t wcl_words_paired;     /* ... of which logged two to a record */
  uint64_t wcl_words_eliminated; /* unchanged: no record, no alias, no home write */
  uint64_t wcl_words_uncompared; /* stored without a compare: the thread's
                                    compares had found nothing to save
                                    lately, so only every 256th of its wraps
                                    compares (its first two word stores)
                                    until one pays again */
  uint64_t log_words_saved;      /* log words not written thanks to WCL */
  uint64_t log_lines_saved;      /* log cache lines not written thanks to WCL */
  uint64_t log_halfwords_allowed; /* twice the log words the paper's encoding
                                     could save for the words compared: 2 per
                                     unchanged word stored alone, 1/2 per
                                     half-changed one; for an sw_write range,
                                     its entry minus one entry of only its
                                     changed words (the bound WCL's saving is
                                     measured against) */
  /* NVRAM writes (the WCL paper's measure), log and home together: */
  uint64_t nvram_words;          /* 8-byte words written to the pool */
  uint64_t nvram_lines;          /* cache lines written back to the pool
                                    (streamed + flushed) */
  /* Fences by what they order, in the Themis paper's terms (section II-C):
   *   non-temporal -> temporal:  fences_log (removable under Themis);
   *   temporal -> non-temporal:  fences_data + fences_retire;
   *   commit:                    fences_commit;
   *   other:                     fences_other.
   * The five fences_* fields sum to `fences`. */
  uint64_t fences_data;    /* ... ordering flushed data before the log record
                              that depends on it (undo: before the commit
                              mark) */
  uint64_t fences_other;   /* ... pool metadata, abort, recovery, close */
  uint64_t fences_elided;  /* non-temporal -> temporal fences that
                              SW_ENGINE_UNDO_THEMIS skipped (undo would have
                              issued exactly these), and ordering fences the
                              x86 medium's cpu-cache form did not issue
                              (sw_pool_platform_info) */
  /* Distance between consecutive removable (non-temporal -> temporal) fence
   * points of a thread (where undo fences and undo-themis elides), the
   * Themis paper's Fig. 10: histograms over SW_GAP_BUCKETS buckets (see
   * sw_gap_bucket_low), in CPU cycles (the time-stamp counter; nanoseconds
   * where there is none) and in persistent-memory events (loads, stores,
   * streamed lines, flushed lines and fences of the thread).  Each thread's
   * first point after a reset starts a new chain and adds no distance. */
  uint64_t removable_gaps;  /* distances recorded (entries of each histogram) */
  uint64_t removable_gap_cycles[SW_GAP_BUCKETS];
  uint64_t removable_gap_events[SW_GAP_BUCKETS];
  /* Fresh blocks: a block a wrap allocates is written in place (no alias,
   * no log record) until that wrap ends, and flushed before its commit.
   * (Added in SOVERSION 2.) */
  uint64_t fresh_blocks;   /* allocations written in place by their wrap */
  uint64_t fresh_words;    /* 8-byte words those wraps wrote home in place
                              (not compared under SW_CONFIG_WCL: there is
                              nothing to compare against) */
  /* Retirement that falls behind (softwrap; added in SOVERSION 3): */
  uint64_t help_entries;   /* alias entries that committing wraps wrote home
                              for retirement (also in home_writes and
                              retired_entries) */
  uint64_t throttle_waits; /* wraps that waited at open for retirement to
                              free a table (the last resort when helping
                              does not keep up) */
  /* Files not on DAX (SW_MEDIUM_MSYNC; added in SOVERSION 4): a fence
   * makes what its thread flushed or streamed durable with one system call
   * (msync), which on a file system is one device flush.  Threads fencing
   * at the same time share one (group commit). */
  uint64_t device_syncs;        /* sync system calls made (each a device
                                   flush) */
  uint64_t device_syncs_commit; /* ... of which covered a wrap's commit
                                   (a fence of kind commit or data order),
                                   whichever thread made it */
  uint64_t fences_shared;       /* fences whose data a sync made by another
                                   thread covered (no call of their own) */
} sw_stats;
/* sw_stats has device_syncs, device_syncs_commit and fences_shared. */
#define SW_STATS_HAS_DEVICE_SYNCS 1

/* Smallest distance counted in bucket b of the removable_gap_* histograms
 * (b < SW_GAP_BUCKETS): buckets 0..7 hold the distances 0..7, after that
 * each power of two is split into four equal buckets (the last bucket also
 * holds everything larger).  Bucket b spans [sw_gap_bucket_low(b),
 * sw_gap_bucket_low(b + 1)). */
static inline uint64_t sw_gap_bucket_low(unsigned b) {
  if (b < 8) return b;
  const unsigned e = 3 + (b - 8) / 4; /* 2^e <= distance < 2^(e+1) */
  const uint64_t m = 4 + (b - 8) % 4;
  return m << (e - 2);
}

/* Sums the per-thread counters of the pool (retirement thread included). */
SW_API int sw_pool_stats(sw_pool *pool, sw_stats *out);
SW_API int sw_pool_stats_reset(sw_pool *pool);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTWRAP_SOFTWRAP_H_ */
