#include "trace_clock.h"

#include <cstdint>

#include <fmt/format.h>

namespace edgemem {

TraceClock::TraceClock(const InputSummary& input, const AnalysisResult& result) {
  if (result.clock_hz) {
    hz_ = *result.clock_hz;
    // A slow clock in MHz reads "0.001 MHz": the unit follows the size.
    description_ = hz_ >= 1e6   ? fmt::format("time in ns, from cycles at {:g} MHz", hz_ / 1e6)
                   : hz_ >= 1e3 ? fmt::format("time in ns, from cycles at {:g} kHz", hz_ / 1e3)
                                : fmt::format("time in ns, from cycles at {:g} Hz", hz_);
  } else if (input.time_base == TimeBase::cycles) {
    description_ = "time is in cycles of an unknown clock, shown as ns (pass --clock-hz for real time)";
  } else {
    description_ = "time is the event's sequence number, shown as ns (the trace has no clock)";
  }
}

uint64_t TraceClock::ns(uint64_t time) const {
  if (hz_ <= 0) return time;
  long double ns = static_cast<long double>(time) * 1e9L / static_cast<long double>(hz_);
  // A slow clock and a huge cycle count could pass 2^64 ns (585 years): hold at the top.
  if (ns >= 18446744073709551615.0L) return UINT64_MAX;
  return static_cast<uint64_t>(ns + 0.5L);
}

}  // namespace edgemem
