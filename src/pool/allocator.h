// allocator.h — the crash-consistent persistent heap (sw_pmalloc/sw_pfree).
//
// Persistent state is only words that change inside the caller's wrap, so a
// wrap that aborts or is cut by a crash leaves no trace:
//   * chunk heads (one table per zone; PoolFile::head_offset): one word per
//     256 KiB chunk; 0 for a free chunk, else a tagged head for an extent
//     of N chunks or for a run of equal blocks of one size class.  Chunks
//     inside an extent keep head 0, so a table parses left to right.  An
//     extent never spans two zones.
//   * block headers: each block of a run starts with a 16-byte header whose
//     first word says allocated/free, the size class and the run's nonce (a
//     random number chosen when the run was formatted, so stale headers
//     left by an earlier use of the chunk never parse as live).
// No two concurrent wraps ever write the same word: a run formatted in a
// wrap is private to that wrap until it commits, blocks are handed out from
// DRAM free lists under a mutex, and frees return blocks to those lists only
// when the freeing wrap commits.  The DRAM state is rebuilt from the chunk
// table and block headers at open.
//
// The allocator reaches the wrap through TxAccess, which the engine layer
// implements: layering stays bottom-up (pool does not include engine).
// When no free chunks fit a request, the allocator grows the pool
// (PoolFile::grow; outside any wrap, so an aborted wrap leaves the pool
// grown) and takes them from the new zone.
#ifndef SOFTWRAP_POOL_ALLOCATOR_H_
#define SOFTWRAP_POOL_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace softwrap {

class PoolFile;

// What the allocator needs from the calling thread's open wrap.
class TxAccess {
 public:
  // Deferred actions run exactly once, when the outermost wrap commits or
  // aborts (or is rolled back after SW_ETOOBIG).
  using Action = void (*)(void* self, uint64_t a, uint64_t b);

  virtual ~TxAccess() = default;
  virtual bool in_wrap() = 0;
  // A word of the heap's metadata gets a new value in the wrap (it may
  // reach the engine only when the wrap commits: the allocator reads its
  // own DRAM state, never these words, while the pool is open).
  virtual void store64(uint64_t offset, uint64_t value) = 0;
  virtual void on_commit(Action fn, void* self, uint64_t a, uint64_t b) = 0;
  virtual void on_abort(Action fn, void* self, uint64_t a, uint64_t b) = 0;
  // In a commit action: the sequence number of the commit (0 for engines
  // whose committed wraps leave nothing replayable; Engine::reuse_safe).
  virtual uint64_t commit_seq() { return 0; }
};

// What alloc() says about the block it returns, for writing it in place
// (engine/fresh.h).
struct AllocInfo {
  uint64_t usable = 0;     // usable bytes (>= the request)
  // The newest commit that freed any of the block's bytes (a free of a
  // block of its run, of the extent, of the run its chunk held) in this
  // process; 0 if none.  Its bytes may be written in place once no log
  // frame up to that commit can be replayed (Engine::reuse_safe).
  uint64_t reuse_seq = 0;
  bool zero = false;       // the usable bytes are known to hold zeros
};

struct AllocatorStats {
  uint64_t heap_bytes = 0;
  uint64_t free_chunks = 0;
  uint64_t allocated_blocks = 0;   // live small blocks
  uint64_t allocated_extents = 0;  // live extents
  uint64_t allocated_bytes = 0;    // usable bytes of live allocations
};

class Allocator {
 public:
  virtual ~Allocator() = default;

  // Rebuilds DRAM state from the persistent heap (after recovery).  Returns
  // 0, or SW_ECORRUPT with a message if a chunk head or header is invalid.
  static int open(PoolFile* pool, std::unique_ptr<Allocator>* out);

  // In a wrap (tx.in_wrap()).  Returns the pool offset of n usable bytes,
  // 16-byte aligned, growing the pool if it must, or 0 with the thread
  // error set (SW_ENOSPC: full and it cannot grow, the message says why;
  // SW_EIO: a growth failed; SW_EINVAL).
  // *info (if given) describes the block.
  virtual uint64_t alloc(TxAccess& tx, size_t n, AllocInfo* info = nullptr) = 0;
  // Frees the allocation at offset; SW_EINVAL if it is not a live one.
  // same_wrap: the caller knows the open wrap allocated it (a fresh block,
  // engine/fresh.h): then it is returned at once — the wrap's next
  // allocations of its size may take it again (no other wrap may before
  // this one ends: its header words are this wrap's).
  virtual int free(TxAccess& tx, uint64_t offset, bool same_wrap = false) = 0;
  // Usable size of a live allocation, 0 if offset is not one.
  virtual size_t usable_size(TxAccess& tx, uint64_t offset) = 0;

  // Log space on demand (log/): reserves n contiguous free chunks in DRAM
  // only.  Their persistent heads stay 0 ("free"), so a crash releases them
  // by itself; recovery reaches their contents through the links of the log
  // records that continue there, and nothing else may use them until
  // release_log_chunks.  Grows the pool when no n contiguous chunks are
  // free.  Returns the offset of the first chunk, or 0 (the pool is full
  // and cannot grow: thread error set; nothing reserved).  Thread-safe, no
  // wrap needed.
  virtual uint64_t reserve_log_chunks(uint32_t n) = 0;
  // Returns chunks reserved by reserve_log_chunks to the free map.
  virtual void release_log_chunks(uint64_t offset, uint32_t n) = 0;
  // Chunks reserved as log space now (tests, `pool info`).
  virtual uint64_t log_chunks() const = 0;

  // Another handle of the pool (another process sharing it) has changed
  // the heap: rebuilds the DRAM state from the persistent heap, as open()
  // does, with no chunk known to hold zeros.  REQUIRES: no open wraps and
  // no log chunks reserved (the engine is quiesced).  0, SW_ECORRUPT (the
  // heap fails validation: the state is left as it was), or SW_EBUSY when
  // the requirement does not hold.
  virtual int reload() = 0;
  // Committed wraps that changed the persistent heap (allocated, freed,
  // formatted or reclaimed a run) and growths, made through this
  // allocator so far: another handle needs a reload only if this moved.
  virtual uint64_t heap_changes() const = 0;
  // Another handle wrote the pool but not the heap's metadata: free chunks
  // are no longer known to hold zeros (its log extents were free chunks).
  virtual void forget_zero_chunks() = 0;

  // Walks the persistent heap and checks every invariant (for `softwrap
  // pool check` and the crash tests).  Reads home locations directly:
  // call on a quiesced pool.  0 or SW_ECORRUPT with a message.
  static int check(const PoolFile& pool, AllocatorStats* stats);
  virtual AllocatorStats stats() const = 0;
};

}  // namespace softwrap

#endif  // SOFTWRAP_POOL_ALLOCATOR_H_
