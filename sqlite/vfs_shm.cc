// vfs_shm.cc — the wal-index of SQLite's WAL mode (vfs_shm.h).
//
// Registry.  Nodes live in one list under a mutex; a node is found by the
// identity of its file (st_dev, st_ino), so two names of one file share a
// node, and private nodes by their path.  An opener opens the file before
// it takes the registry mutex (the open may be slow) and decides under it
// whether to join a node or make one: making one includes the dead-man
// switch, so two threads of a process can never make two nodes of a file,
// which would lock each other out through their two open file descriptions.
//
// Node state (regions, the lock table) is under the node's mutex; the
// connection's masks are written under it too, so any thread may ask
// holds_*.  The registry mutex is taken before a node's, never after.
//
// Fork.  The registry is a heap object reached through one pointer: the
// child's handler replaces it with a fresh one instead of touching a mutex
// that another parent thread may have held at the fork, and marks the old
// nodes forgotten (an atomic each) so that inherited connections fail
// before they touch theirs.
#include "vfs_shm.h"

#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace softwrap::sqlite_vfs {

namespace {

// Lock bytes in the wal-index file, where the unix VFS keeps them in its
// -shm files: past the index header's 120 bytes, which SQLite never maps
// as data a lock could disturb (byte-range locks are advisory anyway).
constexpr off_t kLockBase = 120;
constexpr off_t kDmsByte = kLockBase + SQLITE_SHM_NLOCK;  // 128
constexpr off_t kMarkByte = kDmsByte + 1;                  // 129: ShmConn::mark
// How long an opener waits for another process that holds the dead-man
// switch's write lock (it is truncating the file: a few system calls).
constexpr auto kDmsPatience = std::chrono::milliseconds(250);

long page_size() {
  static const long size = sysconf(_SC_PAGESIZE);
  return size;
}

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

struct ShmNode {
  // Registry fields, under the registry mutex.
  ShmNode* next = nullptr;
  int refs = 0;
  // Fixed at creation.
  std::string path;
  bool private_mem = false;
  dev_t dev = 0;
  ino_t ino = 0;
  int fd = -1;  // holds the dead-man switch's read lock and the process's lock bytes
  std::atomic<bool> forgotten{false};  // set only in a forked child (shm_forget_after_fork)
  // Under mu.
  std::mutex mu;
  int region_size = 0;
  std::vector<char*> regions;  // region i's address
  struct Chunk {
    void* base;
    size_t len;
  };
  std::vector<Chunk> chunks;      // mmap'ed (a file) or heap (private_mem) memory
  int count[SQLITE_SHM_NLOCK] = {};  // lock i: shared holders (> 0), exclusive (-1) or free (0)
  int marks = 0;                     // connections holding the checkpoint mark
};

namespace {

struct Registry {
  std::mutex mu;
  ShmNode* head = nullptr;
};

// Replaced (and the old one leaked) only in a forked child, while it has
// one thread.
Registry*& registry() {
  static Registry* r = new Registry;
  return r;
}

// One byte-range lock change on the wal-index (type F_RDLCK, F_WRLCK or
// F_UNLCK over [start, start+len)).  0, or the errno: EAGAIN/EACCES is a
// conflict with another open file description.  Open-file-description
// locks belong to the node's descriptor, not to the process, so another
// descriptor of the same file closing (an opener that joined by a second
// name, a library elsewhere in the process) leaves them alone, and a
// forked child's copy is the parent's until the child closes it.
int set_lock(int fd, short type, off_t start, off_t len) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  fl.l_pid = 0;  // required for F_OFD_*
  while (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}
bool conflict(int e) { return e == EAGAIN || e == EACCES; }

// The dead-man switch of a node being made (registry mutex held, so no
// other thread of this process holds the byte).  A write lock that
// succeeds means no other process has the file open: its content is
// stale (a crash, or a clean close that left it behind), and truncating it
// makes SQLite rebuild the index from the WAL; the lock is then
// downgraded in one step, so nobody can slip in between.  A conflict with
// read locks means others have it open and its content is live: join
// them with a read lock.  A conflict with a write lock is another opener
// truncating it: try again for a moment (a write lock wins if that opener
// died before it truncated, so its job is done here).
int take_dms(int fd, const std::string& path, std::string* err) {
  const auto give_up = std::chrono::steady_clock::now() + kDmsPatience;
  for (;;) {
    int e = set_lock(fd, F_WRLCK, kDmsByte, 1);
    if (e == 0) {
      if (ftruncate(fd, 0) != 0) {
        *err = "softwrap vfs: cannot reset the stale wal-index " + path + ": " + errno_text(errno);
        return SQLITE_IOERR_SHMOPEN;
      }
      e = set_lock(fd, F_RDLCK, kDmsByte, 1);
      if (e == 0) return SQLITE_OK;
      *err = "softwrap vfs: cannot lock the wal-index " + path + ": " + errno_text(e);
      return SQLITE_IOERR_SHMOPEN;
    }
    if (conflict(e)) {
      e = set_lock(fd, F_RDLCK, kDmsByte, 1);
      if (e == 0) return SQLITE_OK;
    }
    if (!conflict(e)) {
      *err = "softwrap vfs: cannot lock the wal-index " + path + ": " + errno_text(e);
      return SQLITE_IOERR_SHMOPEN;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      *err = "softwrap vfs: the wal-index " + path + " is being initialized by another process: " +
             errno_text(e);
      return SQLITE_BUSY;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Opens the wal-index file read-write, creating it with exactly `mode`
// (as SQLite's unix VFS does, the umask is undone, so every user who may
// use the pool may use its index).  O_NOFOLLOW: the file usually sits in a
// world-writable directory, and an opener truncates it, so a symlink
// planted there must not lead anywhere.  O_CLOEXEC: a program this
// process starts must not keep the node's locks alive.  -1 and *err.
//
// A file that exists but can only be opened read-only is SQLITE_CANTOPEN
// (the caller's code).  The unix VFS would map it read-only and, when
// nobody else has it open, answer SQLITE_READONLY_CANTINIT, which puts
// SQLite on a heap copy of the index that may read but never write.  For
// a pool this process may write, that would turn a permissions mistake
// into writes that fail later with SQLITE_READONLY; read-only pools use
// private_mem instead, which works whatever the file's permissions.
int open_file(const ShmSpec& spec, std::string* err) {
  for (int attempt = 0;; ++attempt) {
    int fd = open(spec.path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, spec.mode);
    if (fd >= 0) {
      if (fchmod(fd, spec.mode & 07777) != 0) {
        // Not fatal: the file works for this user.
      }
      return fd;
    }
    if (errno == EEXIST) {
      fd = open(spec.path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) return fd;
      if (errno == ENOENT && attempt < 8) continue;  // deleted in between: create it
    }
    if (errno == EINTR) continue;
    *err = "softwrap vfs: cannot open the wal-index " + spec.path + " read-write: " + errno_text(errno);
    return -1;
  }
}

// Grows the file to at least `size` bytes, never shrinking it, even if
// another process grows it at the same moment (which ftruncate could undo).
// fallocate also allocates the pages, so a full tmpfs is an error here
// instead of a SIGBUS when SQLite touches the region.  0, or the errno.
int grow(int fd, off_t size) {
  int e;
  while ((e = posix_fallocate(fd, 0, size)) == EINTR) {
  }
  if (e == 0 || (e != EOPNOTSUPP && e != EINVAL)) return e;
  // A file system without fallocate.  SQLite extends the index only while
  // it holds the WAL write lock or runs recovery, so processes do not race
  // here in practice.
  struct stat st {};
  if (fstat(fd, &st) != 0) return errno;
  if (st.st_size >= size) return 0;
  return ftruncate(fd, size) == 0 ? 0 : errno;
}

void free_chunks(ShmNode* n) {
  for (const auto& c : n->chunks) {
    if (n->private_mem) {
      std::free(c.base);
    } else {
      munmap(c.base, c.len);
    }
  }
  n->chunks.clear();
  n->regions.clear();
}

}  // namespace

int shm_open(const ShmSpec& spec, std::unique_ptr<ShmConn>* out, std::string* err) {
  out->reset();
  err->clear();
  if (spec.private_mem) {
    Registry* reg = registry();
    std::lock_guard<std::mutex> lk(reg->mu);
    ShmNode* n = reg->head;
    while (n != nullptr && !(n->private_mem && n->path == spec.path)) n = n->next;
    if (n == nullptr) {
      n = new ShmNode;
      n->path = spec.path;
      n->private_mem = true;
      n->next = reg->head;
      reg->head = n;
    }
    ++n->refs;
    out->reset(new ShmConn(n, spec.path));
    return SQLITE_OK;
  }

  // A few rounds: the name may be unlinked and made again between the
  // open and the registry (a connection deleting the index).
  for (int attempt = 0;; ++attempt) {
    const int fd = open_file(spec, err);
    if (fd < 0) return SQLITE_CANTOPEN;
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      *err = "softwrap vfs: cannot stat the wal-index " + spec.path + ": " + errno_text(errno);
      close(fd);
      return SQLITE_IOERR_SHMOPEN;
    }
    Registry* reg = registry();
    std::unique_lock<std::mutex> lk(reg->mu);
    // Is the name still this file?  If not, its node (if any) is a
    // deleted index's and this descriptor is of no use either.
    struct stat now {};
    if (stat(spec.path.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
      lk.unlock();
      close(fd);
      if (attempt < 8) continue;
      *err = "softwrap vfs: the wal-index " + spec.path + " keeps being replaced";
      return SQLITE_BUSY;
    }
    ShmNode* n = reg->head;
    while (n != nullptr && (n->private_mem || n->dev != st.st_dev || n->ino != st.st_ino)) n = n->next;
    if (n != nullptr) {  // the process has it open already (maybe by another name)
      ++n->refs;
      out->reset(new ShmConn(n, spec.path));
      lk.unlock();
      close(fd);  // another open file description: closing it drops none of the node's locks
      return SQLITE_OK;
    }
    const int rc = take_dms(fd, spec.path, err);
    if (rc != SQLITE_OK) {
      lk.unlock();
      close(fd);
      return rc;
    }
    // Still the name's file?  take_dms may have waited for a process that
    // held the dead-man switch's write lock to sweep this file away
    // (shm_sweep_unused); a descriptor of an unlinked index would make this
    // process's index another than everyone else's.
    if (stat(spec.path.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
      lk.unlock();
      close(fd);  // drops the dead-man switch's lock with it
      if (attempt < 8) continue;
      *err = "softwrap vfs: the wal-index " + spec.path + " keeps being replaced";
      return SQLITE_BUSY;
    }
    n = new ShmNode;
    n->path = spec.path;
    n->dev = st.st_dev;
    n->ino = st.st_ino;
    n->fd = fd;
    n->refs = 1;
    n->next = reg->head;
    reg->head = n;
    out->reset(new ShmConn(n, spec.path));
    return SQLITE_OK;
  }
}

int ShmConn::map(int region, int region_size, bool extend, void volatile** pp) {
  *pp = nullptr;
  assert(region >= 0 && region_size > 0);
  if (node_ == nullptr || node_->forgotten.load(std::memory_order_relaxed)) {
    err_ = "softwrap vfs: the wal-index connection is closed";
    return SQLITE_IOERR_SHMMAP;
  }
  ShmNode& n = *node_;
  std::lock_guard<std::mutex> lk(n.mu);
  if (static_cast<size_t>(region) < n.regions.size()) {
    *pp = n.regions[region];
    return SQLITE_OK;
  }
  assert(n.regions.empty() || region_size == n.region_size);
  if (!n.regions.empty() && region_size != n.region_size) {
    err_ = "softwrap vfs: wal-index " + path_ + ": region size changed from " + std::to_string(n.region_size) +
           " to " + std::to_string(region_size);
    return SQLITE_IOERR_SHMMAP;
  }
  // Mappings of at least a page: regions smaller than a page share one.
  const long page = page_size();
  const size_t per_chunk = region_size < page ? static_cast<size_t>(page / region_size) : 1;
  const size_t want = (static_cast<size_t>(region) / per_chunk + 1) * per_chunk;  // regions
  const size_t chunk_len = per_chunk * static_cast<size_t>(region_size);
  if (n.private_mem) {
    if (!extend) return SQLITE_OK;  // the index's "file" is what has been allocated
  } else {
    struct stat st {};
    if (fstat(n.fd, &st) != 0) {
      err_ = "softwrap vfs: cannot stat the wal-index " + path_ + ": " + errno_text(errno);
      return SQLITE_IOERR_SHMSIZE;
    }
    const off_t need = static_cast<off_t>(want * static_cast<size_t>(region_size));
    if (st.st_size < need) {
      if (!extend) return SQLITE_OK;  // nobody made the region yet
      const int e = grow(n.fd, need);
      if (e != 0) {
        err_ = "softwrap vfs: cannot grow the wal-index " + path_ + " to " + std::to_string(need) +
               " bytes: " + errno_text(e);
        return SQLITE_IOERR_SHMSIZE;
      }
    }
  }
  while (n.regions.size() < want) {
    const size_t first = n.regions.size();
    char* at = nullptr;
    if (n.private_mem) {
      const size_t len = (chunk_len + page - 1) / page * page;
      void* p = std::aligned_alloc(static_cast<size_t>(page), len);
      if (p == nullptr) {
        err_ = "softwrap vfs: no memory for the wal-index of " + path_;
        return SQLITE_NOMEM;
      }
      std::memset(p, 0, len);
      n.chunks.push_back({p, len});
      at = static_cast<char*>(p);
    } else {
      // mmap wants a page-aligned offset; a region size that is neither a
      // divisor nor a multiple of the page size gets a mapping that starts
      // a little before its first region.
      const off_t start = static_cast<off_t>(first * static_cast<size_t>(region_size));
      const off_t aligned = start / page * page;
      const size_t len = chunk_len + static_cast<size_t>(start - aligned);
      void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, n.fd, aligned);
      if (p == MAP_FAILED) {
        err_ = "softwrap vfs: cannot map the wal-index " + path_ + ": " + errno_text(errno);
        return SQLITE_IOERR_SHMMAP;
      }
      n.chunks.push_back({p, len});
      at = static_cast<char*>(p) + (start - aligned);
    }
    for (size_t i = 0; i < per_chunk; ++i) n.regions.push_back(at + i * static_cast<size_t>(region_size));
    n.region_size = region_size;
  }
  *pp = n.regions[region];
  return SQLITE_OK;
}

// Drops this connection's locks in `mask`, the process's OS locks with
// the last holder of each.  SQLite ignores what an unlock returns, so the
// connection's and the process's state are released even if the system
// refuses (it should not: the bytes are whole ranges this descriptor
// holds), and the failure is only reported.
int ShmConn::release_locks(unsigned mask) {
  ShmNode& n = *node_;
  const unsigned held = (shared_ | exclusive_) & mask;
  unsigned os_release = 0;
  for (int i = 0; i < SQLITE_SHM_NLOCK; ++i) {
    const unsigned bit = 1u << i;
    if ((held & bit) == 0) continue;
    if (exclusive_ & bit) {
      assert(n.count[i] == -1);
      n.count[i] = 0;
      os_release |= bit;
    } else {
      assert(n.count[i] > 0);
      if (--n.count[i] == 0) os_release |= bit;
    }
  }
  shared_ &= ~mask;
  exclusive_ &= ~mask;
  if (n.private_mem || os_release == 0) return SQLITE_OK;
  int rc = SQLITE_OK;
  for (int i = 0; i < SQLITE_SHM_NLOCK;) {  // one call per run of adjacent bytes
    if ((os_release & (1u << i)) == 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < SQLITE_SHM_NLOCK && (os_release & (1u << j))) ++j;
    const int e = set_lock(n.fd, F_UNLCK, kLockBase + i, j - i);
    if (e != 0) {
      err_ = "softwrap vfs: cannot unlock the wal-index " + path_ + ": " + errno_text(e);
      rc = SQLITE_IOERR_SHMLOCK;
    }
    i = j;
  }
  return rc;
}

int ShmConn::lock(int offset, int n, int flags) {
  assert(offset >= 0 && n >= 1 && offset + n <= SQLITE_SHM_NLOCK);
  assert(flags == (SQLITE_SHM_LOCK | SQLITE_SHM_SHARED) || flags == (SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE) ||
         flags == (SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED) || flags == (SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE));
  assert(n == 1 || (flags & SQLITE_SHM_EXCLUSIVE) != 0);  // SQLite shares one lock at a time
  if (node_ == nullptr || node_->forgotten.load(std::memory_order_relaxed)) {
    err_ = "softwrap vfs: the wal-index connection is closed";
    return SQLITE_IOERR_SHMLOCK;
  }
  if (offset < 0 || n < 1 || offset + n > SQLITE_SHM_NLOCK) {
    err_ = "softwrap vfs: wal-index lock out of range";
    return SQLITE_IOERR_SHMLOCK;
  }
  const unsigned mask = ((1u << n) - 1) << offset;
  ShmNode& node = *node_;
  std::lock_guard<std::mutex> lk(node.mu);
  if (flags & SQLITE_SHM_UNLOCK) return release_locks(mask);

  if (flags & SQLITE_SHM_SHARED) {
    // As in the unix VFS, a lock goes from free to shared or exclusive
    // and back, never from one kind to the other.
    assert((exclusive_ & mask) == 0);
    if (shared_ & mask) return SQLITE_OK;
    int& count = node.count[offset];
    if (count < 0) return SQLITE_BUSY;
    if (count == 0 && !node.private_mem) {
      const int e = set_lock(node.fd, F_RDLCK, kLockBase + offset, 1);
      if (conflict(e)) return SQLITE_BUSY;
      if (e != 0) {
        err_ = "softwrap vfs: cannot lock the wal-index " + path_ + ": " + errno_text(e);
        return SQLITE_IOERR_SHMLOCK;
      }
    }
    ++count;
    shared_ |= mask;
    return SQLITE_OK;
  }

  assert((shared_ & mask) == 0);
  assert((exclusive_ & mask) == 0);  // SQLite never asks for what it holds
  for (int i = offset; i < offset + n; ++i) {
    if ((exclusive_ & (1u << i)) == 0 && node.count[i] != 0) return SQLITE_BUSY;
  }
  // The process holds none of these bytes now, so one call takes them
  // all or none.
  if (!node.private_mem) {
    const int e = set_lock(node.fd, F_WRLCK, kLockBase + offset, n);
    if (conflict(e)) return SQLITE_BUSY;
    if (e != 0) {
      err_ = "softwrap vfs: cannot lock the wal-index " + path_ + ": " + errno_text(e);
      return SQLITE_IOERR_SHMLOCK;
    }
  }
  for (int i = offset; i < offset + n; ++i) node.count[i] = -1;
  exclusive_ |= mask;
  return SQLITE_OK;
}

int ShmConn::mark(bool on) {
  if (node_ == nullptr || node_->forgotten.load(std::memory_order_relaxed)) return on ? SQLITE_IOERR_SHMLOCK : SQLITE_OK;
  ShmNode& node = *node_;
  std::lock_guard<std::mutex> lk(node.mu);
  if (marked_ == on) return SQLITE_OK;
  if (!node.private_mem && (on ? node.marks == 0 : node.marks == 1)) {
    const int e = set_lock(node.fd, on ? F_RDLCK : F_UNLCK, kMarkByte, 1);
    if (e != 0) {  // a read lock conflicts only with a write lock, which nobody takes
      err_ = "softwrap vfs: cannot " + std::string(on ? "set" : "clear") + " the checkpoint mark of " + path_ + ": " +
             errno_text(e);
      return SQLITE_IOERR_SHMLOCK;
    }
  }
  node.marks += on ? 1 : -1;
  marked_ = on;
  return SQLITE_OK;
}

bool ShmConn::marked_elsewhere() const {
  if (node_ == nullptr || node_->private_mem || node_->forgotten.load(std::memory_order_relaxed)) return false;
  struct flock fl {};
  fl.l_type = F_WRLCK;  // conflicts with any read lock of another open file description
  fl.l_whence = SEEK_SET;
  fl.l_start = kMarkByte;
  fl.l_len = 1;
  fl.l_pid = 0;
  if (fcntl(node_->fd, F_OFD_GETLK, &fl) != 0) return false;
  return fl.l_type != F_UNLCK;
}

void ShmConn::barrier() { std::atomic_thread_fence(std::memory_order_seq_cst); }

int ShmConn::unmap(bool delete_file) {
  if (node_ == nullptr) return SQLITE_OK;
  ShmNode* n = node_;
  if (n->forgotten.load(std::memory_order_relaxed)) {  // the parent's: leaked, and its mutex left alone
    node_ = nullptr;
    shared_ = 0;
    exclusive_ = 0;
    return SQLITE_OK;
  }
  {
    std::lock_guard<std::mutex> lk(n->mu);
    release_locks(~0u);
    if (marked_ && --n->marks == 0 && n->fd >= 0) set_lock(n->fd, F_UNLCK, kMarkByte, 1);
    marked_ = false;
  }
  node_ = nullptr;
  Registry* reg = registry();
  {
    std::lock_guard<std::mutex> lk(reg->mu);
    if (--n->refs > 0) return SQLITE_OK;
    ShmNode** at = &reg->head;
    while (*at != n) at = &(*at)->next;
    *at = n->next;
    if (n->fd >= 0) {
      // Unlinked while the dead-man switch is still held, then closed,
      // which drops all of the process's locks on it at once.
      if (delete_file) unlink(path_.c_str());
      close(n->fd);
    }
  }
  {
    std::lock_guard<std::mutex> lk(n->mu);  // no one else can reach it now; for the analyzers
    free_chunks(n);
  }
  delete n;
  return SQLITE_OK;
}

bool ShmConn::holds_exclusive(int lock_index) const {
  assert(lock_index >= 0 && lock_index < SQLITE_SHM_NLOCK);
  return (exclusive_.load(std::memory_order_relaxed) >> lock_index) & 1;
}

bool ShmConn::holds_shared(int lock_index) const {
  assert(lock_index >= 0 && lock_index < SQLITE_SHM_NLOCK);
  return (shared_.load(std::memory_order_relaxed) >> lock_index) & 1;
}

ShmConn::~ShmConn() { unmap(false); }

int shm_sweep_unused(const std::string& dir, const std::string& prefix, const std::string& suffix) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(name);
    }
  }
  closedir(d);
  int removed = 0;
  Registry* reg = registry();
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    const int fd = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;  // another user's, gone already, not a regular file we may write
    struct stat st {};
    bool gone = false;
    {
      // The registry mutex keeps this process's own openers out, and a
      // node of this process holds the read lock anyway.
      std::lock_guard<std::mutex> lk(reg->mu);
      struct stat now {};
      if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && set_lock(fd, F_WRLCK, kDmsByte, 1) == 0 &&
          stat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
        // Nobody has it open (no dead-man switch lock), and while this
        // write lock is held nobody can start using it, nor make the name
        // another file's (openers re-check the name after their lock).
        gone = unlink(path.c_str()) == 0;
      }
    }
    close(fd);  // drops the lock
    if (gone) ++removed;
  }
  return removed;
}

void shm_forget_after_fork() {
  Registry* old = registry();
  for (ShmNode* n = old->head; n != nullptr; n = n->next) {
    n->forgotten.store(true, std::memory_order_relaxed);
    if (n->fd >= 0) close(n->fd);  // the child's copy only: the locks stay the parent's
  }
  registry() = new Registry;  // `old` and its nodes are leaked
}

}  // namespace softwrap::sqlite_vfs
