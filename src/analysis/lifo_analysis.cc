#include "lifo_analysis.h"

#include <algorithm>

namespace edgemem {

void LifoAnalysis::freed(PoolState& pool, const Block& b) {
  uint64_t top = pool.usage();
  // After any free, a proper pop too: a 0-byte block left at the top keeps
  // it up (the end's stranded bytes read above the most at any time). Blocks
  // over each other (a lost free) hold more than the top: none stranded,
  // not the difference wrapped to 2^64.
  if (top > pool.live_bytes) max_stranded_ = std::max(max_stranded_, top - pool.live_bytes);
  // A 0-byte block strands nothing, wherever it lay.
  if (top <= b.address + b.size || b.size == 0) return;  // it was the top block: a proper pop
  ++violations_;
  if (sites_.size() <= b.site) sites_.resize(b.site + 1);
  ++sites_[b.site].violations;
  sites_[b.site].bytes += b.size;
}

void LifoAnalysis::finish(PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) {
  LifoResult& r = out.lifo;
  r.violations = violations_;
  r.max_stranded_bytes = max_stranded_;
  // In one arena, as max_stranded_bytes is (so it is never above it); a
  // summarised arena's usage is the device's, with no blocks to hold it.
  for (PoolState& p : tracker.pools())
    if (p.kind == PoolKind::arena && !p.summarized)
      r.final_stranded_bytes = std::max(r.final_stranded_bytes, p.usage() - std::min(p.usage(), p.live_bytes));
  for (size_t id = 0; id < sites_.size(); ++id)
    if (sites_[id].violations)
      r.sites.push_back({std::string(context.sites.name(static_cast<SiteId>(id))), sites_[id].violations,
                         sites_[id].bytes});
  std::sort(r.sites.begin(), r.sites.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
}

}  // namespace edgemem
