// Memory metrics for an existing monitoring engine: Prometheus text
// exposition 0.0.4 and OpenMetrics 1.0, from an analysis result (a live
// snapshot or a finished trace). Names follow the OpenMetrics conventions:
// base units in the name (`_bytes`, `_ratio`), counters end in `_total`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "edgemem/report.h"
#include "report/watch_status.h"

namespace edgemem {

enum class MetricsFormat : uint8_t { prometheus, openmetrics };

struct MetricsInput {
  const InputSummary* input = nullptr;
  const AnalysisResult* result = nullptr;
  std::string device;              // the `device` label on every sample; none when empty
  std::vector<TrendView> trends;   // live leak trends (`watch` only)
  bool watching = false;           // `watch`: every pool has a leak_confirmed sample, 0 until confirmed
};

std::string metrics_report(const MetricsInput& in, MetricsFormat format);

// Whether `watch` has confirmed a leak of `pool` in this boot (every pool
// has the sample while watching, 0 until then).
bool leak_confirmed(const MetricsInput& in, const std::string& pool);

// The request-size histogram on fixed bounds, so every export has the same
// series: the analysis' power-of-two classes [2^(i-1), 2^i - 1], upper bounds
// 2^i - 1 for i = 0..24, then requests above 16 MiB. Counts per bucket (not
// cumulative); `above` counts the last.
struct SizeBuckets {
  std::vector<std::pair<uint64_t, uint64_t>> bounded;  // (upper bound, count)
  uint64_t above = 0, count = 0, sum = 0;
};
SizeBuckets request_size_buckets(const SizesResult& sizes);

// From an HTTP Accept header: OpenMetrics when the scraper asks for it
// (Prometheus does when it may), the 0.0.4 text format otherwise.
MetricsFormat negotiate_metrics_format(std::string_view accept);
std::string_view metrics_content_type(MetricsFormat format);

}  // namespace edgemem
