// clock.h — monotonic nanoseconds and cycle counts for counters and
// bounded waits.
#ifndef SOFTWRAP_COMMON_CLOCK_H_
#define SOFTWRAP_COMMON_CLOCK_H_

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace softwrap {

inline uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// A cheap cycle count for distances between events of one thread: the
// time-stamp counter where there is one (not serializing: a distance of a
// few cycles is approximate), else nanoseconds.
inline uint64_t cpu_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return now_ns();
#endif
}

// How long a wrap waits for retirement to make room before giving up with
// SW_ETOOBIG (a wait that cannot end would otherwise be a deadlock when the
// room depends on wraps blocked behind the caller's own locks).
inline constexpr uint64_t kRoomWaitNs = 2'000'000'000ull;

}  // namespace softwrap

#endif  // SOFTWRAP_COMMON_CLOCK_H_
