// driver.h — the crash simulator's Driver, which records what the state of
// the programs it runs must be at every crash point (golden states), and
// the registry of those programs (its workloads: deterministic programs
// that run through the public C API).  Not the benchmark workloads of
// workloads/workload.h: these exist to be crashed, not timed.
//
// Approach.  A workload is a seeded function that opens, stores, writes,
// allocates, frees, nests and aborts wraps through sw_* calls.  It calls
// them through a Driver, which keeps a DRAM mirror of every byte the
// workload owns (regions it declared at setup and objects it allocated) and
// the number of live allocations.  At each outermost open the driver saves
// the mirror as the wrap's "before" golden state; at close it saves "after"
// (for an abort, after = before).  It also marks the trace at every wrap
// boundary, so the simulator knows, at each crash point, which golden
// states are legal: before or after for a wrap whose close has not
// returned, after once it has.  The golden states come from the mirror,
// never from the engine, and loads through the API are checked against it.
//
// Each driver is one *owner*: one thread, its own bytes.  The two-thread
// workload runs two real threads with disjoint words in shared cache lines,
// strictly one step at a time in a seeded order (a baton), so the trace is
// deterministic and the owners' golden states are independent.
//
// External wraps.  Code under test may open and close wraps itself (the
// SQLite VFS opens one at a transaction's first write and closes it at the
// commit).  With set_external_wraps(true) the driver's open/close/abort
// only mark the boundaries and save the golden states around that code;
// the workload re-declares what it owns (own) before close.
#ifndef SOFTWRAP_CRASHSIM_DRIVER_H_
#define SOFTWRAP_CRASHSIM_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crashsim/model.h"
#include "medium/trace_medium.h"
#include "softwrap/softwrap.h"

namespace softwrap::crashsim {

// A byte range the workload owns and its content.
struct Extent {
  uint64_t off;
  std::vector<unsigned char> bytes;
};

struct Golden {
  std::vector<Extent> extents;
  uint64_t live_allocs;  // live allocations in the whole pool
};

struct Marker {
  enum Kind : uint8_t { kOpen, kClose, kPoint };
  Kind kind;
  uint32_t owner;
  uint32_t before;  // golden ids: kOpen: before/after of the wrap
  uint32_t after;   // kClose: the state now
};

// What the drivers of one run record: trace, golden states, markers.
struct Recording {
  Trace trace;
  bool home_runs = false;  // the trace medium declares home_runs (page-cache model)
  CpuCacheForm cpu_cache;  // the trace medium's cpu-cache form (SimOptions::cpu_cache)
  std::vector<Golden> goldens;
  std::vector<Marker> markers;
  std::vector<uint32_t> initial;  // per owner: golden at trace start
  std::string error;              // first API misbehaviour seen by a driver
  size_t error_event = 0;         // the trace's length when it was seen
};

class Driver {
 public:
  Driver(sw_pool* p, Recording* rec, uint32_t owner);

  // Setup (before tracing): declares [addr, addr+n) as owned, with its
  // current content.
  void own(void* addr, size_t n);
  // Saves the initial golden state of this owner (after setup).
  void start();

  void open();
  void close();
  // Ends the wrap without its changes.  With external wraps: checks that
  // the owned bytes are back to the state before it.
  void abort();
  // Ends the outermost wrap: abort() with `percent` % chance, else close().
  void close_or_abort(Rng& rng, unsigned percent) { rng.chance(percent) ? abort() : close(); }
  int depth() const { return depth_; }
  // Wraps are opened and closed by the code the workload calls, not by the
  // driver (see above).
  void set_external_wraps(bool on) { external_ = on; }
  // The golden id of this owner's state as of its last outermost wrap
  // boundary (start; open: the state before; close; abort): the ids
  // Workload::check_image receives.
  uint32_t state() const { return state_; }
  // Records a misbehaviour the workload saw (the run then fails).
  void fail(const std::string& what);
  void store(void* addr, uint64_t v, unsigned size);
  void write(void* addr, const void* src, size_t n);
  void write_whole(void* addr, const void* src, size_t n);  // sw_write_whole
  // sw_memset of owned bytes.
  void memset(void* addr, int c, size_t n);
  // sw_modify of owned bytes: returns the writable view and checks that it
  // starts as the mirror's bytes.  The workload writes through the view
  // with plain stores and reports each change with wrote().  The view is
  // valid until the wrap ends or a modify() overlapping its object without
  // lying inside it (softwrap.h, "Object writes").  check_start false:
  // the bytes are an unzeroed block's, allocated in this wrap (alloc), not
  // yet written: nothing to compare.
  void* modify(void* addr, size_t n, bool check_start = true);
  // The workload changed [addr, addr+n) through a view of modify():
  // `view` points at the view's bytes for addr; the mirror takes them.
  void wrote(void* addr, const void* view, size_t n);
  uint64_t load64(void* addr);
  // Aligned 1/2/4/8-byte load and byte-range read of owned bytes, checked
  // against the mirror like load64.
  uint64_t load(const void* addr, unsigned size);
  void read(void* dst, const void* src, size_t n);
  // Allocates n bytes and owns the first `owned` (default all); the
  // workload must write all owned bytes in the same wrap.
  void* alloc(size_t n, size_t owned = SIZE_MAX);
  // sw_pzalloc: owns the whole block, zero.
  void* zalloc(size_t n);
  // Owns [addr, addr+n) of a block allocated in the open wrap, beside what
  // alloc owned (a part further in): zero in the mirror, so the workload
  // must write all of it in the same wrap unless the block was zalloc'd.
  void own_new(void* addr, size_t n);
  // Frees the block and forgets every owned region inside it.
  void free(void* addr);
  // sw_pmalloc_slot / sw_pzalloc_slot / sw_pfree_slot: allocate (zeroed:
  // the block is owned; else none of it until written) or free and store
  // the offset into the owned word *slot, in the open wrap or — with none
  // open — in a wrap of their own, whose boundaries the driver marks.
  // Unzeroed blocks own their first `owned` bytes, which the workload must
  // write in the same wrap.
  void* alloc_slot(void* slot, size_t n, bool zero, size_t owned = 0);
  void free_slot(void* slot);
  // Records a live allocation made by code under test (with external
  // wraps, between open and close): owns its first n bytes, all zero.
  void adopt_zeroed(void* addr, size_t n);
  void set_live(uint64_t n) { live_ = n; }
  uint64_t live() const { return live_; }
  // Forgets every owned region (a workload that re-declares its regions
  // with own() after each change, such as the btree workload).
  void disown_all() { mirror_.clear(); }
  // After the trace stopped: ends a wrap the workload left open (the trace
  // ends inside it: a crash before its commit) or one a handle that died
  // had open (die()), untraced and unmarked, so that the pool can close.
  // REQUIRES: the thread that opened it.
  void end_open_wrap();
  sw_pool* pool() const { return p_; }

  // Several handles of one pool (Workload::handles > 1, each another
  // "process": share_workload.h).  Every handle the simulator opened,
  // [0] first (the one the driver starts with).
  const std::vector<sw_pool*>& handles() const { return handles_; }
  void set_handles(std::vector<sw_pool*> h) { handles_ = std::move(h); }
  // The calls that follow go through handle p (one of handles()): the
  // owner's history continues in another process.  REQUIRES: no wrap open.
  void use(sw_pool* p);
  // The process of the current handle dies: it makes no call on the handle
  // again.  A wrap it had open never commits: it ends here in the golden
  // bookkeeping as an abort does (the state before it, only), without an
  // API call, and in the library after the trace: end_open_wrap calls
  // end_wrap, which must abort it on the thread that opened it (and keeps
  // that thread until then).  What the kernel would do (release the dead
  // process's locks) is the workload's to emulate.
  void die(std::function<void()> end_wrap);

 private:
  unsigned char* mirror_at(uint64_t off, size_t n);
  uint32_t snapshot();

  sw_pool* p_;
  Recording* rec_;
  uint32_t owner_;
  std::map<uint64_t, std::vector<unsigned char>> mirror_, saved_;
  uint64_t live_ = 0, saved_live_ = 0;
  int depth_ = 0;
  uint32_t open_marker_ = 0;
  uint32_t before_ = 0;
  uint32_t state_ = 0;
  bool external_ = false;
  std::vector<sw_pool*> handles_;
  std::vector<std::function<void()>> dead_wraps_;  // die(): wraps dead handles left open
};

// What Workload::check_image learns about one owner of a crash image:
// the golden states it may legally be in (equal once its wrap's close had
// returned) and the one its bytes matched.
struct ImageState {
  uint32_t before, after;
  uint32_t matched;
};

// Pool configuration and the program.
struct Workload {
  const char* name;
  const char* what;
  uint32_t alias_entries;     // small tables force switches
  uint32_t retire_divisor;
  uint32_t shadow_page_size;
  uint32_t max_alias_tables;
  uint32_t owners;            // threads
  // Setup (not traced): allocates and declares the owned regions of each
  // driver.  Then run: `size` is the number of wraps (roughly).  run may
  // return with a wrap of the calling thread still open: the trace ends
  // inside it (a crash before its commit) and the simulator then ends it,
  // untraced (Driver::end_open_wrap).
  void (*setup)(std::vector<Driver*>& d, Rng& rng);
  void (*run)(std::vector<Driver*>& d, Rng& rng, uint32_t size);
  // Optional: a check of each crash image through the public API, after
  // the oracle's own checks passed (simulator.h).  `p` is the recovered
  // image opened as a pool in place; whatever it writes is taken back with
  // recovery's writes.  `owners[o]` holds owner o's golden ids.  Runs
  // after `run` of the same Simulator::run, so a workload may keep what it
  // needs per golden id.  Returns "" or why the image is wrong.
  std::string (*check_image)(sw_pool* p, const std::vector<ImageState>& owners) = nullptr;
  // The softwrap engines' per-wrap DRAM budget before a wrap spills
  // (engine/spill.h); negative: the library's default.
  int64_t spill_bytes = -1;
  // sw_config flags of its pools besides the simulator's (SW_CONFIG_WCL).
  uint32_t flags = 0;
  // The pool's maximum size (sw_config.max_size; at most 64 MiB): it starts
  // at 8 MiB and grows up to this.  0: it does not grow.
  uint64_t max_size = 0;
  // Inline retirement writes a seeded few chunks per step and committing
  // wraps claim the rest (ResolvedConfig::retire_stepwise; help_workload.h).
  bool retire_stepwise = false;
  // Handles the simulator opens on the pool, each another "process" (the
  // pool is opened with SW_CONFIG_SHARED when more than one; their locks
  // are the attached image's, pool_share.cc): Driver::handles().  They all
  // record into the trace; their opens, before setup, are untraced.
  uint32_t handles = 1;
};

// The root most workloads use: kRootSize bytes, all owned by driver 0
// (own_root, a Workload::setup).
inline constexpr size_t kRootSize = 4096;
char* root(Driver& d);
void own_root(std::vector<Driver*>& d, Rng& rng);

// The simulator's own workloads (the suite's default set).
const std::vector<Workload>& workloads();
// By name: these, then the fresh-memory workloads (fresh_workload.h), the
// workloads of commits that help retirement (help_workload.h), those of a
// pool several handles share (share_workload.h), then the shared workloads
// (paper_workloads.h).
const Workload* find_workload(const std::string& name);

}  // namespace softwrap::crashsim

#endif  // SOFTWRAP_CRASHSIM_DRIVER_H_
