#include "peak_analysis.h"

#include <algorithm>

namespace edgemem {

void PeakAnalysis::snapshot(const PoolTracker& tracker) {
  pending_ = false;
  holders_.clear();
  const auto& sites = tracker.sites();
  for (size_t id = 0; id < sites.size(); ++id)
    if (sites[id].live_count) holders_.emplace_back(static_cast<SiteId>(id), sites[id]);
}

void PeakAnalysis::finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) {
  if (pending_) snapshot(tracker);
  out.peak_bytes = peak_;
  out.peak.bytes = peak_;
  out.peak.time = time_;
  out.peak.inference = inference_;
  for (const auto& [id, c] : holders_)
    out.peak.live_at_peak.push_back({std::string(context.sites.name(id)), c.live_bytes, c.live_count});
  std::sort(out.peak.live_at_peak.begin(), out.peak.live_at_peak.end(),
            [](const auto& a, const auto& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site; });
}

}  // namespace edgemem
