// The metrics of docs/metrics.md as one OTLP/HTTP JSON export request
// (opentelemetry-proto ExportMetricsServiceRequest, JSON encoding), for an
// OpenTelemetry collector's otlp receiver (:4318/v1/metrics). OpenTelemetry
// names: dotted, the unit in `unit` (UCUM: "By", "1"), so the collector's
// Prometheus exporter turns edgemem.pool.used + By into edgemem_pool_used_bytes.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "report/metrics_report.h"

namespace edgemem {

// `now` and `start` (when the watch began: counters' start time) in ns since the epoch.
nlohmann::json otlp_metrics(const MetricsInput& in, uint64_t now_unix_ns, uint64_t start_unix_ns);

}  // namespace edgemem
