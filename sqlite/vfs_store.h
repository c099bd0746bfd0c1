// vfs_store.h — how the SQLite VFSes store files in a pool
// (docs/sqlite.md#storage), and the DRAM map of an open file.
//
// A pool's root object is a directory of kMaxFiles entries (name, size,
// number of blocks, offset and capacity of a block table); a file is a
// table of 256 KiB blocks, each one heap extent of the pool, and the table
// doubles when it fills.  Every access goes through the softwrap API, so a
// change joins the wrap open on the calling thread: a file grows, shrinks
// or is created atomically with the data written into it.
//
// FileMap keeps an open file's size and block addresses in DRAM, so a read
// is one sw_read per block it touches instead of four sw_load64s of
// metadata first (under the softwrap engine each one is an alias-table
// lookup between two atomic updates of a counter the retirement thread
// reads: they were a third of a page read's cost).  The map is right as
// long as (1) every change of a file's metadata in this process goes
// through its map (write, truncate), (2) a map is reloaded when a wrap that
// changed it is rolled back, or its close fails, and (3) it is reloaded
// when another process may have changed the file (the VFS: at its first
// SHARED lock after another process wrote, and in WAL mode when a read
// reaches past what the map knows).
//
// Readers never lock.  In WAL mode readers read the -wal file and the
// database while the writer appends to one and a checkpoint writes the
// other, all through the process's one map per file; SQLite's WAL index
// keeps them off the bytes being written, and the map keeps its own state
// safe: block addresses sit in a two-level table whose leaves never move
// and whose entries, once published, change only to the same address
// (reload) — a block stays a file's until the file is deleted, and
// truncation keeps it — and the size is published after the blocks it
// covers (release), so a reader that loads the size (acquire) finds every
// block below it.  Writers (write, truncate, reload)
// serialize on a mutex of the map.
#ifndef SOFTWRAP_SQLITE_VFS_STORE_H_
#define SOFTWRAP_SQLITE_VFS_STORE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "softwrap/softwrap.h"

namespace softwrap::sqlite_vfs {

constexpr uint64_t kMagic = 0x50415257534c5153ull;  // "SQLSWRAP"
constexpr int kMaxFiles = 32;
constexpr int kNameMax = 232;
constexpr uint64_t kBlock = 256 * 1024;  // one pool heap chunk: no header waste

struct Dirent {
  char name[kNameMax];
  uint64_t in_use;
  uint64_t size;
  uint64_t nblocks;    // blocks allocated (may exceed what size needs)
  uint64_t table_off;  // pool offset of uint64_t[table_cap] block offsets
  uint64_t table_cap;
};
struct Root {
  uint64_t magic;
  uint64_t version;
  Dirent ents[kMaxFiles];
};

// A metadata word: loaded with sw_load64, stored with sw_write (shadow
// pages), never sw_store64: an alias table holding any word entry makes
// every sw_read of a range look up each 8-byte word of it in that table,
// which made page reads ~2x slower.
inline uint64_t load_word(sw_pool* p, const uint64_t* a) { return sw_load64(p, a); }
inline int store_word(sw_pool* p, uint64_t* a, uint64_t v) { return sw_write(p, a, &v, sizeof v); }

// An open stored file.  Functions return 0 or an SW_E* code (sw_errormsg()
// says more); those that change the file do so in the caller's wrap.
class FileMap {
 public:
  FileMap(sw_pool* p, Dirent* d);
  ~FileMap();
  FileMap(const FileMap&) = delete;
  FileMap& operator=(const FileMap&) = delete;

  // Re-reads the size and block table from the pool.  Reads the pool as
  // another process may be writing it (WAL mode): block addresses outside
  // the pool end the table there, and the size is cut to the blocks found.
  void reload();
  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  // Reads [off, off + n); bytes past the end read as zero.  *got: how many
  // were inside the file.
  int read(uint64_t off, void* dst, uint64_t n, uint64_t* got) const;
  // Writes [off, off + n), allocating blocks and zero-filling a gap past the
  // end.  Under SW_CONFIG_WCL the engine compares bytes already in the file
  // with src and logs only the words that differ, unless `whole` (a -wal
  // file's frames, which overwrite an older generation of the log, or
  // zeros, and share no words with it worth a compare: sw_write_whole).
  int write(uint64_t off, const void* src, uint64_t n, bool whole = false);
  // Sets the size; a larger size zero-fills, a smaller one keeps the blocks.
  int truncate(uint64_t n);

  // Largest file a map can hold: kLeaves leaves of kLeaf blocks (4 TiB).
  static constexpr uint64_t kLeaf = 4096, kLeaves = 4096;

 private:
  int ensure_blocks(uint64_t need);  // REQUIRES mu_
  // fn(pool address, length, bytes done) over [off, off + n) (blocks exist).
  template <class Fn>
  int for_range(uint64_t off, uint64_t n, Fn fn) const;
  int set_size(uint64_t n);  // REQUIRES mu_
  char* block(uint64_t i) const {
    return leaves_[i / kLeaf].load(std::memory_order_acquire)[i % kLeaf].load(std::memory_order_relaxed);
  }
  void publish_block(uint64_t i, char* b);  // REQUIRES mu_

  sw_pool* p_;
  Dirent* d_;
  std::mutex mu_;
  std::atomic<uint64_t> size_{0};
  uint64_t nblocks_ = 0;  // GUARDED_BY(mu_): blocks published (readers go by size_)
  std::atomic<std::atomic<char*>*> leaves_[kLeaves] = {};
};

// Frees a file's blocks and block table and clears its directory entry, in
// the caller's wrap.
int free_file(sw_pool* p, Dirent* d);

}  // namespace softwrap::sqlite_vfs

#endif  // SOFTWRAP_SQLITE_VFS_STORE_H_
