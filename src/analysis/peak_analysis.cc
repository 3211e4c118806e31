#include "peak_analysis.h"

#include <algorithm>

#include <fmt/format.h>

namespace edgemem {

void PeakAnalysis::finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const {
  out.peak_bytes = peak_;
  out.peak.bytes = peak_;
  out.peak.time = time_;
  out.peak.inference = inference_;
  if (!blocks_known_) return;
  const auto& sites = tracker.sites();
  struct Holder {
    SiteId id;
    uint64_t bytes, count;
  };
  std::vector<Holder> holders;
  for (size_t id = 0; id < sites.size(); ++id)
    if (auto [bytes, count] = tracker.at_snapshot(sites[id]); count) holders.push_back({static_cast<SiteId>(id), bytes, count});
  // Past listed::kPeakHolders the smallest are one summed row, before any is named.
  PeakHolder rest;
  if (holders.size() > listed::kPeakHolders) {
    auto larger = [](const Holder& a, const Holder& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.id < b.id; };
    std::nth_element(holders.begin(), holders.begin() + listed::kPeakHolders, holders.end(), larger);
    for (auto h = holders.begin() + listed::kPeakHolders; h != holders.end(); ++h) {
      rest.bytes += h->bytes;
      rest.count += h->count;
    }
    rest.site = fmt::format("({} other sites)", holders.size() - listed::kPeakHolders);
    holders.resize(listed::kPeakHolders);
  }
  for (const Holder& h : holders)
    out.peak.live_at_peak.push_back({std::string(context.sites.name(h.id)), h.bytes, h.count});
  // An arena's usage is its top: bytes freed below it out of order stay
  // used until it resets, held by no block. They are in the peak, so they
  // are among what held it (the flame graph of the peak is as wide as the peak).
  uint64_t held = rest.bytes;
  for (const PeakHolder& h : out.peak.live_at_peak) held += h.bytes;
  const bool summarized = std::any_of(tracker.pools().begin(), tracker.pools().end(), [](const PoolState& p) { return p.summarized; });
  if (held < peak_ && !summarized) out.peak.live_at_peak.push_back({std::string(kBelowArenaTop), peak_ - held, 0});
  std::sort(out.peak.live_at_peak.begin(), out.peak.live_at_peak.end(),
            [](const auto& a, const auto& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site; });
  if (rest.count) out.peak.live_at_peak.push_back(std::move(rest));
}

}  // namespace edgemem
