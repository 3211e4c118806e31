#include "timeline_tracks.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "site_names.h"

namespace edgemem {

namespace {

// The device's inference number, and its boot where the device restarted
// (each boot numbers its inferences anew).
void add_inference(std::vector<MarkArg>& args, const std::optional<uint64_t>& inference, uint64_t boot, bool restarted) {
  if (inference) args.push_back({"inference", *inference});
  if (restarted) args.push_back({"boot", boot});
}

void add_leaks(const AnalysisResult& r, const std::string& pool, std::vector<TimelineMark>& marks) {
  for (const SiteLeak& l : r.leaks) {
    if (l.pool != pool) continue;
    std::vector<MarkArg> args{{"site", l.site}, {"bytes", l.bytes}, {"blocks", l.count}};
    if (l.bytes_per_inference) args.push_back({"bytes_per_inference", *l.bytes_per_inference});
    if (!l.type_hint.empty()) args.push_back({"type_hint", l.type_hint});
    std::string site(innermost_frame(l.site));
    // Its first block still live and its latest: where the leak starts and how
    // far it got. A cut recording's groups grew up to the cut: not judged leaks.
    const bool judged = r.checks.leaks.status != CheckStatus::not_checked;
    const std::string what = judged ? "leak" : "leak? (growing up to the cut, not judged)";
    marks.push_back({l.first_time, what + " starts: " + site, args});
    marks.push_back({l.last_time, fmt::format("{}: {} holds {} B in {} block{}", what, site, l.bytes, l.count, l.count == 1 ? "" : "s"), args});
  }
}

void add_failures(const AnalysisResult& r, const std::string& pool, std::vector<TimelineMark>& marks) {
  for (const AllocFailure& f : r.fragmentation.failures) {
    if (f.pool != pool) continue;
    std::vector<MarkArg> args{{"size", f.size}};
    if (f.total_free) args.insert(args.end(), {{"total_free", *f.total_free}, {"largest_free", *f.largest_free}});
    args.insert(args.end(), {{"site", f.site}, {"fragmentation", std::string(f.fragmentation ? "yes" : "no")}});
    add_inference(args, f.inference, f.boot, r.restarts.total > 0);
    marks.push_back({f.time, fmt::format("alloc failed: {} B{}", f.size, f.fragmentation ? " (fragmentation)" : ""), args});
  }
}

void add_overflows(const AnalysisResult& r, const std::string& pool, std::vector<TimelineMark>& marks) {
  for (const Overflow& o : r.overflows) {
    if (o.pool != pool) continue;
    marks.push_back({o.time, fmt::format("overflow: {} B past the end", o.over_by),
                     {{"offset", o.offset}, {"size", o.size}, {"arena_size", o.arena_size}, {"over_by", o.over_by},
                      {"site", o.site}}});
  }
}

void add_guards(const AnalysisResult& r, const std::string& pool, std::vector<TimelineMark>& marks) {
  for (const GuardFailure& g : r.guard_failures) {
    if (g.pool != pool) continue;
    std::vector<MarkArg> args{{"site", g.site}};
    add_inference(args, g.inference, g.boot, r.restarts.total > 0);
    marks.push_back({g.time, "guard corrupted", args});
  }
}

}  // namespace

std::string events_note(const AnalysisResult& r) {
  std::vector<std::string> parts;
  if (r.fragmentation.alloc_failures > r.fragmentation.failures.size())
    parts.push_back(fmt::format("{} of {} failed allocations", r.fragmentation.failures.size(), r.fragmentation.alloc_failures));
  if (r.overflow_count > r.overflows.size())
    parts.push_back(fmt::format("{} of {} overflows", r.overflows.size(), r.overflow_count));
  if (r.guard_failure_count > r.guard_failures.size())
    parts.push_back(fmt::format("{} of {} guard failures", r.guard_failures.size(), r.guard_failure_count));
  return parts.empty() ? ""
                      : fmt::format("shows {} (of each kind the first 100, then each other pool's first; counts of all "
                                    "pools)",
                                    fmt::join(parts, ", "));
}

std::vector<PoolTracks> pool_tracks(const AnalysisResult& r) {
  std::vector<PoolTracks> out;
  for (const PoolSummary& p : r.pools) {
    PoolTracks t;
    t.pool = &p;
    for (const PoolTimeline& tl : r.timelines)
      if (tl.pool == p.name) t.timeline = &tl;
    for (const PoolFragmentation& f : r.fragmentation.pools)
      if (f.pool == p.name) t.fragmentation = &f;
    add_leaks(r, p.name, t.marks);
    add_failures(r, p.name, t.marks);
    add_overflows(r, p.name, t.marks);
    add_guards(r, p.name, t.marks);
    std::stable_sort(t.marks.begin(), t.marks.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<size_t> inference_lanes(const std::vector<InferenceSpan>& spans) {
  std::vector<size_t> lanes(spans.size(), 0);
  std::vector<uint64_t> busy_until;  // per lane: the end of its latest span
  for (size_t i = 0; i < spans.size(); ++i) {
    const InferenceSpan& s = spans[i];
    const bool open_at_end = s.begin_time && !s.end_time && s.running;
    if (!s.begin_time || (!s.end_time && !open_at_end)) continue;  // an instant
    size_t lane = 0;
    while (lane < busy_until.size() && busy_until[lane] > *s.begin_time) ++lane;
    if (lane == busy_until.size()) busy_until.push_back(0);
    busy_until[lane] = open_at_end ? UINT64_MAX : *s.end_time;
    lanes[i] = lane;
  }
  return lanes;
}

std::string inference_note(const AnalysisResult& r) {
  const InferenceMarks& m = r.inference_marks;
  if (m.dropped == 0) return "";
  // The marks count an inference begun and never ended; the summary does not.
  const uint64_t unfinished = m.total > r.inferences ? m.total - r.inferences : 0;
  return fmt::format("{} of {} inferences shown, evenly spread (about one in {}){}", m.spans.size(), m.total,
                     m.spans.empty() ? m.total : (m.total + m.spans.size() - 1) / m.spans.size(),
                     unfinished == 0 ? "" : fmt::format("; {} begun and never ended", unfinished));
}

}  // namespace edgemem
