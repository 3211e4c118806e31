#include "temporary_analysis.h"

#include <algorithm>

namespace edgemem {

TemporaryAnalysis::Last& TemporaryAnalysis::last_of(uint32_t thread) {
  uint32_t i = threads_.of(thread);
  if (i >= last_.size()) last_.resize(i + 1);
  return last_[i];
}

void TemporaryAnalysis::allocated(PoolId pool, uint32_t thread, const Block& b) {
  ++allocations_;
  last_of(thread) = {b.address, b.time, pool, true};
}

void TemporaryAnalysis::freed(PoolId pool, uint32_t thread, const Block& b) {
  Last& last = last_of(thread);
  // The same block (not a later one at the same address), made by this thread.
  const bool temporary = last.open && b.thread == thread && last.address == b.address && last.time == b.time &&
                         last.pool == pool;
  last.open = false;  // any free of the thread ends the run, as heaptrack's does
  if (!temporary) return;
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
