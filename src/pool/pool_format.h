// pool_format.h — the on-media layout of a pool file (docs/pool-format.md).
//
//   0            PoolHeader (one 4 KiB page, immutable after creation)
//   meta_offset  PoolMeta   (root slot, retired-sequence watermark, durable
//                            size and growth limit)
//   lane_table   LaneHeader[lanes], one cache line each
//   log_offset   lanes * lane_size bytes of log
//   chunk_table  uint64_t[chunk_count]: allocator chunk heads  } zone 0
//   heap_offset  chunk_count * chunk_size bytes of heap         }
//   pool_size    zone 1: ZoneHeader page, chunk heads, chunks    (growth)
//   ...          zone 2, ... back to back up to PoolMeta::pool_size
//
// All integers little-endian, all offsets from the start of the file.  The
// header's checksum covers every byte before it; a header that fails it is
// refused (SW_ECORRUPT), never repaired.  The header describes the pool as
// created (zone 0); a pool grows by appending zones after it, and
// PoolMeta::pool_size says how far the zones go.
#ifndef SOFTWRAP_POOL_POOL_FORMAT_H_
#define SOFTWRAP_POOL_POOL_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace softwrap {

inline constexpr char kPoolMagic[16] = "SOFTWRAP-POOL-1";  // 15 chars + NUL
// Version 2: redo frames and undo records may continue in log extents
// (LINK entries, docs/log-format.md; a version-1 reader would take a
// linked frame for a torn one and lose a committed wrap), zones (growth)
// and PoolMeta's durable size and limit.  Version 3: redo frames may hold
// FRESH entries (a version-2 reader would take such a frame for a torn one
// and lose a committed wrap).  Version 4: a wrap whose entries fit in 48
// bytes may write a one-line frame (docs/log-format.md; a version-3 reader
// would not find it and lose a committed wrap).  Pools of versions 1 to 3
// are upgraded in place when they are opened for use (pool.cc); zones keep
// the version they were formatted with (2 to 4: their layout is the same),
// and a zone added to a pool takes the pool header's version.
inline constexpr uint32_t kLayoutVersion = 4;
inline constexpr uint32_t kLayoutVersionV1 = 1;
inline constexpr uint32_t kLayoutVersionV2 = 2;
inline constexpr uint32_t kLayoutVersionV3 = 3;
inline constexpr uint64_t kPageSize = 4096;
inline constexpr uint64_t kMinPoolSize = 8ull << 20;
// A lane at most 64 GiB: its DRAM queue of committed frames (log/lanes.h)
// counts them, at most one per 64-byte line, in 32 bits.
inline constexpr uint64_t kMaxLaneSize = 64ull << 30;
inline constexpr uint64_t kChunkSize = 256ull << 10;
// PoolMeta::max_size of a pool that grows as far as the file system allows.
inline constexpr uint64_t kUnlimitedPoolSize = UINT64_MAX;

struct PoolHeader {
  char magic[16];
  uint32_t layout_version;
  uint32_t header_size;  // sizeof(PoolHeader)
  uint64_t pool_size;    // size at creation: the end of zone 0
  uint8_t uuid[16];
  uint64_t create_time_ns;
  uint32_t lanes;
  uint32_t reserved0;
  uint64_t lane_size;
  uint64_t meta_offset;
  uint64_t lane_table_offset;
  uint64_t log_offset;
  uint64_t chunk_table_offset;
  uint64_t heap_offset;
  uint64_t chunk_size;
  uint64_t chunk_count;  // chunks of zone 0
  uint64_t reserved[8];
  uint64_t checksum;  // hash64 of all bytes above
};
static_assert(sizeof(PoolHeader) <= kPageSize);
static_assert(sizeof(PoolHeader) % 8 == 0);

// Pool-wide mutable metadata.  root_* are ordinary persistent words changed
// only inside wraps; the other words are written directly (store, flush,
// fence), never in a wrap.
struct PoolMeta {
  uint64_t root_offset;  // 0 = no root yet
  uint64_t root_size;
  uint64_t reserved0[6];
  // Every committed redo wrap with sequence <= retired_seq has all of its
  // stores at their home locations, flushed and fenced.  Recovery replays
  // only frames above it.  Own cache line.
  uint64_t retired_seq;
  uint64_t reserved1[7];
  // Growth (version 2).  Own cache line.  pool_size is the durable size:
  // zones cover exactly [0, pool_size); it changes only after the zone it
  // adds is formatted and durable, so bytes past it (a file extended by a
  // growth a crash interrupted) are never read.  max_size >= pool_size is
  // the growth limit (kUnlimitedPoolSize: as far as the file system goes).
  uint64_t pool_size;
  uint64_t max_size;
  // Sharing between processes (SW_CONFIG_SHARED; docs/pool-format.md,
  // "Write access").  writer: the token of the handle that last took write
  // access (random, never 0; bit 0 clear), with bit 0 set while that handle
  // holds it and may have commits not yet home: a set bit found by the next
  // handle to take write access means its holder died, and that handle
  // recovers.  write_epoch: raised whenever a handle gives write access up
  // (and when it passes to another handle), so a handle that sees it
  // unchanged knows nobody else wrote.
  // writer_pid: the holder's process id (diagnostics only).  Written
  // directly (store, flush, fence), only by the handle that holds the
  // pool's write lock.
  // heap_epoch: raised by a handle giving write access up after it changed
  // the heap's metadata (allocations, frees, growth), and by a handle that
  // recovers a holder that died (whose changes never raised it), so the
  // next holder rebuilds its allocator only when it must.
  uint64_t writer;
  uint64_t write_epoch;
  uint64_t writer_pid;
  uint64_t heap_epoch;
  uint64_t reserved2[2];
};
static_assert(sizeof(PoolMeta) == 192);

// One per lane.  Redo frames are self-validating and found by scanning;
// undo records are found from here (docs/log-format.md).
struct LaneHeader {
  uint64_t undo_committed_gen;  // last undo generation committed/rolled back
  // A redo wrap that spilled (wrote in place, saving old values as undo
  // records of generation undo_committed_gen + 1): where its records start
  // (a log extent; 0 = none, records start at the lane) and the lane
  // position of its redo frame, whose commit decides between keeping and
  // rolling back its in-place writes.
  uint64_t spill_head;
  uint64_t spill_frame;
  uint64_t reserved[5];
};
static_assert(sizeof(LaneHeader) == 64);

// The first page of every zone after zone 0.  The zone is
//   [offset, +4096)                       this header (then zeros)
//   [offset + 4096, +round4K(8 * n))      chunk heads of its n chunks
//   [that end, + n * chunk_size)          its chunks
// and ends where the next zone (or the pool) starts.  Its chunks are
// numbered after those of the zones before it (first_chunk), so the
// allocator sees one sequence of chunks; an extent never spans two zones.
inline constexpr char kZoneMagic[8] = "SW-ZONE";  // 7 chars + NUL
struct ZoneHeader {
  char magic[8];
  uint32_t layout_version;  // 2 or 3 (the version that formatted the zone)
  uint32_t index;           // zone number, >= 1
  uint8_t uuid[16];         // the pool's: a zone of another pool never parses
  uint64_t offset;          // where this header is (its zone's start)
  uint64_t size;            // bytes of the zone
  uint64_t chunk_count;     // n >= 1
  uint64_t first_chunk;     // number of its first chunk in the whole pool
  uint64_t reserved[4];
  uint64_t checksum;        // hash64 of all bytes above
};
static_assert(sizeof(ZoneHeader) == 104);

// Byte-range locks on the pool file (never data: far past any pool's end;
// docs/pool-format.md, "Locks").  kOpenLockByte: every handle holds it,
// shared (SW_CONFIG_SHARED, read-only handles) or exclusive.
// kWriteLockByte: write access of a shared pool, exclusive; a read-only
// handle holds it shared.  Bytes from kAppLockBase on are left to users of
// the pool (the SQLite VFS keeps its database locks there).
inline constexpr uint64_t kOpenLockByte = 1ull << 62;
inline constexpr uint64_t kWriteLockByte = kOpenLockByte + 1;
// Held shared by every handle waiting for write access: a handle that
// finds someone waiting lets it go first (PoolFile::lock_write).
inline constexpr uint64_t kWantLockByte = kOpenLockByte + 2;
inline constexpr uint64_t kAppLockBase = kOpenLockByte + 4096;

constexpr uint64_t round_up_page(uint64_t v) { return (v + kPageSize - 1) / kPageSize * kPageSize; }
// Bytes of a zone (after zone 0) of n chunks.  REQUIRES: n < 2^32.
constexpr uint64_t zone_bytes(uint64_t n) { return kPageSize + round_up_page(n * 8) + n * kChunkSize; }

}  // namespace softwrap

#endif  // SOFTWRAP_POOL_POOL_FORMAT_H_
