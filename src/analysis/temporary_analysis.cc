#include "temporary_analysis.h"

#include <algorithm>

namespace edgemem {

void TemporaryAnalysis::add_rows(uint32_t up_to) {
  last_.resize(size_t{up_to} + 1);
  rows_ = up_to + 1;
}

void TemporaryAnalysis::count(const Block& b) {
  ++count_;
  bytes_ += b.size;
  if (b.site >= sites_.size()) sites_.resize(b.site + 1);
  ++sites_[b.site].count;
  sites_[b.site].bytes += b.size;
}

void TemporaryAnalysis::finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const {
  TemporaryResult& r = out.temporaries;
  r.count = count_;
  r.bytes = bytes_;
  r.allocations = allocations_;
  std::vector<SiteId> ids;
  for (size_t id = 0; id < sites_.size(); ++id)
    if (sites_[id].count) ids.push_back(static_cast<SiteId>(id));
  auto more = [&](SiteId a, SiteId b) {
    const Counts &x = sites_[a], &y = sites_[b];
    if (x.count != y.count) return x.count > y.count;
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    return context.sites.name(a) < context.sites.name(b);
  };
  size_t n = std::min(ids.size(), kTopTemporarySites);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), more);
  for (size_t i = 0; i < n; ++i) {
    SiteId id = ids[i];
    uint64_t allocs = id < tracker.sites().size() ? tracker.sites()[id].allocs : 0;
    r.top.push_back({std::string(context.sites.name(id)), sites_[id].count, sites_[id].bytes, allocs});
  }
}

}  // namespace edgemem
