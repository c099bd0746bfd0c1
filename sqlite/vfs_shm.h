// vfs_shm.h — the shared memory SQLite's WAL mode needs (the wal-index),
// behind the xShmMap, xShmLock, xShmBarrier and xShmUnmap methods of the
// VFS (docs/sqlite.md).
//
// The wal-index is an ordinary file (on tmpfs, normally) that every
// process maps: region i of size sz is the file's bytes [i*sz, (i+1)*sz).
// A process keeps one node per file, shared by all of its connections (so
// all of them see a region at one address), with the descriptor, the
// mappings and the process's table of SQLite's eight wal-index locks.
// Across processes those locks are open-file-description locks on the
// file itself, at the bytes the unix VFS uses in its -shm files (120 + i
// for lock i, 128 for the dead-man switch), never waited for; within the
// process a lock is a count of shared holders or one exclusive holder, and
// the OS lock changes only when the process's aggregate does.
//
// Dead-man switch.  Every process holds a read lock on byte 128 while it
// has the file open; the kernel drops it when the process dies.  So the
// first opener (whose write lock on it succeeds) knows that nobody is
// using the content, which may be left over from a crash, and truncates
// the file: SQLite finds an empty index and rebuilds it from the WAL.
//
// private_mem: the index of a database only this process may use (a
// read-only pool): regions are heap memory of the node, zeroed when it is
// created, and the locks are in-process only.
//
// Thread safety: any number of threads may open, lock, map and unmap
// connections concurrently; one connection is used by one thread at a time
// (SQLite serializes a connection).  The regions' content is SQLite's.
#ifndef SOFTWRAP_SQLITE_VFS_SHM_H_
#define SOFTWRAP_SQLITE_VFS_SHM_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>

namespace softwrap::sqlite_vfs {

struct ShmSpec {
  std::string path;          // the wal-index file; created if missing
  mode_t mode = 0644;        // permissions of a new file (the caller passes the pool file's)
  bool private_mem = false;  // no file: heap regions, in-process locks (read-only pools)
};

struct ShmNode;  // vfs_shm.cc: one per process and file

// One database connection's hold on a wal-index (one per sqlite3_file of a
// main database).  Not copyable; destroyed by its owner.
class ShmConn {
 public:
  // xShmMap: *pp is region `region` (all regions are `region_size` bytes;
  // the size must not change while the node has regions).  With `extend`
  // the file grows to cover it; without, a region past the file's end is
  // *pp == nullptr and SQLITE_OK.  Errors: SQLITE_IOERR_SHMSIZE (the file
  // could not grow), SQLITE_IOERR_SHMMAP, with error() set.
  int map(int region, int region_size, bool extend, void volatile** pp);
  // xShmLock: flags are SQLITE_SHM_LOCK or SQLITE_SHM_UNLOCK with
  // SQLITE_SHM_SHARED or SQLITE_SHM_EXCLUSIVE; locks offset..offset+n-1.
  // SQLITE_OK, SQLITE_BUSY on any conflict (never waits), or
  // SQLITE_IOERR_SHMLOCK if the system refused for another reason.
  int lock(int offset, int n, int flags);
  // xShmBarrier's memory part: a full fence.
  void barrier();
  // xShmUnmap: drops this connection's locks; the process's last
  // connection unmaps the regions, closes the file and, with delete_file,
  // unlinks it first.  Later calls are no-ops; map and lock fail after it.
  int unmap(bool delete_file);
  bool holds_exclusive(int lock_index) const;
  bool holds_shared(int lock_index) const;
  // The checkpoint mark (not one of SQLite's locks: a read lock on a byte
  // of its own, held while any connection of the process has it set).
  // The VFS sets it while a checkpoint that blocks writers (FULL, RESTART,
  // TRUNCATE: it asks for WAL_WRITE while it holds WAL_CKPT) runs, so that
  // a writer of another process waiting for the pool's write access gives
  // up at once, as stock's writers do beside such a checkpoint, instead of
  // keeping its read lock while the checkpoint waits for readers.
  // mark(): SQLITE_OK or SQLITE_IOERR_SHMLOCK; idempotent per connection;
  // unmap() clears it.  marked_elsewhere(): another process has it set
  // (false on private memory, or if the system cannot tell).
  int mark(bool on);
  bool marked_elsewhere() const;
  // The message of the last failed map() or lock() ("" if none).
  const std::string& error() const { return err_; }

  ~ShmConn();
  ShmConn(const ShmConn&) = delete;
  ShmConn& operator=(const ShmConn&) = delete;

 private:
  friend int shm_open(const ShmSpec& spec, std::unique_ptr<ShmConn>* out, std::string* err);
  ShmConn(ShmNode* node, std::string path) : node_(node), path_(std::move(path)) {}
  int release_locks(unsigned mask);  // node mutex held

  ShmNode* node_;          // nullptr after unmap
  std::string path_;       // the name this connection opened (unlinked by unmap(true))
  // Bit i: holds lock i shared / exclusively.  Written under the node's
  // mutex; read without it by holds_*, which SQLite asks on the
  // connection's own thread (it serializes a connection) on every xShmLock.
  std::atomic<unsigned> shared_{0};
  std::atomic<unsigned> exclusive_{0};
  bool marked_ = false;    // holds the checkpoint mark; likewise
  std::string err_;
};

// Opens (or joins) the wal-index of `spec`.  SQLITE_OK and *out, or
// SQLITE_CANTOPEN (the file cannot be opened read-write), SQLITE_BUSY
// (another process is initializing it and did not finish in time),
// SQLITE_IOERR_SHMOPEN, with *err naming the path and the system's reason.
int shm_open(const ShmSpec& spec, std::unique_ptr<ShmConn>* out, std::string* err);

// Removes the wal-index files in `dir` named prefix...suffix that no
// process has open (nobody holds their dead-man switch): what processes
// killed before they closed left behind.  Such a file holds nothing the
// next opener would keep (it resets a file nobody had open), so removing
// it loses nothing; one in use, or one another user owns, stays.  Returns
// how many were removed.
int shm_sweep_unused(const std::string& dir, const std::string& prefix, const std::string& suffix);

// For the VFS's pthread_atfork child handler (one thread exists): forgets
// every node the parent had, closing the child's copies of their
// descriptors without unlocking (the locks belong to the parent's open
// file descriptions) and leaking the records.  Connections inherited from
// the parent fail from then on (map, lock) and their unmap only detaches.
void shm_forget_after_fork();

}  // namespace softwrap::sqlite_vfs

#endif  // SOFTWRAP_SQLITE_VFS_SHM_H_
