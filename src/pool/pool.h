// pool.h — a pool file mapped into memory: creation, validation, layout,
// growth.
//
// PoolFile owns the file descriptor (with an exclusive advisory lock, so a
// second process gets SW_EBUSY instead of corrupting it), the mapping and
// the validated header.  It knows where every region and every zone is;
// it does not know about wraps.  Creation writes every region, then the
// header last (stored, flushed, fenced), so a crash during creation leaves
// a file that open() refuses rather than a half-initialized pool.
//
// Growth: open reserves the address range of the pool's maximum size
// (PROT_NONE) and maps the file at its start, so a growth maps the new part
// in place and every pointer into the pool stays valid.  grow() extends the
// file, maps it, formats a zone there through the medium, and only then
// persists the new durable size (PoolMeta::pool_size): a crash at any point
// leaves a pool that opens, at the old size or the new one.
#ifndef SOFTWRAP_POOL_POOL_H_
#define SOFTWRAP_POOL_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "pool/devdax.h"
#include "pool/pool_format.h"
#include "softwrap/softwrap.h"

namespace softwrap {

class Medium;

// Address range an unlimited pool reserves at open, unless
// SOFTWRAP_POOL_RESERVE says otherwise: 1 TiB (an x86-64 process has 128
// TiB, so a hundred such pools fit; a smaller file system caps it anyway).
inline constexpr uint64_t kDefaultReserveLimit = 1ull << 40;
// A growth adds as many bytes as the pool has (doubling it), at most this
// many, at least what the request that triggered it needs (pool.cc).
inline constexpr uint64_t kMaxGrowthStep = 1ull << 30;
// Zones a pool can have (zone 0 included).
inline constexpr uint32_t kMaxZones = 1u << 16;

// One zone of the heap: chunk heads at `table`, `chunks` chunks from `heap`,
// numbered from first_chunk.  Zone 0 is the pool as created ([0, initial
// size): its "zone header" is the PoolHeader); later zones are [offset, end).
struct Zone {
  uint64_t offset;
  uint64_t end;
  uint64_t table;
  uint64_t heap;
  uint32_t first_chunk;
  uint32_t chunks;
};

// Strict byte size: digits with an optional K/M/G/T suffix (binary; "KiB",
// "MB" and a trailing "B" are accepted too), no overflow.
bool parse_byte_size(const std::string& s, uint64_t* out);

struct PoolGeometry {
  uint32_t lanes = 32;
  uint64_t lane_size = 0;  // 0 = default for the pool size
};

// Crash-simulator controls of fresh blocks (ResolvedConfig::fresh_control)
// and their names in failure reports ("" for none).
enum class FreshControl : uint8_t { kNone, kSkipFlush, kSkipLog, kSkipLoggedFlush, kSkipVouch, kSkipVouchCheck };
// Crash-simulator control of commits that help retire
// (ResolvedConfig::help_control).
enum class HelpControl : uint8_t { kNone, kOwnBeforeCommit };
inline const char* help_control_name(HelpControl c) {
  return c == HelpControl::kOwnBeforeCommit ? "help-own-before-commit" : "";
}
inline const char* fresh_control_name(FreshControl c) {
  switch (c) {
    case FreshControl::kSkipFlush: return "fresh-skip-flush";
    case FreshControl::kSkipLog: return "fresh-skip-log";
    case FreshControl::kSkipLoggedFlush: return "fresh-skip-logged-flush";
    case FreshControl::kSkipVouch: return "fresh-skip-vouch";
    case FreshControl::kSkipVouchCheck: return "fresh-skip-vouch-check";
    case FreshControl::kNone: break;
  }
  return "";
}

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
  // softwrap engines: DRAM a wrap may hold for its new values before it
  // spills (writes in place with undo records; engine/spill.h).
  uint64_t spill_bytes = uint64_t{64} << 20;
  uint32_t lanes = 32;
  uint64_t lane_size = 0;
  uint32_t flags = 0;
  // SOFTWRAP_WCL set SW_CONFIG_WCL / SW_CONFIG_NO_WCL (or cleared both):
  // sw_pool_wcl says so.
  bool wcl_from_env = false;
  // With SW_CONFIG_WCL: the engines compare word stores and ranges of any
  // size, not only ranges of a page or more (kWclRangeMinBytes).  Cleared
  // by the x86 and msync media's default (a store's compare costs more than
  // the log it saves there; a page's does not).
  bool wcl_words = true;
  // Bytes of the pool a slot of the alias filter covers (alias_filter.h;
  // SOFTWRAP_ALIAS_FILTER_GRANULE, a power of two 64..65536): finer slots
  // send fewer loads of a written line's neighbours to the library, coarser
  // ones keep the filter smaller in the cache and a range's check shorter.
  uint32_t filter_granule = 64;
  // Internal knob for a crash simulator control (never set from sw_config
  // or the environment; see docs/crash-simulator.md): recovery accepts redo
  // frames without a valid trailer (count and checksum) — a deliberately
  // broken variant.
  bool redo_skip_commit_validation = false;
  //   wcl_misread_pairs: recovery applies each half of a write-combined PAIR
  //     record to its whole word — a deliberately broken variant.
  bool wcl_misread_pairs = false;
  // Growth (sw_config.max_size, SOFTWRAP_POOL_MAX).  At create: the pool's
  // maximum size; 0 = its size (it does not grow).  At open: a new maximum
  // (recorded in the pool); 0 = keep the recorded one.  kUnlimitedPoolSize:
  // as far as the file system allows.
  uint64_t max_size = 0;
  // Address range reserved at open for a pool without a finite maximum:
  // at most this (SOFTWRAP_POOL_RESERVE), and at most the file system's
  // size (the pool can never outgrow its file system).
  uint64_t reserve_limit = kDefaultReserveLimit;
  // Internal knob for a crash simulator control (never set from sw_config
  // or the environment): growth skips the fence between formatting a zone
  // and persisting the size that covers it — a deliberately broken variant.
  bool grow_skip_zone_fence = false;
  // Internal knob for crash simulator controls (never set from sw_config
  // or the environment): a wrap's fresh blocks (written in place, fresh.h)
  // are not flushed (kSkipFlush); where the redo engines log them in the
  // frame, not logged (kSkipLog) or logged but not flushed
  // (kSkipLoggedFlush); where they vouch for larger blocks, neither vouched
  // for nor fenced (kSkipVouch), or recovery does not check what the frame
  // vouched for (kSkipVouchCheck) — deliberately broken variants.
  FreshControl fresh_control = FreshControl::kNone;
  // softwrap: threads that write retired tables home (SOFTWRAP_RETIRE_THREADS,
  // 1..8): the retirement thread and retire_threads - 1 more that claim
  // chunks beside it (alias_ring.h).
  uint32_t retire_threads = 1;
  // Internal knobs for the crash simulator (never set from sw_config or
  // the environment): inline retirement (SW_CONFIG_NO_RETIRE_THREAD)
  // writes a seeded few chunks per step, so that committing wraps help
  // with the rest (retire_stepwise); and a deliberately broken variant in
  // which a helping commit also writes its own wrap's words home before its
  // commit fence (HelpControl::kOwnBeforeCommit).
  bool retire_stepwise = false;
  HelpControl help_control = HelpControl::kNone;
  // Internal knob for a crash simulator control: retirement's kept home
  // runs (MediumProperties::home_runs) written after its fence, not before
  // (home_writer.h) — a deliberately broken variant.
  bool home_runs_late = false;
  // Internal knob for a crash simulator control: the bytes a wrap changed
  // through sw_modify are not logged — the redo engines write them home at
  // commit before the commit record, undo stores to them without saving
  // their old bytes (engine/objects.h) — a deliberately broken variant.
  bool objects_unlogged = false;
  // Internal knob for a crash simulator control: the allocator's words
  // (run heads, block headers) stored home in place, not through the
  // engine, so they are neither logged nor undone — a deliberately broken
  // variant (ThreadCtx::store64).
  bool alloc_unlogged = false;
  // Shared pools (SW_CONFIG_SHARED): how long an open, an implicit write
  // session (a wrap opened without write access) and sw_pool_refresh wait
  // for another handle to give write access up (SOFTWRAP_SHARE_WAIT_MS).
  uint32_t share_wait_ms = 10000;
  // Internal knob for a crash simulator control (never set from sw_config
  // or the environment): giving write access up skips making the handle's
  // commits home (quiesce) — a deliberately broken variant.
  bool share_skip_quiesce = false;
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
  // open() validates the header, the durable size and every zone and
  // writes nothing; cfg supplies max_size and reserve_limit.
  static std::unique_ptr<PoolFile> create(const std::string& path, size_t size,
                                          const ResolvedConfig& cfg);
  static std::unique_ptr<PoolFile> open(const std::string& path, const ResolvedConfig& cfg = {});
  // In-memory pools (crash simulator, fuzzer): no file, no lock, no
  // mapping of our own.  `capacity` bytes at `base` hold the pool and room
  // for it to grow (the maximum is capped at capacity).  attach() validates
  // the pool at `base` like open() does; format() lays out a new pool of
  // `size` bytes (uuid from `uuid`, or random if nullptr) in zeroed bytes
  // and attaches it.  The memory must outlive the PoolFile and is not
  // freed by it.  is_dax() is true: there is no file to msync, so the x86
  // medium is the one that applies.
  static std::unique_ptr<PoolFile> attach(void* base, size_t capacity, const ResolvedConfig& cfg = {});
  static std::unique_ptr<PoolFile> format(void* base, size_t capacity, size_t size, const ResolvedConfig& cfg,
                                          const uint8_t* uuid = nullptr);
  // Validates a header image (used by open and by the fuzzer): 0 or the
  // SW_E* code open() would give, with a message.  *upgrade (if given) is
  // set when the pool must be brought to the current layout version at
  // bind(): a version-1 header, or one whose upgrade a crash interrupted.
  static int validate_header(const void* data, size_t file_size, bool* upgrade = nullptr);

  // Binds the medium through which every later write of the pool layer
  // goes (growth; the in-place upgrade of a version-1 pool and a new
  // maximum size, which are written here), and trims a file tail that an
  // interrupted growth left past the durable size.  Call once, after
  // open/attach and before recovery.  0 or SW_EIO.
  int bind(Medium* medium);

  const std::string& path() const { return path_; }
  char* base() const { return base_; }
  // The durable size: zones cover [0, size()).  Grows; never shrinks.
  size_t size() const { return size_.load(std::memory_order_acquire); }
  // A word that follows size() - below (the pool's sw_pool_hot::span: the
  // heap's size): set now and again by every growth, after the new zone is
  // mapped and formatted.
  void mirror_size(uint64_t* to, uint64_t below) {
    size_mirror_ = to;
    mirror_below_ = below;
    __atomic_store_n(to, size() - below, __ATOMIC_RELEASE);
  }
  size_t initial_size() const { return header().pool_size; }
  // How far this open may grow the pool: min(its maximum, the reserved
  // address range).  Addresses in [base, base + max_size()) are ours.
  size_t max_size() const { return max_size_; }
  // The maximum recorded in the pool (kUnlimitedPoolSize or bytes).
  uint64_t size_limit() const { return limit_; }
  bool is_dax() const { return is_dax_; }
  // The pool is a device-DAX character device (devdax.h): mapped in pieces
  // of its alignment, never resized, made durable by CPU flushes (msync
  // does nothing there).
  bool on_device() const { return devdax_; }
  // Opened with SW_CONFIG_READONLY (the file is never written).
  bool read_only() const { return read_only_; }
  // Whether the heap's chunks are known to hold zeros at open: the pool was
  // created by this PoolFile (create() zero-fills the file), so only what
  // this process writes can have made a chunk non-zero.
  bool heap_zero_at_open() const { return created_zeroed_; }
  // Whether a zone added by grow() holds zeros (a file extended by
  // ftruncate; not the caller's memory of an attached pool).
  bool grows_zeroed() const { return !attached_; }
  const PoolHeader& header() const { return *reinterpret_cast<const PoolHeader*>(base_); }

  PoolMeta* meta() const { return reinterpret_cast<PoolMeta*>(base_ + header().meta_offset); }
  LaneHeader* lane_header(uint32_t lane) const {
    return reinterpret_cast<LaneHeader*>(base_ + header().lane_table_offset) + lane;
  }
  char* lane_base(uint32_t lane) const {
    return base_ + header().log_offset + uint64_t{lane} * header().lane_size;
  }

  // Zones and chunks: the one place that knows where chunk c is.  All of
  // these may be called from any thread, also while another one grows the
  // pool (a zone is published before the size that covers it).
  uint32_t zone_count() const { return zone_count_.load(std::memory_order_acquire); }
  const Zone& zone(uint32_t i) const { return zone_blocks_[i / kZonesPerBlock][i % kZonesPerBlock]; }
  uint32_t chunk_count() const { return chunk_count_.load(std::memory_order_acquire); }
  // REQUIRES: c < chunk_count().
  uint64_t chunk_offset(uint32_t c) const;
  uint64_t head_offset(uint32_t c) const;
  bool zone_starts_at(uint32_t c) const;
  // The chunk holding pool offset `off`, if `off` is in some zone's heap.
  bool chunk_at(uint64_t off, uint32_t* c) const;
  // [off, off + n) lies in the chunks of one zone.
  bool heap_contains(uint64_t off, uint64_t n) const;
  // [off, off + bytes) is whole chunks of one zone (a log extent), bytes > 0.
  bool chunk_run_ok(uint64_t off, uint64_t bytes) const {
    uint32_t c = 0;
    return bytes >= kChunkSize && bytes % kChunkSize == 0 && chunk_at(off, &c) && off == chunk_offset(c) &&
           heap_contains(off, bytes);
  }
  // [off, off + n) may be written by a log record being replayed or rolled
  // back: the root slot of PoolMeta, or inside one zone's chunk heads and
  // chunks (never a header, the watermark, the size, lane headers or lanes).
  bool home_range_ok(uint64_t off, uint64_t n) const;

  // Appends a zone of at least `min_chunks` chunks (the growth policy may
  // make it larger; see kMaxGrowthStep) and returns it in *added.  Durable
  // when it returns.  Serialized: one growth at a time.  0, or SW_ENOSPC
  // (the maximum, the reserved range or the file system is reached: the
  // message says which) or SW_EIO, with nothing changed.  Without a bound
  // medium the pool does not grow (SW_ENOSPC).
  int grow(uint64_t min_chunks, Zone* added);

  bool contains(const void* p, size_t n) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    auto b = reinterpret_cast<uintptr_t>(base_);
    const uint64_t s = size();
    return a >= b && n <= s && a - b <= s - n;
  }
  uint64_t offset_of(const void* p) const { return static_cast<uint64_t>(static_cast<const char*>(p) - base_); }
  char* at(uint64_t off) const { return base_ + off; }

  // msync of the whole mapping (used by the msync medium's drain and close).
  int sync_all();

  // ---- Sharing between processes (SW_CONFIG_SHARED; pool_share.cc,
  // docs/design.md "Pools shared between processes").  The locks are the
  // file's (pool_format.h, kOpenLockByte and kWriteLockByte); an attached
  // pool keeps them in a table of this process keyed by its base address,
  // so several PoolFiles over one memory image behave like processes.
  bool shared() const { return shared_; }
  // After creation: a shared pool's open lock becomes shared (creation
  // held it exclusively).  0 or SW_EIO.
  int share_open_lock();
  // Takes write access: 0, or SW_EBUSY when another handle keeps it
  // longer than wait_ms (0: do not wait), or SW_EIO.
  int lock_write(int wait_ms);
  void unlock_write();
  // Whether another handle (another process, or another handle here) has
  // the pool open.  One system call.
  bool others_open() const;
  // Whether another handle waits for write access (lock_write lets it go
  // first).
  bool others_want() const;
  // The durable size another handle's growth left (PoolMeta::pool_size):
  // maps and validates the zones it added.  0; SW_ENOSPC when the pool
  // grew past the address range this open reserved; SW_ECORRUPT; SW_EIO.
  int follow_growth();
  // Removes a file tail past the durable size (an interrupted growth).
  // REQUIRES: write access (no other handle is growing the pool).
  int trim_tail();
  // Another handle wrote the heap: chunks this one created are no longer
  // known to hold zeros (heap_zero_at_open()).
  void forget_zeroed() { created_zeroed_ = false; }
  // The file descriptor (users that keep byte-range locks of their own on
  // the pool file, from kAppLockBase on); -1 for an attached pool.
  int fd() const { return fd_; }
  // In a forked child: closes the descriptor (the parent keeps its locks;
  // a child holding a reference to its open file description would keep
  // them past the parent's death) and forgets write access.
  void drop_after_fork();

 private:
  static constexpr uint32_t kZonesPerBlock = 64;
  PoolFile() = default;
  int setup(uint64_t initial, const PoolMeta& m, const ResolvedConfig& cfg, uint64_t room);
  int reserve_and_map(uint64_t reserve_limit);
  // create() and open() on a device-DAX character device (devdax.h).
  static std::unique_ptr<PoolFile> create_on_device(const std::string& path, size_t size, const ResolvedConfig& cfg,
                                                    const DevDax& dd);
  // Writes the header of a new pool of `size` bytes laid out as `h`
  // (magic, version, a random uuid, the time, the checksum), makes it
  // durable and loads the zones: the last step of creation.  0 or SW_E*.
  int write_header(PoolHeader h, uint64_t size);
  // Makes [addr, addr + n) of the mapping durable: msync, or on a device
  // CPU flushes and a fence.  0 or SW_EIO.
  int sync_bytes(void* addr, size_t n) const;
  int load_zones();
  // An attached shared pool joins (or leaves) its image's lock table.
  void note_attached_open(bool open);
  void set_wanting(bool on);
  // Zones from `off` (zone `index`, first chunk `first`) up to `end`.
  int load_zones_from(uint32_t index, uint64_t off, uint64_t first, uint64_t end);
  void add_zone(const Zone& z);
  uint32_t zone_of_chunk(uint32_t c) const;
  uint32_t zone_of_offset(uint64_t off) const;
  int extend_file(uint64_t from, uint64_t to);
  int growth_refused(uint64_t min_chunks) const;

  std::string path_;
  int fd_ = -1;
  char* base_ = nullptr;
  uint64_t reserved_ = 0;   // bytes of address space at base_ (attached: the caller's capacity)
  uint64_t file_size_ = 0;  // at open (a longer file's tail is trimmed at bind)
  std::atomic<uint64_t> size_{0};
  uint64_t limit_ = 0;      // recorded (or newly requested) maximum
  uint64_t max_size_ = 0;   // min(limit_, reserved_), page-aligned
  bool is_dax_ = false;
  bool devdax_ = false;         // on_device()
  uint64_t map_align_ = 4096;   // mappings start and end on it (a device's alignment)
  bool attached_ = false;   // memory is the caller's: no munmap
  bool read_only_ = false;  // SW_CONFIG_READONLY: a read-only file, mapped copy-on-write
  bool shared_ = false;     // SW_CONFIG_SHARED
  bool write_locked_ = false;  // this handle holds write access (kWriteLockByte)
  bool wanting_ = false;       // this handle waits for it (kWantLockByte)
  bool created_zeroed_ = false;  // heap_zero_at_open()
  uint64_t* size_mirror_ = nullptr;  // mirror_size()
  uint64_t mirror_below_ = 0;
  bool upgrade_ = false;    // bind() brings an older pool to kLayoutVersion
  bool limit_changed_ = false;  // bind() records limit_
  bool skip_zone_fence_ = false;  // ResolvedConfig::grow_skip_zone_fence
  Medium* medium_ = nullptr;
  std::mutex grow_mu_;
  std::atomic<uint32_t> zone_count_{0};
  std::atomic<uint32_t> chunk_count_{0};
  // Zones in blocks that never move, so readers need no lock: a block and
  // its entries are written before zone_count_ is released.
  std::unique_ptr<Zone[]> zone_blocks_[kMaxZones / kZonesPerBlock];
};

}  // namespace softwrap

#endif  // SOFTWRAP_POOL_POOL_H_
