// engine.h — one interface, several ways to make wraps atomic.
//
// The API layer owns nesting (depth counting), the per-thread context and
// argument checking; an Engine sees only outermost begin/commit/rollback and
// the accesses in between, with offsets already validated against the pool.
// Engines are chosen per pool at open (SOFTWRAP_ENGINE overrides):
//   softwrap        global double-buffered alias tables + streamed redo log,
//                   background retirement (full paper, section IV-A)
//   softwrap-local  per-thread alias table, values go home at close (IV-D)
//   undo            undo log, PMDK style (the papers' Undo Log baseline)
//   undo-themis     undo without its non-temporal -> temporal fences (Themis
//                   paper; safe only on media that keep the Themis rule)
//   nonatomic       stores streamed home, one fence at close (baseline, control)
#ifndef SOFTWRAP_ENGINE_ENGINE_H_
#define SOFTWRAP_ENGINE_ENGINE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/counters.h"
#include "engine/fresh.h"
#include "engine/objects.h"
#include "pool/allocator.h"
#include "pool/pool.h"

namespace softwrap {

class Medium;
struct MediumProperties;
class Engine;
class LaneSet;
struct Lane;

struct WrapAction {
  TxAccess::Action fn;
  void* self;
  uint64_t a, b;
};

// A word of the allocator's (a chunk head, a block header) and the value
// the open wrap gives it.
struct HeapWord {
  uint64_t off;
  uint64_t value;
};

// State of one thread on one pool.  Only its thread touches it, except the
// counters (read by sw_pool_stats) and `owned` (thread exit).
struct ThreadCtx final : TxAccess {
  Engine* engine = nullptr;
  int depth = 0;            // wrap nesting depth
  // The engine's part of the outermost wrap has begun (lane held, engine
  // begin done): at its first change, not at sw_wrap_open (c_api.cc,
  // open_outer).  Engines read it where depth used to mean "in a wrap".
  bool begun = false;
  int fail_code = 0;        // != 0: the open wrap failed and was rolled back
  uint32_t lane = ~0u;      // log lane held while a wrap is open
  uint32_t preferred_lane = 0;
  uint64_t wrap_serial = 0;  // outermost wraps begun by this thread
  void* engine_state = nullptr;  // owned by the engine (attach/detach)
  std::atomic<bool> owned{true};
  Counters counters;
  std::vector<WrapAction> commit_actions;
  std::vector<WrapAction> abort_actions;
  std::vector<uint64_t> claims;  // strict mode: words this wrap holds (api/strict.h)
  FreshSet fresh;            // blocks the open wrap allocated and writes in place (fresh.h)
  // The range write in progress replaces unrelated bytes (sw_write_whole):
  // the engines' write() logs and writes it whole, with no compare under
  // SW_CONFIG_WCL (nor does fresh.write: c_api.cc clears fresh.compare).
  bool write_whole = false;
  ObjectSet objects;         // DRAM copies of what the open wrap modifies (sw_modify; objects.h)
  // The allocator's words the open wrap changed, in the order it changed
  // them: they reach the engine together when the wrap commits (c_api.cc,
  // commit_heap_words: one Engine::write_words call), and are
  // dropped if it aborts.  Unused where the engine takes them as they come
  // (batch_heap_words false: Engine::batches_heap_words).
  std::vector<HeapWord> heap_words;
  bool batch_heap_words = true;
  // Crash-simulator control (ResolvedConfig::alloc_unlogged): where the
  // allocator's words go instead of the engine; nullptr normally.
  Medium* alloc_unlogged = nullptr;
  char* alloc_base = nullptr;
  uint64_t commit_seq_ = 0;  // set by the engine's commit (commit_seq())

  bool in_wrap() override { return depth > 0; }
  void store64(uint64_t offset, uint64_t value) override;
  void on_commit(Action fn, void* self, uint64_t a, uint64_t b) override {
    commit_actions.push_back({fn, self, a, b});
  }
  void on_abort(Action fn, void* self, uint64_t a, uint64_t b) override {
    abort_actions.push_back({fn, self, a, b});
  }
  uint64_t commit_seq() override { return commit_seq_; }
  // Whether the open wrap allocated, freed or wrote a fresh block: with no
  // store of its own either, it has nothing to commit (no fence).
  bool used_heap() const { return !commit_actions.empty() || !fresh.empty(); }
  // Runs and clears one list, clearing the other.
  void run_commit_actions();
  void run_abort_actions();
};

// Everything an engine is built from.
struct EngineEnv {
  const ResolvedConfig* cfg;
  PoolFile* pool;
  Medium* medium;
  LaneSet* lanes;
  Allocator* alloc;  // log extents come from the heap
  // Where an engine with an alias filter publishes its live word (the
  // pool's sw_pool_hot::live); nullptr: a word of the filter's own.
  uint32_t* filter_live = nullptr;
  uint64_t* filter_regions = nullptr;  // where the filter keeps its regions (sw_pool_hot::regions), or its own
};

class AliasFilter;

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;

  // Whether a wrap can start in this free lane without waiting (lane
  // acquisition passes over lanes that say no while others are free).
  virtual bool lane_usable(Lane& lane) { return true; }

  // A thread context is first used / is being destroyed.
  virtual void attach(ThreadCtx& ctx) {}
  virtual void detach(ThreadCtx& ctx) {}

  // Outermost open.  ctx.lane is held.  0 or an SW_E* code.
  virtual int begin(ThreadCtx& ctx) = 0;
  // Outermost close: durable when it returns 0.  On failure the wrap has
  // been rolled back.  ctx.lane is released by the caller afterwards.
  virtual int commit(ThreadCtx& ctx) = 0;
  // Outermost abort: discard the wrap's effects (SW_ENOTSUP for nonatomic,
  // whose stores stay, flushed).
  virtual int rollback(ThreadCtx& ctx) = 0;

  // Offsets are validated (in the pool, naturally aligned for load/store).
  // load/read may be called outside a wrap (depth 0).  store/write only in
  // a wrap; on an unrecoverable capacity problem they roll the wrap back,
  // set ctx.fail_code (SW_ETOOBIG) and the thread error.
  virtual uint64_t load(ThreadCtx& ctx, uint64_t off, unsigned size) = 0;
  virtual void store(ThreadCtx& ctx, uint64_t off, uint64_t v, unsigned size) = 0;
  virtual void read(ThreadCtx& ctx, void* dst, uint64_t off, size_t n) = 0;
  virtual void write(ThreadCtx& ctx, uint64_t off, const void* src, size_t n) = 0;
  // n zero bytes at off: write() of zeros, a page at a time (an engine
  // that stores in place does it in one go).
  virtual void zero(ThreadCtx& ctx, uint64_t off, size_t n);
  // sw_peek: whether read(ctx, ., off, n) would copy exactly the home
  // bytes, i.e. nothing the reader must overlay holds any byte of the
  // range.  May answer false when unsure (the caller then reads); never
  // true wrongly.  In-place engines (undo, nonatomic) keep no overlay.
  virtual bool home_visible(ThreadCtx& ctx, uint64_t off, size_t n) { return true; }
  // The alias filter the inline reads consult (softwrap.h, "Inline
  // access"; alias_filter.h), or nullptr for an engine that stores in place
  // (every load may read home).  Raised before any alias a load must see
  // becomes visible, cleared only after its value is home.
  virtual const AliasFilter* filter() const { return nullptr; }

  // Fresh blocks (fresh.h).  Whether bytes that a commit with sequence
  // number seq (ThreadCtx::commit_seq_, AllocInfo::reuse_seq) freed may now
  // be written in place: no log frame up to seq can be replayed and no
  // alias table still holds a value of them.  Engines whose committed
  // wraps leave nothing behind (undo, nonatomic) answer true.
  virtual bool reuse_safe(uint64_t seq) { return true; }
  // sw_modify (objects.h): the program is about to write [off, off+n)
  // with plain stores.  An engine that stores in place (undo, nonatomic)
  // makes the range ready for that and answers true: the program's
  // pointer is then the home bytes.  Undo first logs the range's old bytes
  // and orders them before any of its stores; at commit and at rollback
  // the engine reports the stores to the medium (Medium::close_in_place)
  // and flushes them.  On failure it rolls the wrap back (fail_code).
  // A redo engine answers false: the API layer keeps a DRAM copy.
  virtual bool modify_in_place(ThreadCtx& ctx, uint64_t off, size_t n) { return false; }
  // The open wrap now keeps a DRAM copy of [off, off+n) (ThreadCtx::
  // objects): until the wrap ends, every load of those bytes must reach
  // the library (raise the alias filter's slots of the range).
  virtual void object_made(ThreadCtx& ctx, uint64_t off, size_t n) {}
  // The wrap that made objects ends (after commit or rollback): lower
  // what object_made raised, where the filter counts wraps.
  virtual void objects_ended(ThreadCtx& ctx) {}

  // The allocator's words of a committing wrap (ThreadCtx::heap_words),
  // in the order the wrap changed them (an offset may come twice: the
  // last value wins), before commit().  Each engine makes them part of
  // the wrap as it makes a store; the default stores them one by one.  On
  // failure the wrap is rolled back (fail_code).
  virtual void write_words(ThreadCtx& ctx, const HeapWord* w, size_t n);
  // Whether the allocator's words wait for the commit (write_words):
  // false for an engine that cannot take stores back (nonatomic), which
  // gets them as they are made, so that they stay when the wrap aborts
  // like its other stores.
  virtual bool batches_heap_words() const { return true; }

  // Whether committed bytes reach home by retirement, off the committing
  // thread (the redo engines): then on a medium whose foreground pays per
  // home line (scm-emu) a small fresh block is cheaper aliased and logged
  // like other bytes than written home in place (c_api.cc,
  // kFreshAliasedMax).
  virtual bool retires_home() const { return false; }

  // Whether fresh blocks save anything: false for an engine whose every
  // store already goes home in place (nonatomic), which then writes them
  // itself (known-zero bytes are still not zeroed).
  virtual bool writes_fresh_apart() const { return true; }
  // The open wrap stops writing a block in place (it freed it, and may
  // allocate it again): an engine that remembers values of the wrap's
  // words outside its tables forgets them.
  virtual void fresh_released(ThreadCtx& ctx) {}

  // REQUIRES: no open wraps.  Retire everything home, durable.
  virtual int quiesce() = 0;
  // Makes every wrap this thread committed home (written, flushed, fenced)
  // before returning, while other threads go on opening and committing
  // wraps (sw_pool_publish).  0, or SW_EBUSY if that did not happen within
  // the bounded wait for retirement.  Engines whose commit writes home
  // itself (undo, nonatomic, softwrap-local) have nothing to do.
  virtual int publish(ThreadCtx& ctx) { return 0; }
  // Stop background threads and quiesce; the engine is unusable after.
  virtual int shutdown() = 0;
  // Another handle of the pool (another process sharing it) has written it
  // since this engine's state was built (api/share.cc).  REQUIRES: quiesced
  // (quiesce() returned since this handle last committed), no open wraps,
  // write access held.  Brings what the engine keeps of the pool up to the
  // pool: commit sequence numbers continue above the durable watermark,
  // lanes start empty, undo generations follow the lane headers.  Must not
  // touch the allocator (it was rebuilt first; extents this engine held
  // were given back by quiesce()).
  virtual void resync() {}
  // Adds counters the engine keeps outside thread contexts (retirement).
  virtual void add_stats(sw_stats* out) {}
  virtual void reset_stats() {}
};

// Builds the engine cfg.engine names.  nullptr + thread error on failure.
std::unique_ptr<Engine> make_softwrap_engine(const EngineEnv& env);
std::unique_ptr<Engine> make_local_engine(const EngineEnv& env);
std::unique_ptr<Engine> make_undo_engine(const EngineEnv& env, bool themis);
std::unique_ptr<Engine> make_nonatomic_engine(const EngineEnv& env);
std::unique_ptr<Engine> make_engine(const EngineEnv& env);

// Whether cfg.engine may run on a medium with these properties: 0, or
// SW_ENOTSUP with a message for undo-themis on a medium that does not keep
// the Themis rule without SW_CONFIG_THEMIS_IDEAL.  Called before recovery,
// so a refused pool is never written.
int check_engine_medium(const ResolvedConfig& cfg, const MediumProperties& medium);

// Why the pool had no room, when a space reservation has just said so (the
// thread's error is then SW_ENOSPC: e.g. a pool at its maximum size names
// it), as " (...)" to append to an SW_ETOOBIG message; else "".
std::string space_reason();

}  // namespace softwrap

#endif  // SOFTWRAP_ENGINE_ENGINE_H_
