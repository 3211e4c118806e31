// What the timeline exports (Perfetto, Chrome tracing) draw per pool, read
// once from the analysis result so both show the same tracks: the pool's
// series and its events (leaks, failed allocations, overflows, guard
// failures) as instants with their details.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "edgemem/analysis_result.h"

namespace edgemem {

struct MarkArg {
  std::string name;
  std::variant<uint64_t, double, std::string> value;
};

struct TimelineMark {
  uint64_t time = 0;  // trace time
  std::string name;   // short: the site's innermost frame
  std::vector<MarkArg> args;
};

struct PoolTracks {
  const PoolSummary* pool = nullptr;
  const PoolTimeline* timeline = nullptr;           // null when no event sampled the pool
  const PoolFragmentation* fragmentation = nullptr;  // null when no allocation measured it
  std::vector<TimelineMark> marks;                   // in time order
};

// In the result's pool order.
std::vector<PoolTracks> pool_tracks(const AnalysisResult& result);

// Which event lists the result holds only the first of ("shows the first 100
// of 250 failed allocations"); empty when every event is shown.
std::string events_note(const AnalysisResult& result);

// A lane for each inference span, so that spans of one lane never overlap:
// inferences run at once by several threads end in any order, and a
// timeline's slices on one track must nest (an end closes the latest begun).
// Spans with a begin and an end take the lowest lane free at their begin,
// one still running at the trace's end keeps its lane to the end; marks of
// a begin or an end alone are instants, on lane 0.
std::vector<size_t> inference_lanes(const std::vector<InferenceSpan>& spans);

// "4096 of 1000000 inferences shown, evenly spread (about one in 245)" when
// spans were dropped; empty when none were.
std::string inference_note(const AnalysisResult& result);

}  // namespace edgemem
