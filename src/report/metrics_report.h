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
};

std::string metrics_report(const MetricsInput& in, MetricsFormat format);

// From an HTTP Accept header: OpenMetrics when the scraper asks for it
// (Prometheus does when it may), the 0.0.4 text format otherwise.
MetricsFormat negotiate_metrics_format(std::string_view accept);
std::string_view metrics_content_type(MetricsFormat format);

}  // namespace edgemem
