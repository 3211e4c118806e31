// Trace time as the timeline viewers want it: nanoseconds. Cycles become
// nanoseconds when the clock is known; otherwise the raw value is passed off
// as nanoseconds and `description` says so, for the viewer to show.
#pragma once

#include <cstdint>
#include <string>

#include "edgemem/analysis_result.h"
#include "edgemem/report.h"

namespace edgemem {

class TraceClock {
 public:
  TraceClock(const InputSummary& input, const AnalysisResult& result);
  uint64_t ns(uint64_t time) const;
  bool real() const { return hz_ > 0; }  // ns are nanoseconds of the device
  // "time in ns from cycles at 80 MHz", or what the numbers are instead.
  const std::string& description() const { return description_; }

 private:
  double hz_ = 0;
  std::string description_;
};

}  // namespace edgemem
