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
//   kFence, kDrain (drain = a fence by every thread);
//   kMark    a point the workload driver marks (aux = its marker index).
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

enum class TraceKind : uint8_t { kStore, kStream, kFlush, kFence, kDrain, kMark };

struct TraceEvent {
  TraceKind kind;
  uint8_t thread;   // dense index of the recording thread in its Trace
  uint32_t aux;     // kFlush: line count; kMark: marker index
  uint64_t off;     // kStore/kStream: aligned word offset; kFlush: first line
  uint64_t mask;    // kStore/kStream: bytes of the word written (0xFF each)
  uint64_t val;     // kStore/kStream: the word's new bytes (under mask)
  const char* label;
};

// An append-only list of events.  Recording threads are numbered densely in
// order of first appearance (at most 255).  Appends are serialized by a
// mutex, so several threads may record (the workloads run one at a time).
class Trace {
 public:
  void start() { recording_ = true; }
  void stop() { recording_ = false; }
  bool recording() const { return recording_; }
  void clear();

  void add(TraceKind kind, uint64_t off, uint64_t mask, uint64_t val, uint32_t aux = 0);
  // Appends a kMark event labelled `label` and returns its position.
  size_t mark(uint32_t marker, const char* label);

  const std::vector<TraceEvent>& events() const { return events_; }
  size_t threads() const { return thread_ids_.size(); }

 private:
  uint8_t thread_index();
  bool recording_ = false;
  std::mutex mu_;
  std::vector<TraceEvent> events_;
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
  // the image's end when the pool grows.
  TraceMedium(void* base, size_t len, Trace* trace, WriteJournal* journal);

  const MediumProperties& properties() const override { return props_; }
  void write(void* dst, const void* src, size_t n) override;
  void store(void* dst, uint64_t v, unsigned size) override;
  void flush(const void* addr, size_t n) override;
  void stream(void* dst, const void* src, size_t n) override;
  void fence(FenceKind kind) override;
  void drain() override;
  void extend(size_t len) override { len_.store(len, std::memory_order_release); }

 private:
  bool inside(const void* p, size_t n) const;
  void record_bytes(TraceKind kind, uint64_t off, const unsigned char* src, size_t n);
  void temporal(void* dst, const void* src, size_t n);

  MediumProperties props_;
  char* base_;
  std::atomic<size_t> len_;  // grows with the pool (extend)
  Trace* trace_;
  WriteJournal* journal_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_TRACE_MEDIUM_H_
