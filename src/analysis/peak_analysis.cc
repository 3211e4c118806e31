#include "peak_analysis.h"

#include <algorithm>

#include <fmt/format.h>

namespace edgemem {

void PeakAnalysis::finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const {
  out.peak_bytes = peak_;
  out.peak.bytes = peak_;
  out.peak.time = time_;
  out.peak.inference = inference_;
  out.peak.boot = boot_;
  if (!blocks_known_) return;
  const auto& sites = tracker.sites();
  struct Holder {
    SiteId id;
    uint64_t bytes, count;
  };
  std::vector<Holder> holders;
  uint64_t held = 0;
  for (size_t id = 0; id < sites.size(); ++id)
    if (auto [bytes, count] = tracker.at_snapshot(sites[id]); count) {
      holders.push_back({static_cast<SiteId>(id), bytes, count});
      held += bytes;
    }
  // An arena's usage is its top: bytes below it that no live block covers
  // (freed out of order, alignment padding, an allocation the trace lost)
  // are used until it resets. They are in the peak, so they are a row of
  // what held it, and the rows add up to the peak.
  const bool summarized = std::any_of(tracker.pools().begin(), tracker.pools().end(), [](const PoolState& p) { return p.summarized; });
  const uint64_t below_top = held < peak_ && !summarized ? peak_ - held : 0;
  // Past listed::kPeakHolders rows the smallest sites are one summed row, before any is named.
  const size_t named = listed::kPeakHolders - (below_top ? 1 : 0);
  PeakHolder rest;
  if (holders.size() > named) {
    auto larger = [](const Holder& a, const Holder& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.id < b.id; };
    std::nth_element(holders.begin(), holders.begin() + static_cast<long>(named), holders.end(), larger);
    for (auto h = holders.begin() + static_cast<long>(named); h != holders.end(); ++h) {
      rest.bytes += h->bytes;
      rest.count += h->count;
    }
    rest.site = fmt::format("({} other sites)", holders.size() - named);
    holders.resize(named);
  }
  for (const Holder& h : holders)
    out.peak.live_at_peak.push_back({std::string(context.sites.name(h.id)), h.bytes, h.count});
  if (below_top) out.peak.live_at_peak.push_back({std::string(kBelowArenaTop), below_top, 0});
  std::sort(out.peak.live_at_peak.begin(), out.peak.live_at_peak.end(),
            [](const auto& a, const auto& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site; });
  if (rest.count) out.peak.live_at_peak.push_back(std::move(rest));
}

}  // namespace edgemem
