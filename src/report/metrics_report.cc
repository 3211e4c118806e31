#include "report/metrics_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace edgemem {
namespace {

// Length of the valid UTF-8 sequence at v[i], 0 if there is none there.
size_t utf8_length(std::string_view v, size_t i) {
  const auto b = [&](size_t k) { return i + k < v.size() ? static_cast<unsigned char>(v[i + k]) : 0u; };
  const unsigned lead = b(0);
  if (lead < 0x80) return 1;
  const size_t n = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (n == 0) return 0;
  // The second byte's range excludes overlong forms, surrogates and code points past U+10FFFF.
  const unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  const unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (b(1) < low || b(1) > high) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  return n;
}

// Label values and help text are UTF-8 in both formats: a byte that is not
// (a device's name is whatever bytes it sent) becomes U+FFFD, or Prometheus
// refuses the whole scrape. Of UTF-8, \\, " and newline are escaped.
std::string escape(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    const size_t n = utf8_length(v, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(v.substr(i, n));
      i += n;
      continue;
    }
    const char c = v[i++];
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

class Writer {
 public:
  Writer(MetricsFormat format, const std::string& device) : format_(format) {
    if (!device.empty()) device_ = fmt::format("device=\"{}\"", escape(device));
  }

  // One family: its metadata, then its samples through sample().
  void family(std::string_view name, std::string_view type, std::string_view unit, std::string_view help) {
    bool om = format_ == MetricsFormat::openmetrics;
    // OpenMetrics names a counter family without its `_total` sample suffix.
    std::string_view family_name = om && type == "counter" && name.ends_with("_total") ? name.substr(0, name.size() - 6) : name;
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family_name, help, family_name, type);
    if (om && !unit.empty()) out_ += fmt::format("# UNIT {} {}\n", family_name, unit);
  }

  void sample(std::string_view name, const std::string& labels, double value) {
    std::string all = device_;
    if (!labels.empty()) all += (all.empty() ? "" : ",") + labels;
    out_ += all.empty() ? fmt::format("{} {}\n", name, number(value))
                        : fmt::format("{}{{{}}} {}\n", name, all, number(value));
  }

  std::string finish() {
    if (format_ == MetricsFormat::openmetrics) out_ += "# EOF\n";
    return std::move(out_);
  }

 private:
  MetricsFormat format_;
  std::string device_, out_;
};

std::string pool_label(std::string_view pool) { return fmt::format("pool=\"{}\"", escape(pool)); }

void request_sizes(Writer& w, const SizesResult& sizes) {
  w.family("edgemem_request_size_bytes", "histogram", "bytes", "Sizes of allocation requests");
  SizeBuckets b = request_size_buckets(sizes);
  uint64_t cumulative = 0;
  for (const auto& [bound, count] : b.bounded) {
    cumulative += count;
    w.sample("edgemem_request_size_bytes_bucket", fmt::format("le=\"{}\"", bound), static_cast<double>(cumulative));
  }
  w.sample("edgemem_request_size_bytes_bucket", "le=\"+Inf\"", static_cast<double>(b.count));
  w.sample("edgemem_request_size_bytes_sum", "", static_cast<double>(b.sum));
  w.sample("edgemem_request_size_bytes_count", "", static_cast<double>(b.count));
}

}  // namespace

bool leak_confirmed(const MetricsInput& in, const std::string& pool) {
  return std::any_of(in.trends.begin(), in.trends.end(), [&](const TrendView& t) { return t.pool == pool && t.confirmed; });
}

std::string metrics_report(const MetricsInput& in, MetricsFormat format) {
  const AnalysisResult& r = *in.result;
  const DecodeStats& s = in.input->stats;
  Writer w(format, in.device);
  auto d = [](uint64_t v) { return static_cast<double>(v); };

  w.family("edgemem_inferences_total", "counter", "", "Inferences completed (inference end markers)");
  w.sample("edgemem_inferences_total", "", d(r.inferences));
  w.family("edgemem_events_total", "counter", "", "Memory events decoded");
  w.sample("edgemem_events_total", "", d(s.events));
  // analyze stopped by Ctrl-C or SIGTERM: every number is of the input read
  // until then, as the JSON's input.interrupted says. (A watch is read so
  // far by nature: Ctrl-C is how it ends.)
  if (!in.watching) {
    w.family("edgemem_input_interrupted", "gauge", "",
             "1 when SIGINT or SIGTERM stopped analyze before the input's end: the numbers cover what was read until then");
    w.sample("edgemem_input_interrupted", "", in.input->interrupted ? 1 : 0);
  }

  w.family("edgemem_pool_used_bytes", "gauge", "bytes", "Bytes in use now (heap: live blocks; arena: top)");
  for (const PoolSummary& p : r.pools) w.sample("edgemem_pool_used_bytes", pool_label(p.name), d(p.final_bytes));
  w.family("edgemem_pool_peak_bytes", "gauge", "bytes", "Highest usage since the trace began");
  for (const PoolSummary& p : r.pools) w.sample("edgemem_pool_peak_bytes", pool_label(p.name), d(p.peak_bytes));
  w.family("edgemem_pool_size_bytes", "gauge", "bytes", "Pool size, for pools whose size is known");
  for (const PoolSummary& p : r.pools)
    if (p.size) w.sample("edgemem_pool_size_bytes", pool_label(p.name), d(p.size));
  w.family("edgemem_pool_live_blocks", "gauge", "", "Blocks allocated and not yet freed");
  for (const PoolSummary& p : r.pools)
    if (p.live_count) w.sample("edgemem_pool_live_blocks", pool_label(p.name), d(*p.live_count));

  // Unknown without inference markers or a leak check: left out, since 0 would read as "no leak".
  w.family("edgemem_leak_rate_bytes_per_inference", "gauge", "bytes_per_inference",
           "What the leaking groups add per inference, summed (summary-mode devices: growth of pools that grow "
           "steadily or whose lowest usage still rises)");
  if (const auto rate = r.known_leak_rate()) w.sample("edgemem_leak_rate_bytes_per_inference", "", *rate);
  if (in.watching) {
    w.family("edgemem_leak_trend_bytes_per_inference", "gauge", "bytes_per_inference",
             "Slope of the lowest usage per 8 inferences over the last 80 (what the leak alert tests)");
    for (const TrendView& t : in.trends)
      if (t.estimated) w.sample("edgemem_leak_trend_bytes_per_inference", pool_label(t.pool), t.bytes_per_inference);
    // Every pool, 0 until confirmed: a series that appears only at 80
    // inferences (or vanishes at a restart) leaves `== 1` rules blind to a
    // pool that fills up sooner.
    w.family("edgemem_leak_confirmed", "gauge", "",
             "1 once a leak of the pool was confirmed in this boot (its trend, p < 1e-6, or growth until full)");
    for (const PoolSummary& p : r.pools) w.sample("edgemem_leak_confirmed", pool_label(p.name), leak_confirmed(in, p.name) ? 1 : 0);
  }
  if (const auto& fc = r.exhaustion_forecast) {
    w.family("edgemem_exhaustion_forecast_inferences", "gauge", "",
             "Inferences until the pool is full at the measured leak rate (0: already exhausted)");
    w.sample("edgemem_exhaustion_forecast_inferences", pool_label(fc->pool), d(fc->inferences));
    if (fc->seconds) {
      w.family("edgemem_exhaustion_forecast_seconds", "gauge", "seconds",
               "Seconds of trace time until the pool is full at the measured leak and inference rates");
      w.sample("edgemem_exhaustion_forecast_seconds", pool_label(fc->pool), *fc->seconds);
    }
  }

  // Only pools of known extent: elsewhere free memory past the touched span is unknown.
  w.family("edgemem_fragmentation_ratio", "gauge", "ratio", "1 - largest free block / total free, now");
  for (const PoolFragmentation& p : r.fragmentation.pools)
    if (p.known_extent) w.sample("edgemem_fragmentation_ratio", pool_label(p.pool), p.final_rate);
  w.family("edgemem_pool_largest_free_bytes", "gauge", "bytes", "Largest free block now");
  for (const PoolFragmentation& p : r.fragmentation.pools)
    if (p.known_extent) w.sample("edgemem_pool_largest_free_bytes", pool_label(p.pool), d(p.largest_free));

  w.family("edgemem_alloc_failures_total", "counter", "", "Allocation requests the allocator refused");
  w.sample("edgemem_alloc_failures_total", "", d(r.fragmentation.alloc_failures));
  w.family("edgemem_overflows_total", "counter", "", "Allocations past the end of their arena");
  w.sample("edgemem_overflows_total", "", d(r.overflow_count));
  w.family("edgemem_guard_failures_total", "counter", "", "Guard checks that found the guard bytes corrupted");
  w.sample("edgemem_guard_failures_total", "", d(r.guard_failure_count));
  w.family("edgemem_events_dropped_total", "counter", "", "Trace data the device could not send");
  w.sample("edgemem_events_dropped_total", "reason=\"device_buffer_full\"", d(s.dropped_records));
  w.sample("edgemem_events_dropped_total", "reason=\"itm_overflow\"", d(s.overflows));
  w.family("edgemem_corrupt_bytes_total", "counter", "bytes", "Bytes skipped while resynchronising on corrupt input");
  w.sample("edgemem_corrupt_bytes_total", "", d(s.corrupt_bytes));
  w.family("edgemem_stream_cut_bytes_total", "counter", "bytes",
           "Bytes of records cut where the followed file was truncated or replaced, or a TCP source hung up");
  w.sample("edgemem_stream_cut_bytes_total", "", d(s.stream_cut_bytes));
  w.family("edgemem_damaged_records_total", "counter", "", "emt records whose check byte did not match: damaged in transit");
  w.sample("edgemem_damaged_records_total", "", d(s.failed_checks));

  request_sizes(w, r.sizes);
  return w.finish();
}

SizeBuckets request_size_buckets(const SizesResult& sizes) {
  constexpr int kTopBit = 24;
  SizeBuckets out;
  for (int i = 0; i <= kTopBit; ++i) out.bounded.emplace_back(i == 0 ? 0 : (uint64_t{1} << i) - 1, 0);
  for (const SizeBucket& b : sizes.histogram) {
    out.count += b.count;
    out.sum += b.bytes;
    auto it = std::find_if(out.bounded.begin(), out.bounded.end(), [&](const auto& x) { return x.first == b.max; });
    if (it != out.bounded.end()) it->second += b.count;
    else out.above += b.count;
  }
  return out;
}

namespace {

std::string_view trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

std::string lowered(std::string_view v) {
  std::string out(v);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

// RFC 9110's Accept: media ranges with parameters and a q weight, compared
// without case. OpenMetrics is served in version 1.0.0 only, so a range
// asking for another version does not take it; ties go to OpenMetrics.
MetricsFormat negotiate_metrics_format(std::string_view accept) {
  double best_text = accept.empty() ? 1 : 0, best_open = 0;
  for (size_t start = 0; start <= accept.size();) {
    size_t end = accept.find(',', start);
    if (end == std::string_view::npos) end = accept.size();
    std::string_view range = accept.substr(start, end - start);
    start = end + 1;
    size_t semi = range.find(';');
    const std::string type = lowered(trimmed(range.substr(0, semi)));
    double q = 1;
    std::string version;
    while (semi != std::string_view::npos) {
      range.remove_prefix(semi + 1);
      semi = range.find(';');
      std::string_view param = trimmed(range.substr(0, semi));
      const size_t eq = param.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string name = lowered(trimmed(param.substr(0, eq)));
      std::string value(trimmed(param.substr(eq + 1)));
      // A quoted value is the same value (RFC 9110): version="1.0.0".
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      if (name == "q") {
        char* stop = nullptr;
        q = std::strtod(value.c_str(), &stop);
        if (stop == value.c_str() || q < 0 || q > 1) q = 0;
      } else if (name == "version") {
        version = value;
      }
    }
    if (type == "application/openmetrics-text" && (version.empty() || version.starts_with("1.")))
      best_open = std::max(best_open, q);
    else if (type == "text/plain" || type == "text/*" || type == "*/*")
      best_text = std::max(best_text, q);
  }
  return best_open > 0 && best_open >= best_text ? MetricsFormat::openmetrics : MetricsFormat::prometheus;
}

std::string_view metrics_content_type(MetricsFormat format) {
  return format == MetricsFormat::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                              : "text/plain; version=0.0.4; charset=utf-8";
}

}  // namespace edgemem
