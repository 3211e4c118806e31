#include "pool_tracker.h"

#include <algorithm>

namespace edgemem {

uint64_t PoolState::arena_top() {
  while (!tops_.empty()) {
    auto [end, address] = tops_.front();
    const Block* b = live.find(address);
    if (b && b->address + b->size == end) return end;
    std::pop_heap(tops_.begin(), tops_.end());
    tops_.pop_back();
  }
  return 0;
}

void PoolState::push_top(const Block& b) {
  tops_.emplace_back(b.address + b.size, b.address);
  std::push_heap(tops_.begin(), tops_.end());
  if (tops_.size() > 4 * live.size() + 64) {
    // Drop entries of freed blocks, and duplicates: a temporary allocated
    // at the same offset every inference leaves identical entries that all
    // look current. Afterwards at most one entry per live block remains.
    std::erase_if(tops_, [&](const auto& t) {
      const Block* x = live.find(t.second);
      return !x || x->address + x->size != t.first;
    });
    std::sort(tops_.begin(), tops_.end());
    tops_.erase(std::unique(tops_.begin(), tops_.end()), tops_.end());
    std::make_heap(tops_.begin(), tops_.end());
  }
}

void PoolState::cleared() {
  live.clear();
  live_bytes = 0;
  tops_.clear();
}

PoolState& PoolTracker::add_pools(PoolId id) {
  while (pools_.size() <= id) {
    pools_.emplace_back();
    pools_.back().kind = context_.pools.at(static_cast<PoolId>(pools_.size() - 1)).kind;
  }
  pool_count_ = pools_.size();
  return pools_[id];
}

void PoolTracker::reset(PoolId pool_id, bool freed) {
  PoolState& p = pool(pool_id);
  uint64_t before = p.usage();
  p.live.for_each([&](const Block& b) {
    SiteCounters& s = changing_site(b.site);
    s.frees += freed;
    s.live_bytes -= b.size;
    --s.live_count;
  });
  p.cleared();
  refresh_usage(p, before);
}

void PoolTracker::summary(PoolId pool_id, uint64_t used, uint64_t peak) {
  PoolState& p = pool(pool_id);
  uint64_t before = p.usage();
  p.summarized = true;
  p.reported_usage = used;
  refresh_usage(p, before);
  p.peak_usage = std::max(p.peak_usage, peak);
  p.inference_peak = std::max(p.inference_peak, peak);
}

}  // namespace edgemem
