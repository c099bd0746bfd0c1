// medium.h — how bytes reach persistence.
//
// Every write to pool memory goes through a Medium, so that emulation
// (scm-emu) and crash simulation (trace) see every persistent store.  The
// interface is PMDK's pmem_ops in C++ clothes: temporal writes, cache-line
// flushes, non-temporal streams, and a persist fence.  A Medium is bound
// once at pool open; CPU-specific choices (clwb vs clflushopt vs clflush)
// are made once, from CPUID, when the x86 medium is constructed.
//
// Semantics (the x86 ADR model the engines are written against):
//   write(dst,src,n)  temporal stores; may persist at any time, in any order
//                     across cache lines, until flushed and fenced.
//   flush(addr,n)     write back every cache line overlapping [addr,addr+n);
//                     durable at this thread's next fence().
//   stream(dst,src,n) non-temporal stores; durable at this thread's next
//                     fence().  Callers pass whole, 64-byte-aligned lines
//                     on hot paths (the log); other shapes are legal.  Like
//                     lines in a write-combining buffer, the bytes may be
//                     held back — not even visible at dst — until this
//                     thread's next fence() or publish_streams() (msync
//                     stages them and writes them to the file with pwrite).
//   publish_streams() this thread's streamed bytes visible at their
//                     addresses (not durable): before a thread reads back
//                     what it streamed without a fence (a rollback reading
//                     its undo records) or gives up memory it streamed to
//                     without one (an abandoned redo frame's lane, which
//                     another thread may take next: held-back bytes written
//                     later would land on that thread's frame).
//   fence(kind)       persist barrier: everything this thread flushed or
//                     streamed before is durable before anything after.  On
//                     scm-emu this is the papers' pcommit (drain + Ts).
//   drain()           all threads' flushed/streamed data durable (close).
// Loads do not go through the medium: pool memory is read directly.  An
// engine only *reports* each load of pool memory, through a LoadTap (below):
// one predictable branch on a flag in the engine's own object unless the
// medium records loads (only the trace medium does, for the Themis
// simulator's traces).
#ifndef SOFTWRAP_MEDIUM_MEDIUM_H_
#define SOFTWRAP_MEDIUM_MEDIUM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/counters.h"
#include "softwrap/softwrap.h"

namespace softwrap {

inline constexpr size_t kCacheLine = 64;

inline uintptr_t line_down(uintptr_t a) { return a & ~uintptr_t{kCacheLine - 1}; }
inline uintptr_t line_up(uintptr_t a) { return (a + kCacheLine - 1) & ~uintptr_t{kCacheLine - 1}; }

// Declared once by each medium; the core never sniffs for them again.
// What a medium makes of write-combined logging by default.
enum class WclDefault : uint8_t {
  kOff,     // no compare
  kRanges,  // sw_write ranges of a page or more compared (kWclRangeMinBytes), stores logged whole
  kAll,     // every store and range compared
};

struct MediumProperties {
  const char* name = "";       // "x86", "msync", "scm-emu", "trace"
  const char* flush_insn = "";  // "clwb", "clflushopt", "clflush", "none"
  bool auto_flush = false;      // caches are in the persistence domain (eADR)
  bool emulated_timing = false;  // scm-emu: flushes/streams cost Tw per line
  size_t atomic_width = 8;      // largest power-fail-atomic aligned store
  // A non-temporal store persists before every later temporal store of the
  // same thread, fence or not (the Themis rule, Eq. 3).  No x86 CPU
  // promises it; the trace medium declares it because the order is the
  // crash simulator's persistency model's to decide (its x86 model must
  // catch undo-themis).  Required by the undo-themis engine.
  bool themis_rule = false;
  // Persistence is by page write-back (msync on a file not on DAX): what a
  // commit must make durable costs a page write (and a write-protect, and a
  // fault at the next store) per scattered page, so small blocks a wrap
  // allocates are cheaper logged — contiguous in the lane — than written in
  // place (kFreshInPlaceMin, api/c_api.cc).
  bool syncs_pages = false;
  // Retirement's home writes are cheaper kept and written as whole runs
  // with write_through() than stored word by word (msync: a pwrite per run
  // leaves the page unwritable in the page tables; home_writer.h).  The
  // trace medium declares it under the crash simulator's page-cache model,
  // so that the order those writes then take is what the model checks.
  bool home_runs = false;
  // Where write-combined logging pays by default (SW_CONFIG_WCL unless the
  // pool says otherwise; c_api.cc, wcl_policy()): where a line the log does
  // not write saves more than the compare costs.  x86 and msync: ranges of
  // a page or more only (kWclRangeMinBytes: a page SQLite rewrites changes
  // a few words and its compare pays on every medium measured, TPC-C on the
  // VFS 1.10x-1.14x on x86 and 1.17x-1.23x on msync; a word store's or a
  // small range's compare costs more than the log it saves where a line
  // write costs a few nanoseconds); scm-emu: everything when Tw is at least
  // kWclMinLineNs (a streamed line costs Tw), else as x86.  The trace
  // medium: off (the crash simulator sets WCL per workload itself).
  WclDefault wcl_default = WclDefault::kOff;
};

// The line write cost (ns) from which the scm-emu medium compares word
// stores too by default: between DRAM (a few ns per streamed line, where a
// word store's compare was measured to cost more than it saves) and the
// papers' NVRAM (600 ns, where softwrap-local and undo gain with it:
// docs/results.md, "Write-combined logging").  Not tuned by a sweep.
inline constexpr uint32_t kWclMinLineNs = 200;

// The cpu-cache form of a medium (docs/media.md, "Persistence domains"):
// the platform's persistence domain includes the CPU caches (eADR, CXL
// global persistent flush), so a store is durable once it is globally
// visible, and x86-TSO makes a thread's temporal stores visible in program
// order.  Then:
//   flush()   issues nothing (a write-back would be wasted work);
//   stream()  writes with temporal stores (kTemporal: they stay in the
//             cache domain and are ordered with every other store of the
//             thread) or non-temporal ones (kNonTemporal: through
//             write-combining buffers, which x86 orders against earlier
//             and later stores only by a fence);
//   fence()   kCommit and kOther are always issued: they take a commit's
//             (or pool metadata's) stores out of the store buffer, so it
//             is durable before the call returns.  The ordering fences
//             (kLogOrder, kDataOrder, kRetire) order one store before
//             another: with temporal streams TSO already does, so they
//             are not issued (counted in fences_elided); with
//             non-temporal streams a streamed word can pass an earlier
//             store or be passed by a later one, so they are issued.
enum class StreamForm : uint8_t { kNonTemporal, kTemporal };

// "temporal" | "non-temporal".
const char* stream_form_name(StreamForm f);
// The cpu-cache form's default: the faster on the machines measured
// (docs/results.md, "The cpu-cache form").
inline constexpr StreamForm kDefaultCpuCacheStreams = StreamForm::kTemporal;
// Parses SOFTWRAP_CPU_CACHE_STREAMS (nullptr or "": the default): "temporal"
// or "non-temporal".  False with *err set for anything else.
bool parse_stream_form(const char* value, StreamForm* out, std::string* err);
// Parses SOFTWRAP_CPU_CACHE_FENCES (nullptr or "": "elide"): "elide" (the
// rules above) or "keep" (issue the ordering fences TSO makes unneeded, as
// on an ADR platform: for measurement, or for a platform whose order one
// does not trust).  False with *err set for anything else.
bool parse_cpu_cache_fences(const char* value, bool* keep, std::string* err);

struct CpuCacheForm {
  bool on = false;
  StreamForm streams = kDefaultCpuCacheStreams;
  bool keep_ordering_fences = false;  // SOFTWRAP_CPU_CACHE_FENCES=keep
  // Control variant for the crash simulator only (the trace medium): the
  // ordering fences dropped with non-temporal streams too, which the rules
  // above say must not be done.
  bool drop_needed_fences = false;

  // Whether a fence of `kind` is issued.
  bool issues(FenceKind kind) const {
    if (!on || kind == FenceKind::kOther || kind == FenceKind::kCommit || keep_ordering_fences) return true;
    return streams == StreamForm::kNonTemporal && !drop_needed_fences;
  }
};

// SOFTWRAP_CPU_CACHE_STREAMS and SOFTWRAP_CPU_CACHE_FENCES into
// out->streams and out->keep_ordering_fences (out->on untouched); false
// with *err set for a bad value.
bool read_cpu_cache_env(CpuCacheForm* out, std::string* err);

struct MediumOptions {
  sw_medium_kind kind = SW_MEDIUM_AUTO;
  // The x86 medium's cpu-cache form (the pool's persistence domain is
  // cpu-cache, detected or SOFTWRAP_PERSISTENCE's promise).  The msync and
  // scm-emu media ignore it: a page cache is not made persistent by the
  // CPU's caches being so, and scm-emu emulates an ADR device.
  CpuCacheForm cpu_cache;
  bool is_dax = false;            // mapping has MAP_SYNC: x86 is safe
  int fd = -1;                    // the mapped file (msync: sync_file_range)
  uint32_t scm_write_ns = 1000;   // Tw
  uint32_t scm_serialize_ns = 220;  // Ts
  uint32_t scm_wc_entries = 8;    // write-combining queue length
  bool scm_shared_queue = false;  // one queue for all threads (else per thread)
};

// A page of zeros, the source of writes of zeros done a page at a time.
alignas(64) inline constexpr unsigned char kZeroPage[4096] = {};

// The aligned 8-byte words [p, p+n) touches (the WCL paper's NVRAM writes).
inline uint64_t words_touched(const void* p, size_t n) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return n == 0 ? 0 : (((a + n + 7) & ~uintptr_t{7}) - (a & ~uintptr_t{7})) / 8;
}

class Medium {
 public:
  virtual ~Medium() = default;
  Medium(const Medium&) = delete;
  Medium& operator=(const Medium&) = delete;

  virtual const MediumProperties& properties() const = 0;

  virtual void write(void* dst, const void* src, size_t n) = 0;
  // Temporal stores of n zero bytes at dst: write() of zeros (the x86 media
  // use memset, which on large ranges writes without reading the lines).
  virtual void zero(void* dst, size_t n);
  // Temporal store of an aligned 1/2/4/8-byte value (fast path of write()).
  virtual void store(void* dst, uint64_t v, unsigned size) = 0;
  virtual void flush(const void* addr, size_t n) = 0;
  virtual void stream(void* dst, const void* src, size_t n) = 0;
  virtual void fence(FenceKind kind) = 0;
  virtual void drain() = 0;
  virtual void publish_streams() {}
  // write() and flush() of [dst, dst+n): durable at this thread's next
  // fence, visible at once.  A medium may write the bytes without storing
  // through the mapping (msync: pwrite, so that the page is not made
  // writable in the page tables); for writers that write many scattered
  // runs they own (retirement's HomeWriter).
  virtual void write_through(void* dst, const void* src, size_t n) {
    write(dst, src, n);
    flush(dst, n);
  }
  // In-place objects (sw_modify under undo and nonatomic): the program
  // stores to [dst, dst+n) itself, with plain stores the medium does not
  // see.  open_in_place() comes before the first of them, close_in_place()
  // after the last (at the wrap's commit or rollback, before the range is
  // flushed).  A medium that journals writes saves the old bytes at open;
  // one that records stores records the range's bytes at close, as
  // temporal stores made then (the crash simulator's model of the
  // program's stores: docs/crash-simulator.md).  The others do nothing.
  virtual void open_in_place(void* dst, size_t n) { (void)dst, (void)n; }
  virtual void close_in_place(const void* dst, size_t n) { (void)dst, (void)n; }
  // The pool grew in place: the mapping the medium was made for now ends at
  // base + len.  Media that keep the mapping's extent (msync: what drain()
  // syncs; trace: what it records) take note; the others need not.  Called
  // by the growing thread before it writes to the new part.
  virtual void extend(size_t len) { (void)len; }

  // Convenience: write, flush (no fence).
  void write_flush(void* dst, const void* src, size_t n) {
    write(dst, src, n);
    flush(dst, n);
  }

  // Reports a load of [addr, addr+n) of pool memory (the caller then reads
  // it directly).  Does nothing on media that do not record loads; hot
  // paths call it through a LoadTap.
  void load(const void* addr, size_t n) {
    if (records_loads_) [[unlikely]] on_load(addr, n);
  }
  bool records_loads() const { return records_loads_; }

 protected:
  Medium() = default;
  virtual void on_load(const void* addr, size_t n) {}
  bool records_loads_ = false;  // set by a medium whose on_load() records
};

// How an engine reports its loads of pool memory: the medium's
// records_loads() copied into the engine's object when it is built (a
// medium decides it in its constructor), so that on every medium but the
// trace medium a load costs one predictable branch on a byte the engine's
// hot path already has in cache, and nothing else (no load of the medium).
class LoadTap {
 public:
  explicit LoadTap(Medium* m) : m_(m), on_(m->records_loads()) {}
  void operator()(const void* addr, size_t n) const {
    if (on_) [[unlikely]] m_->load(addr, n);
  }

 private:
  Medium* m_;
  bool on_;
};

// Creates the medium for a mapping [base, base+len).  kind AUTO picks x86 on
// DAX and msync otherwise.  Returns nullptr and sets the thread error on an
// unsupported request.
std::unique_ptr<Medium> make_medium(const MediumOptions& opts, void* base, size_t len);

// Test seam (LevelDB's EnvWrapper, SQLite's test VFS): a process-wide
// override consulted by make_medium().  While a factory is installed, every
// pool opened in this process gets the medium it returns (nullptr from the
// factory = fail the open, with the thread error set by the factory).
// Install nullptr to restore the normal choice.  The crash simulator
// installs one around opening a pool, so that a workload driven through the
// public C API runs on its trace medium.  Not thread-safe against concurrent
// pool opens: install and remove it while no other thread opens a pool.
using MediumFactory = std::unique_ptr<Medium> (*)(const MediumOptions& opts, void* base, size_t len, void* ctx);
void set_medium_factory(MediumFactory f, void* ctx);

// Name <-> kind ("auto", "x86", "msync", "scm-emu"); false/"?" if unknown.
bool parse_medium_kind(const std::string& s, sw_medium_kind* out);
const char* medium_kind_name(sw_medium_kind k);

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_MEDIUM_H_
