// Each pool's usage and live block count over trace time, and where the
// inferences begin and end, all bounded for any trace length: what a
// timeline view (Perfetto, Chrome tracing, the HTML report) draws.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "bounded_series.h"
#include "edgemem/analysis_result.h"
#include "pool_tracker.h"

namespace edgemem {

class TimelineAnalysis {
 public:
  static constexpr std::size_t kSeriesPoints = 512;  // per series
  static constexpr std::size_t kMaxSpans = 4096;     // inference spans kept

  // After an event changed (or tried to change) `pool`: inline, as it runs on
  // most events.
  void sample(PoolId pool, uint64_t time, PoolState& state) {
    if (pool >= pools_.size()) [[unlikely]] pools_.resize(size_t{pool} + 1, PoolSeries(kSeriesPoints));
    pools_[pool].add(time, {state.usage(), state.live.size()});
  }
  // A summary record (device summary mode): the pool's peak since its
  // previous record, then its usage, both at the record's time; the pool's
  // live blocks are not told, so it gets no live-block series.
  void summary(PoolId pool, uint64_t time, uint64_t used, uint64_t peak);
  // Returns the span's position, which its end names: threads running
  // inferences at once end them in any order.
  uint64_t inference_begin(uint64_t time, uint64_t number);
  // `begun`: the position inference_begin gave; none for an inference
  // without a begin marker, a span of its end only.
  void inference_end(uint64_t time, uint64_t number, std::optional<uint64_t> begun);
  // The inference at `position`, already ended, has its end marker at `time`.
  void end_again(uint64_t time, uint64_t position);
  // The inference at `position` will not end: not drawn as still running.
  void abandoned(uint64_t position) { open_.erase(position); }
  // Leaves the analysis as it was, so it can be called mid-trace.
  void finish(const TraceContext& context, AnalysisResult& out) const;

 private:
  // Usage (series 0) and live blocks (series 1) share their buckets.
  using PoolSeries = BoundedSeries<uint64_t, uint64_t, 2>;
  void add_span(InferenceSpan span);
  bool kept(uint64_t position) const;  // the span at `position` is in spans_

  std::vector<PoolSeries> pools_;
  std::vector<bool> summarized_;  // by pool: told by summary records, not blocks
  std::vector<InferenceSpan> spans_;
  uint64_t total_ = 0;
  uint64_t stride_ = 1;  // every stride-th inference is kept: spans_[i] is position i * stride_
  // Inferences awaiting their end, kept or not, by position: those still
  // running at the end of the trace are always drawn (the analyser bounds
  // how many are open).
  std::map<uint64_t, InferenceSpan> open_;
};

}  // namespace edgemem
