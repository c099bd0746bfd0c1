// pool_format.h — the on-media layout of a pool file (docs/pool-format.md).
//
//   0            PoolHeader (one 4 KiB page, immutable after creation)
//   meta_offset  PoolMeta   (root slot, retired-sequence watermark)
//   lane_table   LaneHeader[lanes], one cache line each
//   log_offset   lanes * lane_size bytes of log
//   chunk_table  uint64_t[chunk_count]: allocator chunk heads
//   heap_offset  chunk_count * chunk_size bytes of heap
//
// All integers little-endian, all offsets from the start of the file.  The
// header's checksum covers every byte before it; a header that fails it is
// refused (SW_ECORRUPT), never repaired.
#ifndef SOFTWRAP_POOL_POOL_FORMAT_H_
#define SOFTWRAP_POOL_POOL_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace softwrap {

inline constexpr char kPoolMagic[16] = "SOFTWRAP-POOL-1";  // 15 chars + NUL
// Version 2: redo frames and undo records may continue in log extents
// (LINK entries, docs/log-format.md); a version-1 reader would take a
// linked frame for a torn one and lose a committed wrap.
inline constexpr uint32_t kLayoutVersion = 2;
inline constexpr uint64_t kPageSize = 4096;
inline constexpr uint64_t kMinPoolSize = 8ull << 20;
inline constexpr uint64_t kChunkSize = 256ull << 10;

struct PoolHeader {
  char magic[16];
  uint32_t layout_version;
  uint32_t header_size;  // sizeof(PoolHeader)
  uint64_t pool_size;
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
  uint64_t chunk_count;
  uint64_t reserved[8];
  uint64_t checksum;  // hash64 of all bytes above
};
static_assert(sizeof(PoolHeader) <= kPageSize);
static_assert(sizeof(PoolHeader) % 8 == 0);

// Pool-wide mutable metadata.  root_* are ordinary persistent words changed
// only inside wraps; retired_seq is written directly (store, flush, fence)
// by log truncation and recovery.
struct PoolMeta {
  uint64_t root_offset;  // 0 = no root yet
  uint64_t root_size;
  uint64_t reserved0[6];
  // Every committed redo wrap with sequence <= retired_seq has all of its
  // stores at their home locations, flushed and fenced.  Recovery replays
  // only frames above it.  Own cache line.
  uint64_t retired_seq;
  uint64_t reserved1[7];
};
static_assert(sizeof(PoolMeta) == 128);

// One per lane.  Only the undo engine keeps state here (redo frames are
// self-validating and found by scanning).
struct LaneHeader {
  uint64_t undo_committed_gen;  // last undo generation committed/rolled back
  uint64_t reserved[7];
};
static_assert(sizeof(LaneHeader) == 64);

}  // namespace softwrap

#endif  // SOFTWRAP_POOL_POOL_FORMAT_H_
