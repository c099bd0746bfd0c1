// clock.h — monotonic nanoseconds for counters and bounded waits.
#ifndef SOFTWRAP_COMMON_CLOCK_H_
#define SOFTWRAP_COMMON_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace softwrap {

inline uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// How long a wrap waits for retirement to make room before giving up with
// SW_ETOOBIG (a wait that cannot end would otherwise be a deadlock when the
// room depends on wraps blocked behind the caller's own locks).
inline constexpr uint64_t kRoomWaitNs = 2'000'000'000ull;

}  // namespace softwrap

#endif  // SOFTWRAP_COMMON_CLOCK_H_
