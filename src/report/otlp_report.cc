#include "report/otlp_report.h"

#include <string>

namespace edgemem {
namespace {

using nlohmann::json;

json attribute(const std::string& key, const std::string& value) {
  return {{"key", key}, {"value", {{"stringValue", value}}}};
}

class Builder {
 public:
  Builder(uint64_t now, uint64_t start) : now_(std::to_string(now)), start_(std::to_string(start)) {}

  // A gauge point per (pool, value); an empty pool means no attribute.
  void gauge(const std::string& name, const std::string& unit, const std::string& description,
             const std::vector<std::pair<std::string, double>>& points) {
    json dps = json::array();
    for (const auto& [pool, value] : points) {
      json dp = {{"timeUnixNano", now_}, {"asDouble", value}};
      if (!pool.empty()) dp["attributes"] = json::array({attribute("pool", pool)});
      dps.push_back(std::move(dp));
    }
    metrics_.push_back({{"name", name}, {"unit", unit}, {"description", description}, {"gauge", {{"dataPoints", dps}}}});
  }

  // A monotonic cumulative sum: OTLP's counter. int64 values travel as strings in OTLP JSON.
  void counter(const std::string& name, const std::string& unit, const std::string& description, uint64_t value) {
    counter(name, unit, description, "", {{"", value}});
  }
  // One point per value of the attribute `key` (Prometheus: a label).
  void counter(const std::string& name, const std::string& unit, const std::string& description,
               const std::string& key, const std::vector<std::pair<std::string, uint64_t>>& points) {
    json dps = json::array();
    for (const auto& [label, value] : points) {
      json dp = {{"startTimeUnixNano", start_}, {"timeUnixNano", now_}, {"asInt", std::to_string(value)}};
      if (!key.empty()) dp["attributes"] = json::array({attribute(key, label)});
      dps.push_back(std::move(dp));
    }
    metrics_.push_back({{"name", name},
                        {"unit", unit},
                        {"description", description},
                        {"sum", {{"aggregationTemporality", 2}, {"isMonotonic", true}, {"dataPoints", dps}}}});
  }

  void histogram(const std::string& name, const SizesResult& sizes) {
    SizeBuckets b = request_size_buckets(sizes);
    json bounds = json::array(), counts = json::array();
    for (const auto& [bound, count] : b.bounded) {
      bounds.push_back(static_cast<double>(bound));
      counts.push_back(std::to_string(count));
    }
    counts.push_back(std::to_string(b.above));  // OTLP buckets are per bucket, one more than the bounds
    json dp = {{"startTimeUnixNano", start_}, {"timeUnixNano", now_}, {"count", std::to_string(b.count)},
               {"sum", static_cast<double>(b.sum)}, {"bucketCounts", counts}, {"explicitBounds", bounds}};
    metrics_.push_back({{"name", name},
                        {"unit", "By"},
                        {"description", "Sizes of allocation requests"},
                        {"histogram", {{"aggregationTemporality", 2}, {"dataPoints", json::array({dp})}}}});
  }

  json metrics() { return std::move(metrics_); }

 private:
  std::string now_, start_;
  json metrics_ = json::array();
};

}  // namespace

json otlp_metrics(const MetricsInput& in, uint64_t now_unix_ns, uint64_t start_unix_ns) {
  const AnalysisResult& r = *in.result;
  const DecodeStats& s = in.input->stats;
  Builder b(now_unix_ns, start_unix_ns);
  std::vector<std::pair<std::string, double>> used, peak, size, blocks, frag, largest, trend, confirmed;
  for (const PoolSummary& p : r.pools) {
    used.emplace_back(p.name, static_cast<double>(p.final_bytes));
    peak.emplace_back(p.name, static_cast<double>(p.peak_bytes));
    if (p.size) size.emplace_back(p.name, static_cast<double>(p.size));
    if (p.live_count) blocks.emplace_back(p.name, static_cast<double>(*p.live_count));
  }
  for (const PoolFragmentation& p : r.fragmentation.pools) {
    if (!p.known_extent) continue;
    frag.emplace_back(p.pool, p.final_rate);
    largest.emplace_back(p.pool, static_cast<double>(p.largest_free));
  }
  for (const TrendView& t : in.trends)
    if (t.estimated) trend.emplace_back(t.pool, t.bytes_per_inference);
  if (in.watching)
    for (const PoolSummary& p : r.pools) confirmed.emplace_back(p.name, leak_confirmed(in, p.name) ? 1 : 0);
  b.counter("edgemem.inferences", "{inference}", "Inferences completed", r.inferences);
  b.counter("edgemem.events", "{event}", "Memory events decoded", s.events);
  b.gauge("edgemem.pool.used", "By", "Bytes in use now", used);
  b.gauge("edgemem.pool.peak", "By", "Highest usage since the trace began", peak);
  b.gauge("edgemem.pool.size", "By", "Pool size, for pools whose size is known", size);
  b.gauge("edgemem.pool.live_blocks", "{block}", "Blocks allocated and not yet freed", blocks);
  if (const auto rate = r.known_leak_rate())
    b.gauge("edgemem.leak.rate", "By/{inference}",
            "What the leaking groups add per inference, summed (summary-mode devices: growth of pools that grow "
            "steadily or whose lowest usage still rises)",
            {{"", *rate}});
  if (!trend.empty())
    b.gauge("edgemem.leak.trend", "By/{inference}", "Slope of the lowest usage per 8 inferences over the last 80", trend);
  // Every pool from the start, as the Prometheus gauge: a leak confirmed by
  // filling its pool before the trend's 80 inferences was never sent.
  if (!confirmed.empty())
    b.gauge("edgemem.leak.confirmed", "1",
            "1 once a leak of the pool was confirmed in this boot (its trend, or growth until full)", confirmed);
  if (const auto& fc = r.exhaustion_forecast) {
    b.gauge("edgemem.exhaustion.forecast.inferences", "{inference}", "Inferences until the pool is full",
            {{fc->pool, static_cast<double>(fc->inferences)}});
    if (fc->seconds)
      b.gauge("edgemem.exhaustion.forecast.time", "s", "Seconds of trace time until the pool is full",
              {{fc->pool, *fc->seconds}});
  }
  b.gauge("edgemem.fragmentation.ratio", "1", "1 - largest free block / total free, now", frag);
  b.gauge("edgemem.pool.largest_free", "By", "Largest free block now", largest);
  b.counter("edgemem.alloc.failures", "{request}", "Allocation requests the allocator refused", r.fragmentation.alloc_failures);
  b.counter("edgemem.overflows", "{allocation}", "Allocations past the end of their arena", r.overflow_count);
  b.counter("edgemem.guard.failures", "{check}", "Guard checks that found corruption", r.guard_failure_count);
  // As the Prometheus metric: by reason, and the corrupt bytes beside them.
  b.counter("edgemem.events.dropped", "{record}", "Trace data the device could not send", "reason",
            {{"device_buffer_full", s.dropped_records}, {"itm_overflow", s.overflows}});
  b.counter("edgemem.corrupt_bytes", "By", "Bytes skipped while resynchronising on corrupt input", s.corrupt_bytes);
  b.counter("edgemem.stream_cut_bytes", "By", "Bytes of records cut where the followed file was truncated or replaced, or a TCP source hung up",
            s.stream_cut_bytes);
  b.counter("edgemem.damaged_records", "{record}", "emt records whose check byte did not match: damaged in transit",
            s.failed_checks);
  b.histogram("edgemem.request.size", r.sizes);

  json resource = json::array({attribute("service.name", "edgemem")});
  if (!in.device.empty()) resource.push_back(attribute("device", in.device));
  return {{"resourceMetrics",
           json::array({{{"resource", {{"attributes", resource}}},
                         {"scopeMetrics", json::array({{{"scope", {{"name", "edgemem"}}}, {"metrics", b.metrics()}}})}}})}};
}

}  // namespace edgemem
