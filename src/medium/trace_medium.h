// trace_medium.h — the crash simulator's medium: do the real thing to the
// volatile image, and record every persistence event.
//
// TraceMedium applies each operation to the mapping it was made for (the
// *volatile* image: what the CPU caches would hold) and, while its Trace is
// recording, appends an event for it: thread, kind, pool offset, bytes and
// the thread's current call-site label (trace_label.h).  The global order
// of events is the order of the calls; the simulator reads it as the
// coherence order of each cache line.  Nothing is flushed for real.
//
// Events are cut to the granularity of the persistency model:
//   kStore   one per piece of a temporal write inside one aligned 8-byte
//            word (mask says which bytes) — larger writes tear at 8-byte
//            boundaries, pieces in increasing address order (the order of
//            memcpy; documented in docs/crash-simulator.md);
//   kStream  one per aligned 8-byte word of a non-temporal stream; like
//            the x86 medium, unaligned head and tail bytes of a stream are
//            temporal stores followed by a flush of their line;
//   kFlush   a run of cache lines (off = first line, aux = line count);
//   kFence, kDrain (drain = a fence by every thread; kFence's aux is its
//            FenceKind);
//   kMark    a point the workload driver marks (aux = its marker index);
//   kLoad    a load of pool memory by an engine (off = first byte, aux =
//            bytes), only when the trace was started with loads on.
//
// Two details are off unless TraceOptions asks for them (the crash
// simulator needs neither; the Themis hardware simulator needs both):
//   loads  engines report their loads of pool memory through
//          Medium::load(); recorded as kLoad events.
//   work   each event carries `work`: the time the recording thread spent
//          *outside* the medium since its previous event, in ticks of the
//          time-stamp counter (TSC; Trace::work_ticks_per_ns() converts) —
//          cycles measured on the real run, not instructions counted (this
//          machine's VM exposes no instruction counter), less the cost of
//          reading the counter (calibrated once).  The medium's own
//          time (copying, journaling, recording, waiting for the trace's
//          lock) is left out: a span starts when an operation enters the
//          medium and ends when it leaves, and only the time between spans
//          is work.  An operation that records several events (a write cut
//          into words) gives its gap to the first of them.
//
// A WriteJournal, when given, saves the bytes each write overwrites, so a
// caller can take the writes back (the simulator runs recovery on a crash
// image, checks it, and reverts it).
#ifndef SOFTWRAP_MEDIUM_TRACE_MEDIUM_H_
#define SOFTWRAP_MEDIUM_TRACE_MEDIUM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "medium/medium.h"

namespace softwrap {

enum class TraceKind : uint8_t { kStore, kStream, kFlush, kFence, kDrain, kMark, kLoad };

struct TraceEvent {
  TraceKind kind;
  uint8_t thread;   // dense index of the recording thread in its Trace
  uint32_t aux;     // kFlush: line count; kMark: marker index; kFence: FenceKind; kLoad: bytes
  uint64_t off;     // kStore/kStream: aligned word offset; kFlush: first line; kLoad: first byte
  uint64_t mask;    // kStore/kStream: bytes of the word written (0xFF each)
  uint64_t val;     // kStore/kStream: the word's new bytes (under mask)
  const char* label;
  uint32_t work = 0;  // TSC ticks of the thread's work before it (TraceOptions::work)
};

struct TraceOptions {
  bool loads = false;  // record kLoad events
  bool work = false;   // measure TraceEvent::work
  // Keep only each event's work (works()), not the events: 4 bytes an
  // event instead of 48, so the recording disturbs the caches of the
  // program it times much less.  A deterministic program run twice, once
  // for its events and once for its work, gets both (themis/workload_trace).
  bool work_only = false;
};

// An append-only list of events.  Recording threads are numbered densely in
// order of first appearance (at most 255).  Appends are serialized by a
// mutex, so several threads may record (the workloads run one at a time).
class Trace {
 public:
  // Starts (or resumes) recording with the given details.
  void start(TraceOptions o = {});
  void stop() { recording_ = false; }
  bool recording() const { return recording_; }
  bool records_loads() const { return opts_.loads; }
  bool records_work() const { return opts_.work; }
  // TSC ticks per nanosecond, calibrated once per process when a trace is
  // first started with work on (0 before).
  double work_ticks_per_ns() const { return ticks_per_ns_; }
  void clear();

  void add(TraceKind kind, uint64_t off, uint64_t mask, uint64_t val, uint32_t aux = 0);
  // The medium brackets each operation with these (nested spans count as
  // one): the first event added inside a span carries the work since the
  // thread's previous span ended.  No-ops unless recording work.
  void span_begin();
  void span_end();
  // Appends a kMark event labelled `label` and returns its position.
  size_t mark(uint32_t marker, const char* label);

  const std::vector<TraceEvent>& events() const { return events_; }
  // With TraceOptions::work_only: each event's work, in event order.
  std::vector<uint32_t> take_works() {
    std::lock_guard<std::mutex> g(mu_);
    return std::move(works_);
  }
  // Moves the events out (the trace is empty after).
  std::vector<TraceEvent> take_events() {
    std::lock_guard<std::mutex> g(mu_);
    return std::move(events_);
  }
  size_t threads() const { return thread_ids_.size(); }

 private:
  uint8_t thread_index();
  bool recording_ = false;
  TraceOptions opts_;
  double ticks_per_ns_ = 0;
  uint64_t overhead_ = 0;  // ticks of reading the clock, taken off each gap
  uint64_t recording_id_ = 0;  // which start(): work never spans two
  std::mutex mu_;
  std::vector<TraceEvent> events_;
  std::vector<uint32_t> works_;
  std::vector<uint64_t> thread_ids_;
};

// Saved bytes of overwritten ranges, in write order.
class WriteJournal {
 public:
  void save(const char* base, uint64_t off, size_t n);
  // Restores every saved range, newest first, and clears the journal.
  void revert(char* base);
  void revert_to(char* base, size_t entries);  // undo entries [entries, size())
  void clear();
  size_t size() const { return offs_.size(); }
  uint64_t off(size_t i) const { return offs_[i]; }
  uint32_t len(size_t i) const { return lens_[i]; }

 private:
  std::vector<uint64_t> offs_;
  std::vector<uint32_t> lens_;
  std::vector<size_t> at_;
  std::vector<unsigned char> bytes_;
};

class TraceMedium final : public Medium {
 public:
  // [base, base+len) is the volatile image; events are recorded into
  // `trace` (may be nullptr: journal only) while it is recording; writes
  // are saved in `journal` when it is not nullptr.  Writes outside the
  // image are performed but neither recorded nor journaled; extend() moves
  // the image's end when the pool grows.  Loads are recorded when the
  // trace is started with TraceOptions::loads.
  TraceMedium(void* base, size_t len, Trace* trace, WriteJournal* journal);

  const MediumProperties& properties() const override { return props_; }
  void write(void* dst, const void* src, size_t n) override;
  void store(void* dst, uint64_t v, unsigned size) override;
  void flush(const void* addr, size_t n) override;
  void stream(void* dst, const void* src, size_t n) override;
  void fence(FenceKind kind) override;
  void drain() override;
  void extend(size_t len) override { len_.store(len, std::memory_order_release); }
  void open_in_place(void* dst, size_t n) override;
  void close_in_place(const void* dst, size_t n) override;
  // Declare MediumProperties::home_runs (the page-cache model's runs).
  void set_home_runs(bool on) { props_.home_runs = on; }
  // The cpu-cache form (medium.h), as the x86 medium has it: flushes are
  // not recorded, streams are recorded as temporal stores (kTemporal) or
  // streamed words, and fences the form does not issue are not recorded.
  // cc.drop_needed_fences drops the fences the form's rules keep (a
  // control).  Set before the first operation.
  void set_cpu_cache(const CpuCacheForm& cc);

 protected:
  void on_load(const void* addr, size_t n) override;

 private:
  class SpanGuard;
  bool inside(const void* p, size_t n) const;
  void record_bytes(TraceKind kind, uint64_t off, const unsigned char* src, size_t n);
  void temporal(void* dst, const void* src, size_t n);

  MediumProperties props_;
  CpuCacheForm cc_;
  char* base_;
  std::atomic<size_t> len_;  // grows with the pool (extend)
  Trace* trace_;
  WriteJournal* journal_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_TRACE_MEDIUM_H_
