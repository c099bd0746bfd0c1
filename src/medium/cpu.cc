// cpu.cc — CPUID decoding for the x86 media.
//
// Leaf 1 gives CLFLUSH (EDX bit 19), SSE2 (EDX bit 26), AVX (ECX bit 28)
// and OSXSAVE (ECX bit 27); leaf 7.0 gives CLFLUSHOPT (EBX bit 23) and CLWB
// (EBX bit 24).  AVX is usable only if the OS saves YMM state (XCR0 bits 1
// and 2), which XGETBV tells.  The preference order is clwb (keeps the line
// cached), clflushopt, clflush.
#include "medium/cpu.h"

#include <cpuid.h>

#include <cstdlib>

namespace softwrap {
namespace {

uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

}  // namespace

bool CpuFeatures::supports(FlushInsn f) const {
  switch (f) {
    case FlushInsn::kClwb: return clwb;
    case FlushInsn::kClflushopt: return clflushopt;
    case FlushInsn::kClflush: return clflush;
  }
  return false;
}

CpuFeatures detect_cpu_features(const char* flush_env) {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf >= 1 && __get_cpuid(1, &a, &b, &c, &d)) {
    f.clflush = (d >> 19) & 1;
    f.sse2 = (d >> 26) & 1;
    bool osxsave = (c >> 27) & 1;
    bool avx_cpu = (c >> 28) & 1;
    f.avx = avx_cpu && osxsave && (read_xcr0() & 0x6) == 0x6;
  }
  if (max_leaf >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.clflushopt = (b >> 23) & 1;
    f.clwb = (b >> 24) & 1;
  }
  // x86-64 guarantees CLFLUSH and SSE2; trust the architecture if a
  // hypervisor hides the bits.
  f.clflush = true;
  f.sse2 = true;
  f.flush = f.clwb ? FlushInsn::kClwb : f.clflushopt ? FlushInsn::kClflushopt : FlushInsn::kClflush;

  if (flush_env != nullptr && flush_env[0] != '\0') {
    FlushInsn want;
    if (!parse_flush_insn(flush_env, &want)) {
      f.flush_env_error = std::string("SOFTWRAP_FLUSH=") + flush_env +
                          ": expected clwb, clflushopt or clflush";
    } else if (!f.supports(want)) {
      f.flush_env_error = std::string("SOFTWRAP_FLUSH=") + flush_env +
                          ": this CPU does not support that instruction (best available: " +
                          flush_insn_name(f.flush) + ")";
    } else {
      f.flush = want;
      f.flush_overridden = true;
    }
  }
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect_cpu_features(std::getenv("SOFTWRAP_FLUSH"));
  return features;
}

const char* flush_insn_name(FlushInsn f) {
  switch (f) {
    case FlushInsn::kClwb: return "clwb";
    case FlushInsn::kClflushopt: return "clflushopt";
    case FlushInsn::kClflush: return "clflush";
  }
  return "?";
}

bool parse_flush_insn(const std::string& s, FlushInsn* out) {
  for (FlushInsn f : {FlushInsn::kClwb, FlushInsn::kClflushopt, FlushInsn::kClflush}) {
    if (s == flush_insn_name(f)) {
      *out = f;
      return true;
    }
  }
  return false;
}

}  // namespace softwrap
