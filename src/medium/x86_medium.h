// x86_medium.h — the x86 ADR medium and its raw primitives.
//
// X86Medium is the real thing on DAX mappings: temporal writes are memcpy,
// flush is clwb/clflushopt/clflush per 64-byte line, stream is movnt
// (8-, 16- or 32-byte non-temporal stores), fence and drain are sfence.
// The instruction and the streaming width are fixed at construction, so a
// call is a switch on a member and a loop.  The msync and scm-emu media
// derive from it: they move the same bytes with the same instructions and
// add their own persistence (msync) or timing (the emulated device) on top,
// calling the counted X86Medium operations first.
//
// X86CpuCacheMedium is its cpu-cache form (MediumOptions::cpu_cache,
// medium.h): flush() issues nothing, stream() writes with temporal or
// non-temporal stores as the form says, and fence() issues an sfence only
// where the form's rules keep one.  A class of its own, so that the ADR
// form's operations carry no test of the form.
//
// Counting (into softwrap::counters() of the calling thread): `flushes` +1
// per line flushed (none in the cpu-cache form), `streamed_lines` +1 per distinct line a stream touches,
// `fences[kind]` +1 per fence issued, `fences_elided` +1 per fence the
// cpu-cache form did not issue; drain() counts as one fence of kind kOther.
// Writes are not counted (the engines count home writes).
#ifndef SOFTWRAP_MEDIUM_X86_MEDIUM_H_
#define SOFTWRAP_MEDIUM_X86_MEDIUM_H_

#include <cstddef>
#include <cstdint>

#include "medium/cpu.h"
#include "medium/medium.h"

namespace softwrap {

class X86Medium : public Medium {
 public:
  // Uses cpu_features(): the best flush instruction (or SOFTWRAP_FLUSH's)
  // and AVX streaming if the CPU and OS support it.
  X86Medium();
  // Explicit choice (tests, benchmarks).  REQUIRES: the CPU supports
  // `insn`, and AVX if `use_avx`.
  X86Medium(FlushInsn insn, bool use_avx);

  const MediumProperties& properties() const override { return props_; }

  void write(void* dst, const void* src, size_t n) override;
  void zero(void* dst, size_t n) override;
  void store(void* dst, uint64_t v, unsigned size) override;
  void flush(const void* addr, size_t n) override;
  void stream(void* dst, const void* src, size_t n) override;
  void fence(FenceKind kind) override;
  void drain() override;

  FlushInsn flush_insn() const { return insn_; }
  bool uses_avx() const { return avx_; }

 protected:
  X86Medium(FlushInsn insn, bool use_avx, const char* name, bool emulated_timing);

  // Uncounted primitives.  flush_lines writes back lines [first, end)
  // (both 64-byte aligned); stream_raw is stream() without counting
  // (kFlushEdges false: the unaligned head and tail, stored temporally, are
  // not flushed — the cpu-cache form).
  void flush_lines(uintptr_t first, uintptr_t end) const;
  template <bool kFlushEdges = true>
  void stream_raw(void* dst, const void* src, size_t n) const;
  static void sfence() { __asm__ volatile("sfence" ::: "memory"); }

  MediumProperties props_;

 private:
  FlushInsn insn_;
  bool avx_;
};

class X86CpuCacheMedium final : public X86Medium {
 public:
  // REQUIRES: cc.on.  cc.drop_needed_fences is ignored (it is the crash
  // simulator's control, never a real medium's).
  X86CpuCacheMedium(FlushInsn insn, bool use_avx, const CpuCacheForm& cc);

  void flush(const void*, size_t) override {}  // the caches are persistent
  void stream(void* dst, const void* src, size_t n) override;
  void fence(FenceKind kind) override;

  const CpuCacheForm& cpu_cache() const { return cc_; }

 private:
  CpuCacheForm cc_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_X86_MEDIUM_H_
