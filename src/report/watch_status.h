// The one line `edgemem watch` shows per status interval: what a person
// glances at during a soak run. Reads the analysis snapshot and the live
// leak-trend estimates only.
#pragma once

#include <string>
#include <vector>

#include "edgemem/report.h"

namespace edgemem {

// A pool's leak trend over recent inferences (slope of per-window floors).
struct TrendView {
  std::string pool;
  double bytes_per_inference = 0;
  double p_value = 1;  // of a flat floor giving this slope
  bool confirmed = false;
  bool estimated = true;  // false: confirmed by the pool filling up before a trend was fitted
};

struct WatchStatus {
  const InputSummary* input = nullptr;
  const AnalysisResult* result = nullptr;
  std::vector<TrendView> trends;
  uint64_t alerts = 0;
  uint64_t warm_up = 0;  // inferences the leak trend leaves out (watch --warm-up)
};

// "1,234 inferences | arena 12,480 B of 40,960 B, peak 20,112 B | leak arena +644 B/inf (p=3e-09) | ..."
// with no trailing newline.
std::string watch_status_line(const WatchStatus& status);

}  // namespace edgemem
