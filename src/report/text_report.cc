// The summary a person reads in ten seconds: findings ordered by how soon
// they take a device down (corruption, failures, leaks, fragmentation), each
// with its numbers, its site and the next thing to try.
#include <fmt/format.h>

#include "edgemem/report.h"

namespace edgemem {
namespace {

std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}
std::string bytes(uint64_t n) { return grouped(n) + " B"; }
std::string pct(double rate) { return fmt::format("{:.0f}%", rate * 100); }

std::string duration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.0f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 172800) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

void line(std::string& out, std::string_view tag, const std::string& text) {
  out += fmt::format("{:<14}{}\n", tag, text);
}
void more(std::string& out, const std::string& text) { out += fmt::format("{:<14}{}\n", "", text); }

}  // namespace

std::string text_report(const InputSummary& in, const AnalysisResult& r) {
  std::string out;
  const DecodeStats& s = in.stats;
  out += fmt::format("edgemem: {} ({}, {} events, {} inferences)\n\n", in.path, in.format, grouped(s.events),
                     grouped(r.inferences));
  int problems = 0;

  for (const auto& o : r.overflows) {
    if (problems >= 3 && &o != &r.overflows.front()) break;
    ++problems;
    line(out, "[OVERFLOW]",
         fmt::format("{} requested {} at offset {} of {} '{}' ({}): only {} left, {} past the end",
                     o.site, bytes(o.size), grouped(o.offset), bytes(o.arena_size), o.pool, "time " + grouped(o.time),
                     bytes(o.available), bytes(o.over_by)));
    if (&o == &r.overflows.front())
      more(out, "-> writes past the arena corrupt what the linker placed after it; enlarge the arena or split the buffer");
  }
  if (r.overflow_count > r.overflows.size())
    more(out, fmt::format("({} overflows in all)", grouped(r.overflow_count)));
  if (r.guard_failure_count) {
    ++problems;
    const auto& g = r.guard_failures.front();
    line(out, "[GUARD]", fmt::format("sentinel corrupted in {} of {} checks, first at inference {} (pool '{}')",
                                     grouped(r.guard_failure_count), grouped(r.guard_checks), g.inference, g.pool));
    more(out, "-> something wrote past its buffer; check the allocations just before that inference");
  }

  const FragmentationResult& f = r.fragmentation;
  for (const auto& x : f.failures) {
    if (!x.fragmentation) continue;
    ++problems;
    line(out, "[ALLOC FAIL]",
         fmt::format("{} request failed with {} free: largest free block {} (fragmentation {})", bytes(x.size),
                     bytes(x.total_free), bytes(x.largest_free),
                     pct(x.total_free ? 1.0 - static_cast<double>(x.largest_free) / static_cast<double>(x.total_free) : 0)));
    more(out, "-> reserve the largest shape once, or give variable-size buffers their own region");
    break;
  }
  if (f.alloc_failures) {
    std::string rate = f.failures_per_1000_inferences
                           ? fmt::format(", {:.1f} per 1000 inferences", *f.failures_per_1000_inferences)
                           : "";
    if (problems == 0 || f.alloc_failures > 1)
      line(out, "[ALLOC FAIL]", fmt::format("{} failed allocations{}", grouped(f.alloc_failures), rate));
  }

  for (size_t i = 0; i < r.leaks.size() && i < 5; ++i) {
    const SiteLeak& l = r.leaks[i];
    ++problems;
    std::string what = l.bytes_per_inference
                           ? fmt::format("{} per inference at {}", bytes(static_cast<uint64_t>(*l.bytes_per_inference + 0.5)), l.site)
                           : fmt::format("{} still live at {}", bytes(l.bytes), l.site);
    if (l.bytes_per_inference && *l.bytes_per_inference < 1)
      what = fmt::format("{:.2f} B per inference at {}", *l.bytes_per_inference, l.site);
    line(out, "[LEAK]", what);
    std::string blocks = l.block_size ? fmt::format("{} blocks of {}", grouped(l.count), bytes(l.block_size))
                                      : fmt::format("{} blocks", grouped(l.count));
    std::string hint = l.type_hint.empty() ? "" : fmt::format(" ({})", l.type_hint);
    more(out, fmt::format("{} in {}{}; site balance {} allocs / {} frees; pool '{}'", bytes(l.bytes), blocks, hint,
                          grouped(l.allocs), grouped(l.frees), l.pool));
  }
  if (r.leaks.size() > 5) more(out, fmt::format("(and {} more leaking sites)", r.leaks.size() - 5));
  if (r.exhaustion_forecast) {
    const Forecast& fc = *r.exhaustion_forecast;
    std::string when = fc.seconds ? fmt::format(" (about {})", duration(*fc.seconds)) : "";
    if (fc.inferences == 0)
      more(out, fmt::format("-> '{}' is already exhausted at {:.1f} B/inference", fc.pool, r.leak_rate_bytes_per_inference));
    else
      more(out, fmt::format("-> '{}' runs out in {} more inferences{} at {:.1f} B/inference", fc.pool,
                            grouped(fc.inferences), when, r.leak_rate_bytes_per_inference));
  }
  if (!r.leaks.empty())
    more(out, "-> free temporaries in the Invoke that allocates them, or allocate once in Prepare");
  for (const auto& w : r.watermarks)
    if (w.shape == "stair")
      more(out, fmt::format("   '{}' rises in steps: {} steps of {:.0f} B every {:.0f} inferences", w.pool,
                            w.stairs.steps, w.stairs.step_bytes, w.stairs.period_inferences));

  if (f.band != "healthy") {
    ++problems;
    line(out, "[FRAGMENT]", fmt::format("{} at the end, {} at worst: {}", pct(f.final_rate), pct(f.max_rate), f.band));
    for (const auto& p : f.pools)
      if (p.final_rate > 0)
        more(out, fmt::format("'{}': {} free, largest block {}", p.pool, bytes(p.total_free), bytes(p.largest_free)));
  }
  if (r.lifo.violations) {
    ++problems;
    std::string site = r.lifo.sites.empty() ? "?" : r.lifo.sites.front().site;
    line(out, "[LIFO]", fmt::format("{} arena frees out of stack order (first culprit {}): up to {} stranded, {} at the end",
                                    grouped(r.lifo.violations), site, bytes(r.lifo.max_stranded_bytes),
                                    bytes(r.lifo.final_stranded_bytes)));
    more(out, "-> free arena buffers in reverse order of allocation; counts can balance while the water mark stays up");
  }
  if (problems == 0) line(out, "[OK]", "no leak, overflow, guard failure or fragmentation problem found");

  out += "\n";
  out += fmt::format("Peak          {} at inference {}", bytes(r.peak.bytes), grouped(r.peak.inference));
  if (r.inferences)
    out += fmt::format("; per inference {} .. {} (mean {})", bytes(r.peak.min_inference_peak),
                       bytes(r.peak.max_inference_peak), bytes(static_cast<uint64_t>(r.peak.mean_inference_peak)));
  out += "\n";
  for (size_t i = 0; i < r.peak.live_at_peak.size() && i < 3; ++i)
    more(out, fmt::format("{:>12} in {:>5} blocks  {}", bytes(r.peak.live_at_peak[i].bytes),
                          grouped(r.peak.live_at_peak[i].count), r.peak.live_at_peak[i].site));
  for (const auto& p : r.pools) {
    std::string size = p.size ? bytes(p.size) : "size unknown";
    std::string margin = p.peak_margin_pct ? fmt::format(", margin {:.1f}%", *p.peak_margin_pct) : "";
    line(out, "Pool", fmt::format("'{}' ({}, {}): peak {}{}, {} live blocks at the end", p.name, p.kind, size,
                                  bytes(p.peak_bytes), margin, grouped(p.live_count)));
  }
  if (!r.persistent.empty()) {
    uint64_t total = 0;
    for (const auto& p : r.persistent) total += p.bytes;
    line(out, "Persistent", fmt::format("{} made before the first inference or once (not leaks), largest: {}",
                                        bytes(total), r.persistent.front().site));
  }
  if (r.sizes.aligned_requests && r.sizes.padding_bytes > r.sizes.padding_bytes_at_8)
    line(out, "Alignment", fmt::format("{} of padding at up to {}-byte alignment; 8-byte alignment would need {}",
                                       bytes(r.sizes.padding_bytes), r.sizes.max_align, bytes(r.sizes.padding_bytes_at_8)));

  std::string notes;
  if (s.skipped_lines) notes += fmt::format(", {} unrelated lines skipped", grouped(s.skipped_lines));
  if (s.malformed_lines) notes += fmt::format(", {} malformed [MEM] lines", grouped(s.malformed_lines));
  if (s.corrupt_bytes) notes += fmt::format(", {} corrupt bytes skipped", grouped(s.corrupt_bytes));
  if (s.truncated_bytes) notes += fmt::format(", {} bytes of a cut-off last record ignored", grouped(s.truncated_bytes));
  if (r.counts.unknown_frees) notes += fmt::format(", {} frees of unknown blocks", grouped(r.counts.unknown_frees));
  if (!notes.empty()) line(out, "Input", notes.substr(2));
  if (s.overflows)
    line(out, "[DATA LOST]", fmt::format("{} ITM overflow packets: the device dropped trace data, numbers may be low; "
                                         "lower the event rate or raise the SWO clock", grouped(s.overflows)));
  if (s.dropped_records)
    line(out, "[DATA LOST]", fmt::format("{} records dropped on the device (trace buffer full): numbers may be low; "
                                         "drain the buffer more often or make it larger", grouped(s.dropped_records)));
  if (s.first_problem && (s.corrupt_bytes || s.malformed_lines))
    more(out, fmt::format("first problem at {}{}: {}", s.first_problem->line ? "line " : "offset ",
                          s.first_problem->line ? s.first_problem->line : s.first_problem->offset, s.first_problem->what));
  return out;
}

}  // namespace edgemem
