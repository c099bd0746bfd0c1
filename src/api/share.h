// share.h — write access to a pool shared between processes
// (SW_CONFIG_SHARED; docs/design.md, "Pools shared between processes").
//
// Every handle maps the pool shared; one at a time holds write access, the
// pool file's write lock (PoolFile::lock_write).  Loads of a handle without
// it read home, so a handle gives write access up only after every wrap it
// committed is home (Engine::quiesce) and marks the pool clean; a handle
// taking it first makes itself current (another handle's growth mapped, a
// dead holder's commits recovered, the allocator and the engine rebuilt
// from the pool when someone else wrote).  The durable marker
// (PoolMeta::writer) says who holds it and whether that holder may have
// commits that are not home yet.
//
// Sessions.  Write access is held by the handle (the process), not a
// thread: explicit sessions (sw_pool_write_begin/end) and every wrap (an
// implicit session from begin_outer to end_outer) count; the last session
// to end gives write access up if another handle has the pool open.  A
// handle alone on its pool keeps it between sessions (no quiesce, no
// system call per wrap: a lone process runs at single-process speed); a
// watcher thread looks for company every millisecond while it does and
// gives write access up as soon as another handle opens the pool, or
// after 100 ms without a session (an idle process then polls nothing).
#ifndef SOFTWRAP_API_SHARE_H_
#define SOFTWRAP_API_SHARE_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

struct sw_pool;

namespace softwrap {

class Sharing {
 public:
  explicit Sharing(sw_pool* p);
  ~Sharing();
  Sharing(const Sharing&) = delete;
  Sharing& operator=(const Sharing&) = delete;

  // At open, before recovery: takes write access (waiting up to the
  // pool's share_wait_ms), so recovery, the open-time writes of the pool
  // layer and the allocator's scan see a pool nobody is changing.
  int open_begin();
  // At open, after the layers are built: marks the pool as ours, then
  // keeps write access if alone, else gives it up (nothing is aliased yet).
  int open_end();
  // At close: first the watcher stops (before the engine's shutdown), then,
  // after it (everything home), close() marks the pool clean and gives
  // write access up.
  void stop_watcher();
  void close();

  // A session: an explicit one or a wrap's.  enter() takes write access
  // when the handle does not hold it (waiting up to wait_ms; <0: the
  // pool's share_wait_ms).  0 or SW_EBUSY/SW_EIO/SW_ECORRUPT/SW_ENOSPC
  // with the thread error set.
  int enter(int wait_ms, bool explicit_session = false);
  // Ends a session; the last one gives write access up unless alone.
  // 0, or the code of a failed quiesce (write access is then kept);
  // SW_EINVAL (nothing done) for an explicit end without an explicit
  // session.  linger (sw_pool_write_pause): the last session keeps write
  // access with company too, until another handle waits for it or
  // kIdleGiveUpMs pass (the watcher gives it up then).
  int exit(bool explicit_session = false, bool linger = false);
  // A reader catching up: 1 if another handle wrote since the last call
  // (the caller drops what it cached of the pool), 0 if not, or an SW_E*
  // code.  Recovers a dead holder's commits (taking write access for it).
  // wait_live: a live holder whose commits may not be home is waited for
  // (sw_pool_refresh); else (sw_pool_follow) only its growth is mapped.
  int refresh(bool wait_live = true);
  bool held();
  // Whether the handle holds write access with company (another handle had
  // the pool open when it took it, or has opened it since): only then can
  // somebody be reading home while this handle commits (sw_pool_publish).
  bool held_with_company();

  // Lock elision for a handle alone on its pool (sw_pool_if_alone,
  // softwrap.h).  set_alone_hook: the hook run (under mu_) before write
  // access is given up or the handle closes, if if_alone() called its fn
  // since write access was last taken.  if_alone: calls fn(arg) under mu_
  // and returns true if the handle holds write access and no other handle
  // had the pool open when it took it, nor has since; else false.  A
  // handle without write access takes it first (never waiting) if no
  // other handle has the pool open.
  void set_alone_hook(int (*hook)(void*), void* arg);
  bool if_alone(void (*fn)(void*), void* arg);

  // A forked child: the handle is the parent's (share.cc's atfork handler).
  void forget_after_fork();

 private:
  int take(int wait_ms);  // REQUIRES mu_
  int give_up();          // REQUIRES mu_, sessions_ == 0
  void mark_clean();      // REQUIRES mu_, write access held, every commit home
  // REQUIRES mu_, write access held: the marker says this handle holds it
  // (write_epoch = epoch; stored, flushed, fenced), then the handle's state.
  void mark_taken(uint64_t epoch);
  // heap_epoch + 1, stored (mark_taken flushes it) and reflected in
  // heap_epoch_: after recovering a holder that died, whose heap changes
  // never raised it, with the allocator just built from the heap.
  void raise_heap_epoch();
  void now_held();
  void watch();
  int resolve_wait(int wait_ms) const;
  // REQUIRES mu_: runs the alone hook if if_alone() armed it (before write
  // access goes).  0, or SW_EIO (the hook failed: write access is kept).
  int leave_alone();

  sw_pool* const p_;
  std::mutex mu_;
  std::condition_variable cv_;
  int sessions_ = 0;        // GUARDED_BY(mu_)
  int explicit_ = 0;        // GUARDED_BY(mu_)
  bool held_ = false;       // GUARDED_BY(mu_): we hold the write lock
  bool alone_ = false;      // GUARDED_BY(mu_): no other handle had the pool open when we took it
  bool lingering_ = false;  // GUARDED_BY(mu_): kept after a linger exit, with company
  bool stop_ = false;       // GUARDED_BY(mu_)
  uint64_t token_ = 0;      // this handle's marker token (bit 0 clear, never 0)
  uint64_t state_epoch_ = 0;  // the write_epoch the allocator and engine state reflect
  uint64_t view_epoch_ = 0;   // the write_epoch the caller's caches reflect (refresh())
  uint64_t heap_epoch_ = 0;   // the heap_epoch the allocator's state reflects
  bool open_found_dead_ = false;  // open_begin found the marker of a holder that died
  uint64_t heap_changes_ = 0;  // Allocator::heap_changes() when write access was taken
  uint64_t last_exit_ms_ = 0;  // GUARDED_BY(mu_): when the last session ended
  int (*alone_hook_)(void*) = nullptr;  // GUARDED_BY(mu_)
  void* alone_arg_ = nullptr;           // GUARDED_BY(mu_)
  bool alone_armed_ = false;            // GUARDED_BY(mu_): if_alone() ran fn while held
  uint64_t company_until_ms_ = 0;       // GUARDED_BY(mu_): if_alone() found company; no probe till then
  static constexpr uint64_t kCompanyBackoffMs = 10;
  // A lone handle gives write access up after this long without a session.
  static constexpr uint64_t kIdleGiveUpMs = 100;
  std::thread watcher_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_API_SHARE_H_
