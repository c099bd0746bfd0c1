// cpu.h — what this x86-64 CPU offers for persistence, detected once.
//
// CPUID is read the first time cpu_features() is called (a function-local
// static, so the detection is thread-safe and happens once per process).
// The x86 media copy the chosen flush instruction and the streaming width
// into themselves at construction, so the hot paths never consult this
// again.  SOFTWRAP_FLUSH=clwb|clflushopt|clflush overrides the choice (for
// tests and measurements); a value the CPU cannot execute, or that is not
// one of those names, is recorded in `flush_env_error` and makes
// make_medium() fail with a clear message instead of faulting later.
#ifndef SOFTWRAP_MEDIUM_CPU_H_
#define SOFTWRAP_MEDIUM_CPU_H_

#include <cstdint>
#include <string>

namespace softwrap {

// Cache-line write-back instructions, weakest ordering first:
//   clwb        write back, line may stay cached; ordered by sfence
//   clflushopt  write back and invalidate; ordered by sfence
//   clflush     write back and invalidate; ordered with all stores (slow)
enum class FlushInsn : uint8_t { kClwb, kClflushopt, kClflush };

struct CpuFeatures {
  bool clflush = false;
  bool clflushopt = false;
  bool clwb = false;
  bool sse2 = false;
  bool avx = false;  // CPU and OS (XCR0 saves YMM state)
  FlushInsn flush = FlushInsn::kClflush;  // best available, or the override
  bool flush_overridden = false;          // SOFTWRAP_FLUSH chose `flush`
  // Non-empty if SOFTWRAP_FLUSH was set to something unusable; `flush` then
  // holds the detected best instruction.
  std::string flush_env_error;

  bool supports(FlushInsn f) const;
};

// The process-wide features (CPUID + SOFTWRAP_FLUSH), detected on first use.
const CpuFeatures& cpu_features();

// Detection with an explicit override value (nullptr = none).  Exposed so
// tests can check the override rules without changing the environment.
CpuFeatures detect_cpu_features(const char* flush_env);

const char* flush_insn_name(FlushInsn f);
// "clwb" | "clflushopt" | "clflush"; false if unknown.
bool parse_flush_insn(const std::string& s, FlushInsn* out);

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_CPU_H_
