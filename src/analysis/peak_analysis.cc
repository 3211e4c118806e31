#include "peak_analysis.h"

#include <algorithm>

namespace edgemem {

std::vector<std::pair<SiteId, SiteCounters>> PeakAnalysis::holders(const PoolTracker& tracker) {
  std::vector<std::pair<SiteId, SiteCounters>> out;
  const auto& sites = tracker.sites();
  for (size_t id = 0; id < sites.size(); ++id)
    if (sites[id].live_count) out.emplace_back(static_cast<SiteId>(id), sites[id]);
  return out;
}

void PeakAnalysis::finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const {
  // Nothing has left since a pending peak, so the live set now is the one at it.
  const auto live = pending_ ? holders(tracker) : holders_;
  out.peak_bytes = peak_;
  out.peak.bytes = peak_;
  out.peak.time = time_;
  out.peak.inference = inference_;
  for (const auto& [id, c] : live)
    out.peak.live_at_peak.push_back({std::string(context.sites.name(id)), c.live_bytes, c.live_count});
  std::sort(out.peak.live_at_peak.begin(), out.peak.live_at_peak.end(),
            [](const auto& a, const auto& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site; });
}

}  // namespace edgemem
