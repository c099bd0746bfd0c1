// pool.h — a pool file mapped into memory: creation, validation, layout.
//
// PoolFile owns the file descriptor (with an exclusive advisory lock, so a
// second process gets SW_EBUSY instead of corrupting it), the mapping and
// the validated header.  It knows where every region is; it does not know
// about wraps.  Creation writes every region, then the header last (stored,
// flushed, fenced), so a crash during creation leaves a file that open()
// refuses rather than a half-initialized pool.
#ifndef SOFTWRAP_POOL_POOL_H_
#define SOFTWRAP_POOL_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pool/pool_format.h"
#include "softwrap/softwrap.h"

namespace softwrap {

class Medium;

struct PoolGeometry {
  uint32_t lanes = 32;
  uint64_t lane_size = 0;  // 0 = default for the pool size
};

// Resolved configuration: sw_config with defaults filled in and environment
// overrides applied (SOFTWRAP_ENGINE, SOFTWRAP_MEDIUM, SOFTWRAP_SCM_*,
// SOFTWRAP_THEMIS_IDEAL, ...).
struct ResolvedConfig {
  sw_engine_kind engine = SW_ENGINE_SOFTWRAP;
  sw_medium_kind medium = SW_MEDIUM_AUTO;
  uint32_t scm_write_ns = 1000;
  uint32_t scm_serialize_ns = 220;
  uint32_t scm_wc_entries = 8;
  uint32_t alias_entries = 1u << 14;
  uint32_t retire_divisor = 8;
  uint32_t shadow_page_size = 1024;
  uint32_t max_alias_tables = 8;
  uint32_t shadow_budget_kib = 2048;
  uint32_t lanes = 32;
  uint64_t lane_size = 0;
  uint32_t flags = 0;
  // Internal knob for a crash simulator control (never set from sw_config
  // or the environment; see docs/crash-simulator.md): recovery accepts redo
  // frames without a valid trailer (count and checksum) — a deliberately
  // broken variant.
  bool redo_skip_commit_validation = false;
};
// Returns 0 or SW_EINVAL (with message) for a bad value in cfg or the
// environment.
int resolve_config(const sw_config* cfg, ResolvedConfig* out);
const char* engine_kind_name(sw_engine_kind k);
bool parse_engine_kind(const std::string& s, sw_engine_kind* out);

class PoolFile {
 public:
  ~PoolFile();
  PoolFile(const PoolFile&) = delete;
  PoolFile& operator=(const PoolFile&) = delete;

  // nullptr + thread error on failure (codes as documented in softwrap.h).
  static std::unique_ptr<PoolFile> create(const std::string& path, size_t size,
                                          const ResolvedConfig& cfg);
  static std::unique_ptr<PoolFile> open(const std::string& path);
  // In-memory pools (crash simulator, fuzzer): no file, no lock, no
  // mapping of our own.  attach() validates the header at `base` like
  // open() does; format() lays out a new pool in `size` zeroed bytes
  // (uuid from `uuid`, or random if nullptr) and attaches it.  The memory
  // must outlive the PoolFile and is not freed by it.  is_dax() is true:
  // there is no file to msync, so the x86 medium is the one that applies.
  static std::unique_ptr<PoolFile> attach(void* base, size_t size);
  static std::unique_ptr<PoolFile> format(void* base, size_t size, const ResolvedConfig& cfg,
                                          const uint8_t* uuid = nullptr);
  // Validates a header image (used by open and by the fuzzer): 0 or the
  // SW_E* code open() would give, with a message.
  static int validate_header(const void* data, size_t file_size);

  const std::string& path() const { return path_; }
  char* base() const { return base_; }
  size_t size() const { return size_; }
  bool is_dax() const { return is_dax_; }
  const PoolHeader& header() const { return *reinterpret_cast<const PoolHeader*>(base_); }

  PoolMeta* meta() const { return reinterpret_cast<PoolMeta*>(base_ + header().meta_offset); }
  LaneHeader* lane_header(uint32_t lane) const {
    return reinterpret_cast<LaneHeader*>(base_ + header().lane_table_offset) + lane;
  }
  char* lane_base(uint32_t lane) const {
    return base_ + header().log_offset + uint64_t{lane} * header().lane_size;
  }
  uint64_t* chunk_table() const {
    return reinterpret_cast<uint64_t*>(base_ + header().chunk_table_offset);
  }
  char* heap() const { return base_ + header().heap_offset; }

  bool contains(const void* p, size_t n) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto b = reinterpret_cast<uintptr_t>(base_);
    return a >= b && n <= size_ && a - b <= size_ - n;
  }
  uint64_t offset_of(const void* p) const { return static_cast<uint64_t>(static_cast<const char*>(p) - base_); }
  char* at(uint64_t off) const { return base_ + off; }

  // msync of the whole mapping (used by the msync medium's drain and close).
  int sync_all();

 private:
  PoolFile() = default;
  std::string path_;
  int fd_ = -1;
  char* base_ = nullptr;
  size_t size_ = 0;
  bool is_dax_ = false;
  bool attached_ = false;  // memory is the caller's: no munmap
};

}  // namespace softwrap

#endif  // SOFTWRAP_POOL_POOL_H_
