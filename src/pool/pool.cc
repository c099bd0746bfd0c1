// pool.cc — configuration resolution and the pool file: create, validate,
// open, attach.  Zones, the address-range reservation and growth are in
// pool_growth.cc.
//
// Approach: the header is the single source of truth for the layout of
// zone 0 and is validated completely (magic, version, checksum, size, every
// region's alignment, order and bounds) from a pread copy *before* anything
// is mapped, then the durable size and growth limit (PoolMeta, also read
// with pread), then every zone; a refused file is never written.  Creation
// is ordered so that a crash at any point leaves a file open() refuses: the
// regions are sized (zero-filled by ftruncate, preallocated by fallocate
// where supported) and synced first, the header is written and synced last.
// An exclusive flock() on the descriptor, held for the PoolFile's lifetime,
// keeps a second opener (another process, or another PoolFile in this one)
// out.  attach()/format() build a PoolFile over caller memory instead
// (crash simulator, fuzzer): same validation, no file, lock or mapping.
//
// Version 1 pools (no zones, no PoolMeta growth words) are accepted and
// upgraded in place at bind() (pool_growth.cc): their layout is version 2's
// zone 0 exactly.
#include "pool/pool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <type_traits>

#include "common/error.h"
#include "common/hash.h"
#include "medium/medium.h"
#include "medium/x86_medium.h"

namespace softwrap {
namespace {

constexpr uint32_t kMaxLanes = 1024;
constexpr uint64_t kMinLaneSize = 64ull << 10;
constexpr uint64_t kMaxDefaultLogBytes = 24ull << 20;
constexpr uint64_t kMaxDefaultLaneSize = 16ull << 20;
constexpr size_t kChecksummedBytes = offsetof(PoolHeader, checksum);

constexpr uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
constexpr bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// ---------------------------------------------------------------- config

// Strict decimal uint32: digits only, no sign, no junk, no overflow.
bool parse_u32(const char* s, uint32_t* out) {
  if (*s == '\0') return false;
  uint64_t v = 0;
  for (const char* p = s; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + static_cast<uint64_t>(*p - '0');
    if (v > UINT32_MAX) return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

// Value of an environment override, or nullptr when unset or empty.
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// NAME=1 sets `flag` in *flags, NAME=0 clears it; anything else is refused.
int env_flag(const char* name, uint32_t flag, uint32_t* flags) {
  const char* v = env(name);
  if (v == nullptr) return 0;
  if (std::strcmp(v, "1") == 0) {
    *flags |= flag;
  } else if (std::strcmp(v, "0") == 0) {
    *flags &= ~flag;
  } else {
    return set_error(SW_EINVAL, "environment variable %s='%s' must be 1 (on) or 0 (off)", name, v);
  }
  return 0;
}

int env_u32(const char* name, uint32_t* out) {
  const char* v = env(name);
  if (v == nullptr) return 0;
  if (!parse_u32(v, out)) {
    return set_error(SW_EINVAL, "environment variable %s='%s' is not a decimal number (0..%u)", name, v,
                     UINT32_MAX);
  }
  return 0;
}

// Size of an environment override: parse_byte_size, or "unlimited" where
// `unlimited` is given.
int env_size(const char* name, uint64_t* out, const uint64_t* unlimited, uint64_t min) {
  const char* v = env(name);
  if (v == nullptr) return 0;
  if (unlimited != nullptr && std::strcmp(v, "unlimited") == 0) {
    *out = *unlimited;
    return 0;
  }
  uint64_t n = 0;
  if (!parse_byte_size(v, &n) || n < min) {
    return set_error(SW_EINVAL, "environment variable %s='%s' is not a size of at least %" PRIu64
                     " bytes (digits with an optional K, M, G or T suffix%s)", name, v, min,
                     unlimited != nullptr ? ", or 'unlimited'" : "");
  }
  *out = n;
  return 0;
}

// ---------------------------------------------------------------- layout

// Fills the layout fields of *h for a pool of `size` bytes.
int compute_layout(uint64_t size, uint32_t lanes, uint64_t lane_size, PoolHeader* h) {
  if (lane_size == 0) {
    // A small fixed region: a frame that outgrows its lane's free space
    // continues in log extents taken from the heap (log/redo_log.h), so
    // the lanes together take pool/16, at most 24 MiB (a 64 MiB pool keeps
    // 59.7 MiB of heap, a 1 GiB one 97.6 %).  Shared by the lanes, not
    // per lane: a lane's fill is what makes the softwrap engines switch
    // tables early (AliasRing::throttle), so few lanes get more each.
    lane_size = std::min(size / 16, kMaxDefaultLogBytes) / lanes / kPageSize * kPageSize;
    if (lane_size < kMinLaneSize) lane_size = kMinLaneSize;
    if (lane_size > kMaxDefaultLaneSize) lane_size = kMaxDefaultLaneSize;
  }
  if (lane_size > kMaxLaneSize) {
    // A lane's DRAM queue of committed frames counts them in 32 bits (at
    // most one per line of the lane: log/lanes.h).
    return set_error(SW_EINVAL, "a lane of %" PRIu64 " bytes is larger than the maximum %" PRIu64
                     " (64 GiB); use more lanes", lane_size, kMaxLaneSize);
  }
  const uint64_t log_bytes = uint64_t{lanes} * lane_size;  // lanes <= 1024, lane_size <= 2^36
  if (lane_size > size || log_bytes > size / 2) {
    return set_error(SW_EINVAL,
                     "a log of %u lanes x %" PRIu64 " bytes does not fit in half of a %" PRIu64
                     "-byte pool; use fewer or smaller lanes or a larger pool",
                     lanes, lane_size, size);
  }
  h->lanes = lanes;
  h->lane_size = lane_size;
  h->meta_offset = kPageSize;
  h->lane_table_offset = 2 * kPageSize;
  h->log_offset = h->lane_table_offset + round_up(uint64_t{lanes} * sizeof(LaneHeader), kPageSize);
  h->chunk_table_offset = h->log_offset + log_bytes;
  h->chunk_size = kChunkSize;
  uint64_t n = 0;
  if (h->chunk_table_offset < size) {
    n = (size - h->chunk_table_offset) / kChunkSize;
    while (n > 0 && h->chunk_table_offset + round_up(n * 8, kPageSize) + n * kChunkSize > size) --n;
  }
  if (n == 0) {
    return set_error(SW_EINVAL,
                     "a %" PRIu64 "-byte pool with a %" PRIu64 "-byte log leaves no room for one %" PRIu64
                     "-byte heap chunk",
                     size, log_bytes, kChunkSize);
  }
  h->chunk_count = n;
  h->heap_offset = h->chunk_table_offset + round_up(n * 8, kPageSize);
  return 0;
}

// ---------------------------------------------------------------- OS helpers

// Locks on the pool file (docs/pool-format.md, "Locks"): open file
// description (OFD) byte-range locks far beyond any pool's end, so they
// never touch data, belong to this descriptor alone (closing another
// descriptor of the file does not drop them, unlike process-associated
// POSIX locks) and are released by the kernel when the process dies.
// F_OFD_SETLK(W) with l_type F_RDLCK/F_WRLCK/F_UNLCK; false with errno.
bool ofd_lock(int fd, uint64_t byte, short type, bool wait) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(byte);
  fl.l_len = 1;
  while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

// The open lock: shared by every handle of a pool opened with
// SW_CONFIG_SHARED (and by read-only handles), exclusive otherwise.
int lock_open(int fd, const std::string& path, bool shared) {
  if (ofd_lock(fd, kOpenLockByte, shared ? F_RDLCK : F_WRLCK, false)) return 0;
  if (errno == EAGAIN || errno == EACCES) {
    return set_error(SW_EBUSY, shared ? "pool '%s' is open in another process (or another handle) without "
                                        "SW_CONFIG_SHARED"
                                      : "pool '%s' is open in another process (or another handle)",
                     path.c_str());
  }
  return set_error_errno(SW_EIO, "cannot lock pool '%s'", path.c_str());
}

int sync_range(void* addr, size_t n, const std::string& path) {
  if (msync(addr, n, MS_SYNC) != 0) return set_error_errno(SW_EIO, "msync of pool '%s' failed", path.c_str());
  return 0;
}

// Writes zeros over [from, to) of the file (pwrite; synced by the caller).
int write_zeros(int fd, uint64_t from, uint64_t to, const std::string& path) {
  static constexpr size_t kBuf = 1 << 20;
  std::unique_ptr<char[]> zeros(new char[kBuf]());
  while (from < to) {
    const ssize_t w = pwrite(fd, zeros.get(), static_cast<size_t>(std::min<uint64_t>(kBuf, to - from)),
                             static_cast<off_t>(from));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = w < 0 ? errno : EIO;
      errno = err;
      return set_error_errno(err == ENOSPC || err == EDQUOT ? SW_ENOSPC : SW_EIO, "cannot write pool file '%s'",
                             path.c_str());
    }
    from += static_cast<uint64_t>(w);
  }
  return 0;
}

int random_bytes(void* buf, size_t n) {
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    ssize_t r = getrandom(p, n, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return set_error_errno(SW_EIO, "getrandom failed");
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return 0;
}

// Reads n bytes at off; *got is how many there were (a short file).
int pread_all(int fd, void* buf, size_t n, uint64_t off, size_t* got, const std::string& path) {
  *got = 0;
  while (*got < n) {
    ssize_t r = pread(fd, static_cast<char*>(buf) + *got, n - *got, static_cast<off_t>(off + *got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return set_error_errno(SW_EIO, "cannot read pool file '%s'", path.c_str());
    if (r == 0) break;
    *got += static_cast<size_t>(r);
  }
  return 0;
}

// The growth limit a new pool records: sw_config.max_size, or its size.
int creation_limit(uint64_t size, const ResolvedConfig& cfg, uint64_t* limit) {
  *limit = cfg.max_size == 0 ? size : cfg.max_size;
  if (*limit < size) {
    return set_error(SW_EINVAL, "sw_config.max_size %" PRIu64 " is below the pool size %" PRIu64
                     " (0 = the pool does not grow)", *limit, size);
  }
  return 0;
}

uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// One region of the layout for validation: [off, off + len).
struct Region {
  const char* name;
  uint64_t off;
  uint64_t len;
};

}  // namespace

// ------------------------------------------------------------------ config

bool parse_byte_size(const std::string& s, uint64_t* out) {
  size_t digits = 0;
  uint64_t n = 0;
  for (; digits < s.size() && s[digits] >= '0' && s[digits] <= '9'; ++digits) {
    if (n > (UINT64_MAX - 9) / 10) return false;
    n = n * 10 + static_cast<uint64_t>(s[digits] - '0');
  }
  if (digits == 0) return false;
  std::string unit;
  for (size_t i = digits; i < s.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  if (unit.size() > 1 && unit.back() == 'b') unit.pop_back();             // "MB", "MiB" -> "m", "mi"
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();                // "mi" -> "m"
  static const char kUnits[] = "bkmgt";
  const char* u = unit.empty() ? kUnits : std::strchr(kUnits, unit[0]);
  if (u == nullptr || unit.size() > 1) return false;
  const unsigned shift = static_cast<unsigned>(u - kUnits) * 10;
  if (shift != 0 && n > (UINT64_MAX >> shift)) return false;
  *out = n << shift;
  return true;
}

const char* engine_kind_name(sw_engine_kind k) {
  switch (k) {
    case SW_ENGINE_DEFAULT: return "default";
    case SW_ENGINE_SOFTWRAP: return "softwrap";
    case SW_ENGINE_SOFTWRAP_LOCAL: return "softwrap-local";
    case SW_ENGINE_UNDO: return "undo";
    case SW_ENGINE_NONATOMIC: return "nonatomic";
    case SW_ENGINE_UNDO_THEMIS: return "undo-themis";
  }
  return "?";
}

bool parse_engine_kind(const std::string& s, sw_engine_kind* out) {
  for (sw_engine_kind k :
       {SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO, SW_ENGINE_UNDO_THEMIS, SW_ENGINE_NONATOMIC}) {
    if (s == engine_kind_name(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

int resolve_config(const sw_config* cfg, ResolvedConfig* out) {
  ResolvedConfig r;
  if (cfg != nullptr) {
    // A C caller can put any int in an enum field; loading an out-of-range
    // value as the enum type is undefined in C++, so check the raw integer.
    std::underlying_type_t<sw_engine_kind> engine;
    std::underlying_type_t<sw_medium_kind> medium;
    std::memcpy(&engine, &cfg->engine, sizeof engine);
    std::memcpy(&medium, &cfg->medium, sizeof medium);
    if (engine < SW_ENGINE_DEFAULT || engine > SW_ENGINE_UNDO_THEMIS) {
      return set_error(SW_EINVAL, "sw_config.engine %lld is not an sw_engine_kind", static_cast<long long>(engine));
    }
    if (medium < SW_MEDIUM_AUTO || medium > SW_MEDIUM_SCM_EMU) {
      return set_error(SW_EINVAL, "sw_config.medium %lld is not an sw_medium_kind", static_cast<long long>(medium));
    }
    if (engine != SW_ENGINE_DEFAULT) r.engine = static_cast<sw_engine_kind>(engine);
    r.medium = static_cast<sw_medium_kind>(medium);
    if (cfg->scm_write_ns) r.scm_write_ns = cfg->scm_write_ns;
    if (cfg->scm_serialize_ns) r.scm_serialize_ns = cfg->scm_serialize_ns;
    if (cfg->scm_wc_entries) r.scm_wc_entries = cfg->scm_wc_entries;
    if (cfg->alias_entries) r.alias_entries = cfg->alias_entries;
    if (cfg->retire_divisor) r.retire_divisor = cfg->retire_divisor;
    if (cfg->shadow_page_size) r.shadow_page_size = cfg->shadow_page_size;
    if (cfg->max_alias_tables) r.max_alias_tables = cfg->max_alias_tables;
    if (cfg->shadow_budget_kib) r.shadow_budget_kib = cfg->shadow_budget_kib;
    if (cfg->lanes) r.lanes = cfg->lanes;
    r.lane_size = cfg->lane_size;
    r.flags = cfg->flags;
    r.max_size = cfg->max_size;
  }
  if (!is_pow2(r.alias_entries) || r.alias_entries < 64) {
    return set_error(SW_EINVAL, "sw_config.alias_entries %u must be a power of two >= 64", r.alias_entries);
  }
  if (!is_pow2(r.shadow_page_size) || r.shadow_page_size < 64 || r.shadow_page_size > 65536) {
    return set_error(SW_EINVAL, "sw_config.shadow_page_size %u must be a power of two in [64, 65536]",
                     r.shadow_page_size);
  }
  if (r.retire_divisor < 2) {
    return set_error(SW_EINVAL, "sw_config.retire_divisor %u must be >= 2", r.retire_divisor);
  }
  if (r.max_alias_tables < 2) {
    return set_error(SW_EINVAL, "sw_config.max_alias_tables %u must be >= 2", r.max_alias_tables);
  }
  if (r.lanes < 1 || r.lanes > kMaxLanes) {
    return set_error(SW_EINVAL, "sw_config.lanes %u must be in [1, %u]", r.lanes, kMaxLanes);
  }
  if (r.lane_size != 0 && (r.lane_size % kPageSize != 0 || r.lane_size < kMinLaneSize)) {
    return set_error(SW_EINVAL, "sw_config.lane_size %" PRIu64 " must be a multiple of 4096 and >= 64 KiB",
                     r.lane_size);
  }

  // Environment overrides win over cfg, so any program can be switched.
  if (const char* v = env("SOFTWRAP_ENGINE")) {
    if (!parse_engine_kind(v, &r.engine)) {
      return set_error(SW_EINVAL, "environment variable SOFTWRAP_ENGINE='%s' is not one of "
                       "softwrap, softwrap-local, undo, undo-themis, nonatomic", v);
    }
  }
  if (const char* v = env("SOFTWRAP_MEDIUM")) {
    if (!parse_medium_kind(v, &r.medium)) {
      return set_error(SW_EINVAL, "environment variable SOFTWRAP_MEDIUM='%s' is not one of "
                       "auto, x86, msync, scm-emu", v);
    }
  }
  if (int rc = env_u32("SOFTWRAP_SCM_WRITE_NS", &r.scm_write_ns)) return rc;
  if (int rc = env_u32("SOFTWRAP_SCM_SERIAL_NS", &r.scm_serialize_ns)) return rc;
  if (const char* v = env("SOFTWRAP_SCM_QUEUE")) {
    if (std::strcmp(v, "shared") == 0) {
      r.flags |= SW_CONFIG_SCM_SHARED_QUEUE;
    } else if (std::strcmp(v, "per-thread") == 0) {
      r.flags &= ~SW_CONFIG_SCM_SHARED_QUEUE;
    } else {
      return set_error(SW_EINVAL, "environment variable SOFTWRAP_SCM_QUEUE='%s' is not one of per-thread, shared", v);
    }
  }
  uint32_t entries = r.alias_entries;
  if (int rc = env_u32("SOFTWRAP_ALIAS_ENTRIES", &entries)) return rc;
  if (!is_pow2(entries) || entries < 64) {
    return set_error(SW_EINVAL, "environment variable SOFTWRAP_ALIAS_ENTRIES=%u must be a power of two >= 64",
                     entries);
  }
  r.alias_entries = entries;
  uint32_t spill_mib = static_cast<uint32_t>(r.spill_bytes >> 20);
  if (int rc = env_u32("SOFTWRAP_SPILL_MIB", &spill_mib)) return rc;
  r.spill_bytes = uint64_t{spill_mib} << 20;
  if (int rc = env_flag("SOFTWRAP_STRICT", SW_CONFIG_STRICT, &r.flags)) return rc;
  if (const char* v = env("SOFTWRAP_WCL")) {  // 1, 0 or auto: the medium's choice (c_api.cc, wcl_policy)
    if (std::strcmp(v, "1") == 0) {
      r.flags = (r.flags | SW_CONFIG_WCL) & ~SW_CONFIG_NO_WCL;
    } else if (std::strcmp(v, "0") == 0) {
      r.flags = (r.flags | SW_CONFIG_NO_WCL) & ~SW_CONFIG_WCL;
    } else if (std::strcmp(v, "auto") == 0) {
      r.flags &= ~(SW_CONFIG_WCL | SW_CONFIG_NO_WCL);
    } else {
      return set_error(SW_EINVAL, "environment variable SOFTWRAP_WCL='%s' must be 1 (on), 0 (off) or auto (the "
                       "medium's choice)", v);
    }
    r.wcl_from_env = true;
  }
  if ((r.flags & SW_CONFIG_WCL) && (r.flags & SW_CONFIG_NO_WCL)) {
    return set_error(SW_EINVAL, "SW_CONFIG_WCL and SW_CONFIG_NO_WCL contradict each other");
  }
  if (int rc = env_flag("SOFTWRAP_REQUIRE_WRAP", SW_CONFIG_REQUIRE_WRAP, &r.flags)) return rc;
  if (int rc = env_flag("SOFTWRAP_THEMIS_IDEAL", SW_CONFIG_THEMIS_IDEAL, &r.flags)) return rc;
  if (int rc = env_flag("SOFTWRAP_COUNT_LOADS", SW_CONFIG_COUNT_LOADS, &r.flags)) return rc;
  if (int rc = env_flag("SOFTWRAP_SHARED", SW_CONFIG_SHARED, &r.flags)) return rc;
  if (int rc = env_u32("SOFTWRAP_SHARE_WAIT_MS", &r.share_wait_ms)) return rc;
  {  // SOFTWRAP_RETIRE_HELP=0 sets SW_CONFIG_NO_RETIRE_HELP, =1 clears it
    uint32_t help = r.flags & SW_CONFIG_NO_RETIRE_HELP ? 0 : 1;
    if (int rc = env_flag("SOFTWRAP_RETIRE_HELP", 1, &help)) return rc;
    r.flags = help ? r.flags & ~SW_CONFIG_NO_RETIRE_HELP : r.flags | SW_CONFIG_NO_RETIRE_HELP;
  }
  if (int rc = env_u32("SOFTWRAP_RETIRE_THREADS", &r.retire_threads)) return rc;
  if (r.retire_threads < 1 || r.retire_threads > 8) {
    return set_error(SW_EINVAL, "environment variable SOFTWRAP_RETIRE_THREADS=%u must be from 1 to 8",
                     r.retire_threads);
  }
  if (int rc = env_u32("SOFTWRAP_ALIAS_FILTER_GRANULE", &r.filter_granule)) return rc;
  if (!is_pow2(r.filter_granule) || r.filter_granule < 64 || r.filter_granule > 65536) {
    return set_error(SW_EINVAL, "environment variable SOFTWRAP_ALIAS_FILTER_GRANULE=%u must be a power of two "
                     "from 64 to 65536", r.filter_granule);
  }
  if (int rc = env_u32("SOFTWRAP_SHADOW_BUDGET_KIB", &r.shadow_budget_kib)) return rc;
  if (r.shadow_budget_kib == 0) {
    return set_error(SW_EINVAL, "environment variable SOFTWRAP_SHADOW_BUDGET_KIB must be >= 1");
  }
  const uint64_t unlimited = kUnlimitedPoolSize;
  if (int rc = env_size("SOFTWRAP_POOL_MAX", &r.max_size, &unlimited, 0)) return rc;
  if (int rc = env_size("SOFTWRAP_POOL_RESERVE", &r.reserve_limit, nullptr, kMinPoolSize)) return rc;
  *out = r;
  return 0;
}

// ------------------------------------------------------------------ PoolFile

PoolFile::~PoolFile() {
  if (base_ != nullptr && !attached_) munmap(base_, reserved_);  // the mapping and the rest of the reservation
  if (attached_ && shared_) note_attached_open(false);
  if (fd_ >= 0) close(fd_);  // releases the locks
}

// Reads only min(file_size, sizeof(PoolHeader)) bytes of data, any alignment.
int PoolFile::validate_header(const void* data, size_t file_size, bool* upgrade) {
  if (upgrade != nullptr) *upgrade = false;
  if (file_size < sizeof(PoolHeader)) {
    return set_error(SW_EFOREIGN, "not a softwrap pool: the file is %zu bytes, smaller than a pool header (%zu)",
                     file_size, sizeof(PoolHeader));
  }
  if (data == nullptr) return set_error(SW_EINVAL, "validate_header: no header bytes given");
  PoolHeader h;
  std::memcpy(&h, data, sizeof h);  // data may be unaligned
  if (std::memcmp(h.magic, kPoolMagic, sizeof h.magic) != 0) {
    return set_error(SW_EFOREIGN, "not a softwrap pool: bad magic");
  }
  if (h.layout_version < kLayoutVersionV1 || h.layout_version > kLayoutVersion) {
    if (h.layout_version > kLayoutVersion) {
      return set_error(SW_EVERSION, "pool layout version %u is newer than this library reads (versions %u "
                       "to %u): use a newer softwrap", h.layout_version, kLayoutVersionV1, kLayoutVersion);
    }
    return set_error(SW_EVERSION, "pool layout version %u is not supported (this library reads versions %u to %u); "
                     "open the pool with the softwrap release that wrote it", h.layout_version, kLayoutVersionV1,
                     kLayoutVersion);
  }
  if (h.header_size != sizeof(PoolHeader)) {
    return set_error(SW_ECORRUPT, "pool header: header_size %u, expected %zu", h.header_size, sizeof(PoolHeader));
  }
  const uint64_t sum = hash64(&h, kChecksummedBytes);
  bool torn_upgrade = false;
  if (h.checksum != sum) {
    // An upgrade stores the version word and the checksum separately, in
    // two cache lines with one fence for both (pool_growth.cc): a crash
    // may keep either without the other, leaving a header whose checksum
    // is right for another version it reads (the one upgraded from or to,
    // or, from a previous release's upgrade, 1 and 2).  bind() finishes it.
    PoolHeader other = h;
    bool match = false;
    for (uint32_t v = kLayoutVersionV1; v <= kLayoutVersion; ++v) {
      if (v == h.layout_version) continue;
      other.layout_version = v;
      match = match || h.checksum == hash64(&other, kChecksummedBytes);
    }
    if (!match) {
      return set_error(SW_ECORRUPT, "pool header checksum mismatch (stored 0x%016" PRIx64 ", computed 0x%016" PRIx64
                       "): the header is corrupt", h.checksum, sum);
    }
    torn_upgrade = true;
  }
  if (upgrade != nullptr) *upgrade = torn_upgrade || h.layout_version < kLayoutVersion;
  if (h.pool_size > file_size) {
    return set_error(SW_ECORRUPT, "pool header says the pool was created with %" PRIu64
                     " bytes but the file has %zu: the file was truncated", h.pool_size, file_size);
  }
  if (h.pool_size < kMinPoolSize) {
    return set_error(SW_ECORRUPT, "pool header: pool_size %" PRIu64 " is below the minimum %" PRIu64, h.pool_size,
                     kMinPoolSize);
  }
  if (h.lanes == 0 || h.lanes > kMaxLanes) {
    return set_error(SW_ECORRUPT, "pool header: lanes %u is not in [1, %u]", h.lanes, kMaxLanes);
  }
  if (h.lane_size < kMinLaneSize || h.lane_size % kPageSize != 0 || h.lane_size > h.pool_size ||
      h.lane_size > kMaxLaneSize) {
    return set_error(SW_ECORRUPT, "pool header: lane_size %" PRIu64 " is not a multiple of 4096 in [64 KiB, %"
                     PRIu64 "]", h.lane_size, std::min(h.pool_size, kMaxLaneSize));
  }
  if (h.chunk_size != kChunkSize) {
    return set_error(SW_ECORRUPT, "pool header: chunk_size %" PRIu64 ", expected %" PRIu64, h.chunk_size,
                     kChunkSize);
  }
  if (h.chunk_count == 0 || h.chunk_count > h.pool_size / kChunkSize) {
    return set_error(SW_ECORRUPT, "pool header: chunk_count %" PRIu64 " is not in [1, %" PRIu64 "]",
                     h.chunk_count, h.pool_size / kChunkSize);
  }
  // Products cannot overflow now: lanes <= 1024 and lane_size <= pool_size;
  // chunk_count <= pool_size / chunk_size.
  const Region regions[] = {
      {"header", 0, kPageSize},
      {"meta", h.meta_offset, kPageSize},
      {"lane table", h.lane_table_offset, round_up(uint64_t{h.lanes} * sizeof(LaneHeader), kPageSize)},
      {"log", h.log_offset, uint64_t{h.lanes} * h.lane_size},
      {"chunk table", h.chunk_table_offset, round_up(h.chunk_count * 8, kPageSize)},
      {"heap", h.heap_offset, h.chunk_count * kChunkSize},
  };
  uint64_t prev_end = 0;
  const char* prev_name = "start of file";
  for (const Region& r : regions) {
    if (r.off % kPageSize != 0) {
      return set_error(SW_ECORRUPT, "pool header: %s offset 0x%" PRIx64 " is not 4096-aligned", r.name, r.off);
    }
    if (r.off < prev_end) {
      return set_error(SW_ECORRUPT, "pool header: %s at 0x%" PRIx64 " overlaps %s, which ends at 0x%" PRIx64,
                       r.name, r.off, prev_name, prev_end);
    }
    if (r.off > h.pool_size || r.len > h.pool_size - r.off) {
      return set_error(SW_ECORRUPT, "pool header: %s [0x%" PRIx64 ", +0x%" PRIx64 ") extends beyond the pool end 0x%"
                       PRIx64, r.name, r.off, r.len, h.pool_size);
    }
    prev_end = r.off + r.len;
    prev_name = r.name;
  }
  return 0;
}

// The durable size and growth limit from PoolMeta `m` (a version-1 pool has
// zeros there: its size is its initial size and it does not grow), checked
// against the initial size and the `room` there is (file or memory), and
// the maximum cfg asks for.
int PoolFile::setup(uint64_t initial, const PoolMeta& m, const ResolvedConfig& cfg, uint64_t room) {
  uint64_t size = m.pool_size, limit = m.max_size;
  if (upgrade_ && size == 0 && limit == 0) size = limit = initial;
  if (size < initial || (size != initial && size % kPageSize != 0)) {  // zones end on page boundaries
    return set_error(SW_ECORRUPT, "pool metadata: durable size %" PRIu64 " is neither the initial size %" PRIu64
                     " nor a multiple of 4096 above it", size, initial);
  }
  if (limit < size) {
    return set_error(SW_ECORRUPT, "pool metadata: maximum size %" PRIu64 " is below the durable size %" PRIu64, limit,
                     size);
  }
  if (size > room) {
    return set_error(SW_ECORRUPT, "the pool is %" PRIu64 " bytes (its durable size) but the %s has only %" PRIu64
                     ": the file was truncated", size, attached_ ? "memory" : "file", room);
  }
  if (cfg.max_size != 0 && cfg.max_size != limit) {
    if (cfg.max_size < size) {
      return set_error(SW_EINVAL, "sw_config.max_size %" PRIu64 " is below the pool's size %" PRIu64
                       " (a pool does not shrink)", cfg.max_size, size);
    }
    limit = cfg.max_size;
    limit_changed_ = true;
  }
  size_.store(size, std::memory_order_relaxed);
  limit_ = limit;
  skip_zone_fence_ = cfg.grow_skip_zone_fence;
  return 0;
}

namespace {

// The size and geometry of a new pool, on a file or a device: 0 or SW_EINVAL.
int check_new_pool(size_t size, const ResolvedConfig& cfg) {
  if (size < kMinPoolSize) {
    return set_error(SW_EINVAL, "pool size %zu is below the minimum of %" PRIu64 " bytes (8 MiB)", size,
                     kMinPoolSize);
  }
  if (cfg.lanes < 1 || cfg.lanes > kMaxLanes ||
      (cfg.lane_size != 0 && (cfg.lane_size % kPageSize != 0 || cfg.lane_size < kMinLaneSize))) {
    return set_error(SW_EINVAL, "bad pool geometry: %u lanes of %" PRIu64 " bytes", cfg.lanes, cfg.lane_size);
  }
  return 0;
}

// Bytes of a device read at open: the header's page and PoolMeta's,
// rounded up to whole alignment units (a device holds at least 8 MiB).
uint64_t device_head_bytes(const DevDax& dd) { return (2 * kPageSize + dd.align - 1) / dd.align * dd.align; }

// The device's first device_head_bytes() copied out through a mapping
// (read() does not work on device DAX).
int read_device_head(int fd, const DevDax& dd, char* out, const std::string& path) {
  const uint64_t n = device_head_bytes(dd);
  void* r = mmap(nullptr, n + dd.align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) return set_error_errno(SW_ENOMEM, "cannot reserve address space to read '%s'", path.c_str());
  const auto raw = reinterpret_cast<uintptr_t>(r);
  void* at = reinterpret_cast<void*>((raw + dd.align - 1) & ~uintptr_t{dd.align - 1});
  void* p = mmap(at, n, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    munmap(r, n + dd.align);
    return set_error_errno(SW_EIO, "cannot map device '%s' to read its header", path.c_str());
  }
  std::memcpy(out, p, n);
  munmap(r, n + dd.align);
  return 0;
}

}  // namespace

int PoolFile::write_header(PoolHeader h, uint64_t size) {
  std::memcpy(h.magic, kPoolMagic, sizeof h.magic);
  h.layout_version = kLayoutVersion;
  h.header_size = sizeof(PoolHeader);
  h.pool_size = size;
  if (int rc = random_bytes(h.uuid, sizeof h.uuid)) return rc;
  h.uuid[6] = static_cast<uint8_t>((h.uuid[6] & 0x0F) | 0x40);  // RFC 4122 version 4
  h.uuid[8] = static_cast<uint8_t>((h.uuid[8] & 0x3F) | 0x80);
  h.create_time_ns = realtime_ns();
  h.checksum = hash64(&h, kChecksummedBytes);
  std::memcpy(base_, &h, sizeof h);
  if (int rc = sync_bytes(base_, kPageSize)) return rc;
  if (int rc = validate_header(base_, size)) return rc;  // self-check; cannot fail
  return load_zones();
}

std::unique_ptr<PoolFile> PoolFile::create(const std::string& path, size_t size, const ResolvedConfig& cfg) {
  {
    struct stat pre{};
    DevDax dd;
    const int dev = ::stat(path.c_str(), &pre) == 0 ? probe_devdax(pre, path, &dd) : 0;
    if (dev < 0) return nullptr;
    if (dev > 0) return create_on_device(path, size, cfg, dd);
  }
  if (check_new_pool(size, cfg) != 0) return nullptr;
  uint64_t limit = 0;
  if (creation_limit(size, cfg, &limit) != 0) return nullptr;
  PoolHeader h{};
  if (compute_layout(size, cfg.lanes, cfg.lane_size, &h) != 0) return nullptr;

  const bool overwrite = (cfg.flags & SW_CONFIG_OVERWRITE) != 0;
  std::unique_ptr<PoolFile> pf(new PoolFile());
  pf->path_ = path;
  // No O_TRUNC: an existing file is not touched until we hold its lock.
  pf->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | (overwrite ? 0 : O_EXCL), 0666);
  if (pf->fd_ < 0) {
    if (errno == EEXIST) {
      set_error(SW_EEXIST, "pool file '%s' already exists (set SW_CONFIG_OVERWRITE to replace it)", path.c_str());
    } else {
      set_error_errno(SW_EIO, "cannot create pool file '%s'", path.c_str());
    }
    return nullptr;
  }
  // Exclusive while the file is formatted, whatever the mode: no one may
  // open a pool being created.  A shared pool's lock becomes shared after.
  if (lock_open(pf->fd_, path, false) != 0) return nullptr;
  pf->shared_ = (cfg.flags & SW_CONFIG_SHARED) != 0;
  // From here on the file is ours; if creation fails, remove what we made.
  bool ok = false;
  struct Cleanup {
    const std::string& path;
    const bool& ok;
    ~Cleanup() {
      if (!ok) unlink(path.c_str());
    }
  } cleanup{path, ok};

  struct stat st{};
  if (fstat(pf->fd_, &st) != 0) {
    set_error_errno(SW_EIO, "cannot stat pool file '%s'", path.c_str());
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    set_error(SW_EINVAL, "'%s' is not a regular file", path.c_str());
    ok = true;  // never unlink something that is not a file we created
    return nullptr;
  }
  // Zero everything (a replaced file's old bytes must not survive), then
  // reserve the blocks so that a full file system cannot SIGBUS us later.
  if (ftruncate(pf->fd_, 0) != 0 || ftruncate(pf->fd_, static_cast<off_t>(size)) != 0) {
    set_error_errno(SW_EIO, "cannot size pool file '%s' to %zu bytes", path.c_str(), size);
    return nullptr;
  }
  if (fallocate(pf->fd_, 0, 0, static_cast<off_t>(size)) != 0 && errno != EOPNOTSUPP && errno != ENOSYS &&
      errno != EINVAL) {
    set_error_errno(errno == ENOSPC || errno == EDQUOT ? SW_ENOSPC : SW_EIO,
                    "cannot allocate %zu bytes for pool file '%s'", size, path.c_str());
    return nullptr;
  }
  // Write the zeros of everything before the heap (header, lane table,
  // log, chunk table) instead of leaving fallocate's unwritten extents:
  // the first write back of each unwritten block converts its extent, a
  // change of the inode's metadata that the next sync must write too — on
  // ext4 without a journal two more synchronous writes (the extent blocks,
  // the inode), with one a journal commit — and the log is written at every
  // commit, all of it within the first few hundred.  Side by side (batches
  // of 100 B+tree inserts on a new pool, ext4): 1.3x the inserts/s, for a
  // few milliseconds at creation (the log region is at most 24 MiB).  The
  // heap keeps its unwritten extents: writing its zeros too measured slower
  // (docs/results.md, durable commits), and costs a large pool's size.
  if (write_zeros(pf->fd_, 0, h.heap_offset, path) != 0) return nullptr;
  pf->file_size_ = size;
  pf->size_.store(size, std::memory_order_relaxed);
  pf->limit_ = limit;
  pf->skip_zone_fence_ = cfg.grow_skip_zone_fence;
  pf->created_zeroed_ = true;  // ftruncate above: every chunk holds zeros
  if (pf->reserve_and_map(cfg.reserve_limit) != 0) return nullptr;
  // Every region is valid as zeros (no root, retired_seq 0, clean lanes, all
  // chunks free) but the durable size and the limit.  Make them durable
  // before the header that blesses them.
  auto* meta = reinterpret_cast<PoolMeta*>(pf->base_ + h.meta_offset);
  meta->pool_size = size;
  meta->max_size = limit;
  if (pf->sync_bytes(pf->base_, size) != 0) return nullptr;

  if (pf->write_header(h, size) != 0) return nullptr;

  // Make the new directory entry durable too (best effort).
  std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  ok = true;
  return pf;
}

std::unique_ptr<PoolFile> PoolFile::open(const std::string& path, const ResolvedConfig& cfg) {
  std::unique_ptr<PoolFile> pf(new PoolFile());
  pf->path_ = path;
  pf->read_only_ = (cfg.flags & SW_CONFIG_READONLY) != 0;
  pf->fd_ = ::open(path.c_str(), (pf->read_only_ ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (pf->fd_ < 0) {
    set_error_errno(SW_EIO, "cannot open pool file '%s'%s", path.c_str(), pf->read_only_ ? " for reading" : "");
    return nullptr;
  }
  // A read-only handle never takes write access: it reads, with writers
  // kept out (below), whatever the flags say.
  pf->shared_ = (cfg.flags & SW_CONFIG_SHARED) != 0 && !pf->read_only_;
  if (lock_open(pf->fd_, path, pf->shared_ || pf->read_only_) != 0) return nullptr;
  // A read-only handle keeps writers out while it is open (its view is a
  // private copy): a read lock on the write-access byte.
  if (pf->read_only_) {
    // A shared pool's writer gives write access up within a millisecond
    // of seeing another handle when it is between sessions; a writer in a
    // session is waited for up to share_wait_ms.
    bool got = false;
    for (uint32_t waited = 0; !(got = ofd_lock(pf->fd_, kWriteLockByte, F_RDLCK, false)); ++waited) {
      if ((errno != EAGAIN && errno != EACCES) || waited >= cfg.share_wait_ms) break;
      usleep(1000);
    }
    if (!got) {
      set_error(SW_EBUSY, "pool '%s' is being written by another process (it holds write access and did not give "
                "it up within %u ms)", path.c_str(), cfg.share_wait_ms);
      return nullptr;
    }
  }
  struct stat st{};
  if (fstat(pf->fd_, &st) != 0) {
    set_error_errno(SW_EIO, "cannot stat pool file '%s'", path.c_str());
    return nullptr;
  }
  DevDax dd;
  const int dev = probe_devdax(st, path, &dd);
  if (dev < 0) return nullptr;
  if (dev == 0 && !S_ISREG(st.st_mode)) {
    set_error(SW_EFOREIGN, "not a softwrap pool: '%s' is not a regular file or a device-DAX device", path.c_str());
    return nullptr;
  }
  if (dev > 0 && pf->read_only_) {
    set_error(SW_EINVAL, "device DAX '%s' cannot be opened SW_CONFIG_READONLY: it has no copy-on-write mappings",
              path.c_str());
    return nullptr;
  }
  const auto file_size = dev > 0 ? static_cast<size_t>(dd.size) : static_cast<size_t>(st.st_size);
  // Validate read-only copies of the header and PoolMeta before mapping.
  PoolHeader h{};
  PoolMeta m{};
  if (dev > 0) {
    // The header's page and PoolMeta's (compute_layout puts it at the
    // second page), read through a mapping.
    const uint64_t n = device_head_bytes(dd);
    std::unique_ptr<char[]> head(new char[n]);
    if (read_device_head(pf->fd_, dd, head.get(), path) != 0) return nullptr;
    std::memcpy(&h, head.get(), sizeof h);
    if (validate_header(&h, file_size, &pf->upgrade_) != 0) return nullptr;
    if (h.meta_offset + sizeof m > n) {
      set_error(SW_ECORRUPT, "pool on '%s': metadata at offset %" PRIu64 " past the device's first %" PRIu64 " bytes",
                path.c_str(), h.meta_offset, n);
      return nullptr;
    }
    std::memcpy(&m, head.get() + h.meta_offset, sizeof m);
    if (cfg.max_size != 0 && cfg.max_size != m.max_size) {
      set_error(SW_EINVAL, "a pool on device DAX '%s' does not grow: sw_config.max_size must be 0 or %" PRIu64,
                path.c_str(), m.max_size);
      return nullptr;
    }
    pf->devdax_ = true;
    pf->map_align_ = dd.align;
  } else {
    size_t got = 0;
    if (pread_all(pf->fd_, &h, std::min(file_size, sizeof h), 0, &got, path) != 0) return nullptr;
    if (validate_header(&h, got < sizeof h ? got : file_size, &pf->upgrade_) != 0) return nullptr;
    if (pread_all(pf->fd_, &m, sizeof m, h.meta_offset, &got, path) != 0) return nullptr;
    if (got != sizeof m) {
      set_error(SW_EIO, "short read of the metadata of '%s'", path.c_str());
      return nullptr;
    }
  }
  pf->file_size_ = file_size;
  if (pf->setup(h.pool_size, m, cfg, file_size) != 0) return nullptr;
  if (pf->reserve_and_map(cfg.reserve_limit) != 0) return nullptr;
  // The mapping must show what we validated (guards against a writer that
  // ignores the lock).  In a shared pool other handles change the rest of
  // PoolMeta (retirement, the root, the write-access marker) at any time
  // without us: only the sizes setup() validated must still hold.
  const bool meta_moved = pf->shared_ ? __atomic_load_n(&pf->meta()->pool_size, __ATOMIC_ACQUIRE) != m.pool_size ||
                                            __atomic_load_n(&pf->meta()->max_size, __ATOMIC_ACQUIRE) != m.max_size
                                      : std::memcmp(pf->meta(), &m, sizeof m) != 0;
  if (std::memcmp(pf->base_, &h, sizeof h) != 0 || meta_moved) {
    set_error(SW_EBUSY, "pool '%s' changed while it was being opened (another writer ignores the lock?)", path.c_str());
    return nullptr;
  }
  if (pf->load_zones() != 0) return nullptr;
  return pf;
}

int PoolFile::sync_all() { return attached_ ? 0 : sync_bytes(base_, size()); }

int PoolFile::sync_bytes(void* addr, size_t n) const {
  if (!devdax_) return sync_range(addr, n, path_);
  // Device DAX has no page cache for msync to write back: the bytes are in
  // the CPU's caches, so they are written back from there.
  X86Medium m;
  m.flush(addr, n);
  m.fence(FenceKind::kOther);
  return 0;
}

std::unique_ptr<PoolFile> PoolFile::create_on_device(const std::string& path, size_t size, const ResolvedConfig& cfg,
                                                     const DevDax& dd) {
  if (size == 0) size = dd.size;  // the whole device
  if (size > dd.size) {
    set_error(SW_ENOSPC, "device '%s' holds %" PRIu64 " bytes; a pool of %zu does not fit", path.c_str(), dd.size,
              size);
    return nullptr;
  }
  if (check_new_pool(size, cfg) != 0) return nullptr;
  if (cfg.max_size != 0 && cfg.max_size != size) {
    set_error(SW_EINVAL, "a pool on device DAX '%s' does not grow: sw_config.max_size must be 0 or its size %zu",
              path.c_str(), size);
    return nullptr;
  }
  PoolHeader h{};
  if (compute_layout(size, cfg.lanes, cfg.lane_size, &h) != 0) return nullptr;
  std::unique_ptr<PoolFile> pf(new PoolFile());
  pf->path_ = path;
  pf->devdax_ = true;
  pf->map_align_ = dd.align;
  pf->fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (pf->fd_ < 0) {
    set_error_errno(SW_EIO, "cannot open device '%s'", path.c_str());
    return nullptr;
  }
  if (lock_open(pf->fd_, path, false) != 0) return nullptr;
  pf->shared_ = (cfg.flags & SW_CONFIG_SHARED) != 0;
  pf->file_size_ = dd.size;
  pf->size_.store(size, std::memory_order_relaxed);
  pf->limit_ = size;
  pf->skip_zone_fence_ = cfg.grow_skip_zone_fence;
  pf->created_zeroed_ = false;  // the heap holds whatever the device held
  if (pf->reserve_and_map(cfg.reserve_limit) != 0) return nullptr;
  // A device is not created: it already exists and may hold a pool, ours
  // or another program's.  Only a device whose first page is zero (a new
  // or zeroed one) is taken without SW_CONFIG_OVERWRITE.
  if ((cfg.flags & SW_CONFIG_OVERWRITE) == 0) {
    if (std::memcmp(pf->base_, kPoolMagic, sizeof h.magic) == 0) {
      set_error(SW_EEXIST, "device '%s' already holds a softwrap pool (set SW_CONFIG_OVERWRITE to replace it)",
                path.c_str());
      return nullptr;
    }
    for (uint64_t i = 0; i < kPageSize; ++i) {
      if (pf->base_[i] != 0) {
        set_error(SW_EEXIST, "device '%s' is not empty: its first page holds data that is not a softwrap pool (set "
                  "SW_CONFIG_OVERWRITE to replace it)", path.c_str());
        return nullptr;
      }
    }
  }
  // Make the old header invalid first, so that a crash below leaves a
  // device open() refuses; then zero everything before the heap (header,
  // lanes, log, chunk table: all chunks free) and write the sizes.
  std::memset(pf->base_, 0, kPageSize);
  if (pf->sync_bytes(pf->base_, kPageSize) != 0) return nullptr;
  std::memset(pf->base_, 0, h.heap_offset);
  auto* meta = reinterpret_cast<PoolMeta*>(pf->base_ + h.meta_offset);
  meta->pool_size = size;
  meta->max_size = size;
  if (pf->sync_bytes(pf->base_, h.heap_offset) != 0) return nullptr;
  if (pf->write_header(h, size) != 0) return nullptr;
  return pf;
}

std::unique_ptr<PoolFile> PoolFile::attach(void* base, size_t capacity, const ResolvedConfig& cfg) {
  if (base == nullptr || reinterpret_cast<uintptr_t>(base) % kPageSize != 0) {
    set_error(SW_EINVAL, "attach: pool memory %p must be 4096-aligned", base);
    return nullptr;
  }
  bool upgrade = false;
  if (validate_header(base, capacity, &upgrade) != 0) return nullptr;
  std::unique_ptr<PoolFile> pf(new PoolFile());
  pf->path_ = "<memory>";
  pf->base_ = static_cast<char*>(base);
  pf->is_dax_ = true;
  pf->attached_ = true;
  pf->upgrade_ = upgrade;
  pf->reserved_ = capacity / kPageSize * kPageSize;
  PoolMeta m;
  std::memcpy(&m, pf->meta(), sizeof m);
  if (pf->setup(pf->header().pool_size, m, cfg, capacity) != 0) return nullptr;
  pf->max_size_ = std::min(pf->limit_, pf->reserved_);
  if (pf->load_zones() != 0) return nullptr;
  if (cfg.flags & SW_CONFIG_SHARED) {
    pf->shared_ = true;
    pf->note_attached_open(true);
  }
  return pf;
}

std::unique_ptr<PoolFile> PoolFile::format(void* base, size_t capacity, size_t size, const ResolvedConfig& cfg,
                                           const uint8_t* uuid) {
  if (size < kMinPoolSize || size > capacity) {
    set_error(SW_EINVAL, "pool size %zu is not in [%" PRIu64 " (8 MiB), %zu (the memory)]", size, kMinPoolSize,
              capacity);
    return nullptr;
  }
  uint64_t limit = 0;
  if (creation_limit(size, cfg, &limit) != 0) return nullptr;
  PoolHeader h{};
  if (compute_layout(size, cfg.lanes, cfg.lane_size, &h) != 0) return nullptr;
  auto* meta = reinterpret_cast<PoolMeta*>(static_cast<char*>(base) + h.meta_offset);
  meta->pool_size = size;
  meta->max_size = limit;
  std::memcpy(h.magic, kPoolMagic, sizeof h.magic);
  h.layout_version = kLayoutVersion;
  h.header_size = sizeof(PoolHeader);
  h.pool_size = size;
  if (uuid != nullptr) {
    std::memcpy(h.uuid, uuid, sizeof h.uuid);
  } else if (random_bytes(h.uuid, sizeof h.uuid) != 0) {
    return nullptr;
  }
  h.checksum = hash64(&h, kChecksummedBytes);
  std::memcpy(base, &h, sizeof h);
  return attach(base, capacity, cfg);
}

}  // namespace softwrap
