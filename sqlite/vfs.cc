// vfs.cc — the "softwrap" and "scm" SQLite VFSes (docs/sqlite.md).
//
// Storage (vfs_store.h).  A pool holds a directory of files in its root
// object; a file is a table of 256 KiB blocks.  Every access to pool memory
// goes through the softwrap API, so metadata and data changes join the wrap
// that is open on the calling thread; each open file's size and block
// addresses are also kept in DRAM (FileMap).  Pages are written whole;
// pools compare pages (write-combined logging: every medium compares ranges
// of 4 KiB or more by default, URI wcl=auto), so the engine logs only the
// words that changed, and they have 4 KiB shadow pages (SQLite's page
// size).
//
// Wraps.  "softwrap": the first xWrite/xTruncate of a transaction opens a
// wrap on the calling thread and remembers that in the file handle; SQLite's
// commit point (SQLITE_FCNTL_SYNC, sent just before xSync and also when
// synchronous=OFF skips xSync) closes it, so one commit is one wrap.  An
// xUnlock to SHARED/NONE that finds the wrap still open means the writes
// were not committed (a failed commit, a rollback of spilled pages that did
// not sync): the wrap is aborted before the lock is released ("close before
// you unlock").  A wrap belongs to its thread: if SQLite moved the
// connection to another thread between the first write and the commit (it
// does not in normal use: writes happen inside the COMMIT call), the write
// or commit fails with SQLITE_IOERR_WRITE/SQLITE_IOERR_FSYNC and the wrap is
// rolled back when its thread exits.  Journals are DRAM files, and every new
// connection whose main database uses this VFS gets journal_mode=MEMORY
// (auto-extension), so ROLLBACK works and nothing but the database is ever
// written to the pool.  "scm": writes go home at once (the pool is opened
// with the nonatomic engine; its wraps only collect lines to flush), the
// rollback journal is a pool file too, and every xSync is a persist fence.
//
// Locking.  One Shared record per stored file per process holds SQLite's
// lock state (shared count, reserved/pending/exclusive owners) under one
// mutex, like os_unix's inode records.  Across processes (pools are opened
// SW_CONFIG_SHARED unless shared=0), the process's strongest lock on a file
// is also held as byte-range locks on the pool file, as the unix VFS holds
// them on the database file: a PENDING byte, a RESERVED byte and a SHARED
// range per stored file (open-file-description locks on a descriptor of
// the VFS's own, so closing any other descriptor keeps them), never
// waited for: a conflict is SQLITE_BUSY, and SQLite's busy handler
// retries.  Writing maps onto the pool's write access: EXCLUSIVE takes it
// (a session, sw_pool_write_begin), and leaving EXCLUSIVE gives it up
// (sw_pool_write_end: every commit is home first) before the lock bytes
// are released; the first SHARED lock of the process catches up with what
// other processes wrote (sw_pool_refresh: their growth mapped, a writer
// that died recovered) and reloads the file maps they may have changed.
//
// Temp files, statement journals and other auxiliary files are DRAM files.
#ifdef SW_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"
#include "softwrap/sqlite.h"
#include "vfs_params.h"
#include "vfs_shm.h"
#include "vfs_store.h"

namespace {

using namespace softwrap::sqlite_vfs;  // NOLINT(google-build-using-namespace): the VFS's own parts

enum Kind { kSoftwrapVfs = 0, kScmVfs = 1 };

thread_local std::string t_err;

// The last detailed error of each database file (by its full path) and of
// each thread, for sw_sqlite_errmsg: SQLite's own message for a condition
// it knows is its own ("unable to open database file"), and a program that
// wants softwrap's reason asks for it.
std::mutex g_err_mu;
std::map<std::string, std::string>* g_file_err = new std::map<std::string, std::string>;  // never freed: used at exit
thread_local std::string t_errmsg_out;

void remember_err(const std::string& dbpath) {
  std::lock_guard<std::mutex> g(g_err_mu);
  if (g_file_err->size() > 4096) g_file_err->clear();  // bounded: the newest matter
  (*g_file_err)[dbpath] = t_err;
}
void set_err(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  t_err = buf;
}

struct Pool;
// The lock bytes of one stored file (PENDING, RESERVED, the SHARED range):
// the type SQLite's locks of this process need on each (want) and the one
// the pool's lock descriptor holds (have).  They differ only while the
// locks are elided (Pool::elided).
enum { kPendingByte, kReservedByte, kSharedRange, kLockRanges };
struct ByteLocks {
  short want[kLockRanges] = {F_UNLCK, F_UNLCK, F_UNLCK};
  short have[kLockRanges] = {F_UNLCK, F_UNLCK, F_UNLCK};
};
// Per-process state of one open stored file: its DRAM map and SQLite's
// lock state.
struct Shared {
  Pool* pool;
  int slot;
  ByteLocks* bytes;  // in pool->bytes
  std::unique_ptr<FileMap> map;
  int refs = 0;
  int n_shared = 0;
  void* reserved = nullptr;
  void* pending = nullptr;
  void* exclusive = nullptr;
  bool proc_pending = false;  // this process holds the PENDING byte (write lock)
  // Wraps of this process open on the file (writes not committed yet): a
  // reload would read what they changed only from the engine's view.
  std::atomic<int> open_wraps{0};
};
struct Pool {
  std::string path;
  sw_pool* p = nullptr;
  int lock_fd = -1;        // SQLite's locks across processes (shared pools only); written under g_mu and lk_mu
  bool read_only = false;  // a file this process may not write: opened SW_CONFIG_READONLY
  Root* root = nullptr;
  int refs = 0;
  std::map<int, Shared*> files;
  // DRAM copy of the directory's names (only this process changes the
  // pool while it has it open): lookups happen at every transaction start
  // (SQLite's hot-journal check).
  std::map<std::string, int> names;
  // Elided locks ("locks across processes").  lk_mu is taken last (after
  // g_mu and the core's sharing lock, which runs the hooks under it) and
  // never held while calling softwrap.
  std::mutex lk_mu;
  std::atomic<bool> elided{false};   // written under lk_mu
  // GUARDED_BY(lk_mu): this process caught up with the others (catch_up)
  // within the current elision, so nobody else has written since.
  bool current = false;
  std::map<int, ByteLocks> bytes;    // GUARDED_BY(lk_mu); by slot, never erased
};
int take_elided(void* arg);  // "locks across processes"

struct DbName {
  Pool* pool;
  std::string key;
  int refs;
};

std::mutex g_mu;  // guards everything below and all Shared records
std::map<std::string, Pool*> g_pools;  // by pool path
std::map<std::string, DbName> g_dbs;   // main database path -> its pool and key
sqlite3_vfs* g_base = nullptr;         // "unix": time, randomness, dlopen

struct File {
  sqlite3_file base;
  int kind;
  // DRAM file
  std::vector<char>* mem;
  // pool file
  Pool* pool;
  Shared* sh;
  int lock;
  bool wrap_open;
  bool delete_on_close;
  bool is_main;
  bool is_wal;     // a -wal file of a main database (WAL mode)
  bool ro_open;    // opened SQLITE_OPEN_READONLY: writes fail, as on the unix VFS's O_RDONLY descriptor
  bool has_write;  // EXCLUSIVE holds a write-access session of a shared pool
  // WAL mode (see "WAL mode").  Main database: its wal-index connection,
  // and the write-access sessions its WAL_WRITE and WAL_CKPT locks hold;
  // the pages a checkpoint has written into the open wrap.  -wal file: the
  // slot of its database, and where the page of a commit frame whose
  // header was just written starts (its end commits the wrap).
  ShmConn* shm;
  bool wal_write_session;
  bool ckpt_session;
  bool in_ckpt;    // between SQLITE_FCNTL_CKPT_START and _DONE
  bool ckpt_tail;  // after _DONE: the checkpoint's truncation commits at once
  int ckpt_pages;
  int db_slot;
  uint64_t commit_at;
  char* db_path;  // main db: key into g_dbs
  pthread_t wrap_thread;
  // refused open (see "refused opens")
  char* refusal;
  int refusal_code;
};

// ------------------------------------------------------------- directory

uint64_t ld(Pool* P, const uint64_t* a) { return load_word(P->p, a); }

int sw_to_sqlite(int code, int dflt) {
  if (code == SW_ENOSPC || code == SW_ETOOBIG) return SQLITE_FULL;
  return dflt;
}

// A wrap of its own for directory changes (nested into an open one).
struct DirWrap {
  Pool* P;
  int rc;
  explicit DirWrap(Pool* pool) : P(pool), rc(sw_wrap_open(pool->p)) {}
  int close() { return rc == 0 ? sw_wrap_close(P->p) : rc; }
};

void load_names(Pool* P) {
  P->names.clear();
  for (int i = 0; i < kMaxFiles; ++i) {
    Dirent* d = &P->root->ents[i];
    if (ld(P, &d->in_use) == 0) continue;
    char name[kNameMax];
    if (sw_read(P->p, name, d->name, kNameMax) != 0) continue;
    name[kNameMax - 1] = '\0';
    P->names[name] = i;
  }
}

int find_slot(Pool* P, const std::string& key) {
  auto it = P->names.find(key);
  return it != P->names.end() ? it->second : -1;
}

int create_slot(Pool* P, const std::string& key) {
  if (key.size() >= static_cast<size_t>(kNameMax)) {
    set_err("softwrap vfs: file name longer than %d bytes: %s", kNameMax - 1, key.c_str());
    return -1;
  }
  for (int i = 0; i < kMaxFiles; ++i) {
    Dirent* d = &P->root->ents[i];
    if (ld(P, &d->in_use) != 0) continue;
    DirWrap w(P);
    if (w.rc != 0) return -1;
    char name[kNameMax] = {};
    std::memcpy(name, key.data(), key.size());
    sw_write(P->p, d->name, name, kNameMax);
    for (uint64_t* a : {&d->size, &d->nblocks, &d->table_off, &d->table_cap}) store_word(P->p, a, 0);
    store_word(P->p, &d->in_use, 1);
    if (w.close() != 0) {
      set_err("softwrap vfs: creating %s: %s", key.c_str(), sw_errormsg());
      return -1;
    }
    P->names[key] = i;
    return i;
  }
  set_err("softwrap vfs: the pool's directory is full (%d files)", kMaxFiles);
  return -1;
}

int delete_slot(Pool* P, int slot) {
  Dirent* d = &P->root->ents[slot];
  DirWrap w(P);
  if (w.rc != 0) return w.rc;
  free_file(P->p, d);  // a failure fails the wrap, and its close says so
  const int rc = w.close();
  // Whether or not the wrap committed, re-read the names from the pool.
  load_names(P);
  return rc;
}

// ------------------------------------------------------------ pool registry

// A pool file whose first page is all zeros: a creation that a crash or a
// kill interrupted before it wrote the header (the header is written last,
// docs/pool-format.md), so nothing was ever committed to it.
bool interrupted_creation(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  unsigned char page[4096];
  const size_t got = std::fread(page, 1, sizeof page, f);
  std::fclose(f);
  for (size_t i = 0; i < got; ++i) {
    if (page[i] != 0) return false;
  }
  return true;
}

// The OS error of an open SQLite's unix VFS would also have met (a
// directory, a missing file or directory on the path, no permission, a
// name too long...): its answer is SQLITE_CANTOPEN, with SQLite's own
// message (*plain; docs/sqlite.md, "Result codes and messages").
int os_refusal(const std::string& path, const char* what, int err, bool* plain) {
  set_err("softwrap vfs: cannot %s pool %s: %s", what, path.c_str(), std::strerror(err));
  *plain = true;
  return SQLITE_CANTOPEN;
}

// access() with the effective IDs, which open() uses (as the unix VFS's
// open would find).
int access_as_open(const std::string& path, int mode) { return faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS); }

// The closest standard result code for a pool sw_pool_open or
// sw_pool_create refused, as stock SQLite answers its nearest case.  Such
// an open gets a refused file (see "refused opens"); SQLITE_FULL, no room
// for the pool, makes it an empty database whose first write fails, as a
// new file on a full disk is to stock SQLite.
int refusal_code(int sw) {
  switch (sw) {
    case SW_EBUSY:
      return SQLITE_BUSY;  // another process holds the pool: "database is locked"
    case SW_EFOREIGN:
      return SQLITE_NOTADB;  // not a pool: stock's "file is not a database"
    case SW_ECORRUPT:
      return SQLITE_CORRUPT;  // its metadata fails validation: "database disk image is malformed"
    case SW_ENOSPC:
    case SW_ETOOBIG:
      return SQLITE_FULL;
    default:
      return SQLITE_CANTOPEN;  // a newer layout, an engine the medium refuses, an I/O error
  }
}

// Opens (or creates) a pool, or takes another reference.  g_mu held.  On
// failure t_err has the detail, and *plain says the condition is one stock
// SQLite knows (answered with its code alone) rather than softwrap's own
// (answered with a refused file that carries the detail).
int pool_acquire(const std::string& path, uint64_t size, const sw_config& cfg_in, bool create, Pool** out,
                 bool* plain) {
  *plain = false;
  if (auto it = g_pools.find(path); it != g_pools.end()) {
    it->second->refs++;
    *out = it->second;
    return SQLITE_OK;
  }
  sw_config cfg = cfg_in;
  struct stat sb;
  sw_pool* p = nullptr;
  // Processes opening a new database at once: one creates the pool, the
  // others find a file being created (locked, its header not written yet:
  // SW_EBUSY, or SW_EEXIST when their own creation lost) and try again.
  for (int attempt = 0;; ++attempt) {
    if (stat(path.c_str(), &sb) == 0) {
      // What the unix VFS's open() would have refused, it refuses with
      // SQLITE_CANTOPEN: a directory; a file this process may not read and
      // write (a pool is mapped for writing).
      if (S_ISDIR(sb.st_mode)) return os_refusal(path, "open", EISDIR, plain);
      if (access_as_open(path, R_OK | W_OK) != 0) {
        // A file it may read but not write, the unix VFS opens read-only
        // (SQLite then answers a write with SQLITE_READONLY): so do we.
        const int err = errno;
        if ((err != EACCES && err != EROFS && err != EPERM) || access_as_open(path, R_OK) != 0) {
          return os_refusal(path, "open", err, plain);
        }
        cfg.flags |= SW_CONFIG_READONLY;
      }
      p = sw_pool_open(path.c_str(), &cfg);
      if (p == nullptr && sw_errno() == SW_EFOREIGN && create && !(cfg.flags & SW_CONFIG_READONLY) &&
          interrupted_creation(path)) {
        // Create it again, as a database file whose creation was interrupted
        // is created again (without SQLITE_OPEN_CREATE the open fails below).
        sw_config again = cfg;
        again.flags |= SW_CONFIG_OVERWRITE;
        if (again.max_size == 0) again.max_size = SW_POOL_SIZE_UNLIMITED;
        p = sw_pool_create(path.c_str(), size, &again);
      }
      if (p == nullptr) set_err("softwrap vfs: cannot open pool %s: %s", path.c_str(), sw_errormsg());
    } else if (errno != ENOENT) {
      return os_refusal(path, "open", errno, plain);  // ENOTDIR, ENAMETOOLONG, EACCES on the path, ELOOP
    } else if (!create) {
      // Stock: open() fails with ENOENT, SQLITE_CANTOPEN.
      set_err("softwrap vfs: no pool %s, and the open does not create one (no SQLITE_OPEN_CREATE)", path.c_str());
      *plain = true;
      return SQLITE_CANTOPEN;
    } else {
      // Where the unix VFS could not create the file (a missing directory,
      // one this process may not write), neither can we.
      const std::string::size_type slash = path.rfind('/');
      const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
      if (access_as_open(dir, W_OK | X_OK) != 0) return os_refusal(path, "create", errno, plain);
      if (cfg.max_size == 0) cfg.max_size = SW_POOL_SIZE_UNLIMITED;  // grows like a file
      p = sw_pool_create(path.c_str(), size, &cfg);
      if (p == nullptr) {
        set_err("softwrap vfs: cannot create pool %s (poolsize=%llu, lanes=%u, lanesize=%llu): %s", path.c_str(),
                static_cast<unsigned long long>(size), cfg.lanes, static_cast<unsigned long long>(cfg.lane_size),
                sw_errormsg());
      }
    }
    const bool racing = p == nullptr && (cfg.flags & SW_CONFIG_SHARED) &&
                        (sw_errno() == SW_EEXIST || (sw_errno() == SW_EBUSY && interrupted_creation(path)));
    if (!racing || attempt >= 2000) break;
    cfg = cfg_in;
    usleep(1000);
  }
  if (p == nullptr) return refusal_code(sw_errno());
  auto* root = static_cast<Root*>(sw_pool_root(p, sizeof(Root)));
  if (root == nullptr || (sw_load64(p, &root->magic) != 0 && sw_load64(p, &root->magic) != kMagic)) {
    set_err("softwrap vfs: pool %s holds something other than SQLite files", path.c_str());
    sw_pool_close(p);
    return SQLITE_NOTADB;
  }
  const bool read_only = (cfg.flags & SW_CONFIG_READONLY) != 0;
  if (sw_load64(p, &root->magic) == 0 && !read_only) {
    sw_wrap_open(p);
    const uint64_t hdr[2] = {kMagic, 1};
    sw_write(p, &root->magic, hdr, sizeof hdr);
    if (sw_wrap_close(p) != 0) {
      set_err("softwrap vfs: pool %s: %s", path.c_str(), sw_errormsg());
      sw_pool_close(p);
      return SQLITE_CANTOPEN;
    }
  }
  int lock_fd = -1;
  if (cfg.flags & SW_CONFIG_SHARED) {
    lock_fd = ::open(path.c_str(), (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (lock_fd < 0) {
      set_err("softwrap vfs: cannot open pool %s for its locks: %s", path.c_str(), std::strerror(errno));
      sw_pool_close(p);
      return SQLITE_CANTOPEN;
    }
  }
  auto* P = new Pool;
  P->path = path;
  P->p = p;
  P->lock_fd = lock_fd;
  if (lock_fd >= 0) sw_pool_set_alone_hook(p, take_elided, P);
  P->root = root;
  P->refs = 1;
  P->read_only = read_only;
  load_names(P);
  g_pools[path] = P;
  *out = P;
  return SQLITE_OK;
}

void pool_release(Pool* P) {  // g_mu held
  if (--P->refs > 0) return;
  g_pools.erase(P->path);
  // No file is open, so none of SQLite's locks is held: the descriptor
  // goes first (with any lock bytes left over from elision), so that a
  // process waiting to open the pool finds none when it gets in.
  int fd = -1;
  {
    std::lock_guard<std::mutex> lk(P->lk_mu);
    std::swap(fd, P->lock_fd);
    P->elided = false;
    P->current = false;
  }
  if (fd >= 0) close(fd);
  sw_pool_close(P->p);
  delete P;
}

Shared* shared_acquire(Pool* P, int slot) {  // g_mu held
  Shared*& s = P->files[slot];
  if (s == nullptr) {
    s = new Shared;
    s->pool = P;
    s->slot = slot;
    s->map = std::make_unique<FileMap>(P->p, &P->root->ents[slot]);
    std::lock_guard<std::mutex> lk(P->lk_mu);
    s->bytes = &P->bytes[slot];
  }
  s->refs++;
  return s;
}

void shared_release(Shared* s) {  // g_mu held
  if (--s->refs > 0) return;
  s->pool->files.erase(s->slot);
  delete s;
}

// Splits "<db>-journal" / "<db>-wal" into the db path and the suffix.
bool split_aux(const std::string& name, std::string* db, std::string* suffix) {
  for (const char* sfx : {"-journal", "-wal"}) {
    const size_t n = std::strlen(sfx);
    if (name.size() > n && name.compare(name.size() - n, n, sfx) == 0) {
      *db = name.substr(0, name.size() - n);
      *suffix = sfx;
      return true;
    }
  }
  return false;
}

// ------------------------------------------------------------ wrap control

bool same_thread(File* f) { return pthread_equal(f->wrap_thread, pthread_self()) != 0; }

// The -wal files whose wrap is open on this thread (WAL mode: the commit
// points are calls on the database's file, "WAL mode").
thread_local std::vector<File*> t_wal_wraps;

void wrap_opened(File* f) {
  f->wrap_open = true;
  f->wrap_thread = pthread_self();
  f->sh->open_wraps.fetch_add(1, std::memory_order_relaxed);
  if (f->is_wal) t_wal_wraps.push_back(f);
}
void wrap_ended(File* f) {
  f->wrap_open = false;
  f->commit_at = 0;
  f->sh->open_wraps.fetch_sub(1, std::memory_order_relaxed);
  if (f->is_wal) std::erase(t_wal_wraps, f);
}

int begin_write(File* f, int ioerr) {
  sw_pool* p = f->pool->p;
  if (f->kind == kScmVfs) {
    if (sw_wrap_depth(p) == 0 && sw_wrap_open(p) != 0) {
      set_err("scm vfs: %s", sw_errormsg());
      return ioerr;
    }
    return SQLITE_OK;
  }
  if (f->wrap_open) {
    if (same_thread(f)) return SQLITE_OK;
    set_err("softwrap vfs: transaction's writes moved to another thread; a wrap belongs to its thread");
    return ioerr;
  }
  if (sw_wrap_open(p) != 0) {
    set_err("softwrap vfs: %s", sw_errormsg());
    return ioerr;
  }
  wrap_opened(f);
  return SQLITE_OK;
}

// softwrap: the commit point.  scm: the pcommit.
int commit(File* f) {
  sw_pool* p = f->pool->p;
  if (f->kind == kScmVfs) {
    if (sw_wrap_depth(p) == 0 && sw_wrap_open(p) != 0) return SQLITE_IOERR_FSYNC;
    while (sw_wrap_depth(p) > 0) {
      if (sw_wrap_close(p) != 0) {
        set_err("scm vfs: %s", sw_errormsg());
        return SQLITE_IOERR_FSYNC;
      }
    }
    return SQLITE_OK;
  }
  if (!f->wrap_open) return SQLITE_OK;
  if (!same_thread(f)) {
    set_err("softwrap vfs: commit on another thread than the transaction's writes");
    return SQLITE_IOERR_FSYNC;
  }
  wrap_ended(f);
  if (sw_wrap_close(p) != 0) {
    set_err("softwrap vfs: commit failed: %s", sw_errormsg());
    f->sh->map->reload();  // the wrap was rolled back
    return SQLITE_IOERR_FSYNC;
  }
  return SQLITE_OK;
}

// The wrap's writes touched this file only (its journal is a DRAM file),
// and SQLite's EXCLUSIVE lock, still held, keeps others from reading it.
void abort_wrap(File* f) {
  if (f->kind != kSoftwrapVfs || !f->wrap_open) return;
  if (same_thread(f)) sw_wrap_abort(f->pool->p);
  wrap_ended(f);
  f->sh->map->reload();
}

// ------------------------------------------------------------ pool file I/O

// A failed I/O's result code, its detail (t_err) remembered for
// sw_sqlite_errmsg under the database's path.
int failed(const File* f, int rc) {
  if (f->db_path != nullptr) remember_err(f->db_path);
  return rc;
}

int p_close(sqlite3_file* pf);
// WAL mode ("WAL mode", below).
bool wal_mode(const File* f);
int commit_home(File* f);
int commit_checkpoint(File* db);
int publish(File* f);
void reload_after_others(Pool* P);  // g_mu held
constexpr int kCkptPagesPerWrap = 1024;  // 4 MiB of 4 KiB pages
int p_read(sqlite3_file* pf, void* buf, int n, sqlite3_int64 off) {
  auto* f = reinterpret_cast<File*>(pf);
  const auto o = static_cast<uint64_t>(off), len = static_cast<uint64_t>(n);
  uint64_t got = 0;
  int rc = f->sh->map->read(o, buf, len, &got);
  if (rc == 0 && got < len && wal_mode(f) && f->pool->lock_fd >= 0 && sw_pool_write_held(f->pool->p) == 0) {
    // WAL mode: another process appended to the file (its -wal, or the
    // database a checkpoint grew), and SQLite's WAL index said so before
    // this process's map knew: map the pool's growth, reload, read again.
    // (Bytes it learned of are home: "WAL mode".)  Past the end is
    // normal too (SQLite reads headers of files it has not written yet).
    std::lock_guard<std::mutex> g(g_mu);
    const int r = sw_pool_follow(f->pool->p);
    if (r >= 0) {
      // Others wrote: every map (what follow says it says once), this one
      // among them (no wrap is open on it: no write access); else this one.
      if (r == 1) {
        reload_after_others(f->pool);
      } else {
        f->sh->map->reload();
      }
      rc = f->sh->map->read(o, buf, len, &got);
    }
  }
  if (rc != 0) {
    set_err("softwrap vfs: read: %s", sw_errormsg());
    return failed(f, SQLITE_IOERR_READ);
  }
  return got == len ? SQLITE_OK : SQLITE_IOERR_SHORT_READ;
}

// The WAL file's frame header layout (SQLite's file format: a 32-byte
// file header, then frames of a 24-byte header and a page; bytes 4-7 of a
// frame header, big-endian, are the database size in pages after a commit
// frame and 0 in any other frame).
constexpr uint64_t kWalHeaderBytes = 32, kWalFrameHeaderBytes = 24;
uint32_t big_endian32(const void* p) {
  const auto* b = static_cast<const unsigned char*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

// A write through a file opened read-only (SQLite tries one only in a
// checkpoint of a read-only connection in WAL mode).
int refuse_read_only(File* f, int code) {
  set_err("softwrap vfs: %s was opened read-only", f->db_path != nullptr ? f->db_path : "the file");
  return failed(f, code);
}

int p_write(sqlite3_file* pf, const void* buf, int n, sqlite3_int64 off) {
  auto* f = reinterpret_cast<File*>(pf);
  if (f->ro_open) return refuse_read_only(f, SQLITE_IOERR_WRITE);
  if (int rc = begin_write(f, SQLITE_IOERR_WRITE); rc != SQLITE_OK) return failed(f, rc);
  // A -wal file's bytes are written whole: its frames overwrite an older
  // generation of the log (or zeros), so write-combined logging's compare
  // would find nearly every word changed and only cost time (300 TPC-C
  // transactions in WAL mode: 404M instructions with it, 308M without).
  if (int rc = f->sh->map->write(static_cast<uint64_t>(off), buf, static_cast<uint64_t>(n), f->is_wal); rc != 0) {
    set_err("softwrap vfs: write: %s", sw_errormsg());
    return failed(f, sw_to_sqlite(rc, SQLITE_IOERR_WRITE));
  }
  if (f->is_wal && f->kind == kSoftwrapVfs) {
    // A transaction's frames end with its commit frame: once its page is
    // written, the wrap commits here, where a failure can still fail the
    // COMMIT (the xShmBarrier that follows cannot report one).
    const auto o = static_cast<uint64_t>(off);
    if (f->commit_at != 0 && o == f->commit_at) {
      if (int rc = commit_home(f); rc != SQLITE_OK) return failed(f, SQLITE_IOERR_WRITE);  // (clears commit_at)
    } else if (n == static_cast<int>(kWalFrameHeaderBytes) && o >= kWalHeaderBytes && big_endian32(static_cast<const char*>(buf) + 4) != 0) {
      f->commit_at = o + kWalFrameHeaderBytes;
    }
  } else if (f->in_ckpt && ++f->ckpt_pages >= kCkptPagesPerWrap) {
    // A checkpoint's wraps are bounded: its pages are in the -wal file
    // until wal.c records them as backfilled, after the last wrap.
    if (int rc = commit_checkpoint(f); rc != SQLITE_OK) return failed(f, rc);
  }
  return SQLITE_OK;
}

int p_truncate(sqlite3_file* pf, sqlite3_int64 size) {
  auto* f = reinterpret_cast<File*>(pf);
  if (f->ro_open) return refuse_read_only(f, SQLITE_IOERR_TRUNCATE);
  if (int rc = begin_write(f, SQLITE_IOERR_TRUNCATE); rc != SQLITE_OK) return failed(f, rc);
  if (int rc = f->sh->map->truncate(static_cast<uint64_t>(size)); rc != 0) {
    set_err("softwrap vfs: truncate: %s", sw_errormsg());
    return failed(f, sw_to_sqlite(rc, SQLITE_IOERR_TRUNCATE));
  }
  if (f->ckpt_tail && f->kind == kSoftwrapVfs) {
    // The database cut to the checkpointed size, before wal.c records the
    // backfill (it syncs first only if synchronous is on).
    f->ckpt_tail = false;
    if (int rc = commit_checkpoint(f); rc != SQLITE_OK) return failed(f, rc);
  }
  return SQLITE_OK;
}

int p_sync(sqlite3_file* pf, int) {
  auto* f = reinterpret_cast<File*>(pf);
  f->ckpt_tail = false;
  const int rc = f->kind == kSoftwrapVfs && wal_mode(f) ? commit_home(f) : commit(f);
  return rc == SQLITE_OK ? rc : failed(f, rc);
}

int p_size(sqlite3_file* pf, sqlite3_int64* out) {
  auto* f = reinterpret_cast<File*>(pf);
  *out = static_cast<sqlite3_int64>(f->sh->map->size());
  return SQLITE_OK;
}

// ------------------------------------------------ locks across processes
//
// The lock bytes of stored file `slot`, on the pool file (past
// kAppLockBase, pool_format.h: never data): as the unix VFS's PENDING,
// RESERVED and SHARED bytes of a database file.
constexpr uint64_t kLockBase = (uint64_t{1} << 62) + 4096;
constexpr uint64_t kLockStride = 1024;
constexpr uint64_t kRangeOff[kLockRanges] = {0, 1, 2};
constexpr uint64_t kRangeLen[kLockRanges] = {1, 1, 510};
static_assert(kLockBase == static_cast<uint64_t>(SW_APP_LOCK_BASE));

bool set_range(int fd, int slot, int range, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(kLockBase + static_cast<uint64_t>(slot) * kLockStride + kRangeOff[range]);
  fl.l_len = static_cast<off_t>(kRangeLen[range]);
  while (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

// Elision.  While the core's handle holds write access and no other
// handle has the pool open, no other process can take a lock byte (its
// open waits for write access), so the lock bytes are left alone: SQLite's
// locks are only recorded (want).  The core calls take_elided before it
// gives write access up (to a newcomer, after idling, at close), which
// takes the recorded locks for real; from then on they are taken as they
// change, until the core again finds the handle alone (sw_pool_if_alone).
// So a lone process's transactions make no lock system call.
void elide(void* arg) {  // under the core's sharing lock
  auto* P = static_cast<Pool*>(arg);
  std::lock_guard<std::mutex> lk(P->lk_mu);
  P->elided = true;
  P->current = false;
}
int take_elided(void* arg) {  // under the core's sharing lock, any thread
  auto* P = static_cast<Pool*>(arg);
  std::lock_guard<std::mutex> lk(P->lk_mu);
  if (!P->elided || P->lock_fd < 0) return 0;
  for (auto& [slot, b] : P->bytes) {
    for (int r = 0; r < kLockRanges; ++r) {
      if (b.have[r] == b.want[r]) continue;
      if (!set_range(P->lock_fd, slot, r, b.want[r])) return -1;  // still elided: the core tries again
      b.have[r] = b.want[r];
    }
  }
  P->elided = false;
  P->current = false;
  return 0;
}

// Sets one of the file's lock ranges to `type` for this process (F_RDLCK,
// F_WRLCK, F_UNLCK); false if another process's lock conflicts.
bool byte_lock(const Shared* s, int range, short type) {  // g_mu held
  Pool* P = s->pool;
  if (P->lock_fd < 0) return true;  // the pool is this process's alone
  if (!P->elided.load(std::memory_order_relaxed)) sw_pool_if_alone(P->p, elide, P);
  std::lock_guard<std::mutex> lk(P->lk_mu);
  ByteLocks& b = *s->bytes;
  if (P->elided) {
    // Releases still happen (only of locks taken before the elision began:
    // once each), so the descriptor never holds more than SQLite does.
    b.want[range] = type;
    const bool weaker = type == F_UNLCK || (type == F_RDLCK && b.have[range] == F_WRLCK);
    if (weaker && b.have[range] != type && set_range(P->lock_fd, s->slot, range, type)) b.have[range] = type;
    return true;
  }
  if (b.have[range] != type && !set_range(P->lock_fd, s->slot, range, type)) return false;
  b.want[range] = b.have[range] = type;
  return true;
}
bool shared_range(const Shared* s, short type) { return byte_lock(s, kSharedRange, type); }

// The process's first SHARED lock on the file: as unixLock, a read lock on
// PENDING (no writer is waiting for readers to leave), the SHARED range,
// then PENDING released.
bool process_shared(Shared* s) {
  if (!byte_lock(s, kPendingByte, F_RDLCK)) return false;
  const bool ok = shared_range(s, F_RDLCK);
  byte_lock(s, kPendingByte, F_UNLCK);
  return ok;
}

// The process's first SHARED lock while its locks are elided and it has
// caught up since the elision began (nobody else can have written): only
// recorded, and no catching up.  False if not so.
bool elided_shared(Shared* s) {
  Pool* P = s->pool;
  if (P->lock_fd < 0 || !P->elided.load(std::memory_order_relaxed)) return false;
  std::lock_guard<std::mutex> lk(P->lk_mu);
  if (!P->elided || !P->current) return false;
  s->bytes->want[kSharedRange] = F_RDLCK;
  return true;
}

// After the process's first SHARED lock: what other processes wrote since
// this process last looked.  SQLITE_OK, or SQLITE_BUSY (a writer keeps
// write access), or an I/O error code.
int catch_up(Shared* s) {
  Pool* P = s->pool;
  if (P->lock_fd >= 0) {
    // Waiting for a holder of write access whose commits may not be home:
    // a live one gives it up within a millisecond of being asked (also a
    // WAL writer keeping it between transactions), and one that died is
    // being recovered, perhaps by another process, which writes home while
    // it does (sw_pool_follow would not wait for that).
    const int r = sw_pool_refresh(P->p);
    if (r < 0) {
      set_err("softwrap vfs: catching up with other processes' writes to %s: %s", P->path.c_str(), sw_errormsg());
      return r == SW_EBUSY ? SQLITE_BUSY : SQLITE_IOERR_LOCK;
    }
    if (r == 1) {
      // Files this process holds no lock on may have changed, and in WAL
      // mode those it holds SHARED on too (checkpoints of other
      // processes), and so may the directory: every map this process has
      // no wrap open on is reloaded now (refresh says it once).
      reload_after_others(P);
    }
    // An elision begins only in byte_lock, under g_mu, which we hold: one
    // still on now was on before the refresh, so the refresh counts.
    std::lock_guard<std::mutex> lk(P->lk_mu);
    if (P->elided) P->current = true;
  }
  return SQLITE_OK;
}

int p_lock(sqlite3_file* pf, int level) {
  auto* f = reinterpret_cast<File*>(pf);
  f->ckpt_tail = false;
  if (f->lock >= level) return SQLITE_OK;
  std::lock_guard<std::mutex> g(g_mu);
  Shared* s = f->sh;
  if (level == SQLITE_LOCK_SHARED) {
    if (s->pending != nullptr || s->exclusive != nullptr) return SQLITE_BUSY;
    if (s->n_shared == 0) {
      if (!elided_shared(s)) {
        if (!process_shared(s)) return SQLITE_BUSY;
        if (const int rc = catch_up(s); rc != SQLITE_OK) {
          shared_range(s, F_UNLCK);
          return rc == SQLITE_BUSY ? rc : failed(f, rc);
        }
      }
    }
    s->n_shared++;
    f->lock = SQLITE_LOCK_SHARED;
    return SQLITE_OK;
  }
  if (level == SQLITE_LOCK_RESERVED) {
    if (s->reserved != nullptr || s->pending != nullptr || s->exclusive != nullptr) return SQLITE_BUSY;
    if (!byte_lock(s, kReservedByte, F_WRLCK)) return SQLITE_BUSY;
    s->reserved = f;
    f->lock = SQLITE_LOCK_RESERVED;
    return SQLITE_OK;
  }
  // EXCLUSIVE: take PENDING (keeps new readers out), then wait for readers.
  if ((s->pending != nullptr && s->pending != f) || (s->reserved != nullptr && s->reserved != f)) {
    return SQLITE_BUSY;
  }
  if (!s->proc_pending) {
    if (!byte_lock(s, kPendingByte, F_WRLCK)) return SQLITE_BUSY;
    s->proc_pending = true;
  }
  s->pending = f;
  f->lock = SQLITE_LOCK_PENDING;
  if (s->n_shared > 1) return SQLITE_BUSY;
  if (!shared_range(s, F_WRLCK)) return SQLITE_BUSY;  // another process still reads
  if (f->pool->lock_fd >= 0) {
    // Write access: the holder gives it up within a millisecond of seeing
    // us if it is between sessions; one writing another file of the pool
    // is not waited for long (the busy handler retries).
    if (sw_pool_write_begin(f->pool->p, 100) != 0) {
      set_err("softwrap vfs: %s", sw_errormsg());
      shared_range(s, F_RDLCK);
      return SQLITE_BUSY;
    }
    f->has_write = true;
  }
  s->exclusive = f;
  f->lock = SQLITE_LOCK_EXCLUSIVE;
  return SQLITE_OK;
}

int p_unlock(sqlite3_file* pf, int level) {
  auto* f = reinterpret_cast<File*>(pf);
  if (f->lock <= level) return SQLITE_OK;
  abort_wrap(f);  // writes that were never committed: close before unlock
  std::lock_guard<std::mutex> g(g_mu);
  Shared* s = f->sh;
  int rc = SQLITE_OK;
  if (f->has_write) {
    // Every commit home before another process may read (the lock bytes
    // below); a failure keeps write access, and other processes wait.
    // (While another session of this process keeps write access, readers
    // elsewhere wait for it in their catch_up: sw_pool_refresh.)
    f->has_write = false;
    if (sw_pool_write_end(f->pool->p) != 0) {
      set_err("softwrap vfs: giving write access up: %s", sw_errormsg());
      rc = failed(f, SQLITE_IOERR_UNLOCK);
    }
  }
  if (f->lock > SQLITE_LOCK_SHARED) {
    if (f->lock == SQLITE_LOCK_EXCLUSIVE && level == SQLITE_LOCK_SHARED) shared_range(s, F_RDLCK);
    if (s->reserved == f) {
      s->reserved = nullptr;
      byte_lock(s, kReservedByte, F_UNLCK);
    }
    if (s->pending == f) {
      s->pending = nullptr;
      s->proc_pending = false;
      byte_lock(s, kPendingByte, F_UNLCK);
    }
    if (s->exclusive == f) s->exclusive = nullptr;
  }
  if (level == SQLITE_LOCK_NONE && --s->n_shared == 0) shared_range(s, F_UNLCK);
  f->lock = level;
  return rc;
}

int p_check_reserved(sqlite3_file* pf, int* out) {
  auto* f = reinterpret_cast<File*>(pf);
  std::lock_guard<std::mutex> g(g_mu);
  Shared* s = f->sh;
  *out = (s->reserved != nullptr || s->pending != nullptr || s->exclusive != nullptr) ? 1 : 0;
  Pool* P = f->pool;
  std::lock_guard<std::mutex> lk(P->lk_mu);
  if (*out == 0 && P->lock_fd >= 0 && !P->elided) {
    // Another process's RESERVED byte (or one in this process, which the
    // records above already showed).  While elided there is no other.
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = static_cast<off_t>(kLockBase + static_cast<uint64_t>(s->slot) * kLockStride + kRangeOff[kReservedByte]);
    fl.l_len = 1;
    if (fcntl(P->lock_fd, F_OFD_GETLK, &fl) != 0) return SQLITE_IOERR_CHECKRESERVEDLOCK;
    *out = fl.l_type != F_UNLCK ? 1 : 0;
  }
  return SQLITE_OK;
}

// ------------------------------------------------------------ WAL mode
//
// SQLite's own WAL mode, on the pool.  The -wal file is a stored file of
// the pool like the database; the WAL index lives in shared memory
// (vfs_shm.h: a file in /dev/shm named from the pool's identity, its inode
// and the database's key, with SQLite's locking protocol across
// processes); the database file keeps its SHARED lock for the life of a
// connection, as with the unix VFS.
//
// One WAL commit is one wrap.  The transaction's first frame write opens
// it (on the -wal file, on the writer's thread), and the write of the
// commit frame's page closes it, so the COMMIT fails if the wrap cannot
// commit.  Anything the transaction writes after that (a journal_size_limit
// truncation, checksums rewritten) commits at the writer's xShmBarrier,
// which wal.c calls between writing the two copies of the WAL-index
// header: before any reader can accept the header that counts the frames.
// Unlocking WAL_WRITE commits what is left (a rolled-back transaction's
// spilled frames, which no header counts), and so does
// SQLITE_FCNTL_COMMIT_PHASETWO (locking_mode=EXCLUSIVE keeps the index in
// heap memory and calls no xShm method).
//
// Readers in other processes read home.  A commit is made home
// (sw_pool_publish) right after it commits, before the header that counts
// it is written, whenever another process has the pool open; a process
// alone pays nothing for it.  So every frame a reader's snapshot counts is
// home, and the writer's later commits only write bytes no snapshot reads
// (frames past every snapshot, or frames the WAL restarted over once no
// reader used them: SQLite's read marks).
//
// Checkpoints write the database in wraps of at most kCkptPagesPerWrap
// pages, and SQLITE_FCNTL_CKPT_DONE commits and publishes the last one,
// before wal.c records the frames as backfilled.  Should that commit fail
// (no room for its log, an I/O error) SQLite would record pages as
// backfilled that the database does not hold, so the VFS clears the WAL
// index's header: every connection then rebuilds the index from the -wal
// file, whose frames are all still there, which also forgets the backfill.
//
// Write access.  Taking WAL_WRITE or WAL_CKPT exclusively takes the
// pool's write access (a session, at most 100 ms, else SQLITE_BUSY, which
// SQLite retries through its busy handler); releasing it pauses the
// session (sw_pool_write_pause: write access stays until another process
// asks for it); the first taker after another process wrote reloads the
// maps and the directory.  (A FULL, RESTART or TRUNCATE checkpoint holds
// write access while its busy handler waits for WAL_WRITE, and a writer
// of another process that holds WAL_WRITE waits for write access: they
// back off in turn.  Taking it only when the copy starts removed that,
// but then the kill campaign found corrupt databases; see results.md.)  Readers never take write access, and never wait for a
// writer: what they read is home (above), and a read past what their map
// knows maps the pool's growth and reloads the map (p_read).
constexpr int kWalWriteLock = 0, kWalCkptLock = 1;  // wal.c: WAL_WRITE_LOCK, WAL_CKPT_LOCK

bool wal_mode(const File* f) { return f->is_wal || f->shm != nullptr; }

// Makes this thread's commits home for other processes (sw_pool_publish).
int publish(File* f) {
  Pool* P = f->pool;
  if (P->lock_fd < 0 || sw_pool_publish(P->p) == 0) return SQLITE_OK;
  set_err("softwrap vfs: making a commit home for other processes: %s", sw_errormsg());
  return SQLITE_IOERR_FSYNC;
}

// Commits f's wrap and makes this thread's commits home (publish).
int commit_home(File* f) {
  if (int rc = commit(f); rc != SQLITE_OK) return rc;
  return publish(f);
}

// Commits and publishes every -wal wrap of database `db` open on this
// thread.
int commit_wal(File* db) {
  int rc = SQLITE_OK;
  bool committed = false;
  for (;;) {
    auto it = std::find_if(t_wal_wraps.begin(), t_wal_wraps.end(),
                           [db](const File* w) { return w->pool == db->pool && w->db_slot == db->sh->slot; });
    if (it == t_wal_wraps.end()) break;
    File* w = *it;
    if (const int r = commit(w); r != SQLITE_OK) rc = r;  // either way off the list (wrap_ended)
    committed = true;
  }
  if (rc == SQLITE_OK && committed) rc = publish(db);
  return rc;
}

// The checkpoint's database wrap: committed and published.
int commit_checkpoint(File* db) {
  if (!db->wrap_open) return SQLITE_OK;
  db->ckpt_pages = 0;
  return commit_home(db);
}

// After a failed checkpoint commit: both copies of the WAL-index header
// made invalid (isInit, byte 12 of each 48-byte copy), so that the next
// connection to read it rebuilds the index from the -wal file.
void invalidate_wal_index(File* db) {
  void volatile* region = nullptr;
  if (db->shm == nullptr || db->shm->map(0, 32768, false, &region) != SQLITE_OK || region == nullptr) return;
  auto* hdr = static_cast<volatile unsigned char*>(region);
  hdr[12] = 0;
  hdr[48 + 12] = 0;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  sqlite3_log(SQLITE_IOERR_WRITE, "%s (the WAL index is rebuilt from the -wal file)", t_err.c_str());
}

// Another process wrote since this one last looked: every map this
// process has no wrap open on, and the directory.  g_mu held.
void reload_after_others(Pool* P) {
  for (auto& [slot, s] : P->files) {
    if (s->open_wraps.load(std::memory_order_relaxed) == 0) {
      s->map->reload();
    }
  }
  load_names(P);
}

// The pool's write access for a WAL_WRITE holder (session:
// &f->wal_write_session) or a WAL_CKPT holder (&f->ckpt_session), waiting
// at most wait_ms for another process to give it up.
int wal_session_begin(File* f, bool* session, int wait_ms) {
  Pool* P = f->pool;
  if (*session || P->lock_fd < 0 || P->read_only) return SQLITE_OK;  // a pool of its own always has write access
  if (sw_pool_write_begin(P->p, wait_ms) != 0) {
    set_err("softwrap vfs: %s", sw_errormsg());
    return SQLITE_BUSY;
  }
  *session = true;
  std::lock_guard<std::mutex> g(g_mu);
  if (sw_pool_refresh(P->p) == 1) reload_after_others(P);  // held: never waits
  return SQLITE_OK;
}

// Releasing WAL_WRITE or WAL_CKPT: what is left commits, and the session
// ends (write access goes, every commit home, if another process has the
// pool open).
int wal_write_end(File* f, bool ckpt) {
  if (ckpt) f->in_ckpt = f->ckpt_tail = false;
  int rc = ckpt ? commit_checkpoint(f) : commit_wal(f);
  if (ckpt && rc != SQLITE_OK) invalidate_wal_index(f);
  bool& session = ckpt ? f->ckpt_session : f->wal_write_session;
  if (session) {
    // Kept while no other process asks for it (sw_pool_write_pause): a
    // writer beside readers keeps its write access across transactions.
    session = false;
    if (sw_pool_write_pause(f->pool->p) != 0) {
      set_err("softwrap vfs: giving write access up: %s", sw_errormsg());
      if (rc == SQLITE_OK) rc = SQLITE_IOERR_UNLOCK;
    }
  }
  return rc;
}

// The wal-index of database file `f`: its name, and whether it is this
// process's memory only (a pool no other process can open).
ShmSpec shm_spec(const File* f) {
  Pool* P = f->pool;
  ShmSpec spec;
  spec.private_mem = P->lock_fd < 0 || P->read_only;
  struct stat sb {};
  if (stat(P->path.c_str(), &sb) == 0) spec.mode = sb.st_mode & 0777;
  uint8_t uuid[16] = {};
  sw_pool_uuid(P->p, uuid);
  std::string key;
  for (const auto& [name, slot] : P->names) {
    if (slot == f->sh->slot) key = name;
  }
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the database's key
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
  char name[128];
  int len = std::snprintf(name, sizeof name, "softwrap-");
  for (uint8_t b : uuid) len += std::snprintf(name + len, sizeof name - static_cast<size_t>(len), "%02x", b);
  std::snprintf(name + len, sizeof name - static_cast<size_t>(len), "-%llx-%llx-%016llx.wal-index",
                static_cast<unsigned long long>(sb.st_dev), static_cast<unsigned long long>(sb.st_ino),
                static_cast<unsigned long long>(h));
  // /dev/shm where there is one (a tmpfs: the index is memory), else
  // beside the pool.
  struct stat ds {};
  if (stat("/dev/shm", &ds) == 0 && S_ISDIR(ds.st_mode) && access("/dev/shm", W_OK | X_OK) == 0) {
    spec.path = std::string("/dev/shm/") + name;
  } else {
    const std::string::size_type slash = P->path.rfind('/');
    spec.path = (slash == std::string::npos ? std::string() : P->path.substr(0, slash + 1)) + "." + name;
  }
  return spec;
}

int p_shm_map(sqlite3_file* pf, int region, int size, int extend, void volatile** pp) {
  auto* f = reinterpret_cast<File*>(pf);
  *pp = nullptr;
  if (f->shm == nullptr) {
    ShmSpec spec;
    {
      std::lock_guard<std::mutex> g(g_mu);
      spec = shm_spec(f);
    }
    // Once per process: the indexes in /dev/shm that processes killed
    // before they closed left behind, which nobody has open (a tmpfs
    // keeps them, in memory, until the machine restarts; stock's -shm
    // files sit beside their databases and go with them).
    static std::once_flag swept;
    if (!spec.private_mem && spec.path.rfind("/dev/shm/", 0) == 0) {
      std::call_once(swept, [] { shm_sweep_unused("/dev/shm", "softwrap-", ".wal-index"); });
    }
    std::unique_ptr<ShmConn> conn;
    std::string err;
    if (const int rc = shm_open(spec, &conn, &err); rc != SQLITE_OK) {
      t_err = err;
      return failed(f, rc);
    }
    f->shm = conn.release();
  }
  const int rc = f->shm->map(region, size, extend != 0, pp);
  if (rc != SQLITE_OK) {
    t_err = f->shm->error();
    return failed(f, rc);
  }
  return rc;
}

// A writer whose WAL_WRITE found another process holding the pool's write
// access, having let WAL_WRITE go again: waiting for write access while
// holding WAL_WRITE would keep a checkpointer of that process that waits
// for WAL_WRITE (FULL, RESTART, TRUNCATE) from finishing, and so from
// giving write access up, and each side would back off in turn (a writer
// beside back-to-back FULL checkpoints made 37 commits/s, 3,130 on stock).
// So it waits without it, up to 100 ms in 5 ms steps, and the caller takes
// WAL_WRITE again.  Beside a checkpoint that blocks writers (the other
// process's checkpoint mark: ShmConn::mark) it answers SQLITE_BUSY at once,
// as stock's writer meets that checkpoint's WAL_WRITE, so that SQLite's
// busy handler lets the transaction's read lock go, which a RESTART or
// TRUNCATE waits for.
int wal_wait_for_write_access(File* f) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  for (;;) {
    if (f->shm->marked_elsewhere()) {
      set_err("softwrap vfs: a checkpoint in another process blocks writers");
      return SQLITE_BUSY;
    }
    const int rc = wal_session_begin(f, &f->wal_write_session, 5);
    if (rc != SQLITE_BUSY || std::chrono::steady_clock::now() >= give_up) return rc;
  }
}

int p_shm_lock(sqlite3_file* pf, int offset, int n, int flags) {
  auto* f = reinterpret_cast<File*>(pf);
  if (f->shm == nullptr) return SQLITE_IOERR_SHMLOCK;
  const bool exclusive = (flags & SQLITE_SHM_EXCLUSIVE) != 0;
  auto covers = [offset, n](int i) { return offset <= i && i < offset + n; };
  const bool write = exclusive && covers(kWalWriteLock), ckpt = exclusive && covers(kWalCkptLock);
  if (flags & SQLITE_SHM_UNLOCK) {
    // Commit before unlock: the next writer or checkpointer (and every
    // reader after it) must find this one's writes committed and home.
    int rc = SQLITE_OK;
    if (write && f->shm->holds_exclusive(kWalWriteLock)) rc = wal_write_end(f, false);
    if (ckpt && f->shm->holds_exclusive(kWalCkptLock)) {
      if (const int r = wal_write_end(f, true); rc == SQLITE_OK) rc = r;
      if (const int r = f->shm->mark(false); r != SQLITE_OK && rc == SQLITE_OK) {
        t_err = f->shm->error();
        rc = r;
      }
    }
    const int r = f->shm->lock(offset, n, flags);
    if (rc != SQLITE_OK) sqlite3_log(rc, "%s", t_err.c_str());  // wal.c ignores an unlock's result
    return rc != SQLITE_OK ? failed(f, rc) : r;
  }
  const bool had_write = f->shm->holds_exclusive(kWalWriteLock), had_ckpt = f->shm->holds_exclusive(kWalCkptLock);
  if (write && had_ckpt && !had_write && f->kind == kSoftwrapVfs) {
    // A checkpoint asking for WAL_WRITE (FULL, RESTART, TRUNCATE; wal.c
    // retries through its busy handler): the mark stays until WAL_CKPT goes.
    if (const int r = f->shm->mark(true); r != SQLITE_OK) {
      t_err = f->shm->error();
      return failed(f, r);
    }
  }
  int rc = f->shm->lock(offset, n, flags);
  if (rc != SQLITE_OK) return rc;
  if (write && !had_write) {
    rc = wal_session_begin(f, &f->wal_write_session, 0);
    if (rc == SQLITE_BUSY && !ckpt) {
      f->shm->lock(offset, n, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE);
      if (rc = wal_wait_for_write_access(f); rc != SQLITE_OK) return rc;
      if (rc = f->shm->lock(offset, n, flags); rc != SQLITE_OK) {
        wal_write_end(f, false);
        return rc;
      }
    }
  }
  if (rc == SQLITE_OK && ckpt && !had_ckpt) rc = wal_session_begin(f, &f->ckpt_session, 100);
  if (rc != SQLITE_OK) {
    if (write && !had_write && f->wal_write_session) wal_write_end(f, false);
    f->shm->lock(offset, n, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE);
  }
  return rc;
}

void p_shm_barrier(sqlite3_file* pf) {
  auto* f = reinterpret_cast<File*>(pf);
  if (f->kind == kSoftwrapVfs && f->shm != nullptr && f->shm->holds_exclusive(kWalWriteLock)) {
    if (const int rc = commit_wal(f); rc != SQLITE_OK) {
      // Only writes after the commit frame can be here (the commit itself
      // committed at its page's write, where its failure failed it).
      sqlite3_log(rc, "%s", t_err.c_str());
      failed(f, rc);
    }
  }
  if (f->shm != nullptr) {
    f->shm->barrier();
  } else {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
  }
}

int p_shm_unmap(sqlite3_file* pf, int delete_flag) {
  auto* f = reinterpret_cast<File*>(pf);
  if (f->shm == nullptr) return SQLITE_OK;
  if (f->wal_write_session) wal_write_end(f, false);
  if (f->ckpt_session) wal_write_end(f, true);
  const int rc = f->shm->unmap(delete_flag != 0);
  delete f->shm;
  f->shm = nullptr;
  return rc;
}

int p_file_control(sqlite3_file* pf, int op, void* arg) {
  auto* f = reinterpret_cast<File*>(pf);
  if (op == SQLITE_FCNTL_SYNC && f->kind == kSoftwrapVfs) {
    f->ckpt_tail = false;
    return commit(f);
  }
  if (op == SQLITE_FCNTL_CKPT_START) {
    f->in_ckpt = true;
    f->ckpt_tail = false;
    f->ckpt_pages = 0;
    return SQLITE_OK;
  }
  if (f->kind == kSoftwrapVfs && op == SQLITE_FCNTL_CKPT_DONE) {
    f->in_ckpt = false;
    f->ckpt_tail = true;
    const int rc = commit_checkpoint(f);
    if (rc != SQLITE_OK) invalidate_wal_index(f);
    return rc == SQLITE_OK ? rc : failed(f, rc);
  }
  if (f->kind == kSoftwrapVfs && op == SQLITE_FCNTL_COMMIT_PHASETWO) {
    const int rc = commit_wal(f);
    return rc == SQLITE_OK ? rc : failed(f, rc);
  }
  if (op == SQLITE_FCNTL_VFSNAME) {
    *static_cast<char**>(arg) = sqlite3_mprintf("%s", f->kind == kSoftwrapVfs ? "softwrap" : "scm");
    return SQLITE_OK;
  }
  return SQLITE_NOTFOUND;
}

int p_sector_size(sqlite3_file*) { return 4096; }
int p_device_chars(sqlite3_file*) { return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

const sqlite3_io_methods kPoolMethods = {
    2, p_close, p_read, p_write, p_truncate, p_sync, p_size, p_lock, p_unlock, p_check_reserved,
    p_file_control, p_sector_size, p_device_chars, p_shm_map, p_shm_lock, p_shm_barrier, p_shm_unmap, nullptr, nullptr};

int p_close(sqlite3_file* pf) {
  auto* f = reinterpret_cast<File*>(pf);
  p_unlock(pf, SQLITE_LOCK_NONE);
  if (f->is_wal && f->kind == kSoftwrapVfs && f->wrap_open && same_thread(f)) {
    // A -wal file's writes no header counts are harmless, and a truncation
    // at close (journal_size_limit) is wanted: commit, not roll back.
    if (commit_home(f) != SQLITE_OK) sqlite3_log(SQLITE_IOERR_WRITE, "%s", t_err.c_str());
  }
  abort_wrap(f);
  p_shm_unmap(pf, 0);
  if (f->kind == kScmVfs && sw_wrap_depth(f->pool->p) > 0) commit(f);
  std::lock_guard<std::mutex> g(g_mu);
  Pool* P = f->pool;
  const int slot = f->sh->slot;
  const bool last = f->sh->refs == 1;
  shared_release(f->sh);
  if (f->delete_on_close && last) delete_slot(P, slot);
  if (f->db_path != nullptr) {
    auto it = g_dbs.find(f->db_path);
    if (it != g_dbs.end() && --it->second.refs == 0) g_dbs.erase(it);
    std::free(f->db_path);
  }
  pool_release(P);
  return SQLITE_OK;
}

// ------------------------------------------------------------ DRAM files

int m_close(sqlite3_file* pf) {
  delete reinterpret_cast<File*>(pf)->mem;
  return SQLITE_OK;
}
int m_read(sqlite3_file* pf, void* buf, int n, sqlite3_int64 off) {
  auto& v = *reinterpret_cast<File*>(pf)->mem;
  const uint64_t o = static_cast<uint64_t>(off), size = v.size();
  const uint64_t avail = o < size ? std::min<uint64_t>(static_cast<uint64_t>(n), size - o) : 0;
  if (avail != 0) std::memcpy(buf, v.data() + o, avail);
  if (avail < static_cast<uint64_t>(n)) {
    std::memset(static_cast<char*>(buf) + avail, 0, static_cast<uint64_t>(n) - avail);
    return SQLITE_IOERR_SHORT_READ;
  }
  return SQLITE_OK;
}
int m_write(sqlite3_file* pf, const void* buf, int n, sqlite3_int64 off) {
  auto& v = *reinterpret_cast<File*>(pf)->mem;
  const uint64_t end = static_cast<uint64_t>(off) + static_cast<uint64_t>(n);
  if (end > v.size()) v.resize(end);
  std::memcpy(v.data() + off, buf, static_cast<size_t>(n));
  return SQLITE_OK;
}
int m_truncate(sqlite3_file* pf, sqlite3_int64 size) {
  auto& v = *reinterpret_cast<File*>(pf)->mem;
  if (static_cast<uint64_t>(size) < v.size()) v.resize(static_cast<size_t>(size));
  return SQLITE_OK;
}
int m_sync(sqlite3_file*, int) { return SQLITE_OK; }
int m_size(sqlite3_file* pf, sqlite3_int64* out) {
  *out = static_cast<sqlite3_int64>(reinterpret_cast<File*>(pf)->mem->size());
  return SQLITE_OK;
}
int m_lock(sqlite3_file*, int) { return SQLITE_OK; }
int m_check_reserved(sqlite3_file*, int* out) {
  *out = 0;
  return SQLITE_OK;
}
int m_file_control(sqlite3_file*, int, void*) { return SQLITE_NOTFOUND; }

const sqlite3_io_methods kMemMethods = {
    1, m_close, m_read, m_write, m_truncate, m_sync, m_size, m_lock, m_lock, m_check_reserved,
    m_file_control, p_sector_size, p_device_chars, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

// ------------------------------------------------------------ refused opens
//
// SQLite turns a failed xOpen of a main database into its bare "unable to
// open database file": a VFS cannot hand it a message.  So when the open
// of a main database fails for a reason we can explain (a URI parameter
// that is not understood, a pool that cannot be created or opened), xOpen
// succeeds with a refused file that holds the message and the result code.
// It reads as an empty file (SQLite reads the header while it opens) and
// fails every lock, write and sync.  The auto-extension,
// which SQLite runs at the end of every sqlite3_open*, finds it and fails
// the open with the message (report_refusal): sqlite3_open_v2 returns the
// code and sqlite3_errmsg() the message, which is what the sqlite3 shell
// prints and Python raises.  An ATTACH runs no auto-extension: it fails at
// its first lock with SQLITE_CANTOPEN (SQLITE_BUSY for a pool another
// process holds) and SQLite's text for it.  Every refusal also goes to
// sqlite3_log.

int r_close(sqlite3_file* pf) {
  std::free(reinterpret_cast<File*>(pf)->refusal);
  return SQLITE_OK;
}
int r_read(sqlite3_file*, void* buf, int n, sqlite3_int64) {
  std::memset(buf, 0, static_cast<size_t>(n));
  return SQLITE_IOERR_SHORT_READ;
}
// BUSY stays BUSY ("database is locked"); FULL (no room to create the
// pool) stays FULL, at the first write, as on a full disk; a bad
// parameter's SQLITE_ERROR would read "SQL logic error" at an ATTACH: it
// fails as a file that cannot be opened.
int r_fail(sqlite3_file* pf) {
  const int code = reinterpret_cast<File*>(pf)->refusal_code;
  return code == SQLITE_BUSY || code == SQLITE_FULL ? code : SQLITE_CANTOPEN;
}
int r_write(sqlite3_file* pf, const void*, int, sqlite3_int64) { return r_fail(pf); }
int r_truncate(sqlite3_file* pf, sqlite3_int64) { return r_fail(pf); }
int r_sync(sqlite3_file* pf, int) { return r_fail(pf); }
int r_size(sqlite3_file*, sqlite3_int64* out) {
  *out = 0;
  return SQLITE_OK;
}
// A FULL refusal is an empty database that can be read and locked; only
// its writes fail.
int r_lock(sqlite3_file* pf, int) {
  return reinterpret_cast<File*>(pf)->refusal_code == SQLITE_FULL ? SQLITE_OK : r_fail(pf);
}
int r_unlock(sqlite3_file*, int) { return SQLITE_OK; }

const sqlite3_io_methods kRefusedMethods = {
    1, r_close, r_read, r_write, r_truncate, r_sync, r_size, r_lock, r_unlock, m_check_reserved,
    m_file_control, p_sector_size, p_device_chars, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

int refuse(File* f, int code) {  // the message is in t_err
  sqlite3_log(code, "%s", t_err.c_str());
  f->refusal = strdup(t_err.c_str());
  f->refusal_code = code;
  f->base.pMethods = &kRefusedMethods;
  return SQLITE_OK;
}

void refusal_function(sqlite3_context* ctx, int, sqlite3_value**) {
  const auto* f = static_cast<const File*>(sqlite3_user_data(ctx));
  sqlite3_result_error(ctx, f->refusal, -1);
  sqlite3_result_error_code(ctx, f->refusal_code);
}

// If the connection's main database is a refused file, leaves its message
// and code as the connection's error (a failing statement is the one way
// an extension can set both) and returns true.
bool report_refusal(sqlite3* db) {
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == nullptr ||
      file->pMethods != &kRefusedMethods) {
    return false;
  }
  // No room to create the pool: the open succeeds, as stock's open of a
  // new file on a full disk does, and the first write fails.
  if (reinterpret_cast<const File*>(file)->refusal_code == SQLITE_FULL) return false;
  sqlite3_create_function(db, "softwrap_refused_open", 0, SQLITE_UTF8, file, refusal_function, nullptr, nullptr);
  sqlite3_exec(db, "SELECT softwrap_refused_open()", nullptr, nullptr, nullptr);
  return true;
}

// A failed open of main database `dbpath` (the detail in t_err, kept for
// sw_sqlite_errmsg): a condition stock SQLite knows (plain) is its result
// code alone, SQLite writing its own message; softwrap's own gets a refused
// file that carries the detail.
int open_failed(File* f, const std::string& dbpath, int rc, bool plain) {
  remember_err(dbpath);
  if (!plain) return refuse(f, rc);
  sqlite3_log(rc, "%s", t_err.c_str());
  return rc;
}

// ------------------------------------------------------------ VFS methods

int x_open(sqlite3_vfs* vfs, const char* zname, sqlite3_file* pf, int flags, int* out_flags) {
  auto* f = reinterpret_cast<File*>(pf);
  std::memset(f, 0, sizeof *f);
  f->kind = static_cast<int>(reinterpret_cast<intptr_t>(vfs->pAppData));
  if (out_flags != nullptr) *out_flags = flags;
  const bool main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0 && zname != nullptr;
  const bool scm_journal = f->kind == kScmVfs && (flags & SQLITE_OPEN_MAIN_JOURNAL) != 0 && zname != nullptr;
  const bool wal = (flags & SQLITE_OPEN_WAL) != 0 && zname != nullptr;  // WAL mode: a pool file
  if (!main_db && !scm_journal && !wal) {
    f->mem = new std::vector<char>;
    f->base.pMethods = &kMemMethods;
    return SQLITE_OK;
  }
  std::lock_guard<std::mutex> g(g_mu);
  Pool* P = nullptr;
  std::string key;
  std::string dbpath = zname;
  if (main_db) {
    OpenParams op;
    const bool create = (flags & SQLITE_OPEN_CREATE) != 0;
    auto uri = [zname](const char* k) { return sqlite3_uri_parameter(zname, k); };
    if (!softwrap::sqlite_vfs::parse_open_params(uri, dbpath, f->kind == kScmVfs, &op, &t_err)) {
      return open_failed(f, dbpath, SQLITE_ERROR, false);
    }
    bool plain;
    if (int rc = pool_acquire(op.pool_path, op.pool_size, op.cfg, create, &P, &plain); rc != SQLITE_OK) {
      return open_failed(f, dbpath, rc, plain);
    }
    const std::string& pool_path = op.pool_path;
    key = pool_path == dbpath ? std::string("db") : dbpath;
  } else {
    std::string db, sfx;
    auto it = split_aux(dbpath, &db, &sfx) ? g_dbs.find(db) : g_dbs.end();
    if (it == g_dbs.end()) {
      set_err("%s vfs: %s %s of a database that is not open", f->kind == kScmVfs ? "scm" : "softwrap",
              wal ? "WAL file" : "journal", zname);
      return SQLITE_CANTOPEN;
    }
    P = it->second.pool;
    P->refs++;
    key = it->second.key + sfx;
    f->db_slot = find_slot(P, it->second.key);
  }
  int slot = find_slot(P, key);
  if (slot < 0 && P->lock_fd >= 0) {
    // Another process may have created it (a reader opening the -wal file
    // of a database another process writes): the directory as it is home,
    // which needs no write access.
    load_names(P);
    slot = find_slot(P, key);
  }
  // Another process may have created the file since this one read the
  // directory: look again with write access, which also keeps two
  // processes from creating it twice.
  const bool session = slot < 0 && P->lock_fd >= 0 && !P->read_only && sw_pool_write_begin(P->p, -1) == 0;
  if (session) {
    load_names(P);
    slot = find_slot(P, key);
  }
  if (slot < 0) {
    if ((flags & SQLITE_OPEN_CREATE) == 0) {
      set_err("softwrap vfs: no file %s in pool %s, and the open does not create one (no SQLITE_OPEN_CREATE)",
              key.c_str(), P->path.c_str());
    } else {
      slot = create_slot(P, key);
    }
  }
  if (session) sw_pool_write_end(P->p);
  if (slot < 0) {
    pool_release(P);
    if (!main_db) return SQLITE_CANTOPEN;
    // Without SQLITE_OPEN_CREATE, stock's open() fails with ENOENT;
    // else the name is too long for the pool's directory, or it is full.
    return open_failed(f, dbpath, SQLITE_CANTOPEN, (flags & SQLITE_OPEN_CREATE) == 0);
  }
  f->pool = P;
  f->sh = shared_acquire(P, slot);
  // As the unix VFS reports a file it could open only for reading.
  if (P->read_only && out_flags != nullptr) {
    *out_flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
  }
  f->lock = SQLITE_LOCK_NONE;
  f->delete_on_close = (flags & SQLITE_OPEN_DELETEONCLOSE) != 0;
  f->is_main = main_db;
  f->is_wal = wal;
  f->ro_open = (flags & SQLITE_OPEN_READONLY) != 0;
  if (main_db) {
    auto& e = g_dbs[dbpath];
    if (e.refs++ == 0) {
      e.pool = P;
      e.key = key;
    }
    f->db_path = strdup(dbpath.c_str());
  }
  f->base.pMethods = &kPoolMethods;
  return SQLITE_OK;
}

// Finds a stored file by name: a main database that is open in this process
// or one of its journals.  g_mu held.
bool lookup(const char* zname, Pool** P, int* slot, bool* is_aux) {
  std::string name = zname, db, sfx;
  *is_aux = false;
  std::string key;
  if (auto it = g_dbs.find(name); it != g_dbs.end()) {
    *P = it->second.pool;
    key = it->second.key;
  } else if (split_aux(name, &db, &sfx)) {
    auto jt = g_dbs.find(db);
    if (jt == g_dbs.end()) return false;
    *P = jt->second.pool;
    key = jt->second.key + sfx;
    *is_aux = true;
  } else {
    return false;
  }
  *slot = find_slot(*P, key);
  return *slot >= 0;
}

int x_delete(sqlite3_vfs* vfs, const char* zname, int) {
  std::lock_guard<std::mutex> g(g_mu);
  Pool* P;
  int slot;
  bool aux;
  if (!lookup(zname, &P, &slot, &aux)) return SQLITE_OK;
  if (P->files.count(slot) != 0) return SQLITE_OK;  // still open: SQLite closes journals before deleting
  if (delete_slot(P, slot) != 0) {
    set_err("softwrap vfs: delete %s: %s", zname, sw_errormsg());
    return SQLITE_IOERR_DELETE;
  }
  return SQLITE_OK;
}

int x_access(sqlite3_vfs* vfs, const char* zname, int flags, int* out) {
  std::lock_guard<std::mutex> g(g_mu);
  Pool* P;
  int slot;
  bool aux;
  *out = lookup(zname, &P, &slot, &aux) ? 1 : 0;
  return SQLITE_OK;
}

int x_full_pathname(sqlite3_vfs*, const char* zname, int n, char* out) {
  const std::string p = softwrap::sqlite_vfs::absolute_path(zname);
  if (p.size() + 1 > static_cast<size_t>(n)) return SQLITE_CANTOPEN;
  std::memcpy(out, p.c_str(), p.size() + 1);
  return SQLITE_OK;
}

void* x_dlopen(sqlite3_vfs*, const char* z) { return g_base->xDlOpen(g_base, z); }
void x_dlerror(sqlite3_vfs*, int n, char* z) { g_base->xDlError(g_base, n, z); }
void (*x_dlsym(sqlite3_vfs*, void* h, const char* z))(void) { return g_base->xDlSym(g_base, h, z); }
void x_dlclose(sqlite3_vfs*, void* h) { g_base->xDlClose(g_base, h); }
int x_randomness(sqlite3_vfs*, int n, char* z) { return g_base->xRandomness(g_base, n, z); }
int x_sleep(sqlite3_vfs*, int us) { return g_base->xSleep(g_base, us); }
int x_current_time(sqlite3_vfs*, double* t) { return g_base->xCurrentTime(g_base, t); }
int x_current_time64(sqlite3_vfs*, sqlite3_int64* t) { return g_base->xCurrentTimeInt64(g_base, t); }
int x_last_error(sqlite3_vfs*, int n, char* z) {
  if (n > 0) snprintf(z, static_cast<size_t>(n), "%s", t_err.c_str());
  return 0;
}

sqlite3_vfs make_vfs(const char* name, Kind kind) {
  sqlite3_vfs v{};
  v.iVersion = 2;
  v.szOsFile = sizeof(File);
  v.mxPathname = 1024;
  v.zName = name;
  v.pAppData = reinterpret_cast<void*>(static_cast<intptr_t>(kind));
  v.xOpen = x_open;
  v.xDelete = x_delete;
  v.xAccess = x_access;
  v.xFullPathname = x_full_pathname;
  v.xDlOpen = x_dlopen;
  v.xDlError = x_dlerror;
  v.xDlSym = x_dlsym;
  v.xDlClose = x_dlclose;
  v.xRandomness = x_randomness;
  v.xSleep = x_sleep;
  v.xCurrentTime = x_current_time;
  v.xGetLastError = x_last_error;
  v.xCurrentTimeInt64 = x_current_time64;
  return v;
}

sqlite3_vfs g_softwrap_vfs = make_vfs("softwrap", kSoftwrapVfs);
sqlite3_vfs g_scm_vfs = make_vfs("scm", kScmVfs);

// Auto-extension: every new connection whose main database lives in the
// softwrap VFS keeps its rollback journal in memory and up to 16 MiB of
// dirty pages in SQLite's page cache before it spills any into the open
// wrap.  SQLite's default (spill once the cache passes its 2 MB) makes a
// large transaction write the same pages (B-tree interior pages, a table's
// and its indexes' pages) into the wrap again and again and read them back
// through the alias tables in between: each time a compare, log records and
// a shadow-page update.  With the threshold most transactions write each
// page once, at COMMIT (speedtest1's writing tests 1.25x -> 1.02x of the
// nonatomic engine's time, docs/sqlite.md#speedtest1); clean pages still
// obey cache_size, and PRAGMA cache_spill overrides it per connection.
//
// A database in WAL mode (its header says so: SQLite opens the WAL as it
// reads the schema) stays in it: the in-memory journal is set only on a
// database whose journal mode is a rollback journal's.
constexpr const char* kConnectionPragmas = "PRAGMA cache_spill=-16384";

// The journal mode pragma for a new connection: MEMORY unless the
// database is in WAL mode.  SQLITE_OK, SQLITE_BUSY or another code.
int set_journal_mode(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_step(st);
  const bool wal = rc == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr &&
                   std::strcmp(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal") == 0;
  rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
  sqlite3_finalize(st);
  if (rc != SQLITE_OK || wal) return rc;
  return sqlite3_exec(db, "PRAGMA journal_mode=MEMORY", nullptr, nullptr, nullptr);
}

int auto_init(sqlite3* db, const char**, const sqlite3_api_routines*) {
  if (report_refusal(db)) return SQLITE_OK;
  sqlite3_vfs* v = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &v) == SQLITE_OK && v == &g_softwrap_vfs) {
    // The pragmas need a SHARED lock; another connection may hold the file
    // exclusively for a moment (a commit), or for long (a transaction in
    // locking_mode=EXCLUSIVE, another process rebuilding a WAL index).  So
    // at most 50 ms, as an open of stock SQLite does not wait at all: if
    // it stays busy the connection keeps the default journal mode, whose
    // journal is a DRAM file here anyway, and SQLite's spill threshold.
    int rc = SQLITE_BUSY;
    for (int i = 0; i < 50 && rc == SQLITE_BUSY; ++i) {
      rc = sqlite3_exec(db, kConnectionPragmas, nullptr, nullptr, nullptr);
      if (rc == SQLITE_OK) rc = set_journal_mode(db);
      if (rc == SQLITE_BUSY) usleep(1000);
    }
    // Open reports the connection's last error code: leave none behind.
    if (rc != SQLITE_OK) sqlite3_exec(db, "SELECT 1", nullptr, nullptr, nullptr);
  }
  return SQLITE_OK;
}


// Registers the VFSes once; makes "softwrap" the default when asked to or
// when SOFTWRAP_SQLITE_DEFAULT=1.  *err says why it failed, if it can.
int register_vfs(bool make_default, std::string* err) {
  bool env_default = false;
  if (!softwrap::sqlite_vfs::default_vfs_from_env(&env_default, err)) return SQLITE_ERROR;
  static std::once_flag once;
  static int rc = SQLITE_OK;
  std::call_once(once, [] {
    g_base = sqlite3_vfs_find("unix");
    if (g_base == nullptr) g_base = sqlite3_vfs_find(nullptr);
    if (g_base == nullptr) {
      rc = SQLITE_ERROR;
      return;
    }
    g_softwrap_vfs.mxPathname = g_scm_vfs.mxPathname = std::min(g_base->mxPathname, 1024);
    // fork(): a child's copies of this process's pools are its parent's
    // (the core refuses their use).  It forgets them, so that its own opens
    // open the pools anew, and closes their lock descriptors, so that it
    // keeps none of the parent's SQLite locks alive.  Only the forking
    // thread exists in the child: the registry's mutex is made anew.
    pthread_atfork(nullptr, nullptr, [] {
      new (&g_mu) std::mutex;
      for (auto& [path, P] : g_pools) {
        new (&P->lk_mu) std::mutex;
        if (P->lock_fd >= 0) close(P->lock_fd);
        P->lock_fd = -1;
        P->elided = false;
        P->current = false;
      }
      g_pools.clear();  // the Pool records stay (open files of the parent's connections point to them)
      g_dbs.clear();
      shm_forget_after_fork();
    });
    rc = sqlite3_vfs_register(&g_scm_vfs, 0);
    if (rc == SQLITE_OK) rc = sqlite3_vfs_register(&g_softwrap_vfs, 0);
    if (rc == SQLITE_OK) {
      rc = sqlite3_auto_extension(reinterpret_cast<void (*)(void)>(
          reinterpret_cast<void*>(auto_init)));
    }
  });
  if (rc != SQLITE_OK) {
    *err = "softwrap vfs: registering the VFSes failed (no \"unix\" VFS to build on?)";
    return rc;
  }
  if (make_default || env_default) return sqlite3_vfs_register(&g_softwrap_vfs, 1);
  return SQLITE_OK;
}

}  // namespace

extern "C" sw_pool* sw_sqlite_pool(sqlite3* db, const char* schema) {
  sqlite3_file* file = nullptr;
  if (db == nullptr || sqlite3_file_control(db, schema ? schema : "main", SQLITE_FCNTL_FILE_POINTER, &file) !=
                           SQLITE_OK ||
      file == nullptr || file->pMethods != &kPoolMethods) {
    return nullptr;
  }
  const auto* f = reinterpret_cast<const File*>(file);
  return f->pool ? f->pool->p : nullptr;
}

extern "C" const char* sw_sqlite_errmsg(sqlite3* db, const char* schema) {
  const char* name = db != nullptr ? sqlite3_db_filename(db, schema ? schema : "main") : nullptr;
  if (name == nullptr || *name == '\0') {
    t_errmsg_out = t_err;  // no database file: the thread's last failure
  } else {
    std::lock_guard<std::mutex> g(g_err_mu);
    auto it = g_file_err->find(name);
    t_errmsg_out = it != g_file_err->end() ? it->second : std::string();
  }
  return t_errmsg_out.c_str();
}

extern "C" int sw_sqlite_register(int make_default) {
  std::string err;
  const int rc = register_vfs(make_default != 0, &err);
  if (rc != SQLITE_OK && !err.empty()) sqlite3_log(rc, "%s", err.c_str());
  return rc;
}

#ifdef SW_SQLITE_EXTENSION
namespace {
int load_extension(sqlite3* db, char** err, const sqlite3_api_routines* api, bool make_default) {
  SQLITE_EXTENSION_INIT2(api);
  std::string why;
  if (const int rc = register_vfs(make_default, &why); rc != SQLITE_OK) {
    if (err != nullptr && !why.empty()) *err = sqlite3_mprintf("%s", why.c_str());
    return rc;
  }
  // The connection that loads us was opened before the auto-extension existed.
  auto_init(db, nullptr, api);
  return SQLITE_OK_LOAD_PERMANENTLY;
}
}  // namespace

// The entry point SQLite derives from the file name swsqlite.so.
extern "C" __attribute__((visibility("default"))) int sqlite3_swsqlite_init(sqlite3* db, char** err,
                                                                            const sqlite3_api_routines* api) {
  return load_extension(db, err, api, false);
}

// Named explicitly (".load swsqlite sqlite3_swsqlite_default_init"): also
// makes "softwrap" the default VFS.
extern "C" __attribute__((visibility("default"))) int sqlite3_swsqlite_default_init(
    sqlite3* db, char** err, const sqlite3_api_routines* api) {
  return load_extension(db, err, api, true);
}
#endif
