// trace_medium.cc — recording medium for the crash simulator.
//
// Every operation first journals (if asked) and performs the write on the
// volatile image with relaxed copies (as the x86 medium does), then records
// it.  Recording cuts writes into per-word pieces here, once, so that the
// simulator's persistency model works on fixed-size units only.
//
// Work between events (TraceOptions::work) is measured with the TSC
// (rdtsc: ~20 cycles, no system call) at the entry and exit of each medium
// operation; thread-local state holds the open span's depth, the gap it
// carries and when the thread last left the medium.
#include "medium/trace_medium.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "common/counters.h"
#include "common/relaxed_copy.h"
#include "medium/trace_label.h"

namespace softwrap {

namespace {
std::atomic<uint64_t> g_next_thread_id{1};
thread_local uint64_t tls_thread_id = 0;

uint64_t this_thread_id() {
  if (tls_thread_id == 0) tls_thread_id = g_next_thread_id.fetch_add(1);
  return tls_thread_id;
}

inline uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
#endif
}

struct Calibration {
  double ticks_per_ns;
  uint64_t overhead;  // ticks an empty gap measures (reading the clock twice)
};

// Once per process: TSC ticks per ns against the steady clock over 20 ms,
// and the median of 1001 back-to-back readings (in this machine's VM an
// rdtsc costs ~26 ticks, 10 ns, as much as a small gap: it is not the
// program's work).
const Calibration& calibrate() {
  static const Calibration c = [] {
    const auto c0 = std::chrono::steady_clock::now();
    const uint64_t t0 = ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t t1 = ticks();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - c0).count();
    std::vector<uint64_t> d(1001);
    for (uint64_t& x : d) {
      const uint64_t a = ticks();
      x = ticks() - a;
    }
    std::nth_element(d.begin(), d.begin() + 500, d.end());
    return Calibration{static_cast<double>(t1 - t0) / ns, d[500]};
  }();
  return c;
}

std::atomic<uint64_t> g_next_recording{1};

struct Span {
  uint64_t recording = 0;  // the Trace::start() that last_end belongs to
  uint64_t last_end = 0;
  uint32_t gap = 0;  // carried by the next event added
  bool used = false;  // an event took the gap (else the span counts as work)
  int depth = 0;
};
thread_local Span tls_span;
}  // namespace

// ------------------------------------------------------------------ Trace

void Trace::start(TraceOptions o) {
  if (o.work_only) o.work = true;
  if (o.work && ticks_per_ns_ == 0) {
    ticks_per_ns_ = calibrate().ticks_per_ns;
    overhead_ = calibrate().overhead;
  }
  opts_ = o;
  recording_id_ = g_next_recording.fetch_add(1);
  recording_ = true;
}

void Trace::span_begin() {
  if (!opts_.work) return;
  Span& s = tls_span;
  if (s.depth++ > 0) return;
  const uint64_t now = ticks();
  const uint64_t gap =
      s.recording == recording_id_ && now > s.last_end + overhead_ ? now - s.last_end - overhead_ : 0;
  s.gap = gap > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(gap);
  s.used = false;
}

void Trace::span_end() {
  if (!opts_.work) return;
  Span& s = tls_span;
  if (s.depth == 0 || --s.depth > 0) return;
  if (!s.used && s.recording == recording_id_) return;  // recorded nothing: its time stays in the next gap
  s.recording = recording_id_;
  s.last_end = ticks();
}

void Trace::clear() {
  std::lock_guard<std::mutex> g(mu_);
  events_.clear();
  works_.clear();
  thread_ids_.clear();
}

uint8_t Trace::thread_index() {
  const uint64_t id = this_thread_id();
  for (size_t i = 0; i < thread_ids_.size(); ++i) {
    if (thread_ids_[i] == id) return static_cast<uint8_t>(i);
  }
  thread_ids_.push_back(id);
  return static_cast<uint8_t>(thread_ids_.size() - 1);
}

void Trace::add(TraceKind kind, uint64_t off, uint64_t mask, uint64_t val, uint32_t aux) {
  uint32_t work = 0;
  if (opts_.work) {
    work = tls_span.gap;
    tls_span.gap = 0;
    tls_span.used = true;
  }
  std::lock_guard<std::mutex> g(mu_);
  if (opts_.work_only) {
    works_.push_back(work);
    return;
  }
  events_.push_back(TraceEvent{kind, thread_index(), aux, off, mask, val, current_trace_label(), work});
}

size_t Trace::mark(uint32_t marker, const char* label) {
  std::lock_guard<std::mutex> g(mu_);
  if (opts_.work_only) {
    works_.push_back(0);
    return works_.size() - 1;
  }
  events_.push_back(TraceEvent{TraceKind::kMark, thread_index(), marker, 0, 0, 0, label, 0});
  return events_.size() - 1;
}

// ------------------------------------------------------------ WriteJournal

void WriteJournal::save(const char* base, uint64_t off, size_t n) {
  offs_.push_back(off);
  lens_.push_back(static_cast<uint32_t>(n));
  at_.push_back(bytes_.size());
  bytes_.insert(bytes_.end(), base + off, base + off + n);
}

void WriteJournal::revert_to(char* base, size_t entries) {
  for (size_t i = offs_.size(); i-- > entries;) std::memcpy(base + offs_[i], &bytes_[at_[i]], lens_[i]);
  if (entries < offs_.size()) {
    bytes_.resize(at_[entries]);
    offs_.resize(entries);
    lens_.resize(entries);
    at_.resize(entries);
  }
}

void WriteJournal::revert(char* base) { revert_to(base, 0); }

void WriteJournal::clear() {
  offs_.clear();
  lens_.clear();
  at_.clear();
  bytes_.clear();
}

// ------------------------------------------------------------ TraceMedium

TraceMedium::TraceMedium(void* base, size_t len, Trace* trace, WriteJournal* journal)
    : base_(static_cast<char*>(base)), len_(len), trace_(trace), journal_(journal) {
  g_trace_labels.store(true, std::memory_order_relaxed);  // labels name its events from now on
  props_.name = "trace";
  props_.wcl_default = WclDefault::kOff;  // each simulated workload sets SW_CONFIG_WCL itself
  props_.flush_insn = "none";
  props_.auto_flush = false;
  props_.emulated_timing = false;
  props_.atomic_width = 8;
  props_.themis_rule = true;  // the persistency model decides (medium.h)
  records_loads_ = trace != nullptr;
}

void TraceMedium::set_cpu_cache(const CpuCacheForm& cc) {
  cc_ = cc;
  props_.auto_flush = cc.on;  // themis_rule stays: the model decides (the constructor)
}

// Brackets one medium operation for the work measurement (trace_medium.h).
class TraceMedium::SpanGuard {
 public:
  explicit SpanGuard(Trace* t) : t_(t && t->recording() ? t : nullptr) {
    if (t_) t_->span_begin();
  }
  ~SpanGuard() {
    if (t_) t_->span_end();
  }
  SpanGuard(const SpanGuard&) = delete;
  SpanGuard& operator=(const SpanGuard&) = delete;

 private:
  Trace* t_;
};

void TraceMedium::on_load(const void* addr, size_t n) {
  if (n == 0 || !trace_->recording() || !trace_->records_loads() || !inside(addr, n)) return;
  SpanGuard span(trace_);
  trace_->add(TraceKind::kLoad, static_cast<uint64_t>(static_cast<const char*>(addr) - base_), 0, 0,
              static_cast<uint32_t>(n > UINT32_MAX ? UINT32_MAX : n));
}

bool TraceMedium::inside(const void* p, size_t n) const {
  const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(base_);
  const size_t len = len_.load(std::memory_order_acquire);
  return a >= b && n <= len && a - b <= len - n;
}

// One event per piece of [off, off+n) inside one aligned word, in address
// order.
void TraceMedium::record_bytes(TraceKind kind, uint64_t off, const unsigned char* src, size_t n) {
  while (n > 0) {
    const uint64_t word = off & ~uint64_t{7};
    const unsigned at = static_cast<unsigned>(off - word);
    const size_t take = n < 8 - at ? n : 8 - at;
    uint64_t val = 0, mask = 0;
    std::memcpy(reinterpret_cast<unsigned char*>(&val) + at, src, take);
    std::memset(reinterpret_cast<unsigned char*>(&mask) + at, 0xFF, take);
    trace_->add(kind, word, mask, val);
    off += take;
    src += take;
    n -= take;
  }
}

void TraceMedium::temporal(void* dst, const void* src, size_t n) {
  const bool in = inside(dst, n);
  if (in && journal_) journal_->save(base_, static_cast<uint64_t>(static_cast<char*>(dst) - base_), n);
  relaxed_copy(dst, src, n);
  if (in && trace_ && trace_->recording()) {
    record_bytes(TraceKind::kStore, static_cast<uint64_t>(static_cast<char*>(dst) - base_),
                 static_cast<const unsigned char*>(src), n);
  }
}

void TraceMedium::write(void* dst, const void* src, size_t n) {
  SpanGuard span(trace_);
  if (n) temporal(dst, src, n);
}

// The program's own stores to an in-place object: journaled before the
// first (so the simulator can take them back), recorded after the last as
// temporal stores of the bytes then there.
void TraceMedium::open_in_place(void* dst, size_t n) {
  SpanGuard span(trace_);
  if (n && journal_ && inside(dst, n)) journal_->save(base_, static_cast<uint64_t>(static_cast<char*>(dst) - base_), n);
}

void TraceMedium::close_in_place(const void* dst, size_t n) {
  SpanGuard span(trace_);
  if (n && inside(dst, n) && trace_ && trace_->recording()) {
    record_bytes(TraceKind::kStore, static_cast<uint64_t>(static_cast<const char*>(dst) - base_),
                 static_cast<const unsigned char*>(dst), n);
  }
}

void TraceMedium::store(void* dst, uint64_t v, unsigned size) {
  SpanGuard span(trace_);
  const bool in = inside(dst, size);
  if (in && journal_) journal_->save(base_, static_cast<uint64_t>(static_cast<char*>(dst) - base_), size);
  switch (size) {
    case 8: __atomic_store_n(static_cast<uint64_t*>(dst), v, __ATOMIC_RELAXED); break;
    case 4: __atomic_store_n(static_cast<uint32_t*>(dst), static_cast<uint32_t>(v), __ATOMIC_RELAXED); break;
    case 2: __atomic_store_n(static_cast<uint16_t*>(dst), static_cast<uint16_t>(v), __ATOMIC_RELAXED); break;
    default: __atomic_store_n(static_cast<uint8_t*>(dst), static_cast<uint8_t>(v), __ATOMIC_RELAXED); break;
  }
  if (in && trace_ && trace_->recording()) {
    record_bytes(TraceKind::kStore, static_cast<uint64_t>(static_cast<char*>(dst) - base_),
                 reinterpret_cast<const unsigned char*>(&v), size);
  }
}

void TraceMedium::flush(const void* addr, size_t n) {
  if (n == 0 || cc_.on) return;
  SpanGuard span(trace_);
  const auto a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t first = line_down(a), end = line_up(a + n);
  counters().flushes.add((end - first) / kCacheLine);
  if (trace_ && trace_->recording() && inside(addr, n)) {
    trace_->add(TraceKind::kFlush, first - reinterpret_cast<uintptr_t>(base_), 0, 0,
                static_cast<uint32_t>((end - first) / kCacheLine));
  }
}

void TraceMedium::stream(void* dst, const void* src, size_t n) {
  if (n == 0) return;
  SpanGuard span(trace_);
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const uintptr_t e = d + n, a = (d + 7) & ~uintptr_t{7}, b = e & ~uintptr_t{7};
  counters().streamed_lines.add((line_up(e) - line_down(d)) / kCacheLine);
  if (cc_.on && cc_.streams == StreamForm::kTemporal) {
    temporal(dst, src, n);
    return;
  }
  if (a >= b) {  // no aligned word: temporal stores and a flush, as on x86
    temporal(dst, src, n);
    flush(dst, n);
    return;
  }
  if (a != d) {
    temporal(dst, s, a - d);
    flush(dst, a - d);
  }
  if (b != e) {
    temporal(reinterpret_cast<void*>(b), s + (b - d), e - b);
    flush(reinterpret_cast<void*>(b), e - b);
  }
  void* body = reinterpret_cast<void*>(a);
  const bool in = inside(body, b - a);
  if (in && journal_) journal_->save(base_, a - reinterpret_cast<uintptr_t>(base_), b - a);
  relaxed_copy(body, s + (a - d), b - a);
  if (in && trace_ && trace_->recording()) {
    record_bytes(TraceKind::kStream, a - reinterpret_cast<uintptr_t>(base_), s + (a - d), b - a);
  }
}

void TraceMedium::fence(FenceKind kind) {
  SpanGuard span(trace_);
  if (!cc_.issues(kind)) {
    counters().fences_elided.add();
    return;
  }
  counters().fences[static_cast<int>(kind)].add();
  if (trace_ && trace_->recording()) trace_->add(TraceKind::kFence, 0, 0, 0, static_cast<uint32_t>(kind));
}

void TraceMedium::drain() {
  SpanGuard span(trace_);
  counters().fences[static_cast<int>(FenceKind::kOther)].add();
  if (trace_ && trace_->recording()) trace_->add(TraceKind::kDrain, 0, 0, 0);
}

}  // namespace softwrap
