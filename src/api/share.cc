// share.cc — write access to a shared pool: taking it (and making the
// handle current), giving it up (making its commits home), the watcher of
// a handle that keeps it while alone.  See share.h and docs/design.md,
// "Pools shared between processes".
#include "api/share.h"

#include <sys/random.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "api/runtime.h"
#include "common/error.h"
#include "medium/medium.h"
#include "medium/trace_label.h"
#include "recovery/recovery.h"

namespace softwrap {
namespace {

uint64_t load_word(const uint64_t* w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }

uint64_t now_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

uint64_t new_token() {
  uint64_t t = 0;
  if (getrandom(&t, sizeof t, GRND_NONBLOCK) != sizeof t) {
    t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) * 0x9E3779B97F4A7C15ull;
  }
  t ^= static_cast<uint64_t>(getpid()) << 32;
  t &= ~uint64_t{1};
  return t != 0 ? t : 2;
}

}  // namespace

Sharing::Sharing(sw_pool* p) : p_(p), token_(new_token()) {}

Sharing::~Sharing() { stop_watcher(); }

int Sharing::resolve_wait(int wait_ms) const {
  return wait_ms < 0 ? static_cast<int>(std::min<uint32_t>(p_->cfg.share_wait_ms, 1u << 30)) : wait_ms;
}

int Sharing::open_begin() {
  std::lock_guard<std::mutex> g(mu_);
  if (int rc = p_->file->lock_write(resolve_wait(-1))) return rc;
  held_ = true;
  // A holder that left the marker set died: the recovery at open replays
  // its commits, heap changes among them (open_end tells the others).
  open_found_dead_ = (load_word(&p_->file->meta()->writer) & 1) != 0;
  // The file was validated and mapped at the durable size it had before
  // we held write access: another handle may have grown the pool since
  // (a growth needs write access).  Map it before anything relies on the
  // size (recovery, the allocator's scan, this handle's own growths).
  if (int rc = p_->file->follow_growth()) return rc;
  p_->medium->extend(p_->file->size());
  return 0;
}

int Sharing::open_end() {
  std::unique_lock<std::mutex> g(mu_);
  PoolMeta* m = p_->file->meta();
  // Recovery ran at open: whatever the marker said, the pool is current.
  const uint64_t next = load_word(&m->write_epoch) + 1;
  heap_epoch_ = load_word(&m->heap_epoch);  // the allocator was built at open, from this heap
  if (open_found_dead_) raise_heap_epoch();
  mark_taken(next);
  state_epoch_ = view_epoch_ = next;
  now_held();
  int rc = 0;
  if (!alone_) rc = give_up();
  watcher_ = std::thread([this] { watch(); });
  return rc;
}

void Sharing::stop_watcher() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void Sharing::close() {
  stop_watcher();
  std::lock_guard<std::mutex> g(mu_);
  if (held_) {
    leave_alone();  // closing: the lock is given up even if the hook failed
    mark_clean();   // the engine's shutdown made every commit home
  }
}

int Sharing::take(int wait_ms) {
  PoolFile& f = *p_->file;
  if (int rc = f.lock_write(wait_ms)) return rc;
  auto fail = [&f](int rc) {
    f.unlock_write();
    return rc;
  };
  PoolMeta* m = f.meta();
  Medium& md = *p_->medium;
  const uint64_t w = load_word(&m->writer);
  // We hold the lock, so a holder that left the marker set is gone: it
  // died with commits possibly not home.
  const bool dead = (w & 1) != 0;
  if (int rc = f.follow_growth()) return fail(rc);
  if (dead) {
    if (int rc = f.trim_tail()) return fail(rc);
    RecoveryOptions ro;
    ro.redo_skip_commit_validation = p_->cfg.redo_skip_commit_validation;
    ro.fresh_skip_check = p_->cfg.fresh_control == FreshControl::kSkipVouchCheck;
    ro.wcl_misread_pairs = p_->cfg.wcl_misread_pairs;
    if (int rc = recover(f, md, &p_->report, ro)) return fail(rc);
  }
  const uint64_t epoch = load_word(&m->write_epoch);
  const bool others_wrote = dead || epoch != state_epoch_ || (w & ~uint64_t{1}) != token_;
  if (others_wrote) {
    f.forget_zeroed();
    // The allocator's DRAM state is rebuilt only if the heap's metadata
    // changed (a scan of every chunk head and run); else free chunks just
    // stop counting as zero (the other handle's log extents were some).
    const uint64_t heap = load_word(&m->heap_epoch);
    if (dead || heap != heap_epoch_) {
      if (int rc = p_->alloc->reload()) return fail(rc);
      heap_epoch_ = heap;
      // The dead holder's heap changes (recovered just now, or home
      // already) never raised heap_epoch: only a clean give-up does.
      // Raised here, so that every other handle rebuilds its allocator
      // at its next take instead of handing out what the dead one
      // allocated (mark_taken makes it durable with the marker).
      if (dead) raise_heap_epoch();
    } else {
      p_->alloc->forget_zero_chunks();
    }
    p_->engine->resync();
  }
  const uint64_t next = others_wrote ? epoch + 1 : epoch;
  mark_taken(next);
  // Taking write access changes no content (unless it recovered a dead
  // holder's commits: a dead holder that had not raised the epoch leaves
  // it where a caller's caches are): a caller whose caches were current
  // stays current.
  if (!dead && view_epoch_ == epoch) view_epoch_ = next;
  state_epoch_ = next;
  now_held();
  if (alone_) cv_.notify_all();  // the watcher looks for company while we are alone
  return 0;
}

void Sharing::raise_heap_epoch() {
  PoolMeta* m = p_->file->meta();
  heap_epoch_ = load_word(&m->heap_epoch) + 1;
  p_->medium->store(&m->heap_epoch, heap_epoch_, 8);  // flushed and fenced by mark_taken
}

void Sharing::mark_taken(uint64_t epoch) {
  PoolMeta* m = p_->file->meta();
  Medium& md = *p_->medium;
  SW_TRACE_LABEL("share:take");
  md.store(&m->writer_pid, static_cast<uint64_t>(getpid()), 8);
  md.store(&m->write_epoch, epoch, 8);
  md.store(&m->writer, token_ | 1, 8);
  md.flush(&m->writer, 4 * sizeof(uint64_t));  // with heap_epoch (raise_heap_epoch)
  md.fence(FenceKind::kOther);
}

void Sharing::now_held() {
  held_ = true;
  heap_changes_ = p_->alloc->heap_changes();
  last_exit_ms_ = now_ms();
  alone_ = !p_->file->others_open();
}

int Sharing::give_up() {
  if (!p_->cfg.share_skip_quiesce) {
    if (int rc = p_->engine->quiesce()) return rc;
  }
  if (int rc = leave_alone()) return rc;
  mark_clean();
  return 0;
}

int Sharing::leave_alone() {
  if (!alone_armed_) return 0;
  if (alone_hook_ != nullptr && alone_hook_(alone_arg_) != 0) {
    return set_error(SW_EIO, "pool '%s': the program's alone hook failed; write access is kept",
                     p_->file->path().c_str());
  }
  alone_armed_ = false;
  return 0;
}

void Sharing::set_alone_hook(int (*hook)(void*), void* arg) {
  std::lock_guard<std::mutex> g(mu_);
  alone_hook_ = hook;
  alone_arg_ = arg;
}

bool Sharing::if_alone(void (*fn)(void*), void* arg) {
  std::lock_guard<std::mutex> g(mu_);
  if (stop_) return false;
  const uint64_t now = now_ms();
  if (!held_) {
    // A reader alone on its pool takes write access too (never waiting),
    // so that its locks are elided as well.  With company, not again for
    // kCompanyBackoffMs: the probe is a system call.
    if (p_->file->read_only() || now < company_until_ms_) return false;
    if (p_->file->others_open() || take(0) != 0) {
      company_until_ms_ = now + kCompanyBackoffMs;
      return false;
    }
    if (!alone_ && sessions_ == 0) give_up();  // company came in between
  }
  // alone_ turns false as soon as the watcher sees company; until then,
  // whoever opens the pool waits for write access in its open.
  if (!held_ || !alone_) return false;
  if (sessions_ == 0) last_exit_ms_ = now;  // activity: not idle
  alone_armed_ = true;
  fn(arg);
  return true;
}

void Sharing::mark_clean() {
  PoolMeta* m = p_->file->meta();
  Medium& md = *p_->medium;
  {
    SW_TRACE_LABEL("share:give-up");
    if (p_->alloc->heap_changes() != heap_changes_) {
      heap_epoch_ = load_word(&m->heap_epoch) + 1;
      md.store(&m->heap_epoch, heap_epoch_, 8);
    }
    // Readers learn from write_epoch that someone wrote (refresh()): raise
    // it for what this handle wrote.  Its own state and the caller's
    // caches already reflect that.
    const uint64_t epoch = load_word(&m->write_epoch);
    md.store(&m->write_epoch, epoch + 1, 8);
    if (view_epoch_ == epoch) view_epoch_ = epoch + 1;
    state_epoch_ = epoch + 1;
    md.store(&m->writer, token_, 8);
    md.flush(&m->writer, 4 * sizeof(uint64_t));
    md.fence(FenceKind::kOther);
  }
  p_->file->unlock_write();
  held_ = false;
  lingering_ = false;
  alone_armed_ = false;
}

void Sharing::watch() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    if (held_ && (alone_ || lingering_)) {
      cv_.wait_for(lk, std::chrono::milliseconds(1));
      if (stop_ || !held_ || !(alone_ || lingering_)) continue;
      // The probe is a system call: sessions and if_alone() go on meanwhile.
      // Alone: has anyone opened the pool?  Lingering with company: does
      // anyone wait for write access?
      const bool was_alone = alone_;
      lk.unlock();
      const bool seen = was_alone ? p_->file->others_open() : p_->file->others_want();
      lk.lock();
      if (stop_ || !held_ || alone_ != was_alone) continue;
      const bool idle = sessions_ == 0 && now_ms() - last_exit_ms_ >= kIdleGiveUpMs;
      if (was_alone && seen) {
        alone_ = false;
        if (sessions_ == 0 && !lingering_) give_up();  // a failure keeps it: the next session's end tries again
      } else if (sessions_ == 0 && ((!was_alone && seen) || idle)) {
        // Idle (or, lingering, wanted): give write access up (every commit
        // home; the next wrap takes it again cheaply, nobody else having
        // written), so an idle process polls nothing.
        give_up();
      }
    } else {
      cv_.wait(lk);
    }
  }
}

int Sharing::enter(int wait_ms, bool explicit_session) {
  std::lock_guard<std::mutex> g(mu_);
  if (!held_) {
    if (int rc = take(resolve_wait(wait_ms))) return rc;
  }
  ++sessions_;
  if (explicit_session) ++explicit_;
  // A session gives nothing up: the watcher looks for waiters again only
  // once the last one ends lingering (exit), not once a millisecond now.
  lingering_ = false;
  return 0;
}

int Sharing::exit(bool explicit_session, bool linger) {
  std::lock_guard<std::mutex> g(mu_);
  if (explicit_session) {
    if (explicit_ == 0) return SW_EINVAL;
    --explicit_;
  }
  if (sessions_ > 0) --sessions_;
  if (sessions_ == 0) last_exit_ms_ = now_ms();
  if (sessions_ == 0 && held_ && !alone_) {
    if (!linger) return give_up();
    if (!lingering_) {
      lingering_ = true;
      cv_.notify_all();  // the watcher looks for handles waiting
    }
  }
  return 0;
}

int Sharing::refresh(bool wait_live) {
  std::lock_guard<std::mutex> g(mu_);
  if (!held_) {
    const uint64_t w = load_word(&p_->file->meta()->writer);
    int rc = SW_EBUSY;
    if (w & 1) {
      // A holder with commits perhaps not home, or one that died: wait for
      // it to give write access up (or recover it), then give it back.
      // Without wait_live, only a dead holder (its lock is free) is taken.
      rc = take(wait_live ? resolve_wait(-1) : 0);
      if (rc == 0 && sessions_ == 0 && !alone_) rc = give_up();
      if (rc != 0 && (wait_live || rc != SW_EBUSY)) return rc;
    }
    if (rc != 0) {
      if (int r = p_->file->follow_growth()) return r;
    }
  }
  const uint64_t epoch = held_ ? state_epoch_ : load_word(&p_->file->meta()->write_epoch);
  const int changed = epoch != view_epoch_ ? 1 : 0;
  view_epoch_ = epoch;
  return changed;
}

bool Sharing::held() {
  std::lock_guard<std::mutex> g(mu_);
  return held_;
}

bool Sharing::held_with_company() {
  std::lock_guard<std::mutex> g(mu_);
  return held_ && !alone_;
}

void Sharing::forget_after_fork() {
  // Only this thread exists in the child; the watcher's std::thread must
  // never be joined or destroyed here (the handle is leaked: c_api.cc).
  held_ = false;
  alone_armed_ = false;
  stop_ = true;
}

}  // namespace softwrap
