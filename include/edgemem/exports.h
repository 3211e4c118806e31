// Exports for other tools' viewers (docs/exports.md): Perfetto, Chrome
// tracing, flamegraph.pl and speedscope. Like every presenter they read the
// analysis result and the input summary only, never events.
#pragma once

#include <cstdint>
#include <string>

#include "edgemem/analysis_result.h"
#include "edgemem/report.h"

namespace edgemem {

// Which live allocations a flame graph weighs.
enum class LiveSet : uint8_t {
  at_end,   // still live when the trace ends: `leaks` and `persistent`, per pool
  at_peak,  // live at the high-water mark of all pools together: `peak.live_at_peak`
};

// Perfetto's native protobuf trace (TrackEvent): per pool, counter tracks of
// used bytes, live blocks and fragmentation rate and an events track
// (leaks, failed allocations, overflows, guard failures); the inferences as
// slices. Binary: write it as it is.
std::string perfetto_trace(const InputSummary& input, const AnalysisResult& result);

// The same tracks as Chrome's Trace Event Format (JSON), for chrome://tracing.
std::string chrome_trace_json(const InputSummary& input, const AnalysisResult& result);

// flamegraph.pl's folded stacks: `pool;frame;...;frame bytes`, one line per stack.
std::string folded_stacks(const AnalysisResult& result, LiveSet set);

// speedscope's file format: one sampled profile per pool, weighed in bytes,
// of what is live at the end, then the live set at the peak.
std::string speedscope_json(const InputSummary& input, const AnalysisResult& result);

}  // namespace edgemem
