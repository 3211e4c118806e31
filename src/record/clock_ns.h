// The kernel's clocks in nanoseconds: bpftrace's `nsecs` is CLOCK_MONOTONIC,
// a recording's wall-clock record is CLOCK_REALTIME.
#pragma once

#include <time.h>

#include <cstdint>

namespace edgemem {

inline uint64_t clock_ns(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}
inline uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }
inline uint64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }

}  // namespace edgemem
