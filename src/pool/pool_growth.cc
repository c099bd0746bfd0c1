// pool_growth.cc — zones, the reserved address range, and growth
// (docs/pool-format.md, "Growth").
//
// Approach.  Open reserves the pool's address range once, for its maximum
// size (an anonymous PROT_NONE, MAP_NORESERVE mapping: address space only,
// no memory, aligned to 2 MiB for huge-page DAX faults), and maps the file
// over its start with MAP_FIXED.  Growing maps the new part of the file
// over the next piece of the reservation, so the base never moves and
// every pointer into the pool stays valid.  An unlimited pool reserves the
// file system's size, at most ResolvedConfig::reserve_limit; if the address
// space has no room for that, half as much, and so on.
//
// grow() runs these steps, each durable before the next:
//   1. extend the file: ftruncate, fallocate (a full file system fails here,
//      cleanly, with SW_ENOSPC, instead of raising SIGBUS at a later store),
//      fdatasync (the new length is durable);
//   2. map the new part in place and tell the medium (Medium::extend);
//   3. format the zone through the medium: its header and zeroed chunk
//      heads (the bytes may hold an earlier, interrupted growth's zone);
//      flush, fence;
//   4. store the new durable size in PoolMeta, flush, fence;
//   5. publish the zone to readers, then the size; the caller (the
//      allocator) then hands out its chunks.
// A crash before step 4 is durable leaves the old size: open ignores the
// file's tail and bind() trims it; the next growth formats the zone again.
// After it, the zone is valid (fenced in step 3).  Growth is never part of
// a wrap: an aborted wrap leaves the pool grown.
//
// Growth policy: a zone as large as the pool (doubling it), at most
// kMaxGrowthStep (1 GiB), at least what the triggering request needs,
// within the maximum.  Doubling keeps the number of growths (each a few
// system calls and, on tmpfs, zero-filling) logarithmic in the final size;
// the cap bounds the space a growth reserves beyond what is used to 1 GiB.
//
// Zones live in fixed blocks that never move: readers (any thread) take
// zone_count() with acquire and never lock; a growth writes the zone first
// and releases the count after it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstring>

#include "common/error.h"
#include "common/hash.h"
#include "medium/medium.h"
#include "medium/trace_label.h"
#include "pool/pool.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

namespace softwrap {
namespace {

constexpr uint64_t kReserveAlign = 2ull << 20;
constexpr uint64_t kMaxReserve = 1ull << 47;  // the x86-64 user address space

int map_flags(bool dax) { return dax ? MAP_SHARED_VALIDATE | MAP_SYNC : MAP_SHARED; }

// Most chunks a zone of `bytes` bytes holds (0 if not even one).
uint64_t chunks_in(uint64_t bytes) {
  if (bytes < zone_bytes(1)) return 0;
  uint64_t n = (bytes - kPageSize) / (kChunkSize + 8);
  while (n > 0 && zone_bytes(n) > bytes) --n;
  return n;
}

}  // namespace

// ------------------------------------------------------------ reservation

int PoolFile::reserve_and_map(uint64_t reserve_limit) {
  // A device maps whole alignment units (it has room past the pool: its
  // size is a multiple of them); a file, whole pages.
  const uint64_t size = devdax_ ? (this->size() + map_align_ - 1) / map_align_ * map_align_ : this->size();
  const uint64_t mapped = round_up_page(size);
  const uint64_t align = std::max(kReserveAlign, map_align_);
  uint64_t want = limit_;
  if (limit_ == kUnlimitedPoolSize) {
    want = reserve_limit;
    struct statvfs vs {};
    if (fstatvfs(fd_, &vs) == 0 && vs.f_frsize > 0 && vs.f_blocks > 0 && vs.f_blocks < kMaxReserve / vs.f_frsize) {
      want = std::min<uint64_t>(want, uint64_t{vs.f_blocks} * vs.f_frsize);
    }
  }
  want = std::max(mapped, std::min(want, kMaxReserve) / kPageSize * kPageSize);
  void* r = MAP_FAILED;
  for (;;) {
    r = mmap(nullptr, want + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r != MAP_FAILED || want == mapped) break;
    want = std::max(mapped, want / 2 / kPageSize * kPageSize);  // no room for that much address space
  }
  if (r == MAP_FAILED) {
    return set_error_errno(SW_ENOMEM, "cannot reserve %" PRIu64 " bytes of address space for pool '%s'", want,
                           path_.c_str());
  }
  const auto raw = reinterpret_cast<uintptr_t>(r);
  const uintptr_t aligned = (raw + align - 1) & ~uintptr_t{align - 1};
  if (aligned > raw) munmap(r, aligned - raw);
  if (raw + align > aligned) munmap(reinterpret_cast<void*>(aligned + want), raw + align - aligned);
  base_ = reinterpret_cast<char*>(aligned);
  reserved_ = want;
  // MAP_SYNC only succeeds on DAX: then CPU cache flushes make data durable.
  // A read-only pool is mapped copy-on-write: what recovery and retirement
  // change stays in this process.
  void* p = MAP_FAILED;
  if (read_only_) {
    p = mmap(base_, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd_, 0);
  } else {
    p = mmap(base_, size, PROT_READ | PROT_WRITE, map_flags(true) | MAP_FIXED, fd_, 0);
    is_dax_ = p != MAP_FAILED;
    if (!is_dax_) p = mmap(base_, size, PROT_READ | PROT_WRITE, map_flags(false) | MAP_FIXED, fd_, 0);
    // Device DAX is synchronous whether or not this kernel takes MAP_SYNC
    // for it: no page cache stands between the mapping and the device.
    if (devdax_) is_dax_ = true;
  }
  if (p == MAP_FAILED) {
    set_error_errno(SW_EIO, "cannot map pool '%s' (%" PRIu64 " bytes)", path_.c_str(), size);
    munmap(base_, reserved_);
    base_ = nullptr;
    return SW_EIO;
  }
  max_size_ = read_only_ ? size : std::min(limit_, reserved_);  // a read-only pool never grows
  return 0;
}

// ------------------------------------------------------------------ zones

void PoolFile::add_zone(const Zone& z) {
  const uint32_t i = zone_count_.load(std::memory_order_relaxed);
  std::unique_ptr<Zone[]>& block = zone_blocks_[i / kZonesPerBlock];
  if (!block) block = std::make_unique<Zone[]>(kZonesPerBlock);
  block[i % kZonesPerBlock] = z;
  // Zone before chunk count: a reader that sees chunk c finds its zone.
  zone_count_.store(i + 1, std::memory_order_release);
  chunk_count_.store(z.first_chunk + z.chunks, std::memory_order_release);
}

// Zone 0 from the header, then every zone up to the durable size, each
// validated before the next is read.
int PoolFile::load_zones() {
  const PoolHeader& h = header();
  if (h.chunk_count > UINT32_MAX) {
    return set_error(SW_ECORRUPT, "pool header: %" PRIu64 " chunks exceed the allocator's limit", h.chunk_count);
  }
  add_zone({0, h.pool_size, h.chunk_table_offset, h.heap_offset, 0, static_cast<uint32_t>(h.chunk_count)});
  const uint64_t end = size();
  return load_zones_from(1, end > h.pool_size ? round_up_page(h.pool_size) : end, h.chunk_count, end);
}

int PoolFile::load_zones_from(uint32_t index, uint64_t off, uint64_t first, uint64_t end) {
  const PoolHeader& h = header();
  for (; off < end; ++index) {
    if (index == kMaxZones) {
      return set_error(SW_ECORRUPT, "pool: more than %u zones below the durable size %" PRIu64, kMaxZones, end);
    }
    if (end - off < zone_bytes(1)) {
      return set_error(SW_ECORRUPT, "zone %u at offset %" PRIu64 ": only %" PRIu64
                       " bytes left before the durable size %" PRIu64 ", too few for a zone", index, off, end - off, end);
    }
    ZoneHeader z;
    std::memcpy(&z, base_ + off, sizeof z);
    const char* bad = nullptr;
    if (std::memcmp(z.magic, kZoneMagic, sizeof z.magic) != 0) {
      bad = "bad magic (no zone starts where the previous one ends)";
    } else if (z.layout_version < kLayoutVersionV2 || z.layout_version > kLayoutVersion) {
      bad = "wrong layout version";
    } else if (z.checksum != hash64(&z, offsetof(ZoneHeader, checksum))) {
      bad = "checksum mismatch";
    } else if (z.index != index || z.offset != off || z.first_chunk != first ||
               std::memcmp(z.uuid, h.uuid, sizeof z.uuid) != 0) {
      bad = "index, offset, first chunk or pool uuid differ from its place in the pool";
    } else if (z.chunk_count == 0 || z.chunk_count > (end - off) / kChunkSize ||
               z.chunk_count > UINT32_MAX - first || z.size % kPageSize != 0 || z.size < zone_bytes(z.chunk_count) ||
               z.size > end - off) {
      bad = "its size and chunk count do not fit before the durable size";
    }
    if (bad != nullptr) {
      return set_error(SW_ECORRUPT, "zone %u at offset %" PRIu64 " (the pool's durable size is %" PRIu64 "): %s",
                       index, off, end, bad);
    }
    add_zone({off, off + z.size, off + kPageSize, off + kPageSize + round_up_page(z.chunk_count * 8),
              static_cast<uint32_t>(first), static_cast<uint32_t>(z.chunk_count)});
    off += z.size;
    first += z.chunk_count;
  }
  return 0;
}

uint32_t PoolFile::zone_of_chunk(uint32_t c) const {
  uint32_t lo = 0, hi = zone_count();  // zone(lo).first_chunk <= c
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (zone(mid).first_chunk <= c) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint32_t PoolFile::zone_of_offset(uint64_t off) const {
  uint32_t lo = 0, hi = zone_count();  // zone(lo).offset <= off (zone 0 starts at 0)
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (zone(mid).offset <= off) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint64_t PoolFile::chunk_offset(uint32_t c) const {
  const Zone& z = zone(zone_of_chunk(c));
  return z.heap + uint64_t{c - z.first_chunk} * kChunkSize;
}

uint64_t PoolFile::head_offset(uint32_t c) const {
  const Zone& z = zone(zone_of_chunk(c));
  return z.table + uint64_t{c - z.first_chunk} * 8;
}

bool PoolFile::zone_starts_at(uint32_t c) const {
  return c >= chunk_count() || zone(zone_of_chunk(c)).first_chunk == c;
}

bool PoolFile::chunk_at(uint64_t off, uint32_t* c) const {
  const Zone& z = zone(zone_of_offset(off));
  if (off < z.heap || off - z.heap >= uint64_t{z.chunks} * kChunkSize) return false;
  *c = z.first_chunk + static_cast<uint32_t>((off - z.heap) / kChunkSize);
  return true;
}

bool PoolFile::heap_contains(uint64_t off, uint64_t n) const {
  const Zone& z = zone(zone_of_offset(off));
  const uint64_t heap_bytes = uint64_t{z.chunks} * kChunkSize;
  return off >= z.heap && off - z.heap <= heap_bytes && n <= heap_bytes - (off - z.heap);
}

bool PoolFile::home_range_ok(uint64_t off, uint64_t n) const {
  const uint64_t root = header().meta_offset;  // PoolMeta::root_offset and root_size
  if (off >= root && n <= 2 * sizeof(uint64_t) && off - root <= 2 * sizeof(uint64_t) - n) return true;
  const Zone& z = zone(zone_of_offset(off));
  return off >= z.table && off < z.end && n <= z.end - off;
}

// ------------------------------------------------------------------ bind

int PoolFile::bind(Medium* medium) {
  medium_ = medium;
  PoolMeta* m = meta();
  if (upgrade_ || limit_changed_) {
    SW_TRACE_LABEL("open:pool-meta");
    medium->store(&m->pool_size, size(), 8);
    medium->store(&m->max_size, limit_, 8);
    medium->flush(&m->pool_size, 2 * sizeof(uint64_t));
    medium->fence(FenceKind::kOther);
    limit_changed_ = false;
  }
  // A version-2 or -3 pool other handles have open keeps its version for
  // this session: they may be processes of an older release, which read
  // the header once, at their open, and would take this one's FRESH frames
  // (version 3) or miss its one-line frames (version 4) if they recovered
  // after it (the engines vouch only on a version-3 pool or newer:
  // FreshSet::before_commit; the redo writer writes one-line frames only
  // on a version-4 pool: RedoWriter).  The first handle to open it alone
  // upgrades it.
  if (upgrade_ && (header().layout_version == kLayoutVersionV2 || header().layout_version == kLayoutVersionV3) &&
      shared_ && others_open()) {
    upgrade_ = false;
  }
  if (upgrade_) {
    // Version 1, 2 or 3 -> 4: the word holding layout_version (and
    // header_size), then the checksum.  PoolMeta is durable first, so
    // whichever of the two a crash keeps, open reads the pool as version 4
    // and an older reader refuses it (validate_header); this finishes the
    // job.
    SW_TRACE_LABEL("open:upgrade");
    PoolHeader h = header();
    h.layout_version = kLayoutVersion;
    h.checksum = hash64(&h, offsetof(PoolHeader, checksum));
    uint64_t word;
    std::memcpy(&word, reinterpret_cast<const char*>(&h) + offsetof(PoolHeader, layout_version), sizeof word);
    medium->store(base_ + offsetof(PoolHeader, layout_version), word, 8);
    medium->store(base_ + offsetof(PoolHeader, checksum), h.checksum, 8);
    medium->flush(base_, sizeof h);
    medium->fence(FenceKind::kOther);
    upgrade_ = false;
  }
  // A tail past the durable size is what an interrupted growth left (a
  // read-only pool leaves it: the mapping covers only the durable size).
  if (!attached_ && !devdax_ && !read_only_ && (!shared_ || write_locked_) && file_size_ > size()) {
    if (ftruncate(fd_, static_cast<off_t>(size())) != 0) {
      return set_error_errno(SW_EIO, "cannot trim pool file '%s' to its durable size %zu", path_.c_str(), size());
    }
    file_size_ = size();
  }
  return 0;
}

// ----------------------------------------------------------------- growth

int PoolFile::growth_refused(uint64_t min_chunks) const {
  const uint64_t cur = size();
  if (zone_count() >= kMaxZones || min_chunks > UINT32_MAX - chunk_count()) {
    return set_error(SW_ENOSPC, "the pool (%" PRIu64 " bytes) has as many zones or chunks as it can have", cur);
  }
  if (read_only_) {
    return set_error(SW_ENOSPC, "the pool (%" PRIu64 " bytes) was opened read-only (SW_CONFIG_READONLY): it does not "
                     "grow", cur);
  }
  if (limit_ == initial_size()) {
    return set_error(SW_ENOSPC, "the pool does not grow: its maximum size is its size, %" PRIu64 " bytes (set "
                     "sw_config.max_size or SOFTWRAP_POOL_MAX when creating or opening it to let it grow)", cur);
  }
  if (medium_ == nullptr) {
    return set_error(SW_ENOSPC, "the pool (%" PRIu64 " bytes) is not open for writing, so it cannot grow", cur);
  }
  if (max_size_ < limit_) {
    return set_error(SW_ENOSPC, "the pool is %" PRIu64 " bytes and cannot grow past the %" PRIu64
                     " bytes of address space reserved when it was opened (SOFTWRAP_POOL_RESERVE; reopening it "
                     "reserves again)", cur, max_size_);
  }
  return set_error(SW_ENOSPC, "the pool is %" PRIu64 " bytes and may not grow past its maximum size of %" PRIu64
                   " bytes (sw_config.max_size; a growth needs at least %" PRIu64 " bytes)", cur, limit_,
                   zone_bytes(min_chunks));
}

int PoolFile::extend_file(uint64_t from, uint64_t to) {
  const uint64_t old = file_size_;
  auto undo = [&](int code, const char* what) {
    const int e = errno;
    if (ftruncate(fd_, static_cast<off_t>(old)) != 0) {
      // The file stays longer than the durable size: harmless (bind trims).
    }
    errno = e;
    return set_error_errno(code, "cannot grow pool file '%s' from %" PRIu64 " to %" PRIu64 " bytes: %s",
                           path_.c_str(), old, to, what);
  };
  if (ftruncate(fd_, static_cast<off_t>(to)) != 0) {
    return undo(errno == EFBIG || errno == ENOSPC ? SW_ENOSPC : SW_EIO, "ftruncate");
  }
  if (fallocate(fd_, 0, static_cast<off_t>(from), static_cast<off_t>(to - from)) != 0 && errno != EOPNOTSUPP &&
      errno != ENOSYS && errno != EINVAL) {
    return undo(errno == ENOSPC || errno == EDQUOT ? SW_ENOSPC : SW_EIO, "the file system has no room (fallocate)");
  }
  if (fdatasync(fd_) != 0) return undo(SW_EIO, "fdatasync");
  void* p = mmap(base_ + from, to - from, PROT_READ | PROT_WRITE, map_flags(is_dax_) | MAP_FIXED, fd_,
                 static_cast<off_t>(from));
  if (p == MAP_FAILED) {
    const int e = errno;
    mmap(base_ + from, to - from, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    errno = e;
    return undo(SW_EIO, "mmap");
  }
  file_size_ = to;
  return 0;
}

int PoolFile::grow(uint64_t min_chunks, Zone* added) {
  std::lock_guard<std::mutex> lock(grow_mu_);
  const uint64_t cur = size();
  const uint64_t start = round_up_page(cur);
  const uint64_t total = chunk_count();
  const uint64_t room = max_size_ > start ? (max_size_ - start) / kPageSize * kPageSize : 0;
  if (medium_ == nullptr || min_chunks == 0 || zone_count() >= kMaxZones || min_chunks > UINT32_MAX - total ||
      zone_bytes(min_chunks) > room) {
    return growth_refused(min_chunks);
  }
  const uint64_t step = std::min(cur, kMaxGrowthStep) / kPageSize * kPageSize;
  const uint64_t bytes = std::min(room, std::max(zone_bytes(min_chunks), step));
  const uint64_t n = std::min(chunks_in(bytes), UINT32_MAX - total);  // >= min_chunks
  const uint64_t end = start + bytes;
  if (!attached_) {
    if (int rc = extend_file(start, end)) return rc;
  }
  medium_->extend(end);

  const uint32_t index = zone_count();
  {
    SW_TRACE_LABEL("grow:zone");
    ZoneHeader z{};
    std::memcpy(z.magic, kZoneMagic, sizeof z.magic);
    z.layout_version = header().layout_version;  // an older release sharing the pool reads its zones
    z.index = index;
    std::memcpy(z.uuid, header().uuid, sizeof z.uuid);
    z.offset = start;
    z.size = bytes;
    z.chunk_count = n;
    z.first_chunk = total;
    z.checksum = hash64(&z, offsetof(ZoneHeader, checksum));
    medium_->write(base_ + start, &z, sizeof z);
    medium_->flush(base_ + start, sizeof z);
    static const uint64_t kZeros[kPageSize / 8] = {};
    char* heads = base_ + start + kPageSize;
    for (uint64_t done = 0; done < n * 8; done += sizeof kZeros) {
      medium_->write(heads + done, kZeros, std::min<uint64_t>(sizeof kZeros, n * 8 - done));
    }
    medium_->flush(heads, n * 8);
    if (!skip_zone_fence_) medium_->fence(FenceKind::kOther);
  }
  {
    SW_TRACE_LABEL("grow:size");
    medium_->store(&meta()->pool_size, end, 8);
    medium_->flush(&meta()->pool_size, 8);
    medium_->fence(FenceKind::kOther);
  }
  const Zone z{start, end, start + kPageSize, start + kPageSize + round_up_page(n * 8), static_cast<uint32_t>(total),
               static_cast<uint32_t>(n)};
  add_zone(z);
  size_.store(end, std::memory_order_release);
  if (size_mirror_) __atomic_store_n(size_mirror_, end - mirror_below_, __ATOMIC_RELEASE);
  *added = z;
  return 0;
}

}  // namespace softwrap
