// trace_medium.cc — recording medium for the crash simulator.
//
// Every operation first journals (if asked) and performs the write on the
// volatile image with relaxed copies (as the x86 medium does), then records
// it.  Recording cuts writes into per-word pieces here, once, so that the
// simulator's persistency model works on fixed-size units only.
#include "medium/trace_medium.h"

#include <atomic>
#include <cstring>

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
}  // namespace

// ------------------------------------------------------------------ Trace

void Trace::clear() {
  std::lock_guard<std::mutex> g(mu_);
  events_.clear();
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
  std::lock_guard<std::mutex> g(mu_);
  events_.push_back(TraceEvent{kind, thread_index(), aux, off, mask, val, current_trace_label()});
}

size_t Trace::mark(uint32_t marker, const char* label) {
  std::lock_guard<std::mutex> g(mu_);
  events_.push_back(TraceEvent{TraceKind::kMark, thread_index(), marker, 0, 0, 0, label});
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
  props_.name = "trace";
  props_.flush_insn = "none";
  props_.auto_flush = false;
  props_.emulated_timing = false;
  props_.atomic_width = 8;
  props_.themis_rule = true;  // the persistency model decides (medium.h)
}

bool TraceMedium::inside(const void* p, size_t n) const {
  const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(base_);
  return a >= b && n <= len_ && a - b <= len_ - n;
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
  if (n) temporal(dst, src, n);
}

void TraceMedium::store(void* dst, uint64_t v, unsigned size) {
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
  if (n == 0) return;
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
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const uintptr_t e = d + n, a = (d + 7) & ~uintptr_t{7}, b = e & ~uintptr_t{7};
  counters().streamed_lines.add((line_up(e) - line_down(d)) / kCacheLine);
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
  counters().fences[static_cast<int>(kind)].add();
  if (trace_ && trace_->recording()) trace_->add(TraceKind::kFence, 0, 0, 0, static_cast<uint32_t>(kind));
}

void TraceMedium::drain() {
  counters().fences[static_cast<int>(FenceKind::kOther)].add();
  if (trace_ && trace_->recording()) trace_->add(TraceKind::kDrain, 0, 0, 0);
}

}  // namespace softwrap
