// x86_medium.cc — clwb/clflushopt/clflush, movnt and sfence.
//
// The instruction-specific loops are free functions compiled with
// __attribute__((target(...))), so the library builds without -march flags
// and only executes an instruction the CPU reported.  Every flush loop and
// fence carries a compiler memory barrier: the compiler must not sink a
// preceding memcpy into pool memory below the write-back of its line.
//
// stream(): non-temporal stores work on whole aligned words, so a range is
// cut into an unaligned head (bytes before the first 8-byte boundary), a
// body of aligned 8-byte words and an unaligned tail.  Head and tail are
// written with ordinary stores and their lines flushed; the body is
// streamed: one 8-byte movnti to reach 16-byte alignment, then 16-byte
// (SSE2) or 32-byte (AVX, after reaching 32-byte alignment) movntdq, then
// the 16- and 8-byte remainders.  Either way every byte is durable at the
// next fence, which is all the contract promises.  A read-modify-write of
// the surrounding word would let the head be streamed too, but could lose
// a concurrent store by another thread to the neighbouring bytes.
#include "medium/x86_medium.h"

#include "common/relaxed_copy.h"

#include <immintrin.h>

#include <cstring>

#include "common/counters.h"

#if !defined(__x86_64__)
#error "the x86 medium needs an x86-64 target"
#endif

namespace softwrap {
namespace {

inline void compiler_barrier() { __asm__ volatile("" ::: "memory"); }

__attribute__((target("clwb"))) void flush_clwb(uintptr_t p, uintptr_t end) {
  compiler_barrier();
  for (; p < end; p += kCacheLine) _mm_clwb(reinterpret_cast<void*>(p));
  compiler_barrier();
}

__attribute__((target("clflushopt"))) void flush_clflushopt(uintptr_t p, uintptr_t end) {
  compiler_barrier();
  for (; p < end; p += kCacheLine) _mm_clflushopt(reinterpret_cast<void*>(p));
  compiler_barrier();
}

void flush_clflush(uintptr_t p, uintptr_t end) {
  compiler_barrier();
  for (; p < end; p += kCacheLine) _mm_clflush(reinterpret_cast<const void*>(p));
  compiler_barrier();
}

inline void stream8(uintptr_t d, const char* s) {
  long long v;
  memcpy(&v, s, 8);
  _mm_stream_si64(reinterpret_cast<long long*>(d), v);
}

inline void stream16(uintptr_t d, const char* s) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
}

// d is 16-byte aligned, n a multiple of 8.
void stream_body_sse2(uintptr_t d, const char* s, size_t n) {
  for (; n >= 64; d += 64, s += 64, n -= 64) {
    stream16(d, s);
    stream16(d + 16, s + 16);
    stream16(d + 32, s + 32);
    stream16(d + 48, s + 48);
  }
  for (; n >= 16; d += 16, s += 16, n -= 16) stream16(d, s);
  if (n >= 8) stream8(d, s);
}

// d is 16-byte aligned, n a multiple of 8.
__attribute__((target("avx"))) void stream_body_avx(uintptr_t d, const char* s, size_t n) {
  if ((d & 16) != 0 && n >= 16) {
    stream16(d, s);
    d += 16, s += 16, n -= 16;
  }
  for (; n >= 64; d += 64, s += 64, n -= 64) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32)));
  }
  if (n >= 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    d += 32, s += 32, n -= 32;
  }
  if (n >= 16) {
    stream16(d, s);
    d += 16, s += 16, n -= 16;
  }
  if (n >= 8) stream8(d, s);
}

// Kept out of line so that store()'s value never has to live in memory.
__attribute__((noinline)) void store_bytes(void* dst, uint64_t v, unsigned size) {
  memcpy(dst, &v, size < 8 ? size : 8);
}

}  // namespace

X86Medium::X86Medium() : X86Medium(cpu_features().flush, cpu_features().avx) {}

X86Medium::X86Medium(FlushInsn insn, bool use_avx) : X86Medium(insn, use_avx, "x86", false) {}

X86Medium::X86Medium(FlushInsn insn, bool use_avx, const char* name, bool emulated_timing)
    : insn_(insn), avx_(use_avx) {
  props_.name = name;
  props_.flush_insn = flush_insn_name(insn);
  props_.auto_flush = false;
  props_.emulated_timing = emulated_timing;
  props_.atomic_width = 8;
  props_.wcl_default = WclDefault::kRanges;  // a page's compare pays even on DRAM (medium.h)
}

// Pool memory is read concurrently (an alias-table miss reads home while
// retirement writes other words of the line): relaxed atomic copies, which
// are plain moves, keep that free of C++ data races.

void X86Medium::write(void* dst, const void* src, size_t n) {
  relaxed_copy(dst, src, n);
  counters().nvram_words.add(words_touched(dst, n));
}

void X86Medium::zero(void* dst, size_t n) {
#ifdef SOFTWRAP_TSAN
  Medium::zero(dst, n);  // relaxed word stores: a racing reader stays visible to TSan as benign
#else
  std::memset(dst, 0, n);  // rep stosb / vector stores: large ranges without reading their lines
  counters().nvram_words.add(words_touched(dst, n));
#endif
}

void X86Medium::store(void* dst, uint64_t v, unsigned size) {
  counters().nvram_words.add();
  // One mov; aligned, it is single-copy atomic.
  switch (size) {
    case 8: __atomic_store_n(static_cast<uint64_t*>(dst), v, __ATOMIC_RELAXED); break;
    case 4: __atomic_store_n(static_cast<uint32_t*>(dst), static_cast<uint32_t>(v), __ATOMIC_RELAXED); break;
    case 2: __atomic_store_n(static_cast<uint16_t*>(dst), static_cast<uint16_t>(v), __ATOMIC_RELAXED); break;
    case 1: __atomic_store_n(static_cast<uint8_t*>(dst), static_cast<uint8_t>(v), __ATOMIC_RELAXED); break;
    default: store_bytes(dst, v, size); break;  // not a power of two: misuse
  }
}

void X86Medium::flush_lines(uintptr_t first, uintptr_t end) const {
  switch (insn_) {
    case FlushInsn::kClwb: flush_clwb(first, end); break;
    case FlushInsn::kClflushopt: flush_clflushopt(first, end); break;
    case FlushInsn::kClflush: flush_clflush(first, end); break;
  }
}

void X86Medium::flush(const void* addr, size_t n) {
  if (n == 0) return;
  auto a = reinterpret_cast<uintptr_t>(addr);
  uintptr_t first = line_down(a), end = line_up(a + n);
  flush_lines(first, end);
  counters().flushes.add((end - first) / kCacheLine);
}

template <bool kFlushEdges>
void X86Medium::stream_raw(void* dst, const void* src, size_t n) const {
  if (n == 0) return;
  auto d = reinterpret_cast<uintptr_t>(dst);
  auto s = static_cast<const char*>(src);
  uintptr_t e = d + n;
  uintptr_t a = (d + 7) & ~uintptr_t{7};  // first aligned word
  uintptr_t b = e & ~uintptr_t{7};        // end of the last aligned word
  if (a >= b) {  // no whole aligned word inside: all temporal
    memcpy(dst, src, n);
    if (kFlushEdges) flush_lines(line_down(d), line_up(e));
    return;
  }
  if (a != d) {
    memcpy(dst, s, a - d);
    if (kFlushEdges) flush_lines(line_down(d), line_down(d) + kCacheLine);
  }
  if (b != e) {
    memcpy(reinterpret_cast<void*>(b), s + (b - d), e - b);
    uintptr_t tail_line = line_down(b);
    if (kFlushEdges && (a == d || tail_line != line_down(d))) flush_lines(tail_line, tail_line + kCacheLine);
  }
  s += a - d;
  size_t body = b - a;
  if ((a & 8) != 0) {
    stream8(a, s);
    a += 8, s += 8, body -= 8;
  }
  if (avx_) {
    stream_body_avx(a, s, body);
  } else {
    stream_body_sse2(a, s, body);
  }
}

void X86Medium::stream(void* dst, const void* src, size_t n) {
  if (n == 0) return;
  stream_raw(dst, src, n);
  counters().nvram_words.add(words_touched(dst, n));
  auto d = reinterpret_cast<uintptr_t>(dst);
  counters().streamed_lines.add((line_up(d + n) - line_down(d)) / kCacheLine);
}

void X86Medium::fence(FenceKind kind) {
  sfence();
  counters().fences[static_cast<int>(kind)].add();
}

void X86Medium::drain() {
  sfence();
  counters().fences[static_cast<int>(FenceKind::kOther)].add();
}

// ------------------------------------------------------------ cpu-cache form

X86CpuCacheMedium::X86CpuCacheMedium(FlushInsn insn, bool use_avx, const CpuCacheForm& cc)
    : X86Medium(insn, use_avx), cc_(cc) {
  cc_.on = true;
  cc_.drop_needed_fences = false;
  props_.flush_insn = "none";
  props_.auto_flush = true;
  // Temporal "streams" persist in program order with every later store of
  // the thread: the Themis rule holds (undo-themis is crash-safe here).
  props_.themis_rule = cc_.streams == StreamForm::kTemporal;
}

void X86CpuCacheMedium::stream(void* dst, const void* src, size_t n) {
  if (n == 0) return;
  if (cc_.streams == StreamForm::kTemporal) {
    relaxed_copy(dst, src, n);
  } else {
    stream_raw<false>(dst, src, n);  // the unaligned head and tail: temporal, not written back
  }
  counters().nvram_words.add(words_touched(dst, n));
  auto d = reinterpret_cast<uintptr_t>(dst);
  counters().streamed_lines.add((line_up(d + n) - line_down(d)) / kCacheLine);
}

void X86CpuCacheMedium::fence(FenceKind kind) {
  if (!cc_.issues(kind)) {
    counters().fences_elided.add();
    return;
  }
  X86Medium::fence(kind);
}

}  // namespace softwrap
