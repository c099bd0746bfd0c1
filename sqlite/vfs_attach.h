// vfs_attach.h — the softwrap SQLite VFS on a pool that is already open, and
// the layout of a database file in it (for the crash simulator, whose pools
// live in memory: sqlite/crash_workload.cc).
//
// The VFS (vfs.cc) opens pools by path with sw_pool_open/sw_pool_create.
// attach_pool() puts an open sw_pool into its registry under a path, so
// that "file:PATH?vfs=softwrap&pool=PATH" uses that pool; the VFS never
// closes an attached pool.  vfs_attach.cc compiles vfs.cc itself (as the
// swsqlite extension does with other settings), so a program links either
// softwrap_sqlite or this library (softwrap_sqlite_crash), never both:
// both define sw_sqlite_register and the VFS names.
#ifndef SOFTWRAP_SQLITE_VFS_ATTACH_H_
#define SOFTWRAP_SQLITE_VFS_ATTACH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "softwrap/softwrap.h"

namespace softwrap::sqlite_vfs {

// Registers the VFSes (sw_sqlite_register(0)) and `p` as the pool at
// `path`.  Initializes the pool's file directory if the root object is new
// (in a wrap of its own).  SQLITE_OK, SQLITE_BUSY if `path` is already a
// pool of the VFS, SQLITE_CANTOPEN if the root holds something else.
int attach_pool(const std::string& path, sw_pool* p);

// Removes the pool at `path` from the registry (the pool stays open).
// SQLITE_BUSY while SQLite files in it are open; SQLITE_NOTFOUND if no pool
// is attached there.
int detach_pool(const std::string& path);

// The bytes that make up stored file `key` ("db" for a database whose pool
// is its own path): the pool's whole file directory (root object), the
// used entries of the file's block table, and each block up to the file
// size.  Read through the API (sw_read), so they are what a reader sees
// now.  `allocations` counts the pool allocations the file holds (blocks
// and table).
struct FileLayout {
  std::vector<std::pair<void*, size_t>> extents;
  uint64_t allocations = 0;
  uint64_t size = 0;
};
// false if the pool has no such file (or no directory).
bool file_layout(sw_pool* p, const std::string& key, FileLayout* out);

// The contents of stored file `key` (sw_read); false if there is none.
bool read_file(sw_pool* p, const std::string& key, std::string* out);

}  // namespace softwrap::sqlite_vfs

#endif  // SOFTWRAP_SQLITE_VFS_ATTACH_H_
