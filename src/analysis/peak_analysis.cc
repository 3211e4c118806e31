#include "peak_analysis.h"

#include <algorithm>

namespace edgemem {

void PeakAnalysis::finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const {
  out.peak_bytes = peak_;
  out.peak.bytes = peak_;
  out.peak.time = time_;
  out.peak.inference = inference_;
  const auto& sites = tracker.sites();
  for (size_t id = 0; blocks_known_ && id < sites.size(); ++id)
    if (auto [bytes, count] = tracker.at_snapshot(sites[id]); count)
      out.peak.live_at_peak.push_back({std::string(context.sites.name(static_cast<SiteId>(id))), bytes, count});
  std::sort(out.peak.live_at_peak.begin(), out.peak.live_at_peak.end(),
            [](const auto& a, const auto& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site; });
}

}  // namespace edgemem
