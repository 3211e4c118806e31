#include "layout_analysis.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>
#include <numbers>
#include <numeric>

#include <fmt/format.h>

#include "report/units.h"

namespace edgemem {

namespace {

double area(const Block& b, uint64_t end) {
  return static_cast<double>(std::max<uint64_t>(b.size, 1)) *
         static_cast<double>(end > b.time ? end - b.time : 1);
}

// Weighted sampling without replacement (Efraimidis and Spirakis' A-Res):
// key = ln(u) / weight, keep the largest keys. A block covering much of the
// chart is almost surely kept, and among blocks alike the kept ones spread
// over the whole trace instead of being its first 20,000. u comes from a
// hash of the block, so the same trace always draws the same blocks.
double uniform(const Block& b, PoolId pool) {
  uint64_t h = b.address * 0x9E3779B97F4A7C15ull ^ (b.time + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full ^ pool;
  h ^= h >> 31;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return (static_cast<double>(h >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
}

double sample_key(double u, double weight) { return std::log(u) / weight; }

// ln(1 + (k + 1) / 64): the top of ln's range over u's mantissa bucket k.
constexpr int kBucketBits = 6;
const std::array<double, 64> kBucketLogTop = [] {
  std::array<double, 64> t{};
  for (size_t k = 0; k < t.size(); ++k) t[k] = std::log1p(static_cast<double>(k + 1) / 64.0);
  return t;
}();

// True only if sample_key(u, weight) <= floor for sure, without the
// logarithm or the division (most frees of a long trace land here once the
// sample is full). ln(u) lies below its exponent's and top mantissa bits'
// bound; the 1e-9 margins dwarf the rounding of log, the division and the
// product (|ln u| < 38, relative errors ~1e-16), so a "true" here means the
// exact key would have been rejected too, and the sample is unchanged. A
// floor of -inf (the sample not full) is never true, +inf (no sample) always.
bool surely_not_above(double u, double weight, double floor) {
  const uint64_t bits = std::bit_cast<uint64_t>(u);
  const int exponent = static_cast<int>(bits >> 52) - 1023;
  const double bound = exponent * std::numbers::ln2 + kBucketLogTop[(bits >> (52 - kBucketBits)) & 63] + 1e-9;
  return bound <= floor * weight * (1 + 1e-9);
}

}  // namespace

void LayoutAnalysis::Region::absorb(const Region& other) {
  first_window = std::min(first_window, other.first_window);
  last_window = std::max(last_window, other.last_window);
  low = std::min(low, other.low);
  high = std::max(high, other.high);
  blocks += other.blocks;
  raster.merge(other.raster);
}

LayoutAnalysis::Region& LayoutAnalysis::region_for(PoolState& s, const Block& block) {
  const uint64_t w0 = block.address >> kWindowShift, w1 = (block_end(block) - (block.size > 0)) >> kWindowShift;
  auto& regions = s.regions;
  s.last_closed = 0;  // indices may move
  // The regions the block's windows meet or touch: a run, as regions are by address.
  auto meets = [&](const Region& r) { return r.first_window <= w1 + 1 && r.last_window + 1 >= w0; };
  auto first = std::find_if(regions.begin(), regions.end(), meets);
  if (first == regions.end()) {
    auto at = std::find_if(regions.begin(), regions.end(), [&](const Region& r) { return r.first_window > w1; });
    if (regions.size() == kMaxRegions) {
      // Full: the two closest become one, or the block joins its nearest
      // region when nothing is closer than that.
      size_t pair = 0;
      for (size_t i = 1; i + 1 < regions.size(); ++i)
        if (regions[i + 1].first_window - regions[i].last_window < regions[pair + 1].first_window - regions[pair].last_window)
          pair = i;
      const uint64_t pair_gap = regions[pair + 1].first_window - regions[pair].last_window;
      const uint64_t below = at == regions.begin() ? UINT64_MAX : w0 - std::prev(at)->last_window;
      const uint64_t above = at == regions.end() ? UINT64_MAX : at->first_window - w1;
      if (std::min(below, above) <= pair_gap) {
        Region& r = below <= above ? *std::prev(at) : *at;
        r.first_window = std::min(r.first_window, w0);
        r.last_window = std::max(r.last_window, w1);
        s.last_opened = static_cast<uint32_t>(&r - regions.data());
        return r;
      }
      regions[pair].absorb(regions[pair + 1]);
      regions.erase(regions.begin() + static_cast<ptrdiff_t>(pair) + 1);
      at = std::find_if(regions.begin(), regions.end(), [&](const Region& r) { return r.first_window > w1; });
    }
    Region fresh;
    fresh.first_window = w0;
    fresh.last_window = w1;
    at = regions.insert(at, std::move(fresh));
    // The pool's grid so far holds only blocks of its one other region.
    if (regions.size() == 2) regions[at == regions.begin() ? 1 : 0].raster = s.all;
    s.last_opened = static_cast<uint32_t>(at - regions.begin());
    return *at;
  }
  // Grow the first region it meets by its windows and every other it meets (it bridges them).
  auto last = std::find_if_not(first, regions.end(), meets);
  first->first_window = std::min(first->first_window, w0);
  first->last_window = std::max(first->last_window, w1);
  for (auto it = std::next(first); it != last; ++it) first->absorb(*it);
  const size_t index = static_cast<size_t>(first - regions.begin());
  regions.erase(std::next(first), last);
  s.last_opened = static_cast<uint32_t>(index);
  return regions[index];
}

uint32_t LayoutAnalysis::region_index(const PoolState& s, uint64_t address) {
  const uint64_t w = address >> kWindowShift;
  uint32_t nearest = 0;
  uint64_t distance = UINT64_MAX;
  for (size_t i = 0; i < s.regions.size(); ++i) {
    const Region& r = s.regions[i];
    const uint64_t d = w < r.first_window ? r.first_window - w : w > r.last_window ? w - r.last_window : 0;
    if (d < distance) {
      distance = d;
      nearest = static_cast<uint32_t>(i);
    }
  }
  return nearest;
}

uint32_t LayoutAnalysis::new_pair(PoolId pool, const Block& block) {
  if (block.group >= pair_of_group_.size()) pair_of_group_.resize(size_t{block.group} + 1, kNoPair);
  auto [it, fresh] = pair_index_.try_emplace(key(pool, block.site), static_cast<uint32_t>(live_.size()));
  if (fresh) {
    live_.emplace_back();
    pair_key_.push_back(it->first);
  }
  return pair_of_group_[block.group] = it->second;
}

void LayoutAnalysis::closed(PoolId pool, const Block& block, uint64_t time) {
  Live& l = changing(pair_of(pool, block));
  if (l.count) {
    l.bytes -= std::min(l.bytes, block.size);
    if (--l.count == 0) l.bytes = 0;
  }
  const uint64_t end = std::max(time, block.time);
  const double weight = area(block, time), u = uniform(block, pool);
  if (surely_not_above(u, weight, floor_)) [[likely]] {
    rasterise(pool_state(pool), block, end, false);
    return;
  }
  sample(pool, block, end, u, weight);
}

void LayoutAnalysis::sample(PoolId pool, const Block& block, uint64_t end, double u, double weight) {
  Kept k{sample_key(u, weight), end, false, pool, block};
  // Full: the block replaces the kept one of the lowest key, if its own is higher.
  if (k.score <= floor_) {
    rasterise(pool_state(k.pool), k.block, k.end, k.live);
    return;
  }
  if (closed_.size() == cap_) {
    std::pop_heap(closed_.begin(), closed_.end(), Smaller{});
    Ranked& out = closed_.back();
    const Kept& evicted = kept_[out.slot];
    rasterise(pool_state(evicted.pool), evicted.block, evicted.end, evicted.live);
    kept_[out.slot] = k;
    out.score = k.score;
  } else {
    closed_.push_back({k.score, static_cast<uint32_t>(kept_.size())});
    kept_.push_back(k);
  }
  std::push_heap(closed_.begin(), closed_.end(), Smaller{});
  if (closed_.size() == cap_) floor_ = closed_.front().score;
}

std::vector<PoolSiteBytes> LayoutAnalysis::named(const std::vector<Live>& live, const TraceContext& context) const {
  std::vector<uint32_t> pairs;
  uint64_t total = 0;
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i].count == 0) continue;
    pairs.push_back(static_cast<uint32_t>(i));
    total += live[i].bytes;
  }
  // A long list is thinned before naming: the stacks a flame graph cannot
  // draw (under 1/kFlameFraction of the bytes) become one row per pool.
  std::vector<PoolSiteBytes> out;
  if (pairs.size() > listed::kLayoutStacks) {
    std::vector<uint32_t> wide;
    std::map<PoolId, std::vector<uint32_t>> thin;
    for (uint32_t i : pairs) {
      if (live[i].bytes * listed::kFlameFraction >= total) wide.push_back(i);
      else thin[static_cast<PoolId>(pair_key_[i] >> 32)].push_back(i);
    }
    for (const auto& [pool, list] : thin) {
      if (list.size() == 1) {  // alone, it keeps its name
        wide.push_back(list[0]);
        continue;
      }
      PoolSiteBytes t{context.pools.at(pool).name,
                      fmt::format("({} stacks under 1/{} of the bytes each)", units::grouped(list.size()),
                                  units::grouped(listed::kFlameFraction))};
      for (uint32_t i : list) {
        t.bytes += live[i].bytes;
        t.count += live[i].count;
      }
      out.push_back(std::move(t));
    }
    pairs = std::move(wide);
  }
  for (uint32_t i : pairs) {
    const uint64_t k = pair_key_[i];
    out.push_back({context.pools.at(static_cast<PoolId>(k >> 32)).name,
                   std::string(context.sites.name(static_cast<SiteId>(k & 0xffffffffu))), live[i].bytes, live[i].count});
  }
  std::sort(out.begin(), out.end(), [](const PoolSiteBytes& a, const PoolSiteBytes& b) {
    if (a.pool != b.pool) return a.pool < b.pool;
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site;
  });
  return out;
}

void LayoutAnalysis::finish(PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const {
  LayoutResult& r = out.layout;
  r.start_time = start_ <= end_ ? start_ : 0;
  r.end_time = end_;
  r.block_cap = cap_;
  r.blocks_seen = blocks_seen_;
  r.live_at_end = named(live_, context);
  std::vector<Live> at_peak(live_.size());
  for (size_t i = 0; i < live_.size(); ++i) {
    const Live& l = live_[i];
    at_peak[i] = l.snapshot == snapshot_ ? Live{l.snapshot_bytes, l.snapshot_count} : Live{l.bytes, l.count};
  }
  r.live_at_peak = named(at_peak, context);

  // Live blocks first, by the area they cover, then the closed ones by their
  // sample key. A leaking process can end with millions of live blocks: they
  // are ranked as 24-byte entries and only the kept ones are sorted, the
  // rest going to the rasters as they are.
  struct LiveEntry {
    double score;
    PoolId pool;
    const Block* block;
  };
  std::vector<LiveEntry> live;
  for (size_t i = 0; i < tracker.pools().size(); ++i)
    tracker.pool(static_cast<PoolId>(i)).live.for_each(
        [&](const Block& b) { live.push_back({area(b, end_), static_cast<PoolId>(i), &b}); });
  // Larger area first; equal areas by pool, time and address, so which are kept never depends on the order.
  auto ranked_before = [](const LiveEntry& a, const LiveEntry& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.pool != b.pool) return a.pool < b.pool;
    return a.block->time != b.block->time ? a.block->time < b.block->time : a.block->address < b.block->address;
  };
  const size_t live_kept = std::min(live.size(), cap_);
  if (live_kept < live.size())
    std::nth_element(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(live_kept), live.end(), ranked_before);
  std::vector<Kept> live_drawn;
  live_drawn.reserve(live_kept);
  for (size_t i = 0; i < live_kept; ++i)
    live_drawn.push_back({live[i].score, std::max(end_, live[i].block->time), true, live[i].pool, *live[i].block});
  std::vector<Kept> closed;  // in the heap's order, as the sort below has always received them
  closed.reserve(closed_.size());
  for (const Ranked& r : closed_) closed.push_back(kept_[r.slot]);
  auto by_area = [](const Kept& a, const Kept& b) { return a.score > b.score; };
  std::sort(closed.begin(), closed.end(), by_area);
  size_t closed_kept = std::min(closed.size(), cap_ - live_kept);

  // The blocks not drawn go into their pool's rasters, which this const
  // finish (a live view goes on after it) adds to a copy of: one pool's
  // state at a time, since 500 pools' grids copied at once cost 64 MiB.
  // Indices counting-sorted by pool keep each pool's blocks in the order
  // they always went in (sums of doubles, byte-identical output).
  const size_t live_left = live.size() - live_kept, left = live_left + (closed.size() - closed_kept);
  auto pool_of = [&](size_t n) { return n < live_left ? live[live_kept + n].pool : closed[closed_kept + n - live_left].pool; };
  size_t pool_count = pools_.size();
  for (size_t n = 0; n < left; ++n) pool_count = std::max(pool_count, size_t{pool_of(n)} + 1);
  std::vector<size_t> pool_starts(pool_count + 1, 0);
  for (size_t n = 0; n < left; ++n) ++pool_starts[pool_of(n) + 1];
  std::partial_sum(pool_starts.begin(), pool_starts.end(), pool_starts.begin());
  std::vector<uint32_t> by_pool(left);
  {
    std::vector<size_t> at(pool_starts.begin(), pool_starts.end() - 1);
    for (size_t n = 0; n < left; ++n) by_pool[at[pool_of(n)]++] = static_cast<uint32_t>(n);
  }
  const PoolState no_blocks;
  auto pool_state = [&](size_t id) -> const PoolState& { return id < pools_.size() ? pools_[id] : no_blocks; };
  // Pool `id` with its undrawn blocks added; `copy` holds it when there are some.
  auto with_undrawn = [&](size_t id, std::optional<PoolState>& copy) -> const PoolState& {
    if (pool_starts[id] == pool_starts[id + 1]) return pool_state(id);
    copy = pool_state(id);
    for (size_t i = pool_starts[id]; i < pool_starts[id + 1]; ++i) {
      const size_t n = by_pool[i];
      if (n < live_left) {
        const Block& b = *live[live_kept + n].block;
        rasterise(*copy, b, std::max(end_, b.time), true);
      } else {
        const Kept& k = closed[closed_kept + n - live_left];
        rasterise(*copy, k.block, k.end, k.live);
      }
    }
    return *copy;
  };

  std::vector<const Kept*> drawn;
  for (const Kept& k : live_drawn) drawn.push_back(&k);
  for (size_t i = 0; i < closed_kept; ++i) drawn.push_back(&closed[i]);
  std::sort(drawn.begin(), drawn.end(), [](const Kept* a, const Kept* b) {
    if (a->pool != b->pool) return a->pool < b->pool;
    return a->block.time != b->block.time ? a->block.time < b->block.time : a->block.address < b->block.address;
  });

  std::map<SiteId, uint32_t> site_index;
  std::map<PoolId, size_t> pool_index;
  auto pool_layout = [&](PoolId id) -> PoolLayout& {
    auto [it, fresh] = pool_index.try_emplace(id, r.pools.size());
    if (fresh) {
      const PoolInfo& info = context.pools.at(id);
      PoolLayout p;
      p.pool = info.name;
      p.kind = info.kind;
      p.size = info.size;
      // Arena events carry offsets already; heap addresses count from the
      // declared base when the blocks lie above it, else from the lowest one.
      if (info.kind == PoolKind::heap) {
        uint64_t low = info.base;
        if (!pool_state(id).regions.empty()) {
          low = UINT64_MAX;
          for (const Region& region : pool_state(id).regions) low = std::min(low, region.low);
        }
        p.origin = info.base_known && info.base <= low ? info.base : low;
      }
      r.pools.push_back(std::move(p));
    }
    return r.pools[it->second];
  };
  for (size_t id = 0; id < pool_count; ++id)  // in the pool table's order
    if (!pool_state(id).regions.empty()) pool_layout(static_cast<PoolId>(id));
  for (const Kept* k : drawn) {
    PoolLayout& p = pool_layout(k->pool);
    auto [site, fresh] = site_index.try_emplace(k->block.site, static_cast<uint32_t>(r.sites.size()));
    if (fresh) r.sites.emplace_back(context.sites.name(k->block.site));
    LayoutBlock b;
    b.offset = k->block.address - p.origin;
    b.size = k->block.size;
    b.alloc_time = k->block.time;
    if (!k->live) b.free_time = k->end;
    b.site = site->second;
    p.blocks.push_back(b);
  }
  auto raster = [](const Raster& from, uint64_t origin) {
    std::optional<LayoutRaster> out;
    if (from.grid) {
      out = from.grid->raster(origin);
      out->blocks = from.blocks;
      out->live_blocks = from.live_blocks;
    }
    return out;
  };
  for (size_t id = 0; id < pool_count; ++id) {
    std::optional<PoolState> copy;
    const PoolState& s = with_undrawn(id, copy);
    if (!s.all.grid && s.regions.empty()) continue;
    PoolLayout& p = pool_layout(static_cast<PoolId>(id));
    p.raster = raster(s.all, p.origin);
    // An arena's offsets are drawn on one axis up to its size, however far apart.
    if (s.regions.size() < 2 || p.kind != PoolKind::heap) continue;
    for (const Region& region : s.regions)
      p.regions.push_back({region.low - p.origin, region.high - p.origin, region.blocks, raster(region.raster, p.origin)});
  }
}

}  // namespace edgemem
