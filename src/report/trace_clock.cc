#include "trace_clock.h"

#include <algorithm>
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
  // Said, not left for the viewer to find every event at one instant.
  if (result.layout.end_time > 0 && ns(result.layout.end_time) == INT64_MAX)
    description_ += "; times past 2^63 - 1 ns (292 years) are held there, where the events after it meet";
}

uint64_t TraceClock::ns(uint64_t time) const {
  // Perfetto's trace processor reads timestamps as int64: past 2^63 - 1 ns
  // (292 years; a slow clock and a huge cycle count) they would read
  // negative, so they hold at the top.
  constexpr uint64_t kTop = INT64_MAX;
  if (hz_ <= 0) return std::min(time, kTop);
  long double ns = static_cast<long double>(time) * 1e9L / static_cast<long double>(hz_);
  if (ns >= static_cast<long double>(kTop)) return kTop;
  return static_cast<uint64_t>(ns + 0.5L);
}

}  // namespace edgemem
