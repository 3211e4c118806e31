#include "report/watch_status.h"

#include <fmt/format.h>

#include "edgemem/analyzer.h"
#include "report/units.h"

namespace edgemem {

namespace {

std::string seconds_text(double s) {
  if (s < 1e-3) return fmt::format("{:.0f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.0f} ms", s * 1e3);
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  if (s < 172800) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

}  // namespace

std::string watch_status_line(const WatchStatus& status) {
  const AnalysisResult& r = *status.result;
  std::vector<std::string> parts;
  // Verdicts first, the pools last: a narrow terminal cuts the line's end.
  parts.push_back(fmt::format("{} inferences", units::grouped(r.inferences)));
  if (status.alerts) parts.push_back(fmt::format("{} alert{}", status.alerts, status.alerts == 1 ? "" : "s"));
  // The trend says more than the whole-run slope while the run is young,
  // and it is the number the leak alert is raised on.
  std::string trend;
  for (const TrendView& t : status.trends) {
    if (t.bytes_per_inference <= 0 && !t.confirmed) continue;
    if (!t.estimated) {
      trend += fmt::format("{}{} confirmed (filled up)", trend.empty() ? "leak " : ", ", t.pool);
      continue;
    }
    // Below 1e-15 the tail is lost in double rounding: say only that it is that small.
    std::string p = t.p_value < 1e-15 ? "p<1e-15" : fmt::format("p={:.0e}", t.p_value);
    trend += fmt::format("{}{} {:+.0f} B/inf ({}{})", trend.empty() ? "leak " : ", ", t.pool, t.bytes_per_inference, p,
                         t.confirmed ? ", confirmed" : "");
  }
  if (!trend.empty()) parts.push_back(trend);
  else if (!status.trends.empty()) parts.push_back("leak: none");
  else if (status.warm_up && r.inferences <= status.warm_up) parts.push_back(fmt::format("leak: warm-up to {}", units::grouped(status.warm_up)));
  else parts.push_back("leak: too few inferences");
  if (const auto& fc = r.exhaustion_forecast) {
    if (fc->already_exhausted)
      parts.push_back(fmt::format("{} exhausted", fc->pool));
    else
      parts.push_back(fmt::format("{} full in {} inf{}", fc->pool, units::grouped(fc->inferences),
                                  fc->seconds ? " (" + seconds_text(*fc->seconds) + ")" : ""));
  }
  // analyze's verdict: the band of the worst moment, not of now.
  parts.push_back(r.fragmentation.band ? fmt::format("frag worst {}", to_string(*r.fragmentation.band)) : "frag unjudged");
  parts.push_back(fmt::format("{} failed", units::grouped(r.fragmentation.alloc_failures)));
  if (r.overflow_count) parts.push_back(fmt::format("{} overflows", units::grouped(r.overflow_count)));
  if (r.guard_failure_count) parts.push_back(fmt::format("{} guard failures", units::grouped(r.guard_failure_count)));
  const DecodeStats& s = status.input->stats;
  uint64_t dropped = s.overflows + s.dropped_records;
  uint64_t skipped = s.corrupt_bytes + s.malformed_lines;
  parts.push_back(fmt::format("{} dropped", units::grouped(dropped)) +
                  (skipped ? fmt::format(", {} corrupt skipped", units::grouped(skipped)) : ""));
  for (const PoolSummary& p : r.pools) {
    if (p.peak_bytes == 0 && p.final_bytes == 0) continue;
    std::string of = p.size ? fmt::format(" of {}", units::bytes(p.size)) : "";
    parts.push_back(fmt::format("{} {}{}, peak {}", p.name, units::bytes(p.final_bytes), of, units::bytes(p.peak_bytes)));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " | ") + p;
  return out;
}

}  // namespace edgemem
