// pool_share.cc — the pool file's locks and following another process's
// growth: the pool layer's part of sharing a pool between processes
// (SW_CONFIG_SHARED; docs/design.md, "Pools shared between processes").
//
// Locks are open-file-description byte-range locks on the pool file
// (pool_format.h): the kernel releases them when the process dies, they
// belong to this PoolFile's descriptor only, and they conflict between
// two descriptors of one process as between two processes, so two handles
// in one process share a pool as two processes do.  An attached pool (the
// crash simulator's images) has no file: its locks live in a table of this
// process keyed by the image's base address, with the same answers.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <map>
#include <mutex>

#include "common/error.h"
#include "medium/medium.h"
#include "pool/pool.h"

namespace softwrap {
namespace {

bool set_ofd(int fd, uint64_t byte, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(byte);
  fl.l_len = 1;
  while (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

// Locks of attached pools: per base address, the handles holding the open
// lock (all shared: attach is how the crash simulator's "processes" meet)
// and whether one holds write access.
struct MemLocks {
  int openers = 0;
  int waiting = 0;
  const void* writer = nullptr;
};
std::mutex g_mem_mu;
std::map<const void*, MemLocks>& mem_locks() {
  static auto* m = new std::map<const void*, MemLocks>;  // never destroyed: used from exit paths
  return *m;
}

uint64_t now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

}  // namespace

void PoolFile::drop_after_fork() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  write_locked_ = false;
}

int PoolFile::share_open_lock() {
  if (attached_) return 0;
  if (!set_ofd(fd_, kOpenLockByte, F_RDLCK)) {
    return set_error_errno(SW_EIO, "cannot share the open lock of pool '%s'", path_.c_str());
  }
  return 0;
}

void PoolFile::note_attached_open(bool open) {
  std::lock_guard<std::mutex> g(g_mem_mu);
  MemLocks& m = mem_locks()[base_];
  m.openers += open ? 1 : -1;
  if (!open && m.writer == this) m.writer = nullptr;
  if (m.openers == 0 && m.writer == nullptr) mem_locks().erase(base_);
}

// Whether a handle other than this one waits for write access.
bool PoolFile::others_want() const {
  if (attached_) {
    std::lock_guard<std::mutex> g(g_mem_mu);
    auto it = mem_locks().find(base_);
    return it != mem_locks().end() && it->second.waiting > (wanting_ ? 1 : 0);
  }
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(kWantLockByte);
  fl.l_len = 1;
  if (fcntl(fd_, F_OFD_GETLK, &fl) != 0) return false;
  return fl.l_type != F_UNLCK;
}

void PoolFile::set_wanting(bool on) {
  if (wanting_ == on) return;
  wanting_ = on;
  if (attached_) {
    std::lock_guard<std::mutex> g(g_mem_mu);
    mem_locks()[base_].waiting += on ? 1 : -1;
    return;
  }
  set_ofd(fd_, kWantLockByte, on ? F_RDLCK : F_UNLCK);
}

int PoolFile::lock_write(int wait_ms) {
  if (write_locked_) return 0;
  const uint64_t deadline = now_ms() + static_cast<uint64_t>(wait_ms < 0 ? 0 : wait_ms);
  // Fairness: the kernel does not hand a released lock to a waiter, so a
  // handle that gives write access up and takes it again at once (a busy
  // writer) could keep another out for good.  Waiters announce themselves
  // (kWantLockByte); a handle that finds one waiting lets it go first:
  // it waits its turn like them, or, not asked to wait, says SW_EBUSY.
  // Letting others go first is bounded (a few milliseconds: a waiter polls
  // at least once a millisecond), since two handles doing it at once each
  // see the other wanting and would wait for each other to the deadline.
  if (others_want()) {
    if (wait_ms <= 0) {
      return set_error(SW_EBUSY, "pool '%s': another process (or handle) is waiting for write access",
                       path_.c_str());
    }
    set_wanting(true);
    const uint64_t yield_until = std::min(deadline, now_ms() + 5);
    while (others_want() && now_ms() < yield_until) {
      timespec ts{0, 100000};
      nanosleep(&ts, nullptr);
    }
  }
  for (unsigned spins = 0;; ++spins) {
    bool got = false;
    if (attached_) {
      std::lock_guard<std::mutex> g(g_mem_mu);
      MemLocks& m = mem_locks()[base_];
      if (m.writer == nullptr) {
        m.writer = this;
        got = true;
      }
    } else if (set_ofd(fd_, kWriteLockByte, F_WRLCK)) {
      got = true;
    } else if (errno != EAGAIN && errno != EACCES) {
      set_wanting(false);
      return set_error_errno(SW_EIO, "cannot take write access to pool '%s'", path_.c_str());
    }
    if (got) {
      set_wanting(false);
      write_locked_ = true;
      return 0;
    }
    if (wait_ms <= 0 || now_ms() >= deadline) break;
    set_wanting(true);
    // The holder gives write access up at the end of its session, or (a
    // handle alone on its pool keeps it between sessions) within about a
    // millisecond of seeing us (api/share.cc): poll briefly at first.
    timespec ts{0, spins < 100 ? 50000 : 1000000};
    nanosleep(&ts, nullptr);
  }
  set_wanting(false);
  return set_error(SW_EBUSY, "pool '%s': another process (or handle) holds write access%s", path_.c_str(),
                   wait_ms > 0 ? " and did not give it up in time" : "");
}

void PoolFile::unlock_write() {
  if (!write_locked_) return;
  write_locked_ = false;
  if (attached_) {
    std::lock_guard<std::mutex> g(g_mem_mu);
    MemLocks& m = mem_locks()[base_];
    if (m.writer == this) m.writer = nullptr;
    return;
  }
  set_ofd(fd_, kWriteLockByte, F_UNLCK);
}

bool PoolFile::others_open() const {
  if (attached_) {
    std::lock_guard<std::mutex> g(g_mem_mu);
    auto it = mem_locks().find(base_);
    return it != mem_locks().end() && it->second.openers > 1;
  }
  // Would an exclusive open lock conflict with anyone's?  (Our own shared
  // lock never conflicts with a test from our own descriptor.)
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(kOpenLockByte);
  fl.l_len = 1;
  if (fcntl(fd_, F_OFD_GETLK, &fl) != 0) return true;  // unsure: assume company
  return fl.l_type != F_UNLCK;
}

int PoolFile::follow_growth() {
  std::lock_guard<std::mutex> lock(grow_mu_);
  const uint64_t cur = size();
  const uint64_t durable = __atomic_load_n(&meta()->pool_size, __ATOMIC_ACQUIRE);
  if (durable <= cur) return 0;
  if (durable > max_size_) {
    return set_error(SW_ENOSPC, "pool '%s' grew to %" PRIu64 " bytes in another process, past the %" PRIu64
                     " bytes of address space this handle reserved when it opened it (SOFTWRAP_POOL_RESERVE; "
                     "reopening it reserves again)", path_.c_str(), durable, max_size_);
  }
  const uint64_t from = round_up_page(cur);
  if (!attached_ && durable > from) {
    const int flags = is_dax_ ? (0x03 /* MAP_SHARED_VALIDATE */ | 0x80000 /* MAP_SYNC */) : MAP_SHARED;
    void* p = read_only_ ? mmap(base_ + from, durable - from, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd_,
                                static_cast<off_t>(from))
                         : mmap(base_ + from, durable - from, PROT_READ | PROT_WRITE, flags | MAP_FIXED, fd_,
                                static_cast<off_t>(from));
    if (p == MAP_FAILED) {
      const int e = errno;
      mmap(base_ + from, durable - from, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
      errno = e;
      return set_error_errno(SW_EIO, "cannot map the %" PRIu64 " bytes pool '%s' grew by in another process",
                             durable - from, path_.c_str());
    }
    if (durable > file_size_) file_size_ = durable;
  }
  const uint32_t n = zone_count();
  const Zone& last = zone(n - 1);
  const uint64_t next = n == 1 ? round_up_page(header().pool_size) : last.end;
  if (int rc = load_zones_from(n, next, uint64_t{last.first_chunk} + last.chunks, durable)) return rc;
  if (medium_ != nullptr) medium_->extend(durable);
  size_.store(durable, std::memory_order_release);
  if (size_mirror_) __atomic_store_n(size_mirror_, durable - mirror_below_, __ATOMIC_RELEASE);
  return 0;
}

int PoolFile::trim_tail() {
  if (attached_ || read_only_) return 0;
  std::lock_guard<std::mutex> lock(grow_mu_);
  struct stat st {};
  if (fstat(fd_, &st) != 0) return set_error_errno(SW_EIO, "cannot stat pool file '%s'", path_.c_str());
  const auto len = static_cast<uint64_t>(st.st_size);
  if (len <= size()) {
    file_size_ = len;
    return 0;
  }
  if (ftruncate(fd_, static_cast<off_t>(size())) != 0) {
    return set_error_errno(SW_EIO, "cannot trim pool file '%s' to its durable size %zu", path_.c_str(), size());
  }
  file_size_ = size();
  return 0;
}

}  // namespace softwrap
