#include "timeline_analysis.h"

namespace edgemem {

void TimelineAnalysis::add_span(InferenceSpan span) {
  uint64_t index = total_++;
  if (index % stride_ != 0) return;
  if (spans_.size() == kMaxSpans) {
    // Kept spans are inferences 0, s, 2s, ...: keeping the even positions
    // keeps 0, 2s, 4s, ... and the spacing stays even.
    size_t kept = 0;
    for (size_t i = 0; i < spans_.size(); i += 2) spans_[kept++] = spans_[i];
    spans_.resize(kept);
    stride_ *= 2;
    if (index % stride_ != 0) return;
  }
  spans_.push_back(span);
}

bool TimelineAnalysis::kept(uint64_t position) const {
  return position % stride_ == 0 && position / stride_ < spans_.size();
}

uint64_t TimelineAnalysis::inference_begin(uint64_t time, uint64_t number) {
  const uint64_t position = total_;
  add_span({number, time, std::nullopt});
  open_.emplace(position, InferenceSpan{number, time, std::nullopt});
  return position;
}

void TimelineAnalysis::inference_end(uint64_t time, uint64_t number, std::optional<uint64_t> begun) {
  if (!begun) {
    add_span({number, std::nullopt, time});
    return;
  }
  open_.erase(*begun);
  if (kept(*begun)) spans_[*begun / stride_].end_time = time;
}

void TimelineAnalysis::end_again(uint64_t time, uint64_t position) {
  if (kept(position)) spans_[position / stride_].end_time = time;
}

void TimelineAnalysis::summary(PoolId pool, uint64_t time, uint64_t used, uint64_t peak) {
  if (pool >= pools_.size()) pools_.resize(size_t{pool} + 1, PoolSeries(kSeriesPoints));
  if (pool >= summarized_.size()) summarized_.resize(size_t{pool} + 1);
  summarized_[pool] = true;
  if (peak > used) pools_[pool].add(time, {peak, 0});
  pools_[pool].add(time, {used, 0});
}

void TimelineAnalysis::finish(const TraceContext& context, AnalysisResult& out) const {
  for (size_t i = 0; i < pools_.size(); ++i) {
    const PoolSeries& p = pools_[i];
    if (p.added() == 0) continue;
    const bool blocks_known = i >= summarized_.size() || !summarized_[i];
    out.timelines.push_back({context.pools.at(static_cast<PoolId>(i)).name, p.added(), p.points(0),
                             blocks_known ? p.points(1) : std::vector<std::pair<uint64_t, uint64_t>>{}});
  }
  // Past the cap those still running were dropped with the others between
  // kept ones: the exports then drew no open inference at the end. They go
  // back in their place, in the order the inferences began.
  auto& spans = out.inference_marks.spans;
  spans.clear();
  auto open = open_.begin();
  for (size_t i = 0; i <= spans_.size(); ++i) {
    const uint64_t position = i * stride_;
    for (; open != open_.end() && (i == spans_.size() || open->first < position); ++open)
      if (!kept(open->first)) {
        spans.push_back(open->second);
        spans.back().running = true;
      }
    if (i < spans_.size()) {
      spans.push_back(spans_[i]);
      spans.back().running = open_.contains(position);
    }
  }
  out.inference_marks.total = total_;
  out.inference_marks.dropped = total_ - out.inference_marks.spans.size();
}

}  // namespace edgemem
