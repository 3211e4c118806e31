#include "fragmentation_analysis.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace edgemem {

FragmentationAnalysis::PoolGaps& FragmentationAnalysis::at(PoolId pool, const PoolInfo& info) {
  if (pools_.size() <= pool) pools_.resize(pool + 1);
  PoolGaps& g = pools_[pool];
  if (!g.fixed && info.size > 0) {
    // Arena offsets start at 0; a heap with a known base starts there.
    uint64_t low = info.kind == PoolKind::arena ? 0 : info.base;
    if (info.kind == PoolKind::arena || info.base_known) {
      // Declared after blocks were seen: what lay between their stretches
      // was held for not the pool's, a guess the declaration replaces.
      for_each_hole(g, [&](uint64_t from, uint64_t to) { g.gaps.release(from, to - from); });
      g.regions.clear();
      g.gaps.extend(low, low + info.size);
      g.fixed = true;
      // Blocks seen before may reach past the size: what lies past it is
      // not the pool's, held from now on (release() leaves it held).
      g.held_from = low + info.size;
      seen(pool, info);
      g.hold_past_end();
    }
  }
  return g;
}

void FragmentationAnalysis::redeclared(PoolId pool, const PoolInfo& info, const PoolState& state, uint64_t time) {
  PoolGaps& g = pools_[pool];
  seen(pool, info);
  // Declared again (another arena flashed before the device restarted): the
  // gaps are the new extent less the blocks live now, and what lies past a
  // smaller size is held. Shrunk while blocks lived, the bytes past its new
  // end read free (5,632 B free of a 4,096 B heap); grown, the bytes a
  // smaller declaration held read used (0 B free of 8,192 B). The other
  // end's bytes of a two-ended arena move to the new top. A heap moved to
  // another base (a new build's .bss ends elsewhere) spans its new bytes
  // only: kept at the old ones, a full heap read all free.
  const uint64_t low = info.kind == PoolKind::arena ? 0 : info.base;
  if (g.summary || info.size == 0 || (info.kind != PoolKind::arena && !info.base_known) ||
      (low + info.size == g.held_from && low == g.gaps.low()))
    return;
  g.held_from = low + info.size;
  if (low != g.gaps.low()) {
    g.gaps = GapIndex{};
    g.gaps.extend(low, g.held_from);
  } else if (g.held_from > g.gaps.high()) {
    g.gaps.extend(low, g.held_from);
  }
  g.gaps.reset();
  g.hold_past_end();
  state.live.for_each([&](const Block& b) { g.gaps.occupy(b.address, b.size); });
  g.partner = std::min(g.partner, info.size);
  if (g.partner) g.gaps.occupy(g.free_end(), g.partner);
  g.changed_at = time;
}

void FragmentationAnalysis::cover(PoolGaps& g, const PoolInfo& info, uint64_t address, uint64_t size) {
  if (g.fixed) return;
  // Heap of unknown placement: its extent is what the blocks have touched
  // (or `size` bytes from the first block when only the size is known).
  uint64_t end = address + size;
  if (g.gaps.empty_extent()) {
    if (info.size > 0) end = std::max(end, address + info.size);
    g.gaps.extend(address, end);
    g.regions = {{address, end}};
    g.region = g.regions.begin();
    return;
  }
  // A stretch of address space more than kFarApart wide between blocks is
  // not the pool's free memory: a Linux process's brk heap, thread arenas
  // and mmap chunks lie terabytes apart, with libraries and stacks between.
  // The block joins the regions within kFarApart of it; the space it
  // bridges becomes the pool's.
  auto near = [&](const std::pair<const uint64_t, uint64_t>& r) {
    if (r.second < address) return address - r.second <= kFarApart;
    if (r.first > end) return r.first - end <= kFarApart;
    return true;  // they touch or overlap
  };
  // Most blocks fall in the last region, or grow it upward (a heap's top).
  if (address >= g.region->first && near(*g.region)) {
    if (end <= g.region->second) return;
    const auto next = std::next(g.region);
    if (next == g.regions.end() || !near(*next)) {
      const uint64_t old_end = std::exchange(g.region->second, end);
      if (end > g.gaps.high()) g.gaps.extend(g.gaps.low(), end);
      if (address > old_end) g.gaps.release(old_end, address - old_end);  // held between regions, or just extended
      return;
    }
  }
  auto first = g.regions.upper_bound(address);
  if (first != g.regions.begin() && near(*std::prev(first))) --first;
  auto last = first;
  while (last != g.regions.end() && near(*last)) ++last;
  if (first != last && std::next(first) == last && address >= first->first && end <= first->second) {
    g.region = first;  // inside another region (a Linux heap alternates between brk and mmap)
    return;
  }
  if (first == last && g.regions.size() >= kMaxRegions) {  // the nearest, below or above
    auto above = g.regions.upper_bound(address);
    first = above == g.regions.end() ||
                    (above != g.regions.begin() && address - std::prev(above)->second < above->first - end)
                ? std::prev(above)
                : above;
    last = std::next(first);
  }
  uint64_t low = address, high = end;
  for (auto r = first; r != last; ++r) {
    low = std::min(low, r->first);
    high = std::max(high, r->second);
  }
  const uint64_t old_low = g.gaps.low(), old_high = g.gaps.high();
  g.gaps.extend(std::min(low, old_low), std::max(high, old_high));
  if (low > old_high) g.gaps.occupy(old_high, low - old_high);  // a region of its own, far above
  if (high < old_low) g.gaps.occupy(high, old_low - high);      // or far below
  // What the region now spans between its parts was held occupied (or was
  // outside the extent, freed by extend): it is the pool's, free.
  uint64_t at = low;
  auto part = [&](uint64_t from, uint64_t to) {
    if (from > at) g.gaps.release(at, from - at);
    at = std::max(at, to);
  };
  bool block_done = false;
  for (auto r = first; r != last; ++r) {
    if (!block_done && address < r->first) {
      part(address, end);
      block_done = true;
    }
    part(r->first, r->second);
  }
  if (!block_done) part(address, end);
  g.regions.erase(first, last);
  g.region = g.regions.emplace(low, high).first;
}

template <typename Fn>
void FragmentationAnalysis::for_each_hole(const PoolGaps& g, Fn fn) {
  uint64_t at = g.gaps.low();
  for (const auto& [from, to] : g.regions) {
    if (from > at) fn(at, from);
    at = std::max(at, to);
  }
}

bool FragmentationAnalysis::allocated(PoolId pool, const PoolInfo& info, const Block& b) {
  PoolGaps& g = at(pool, info);
  cover(g, info, b.address, b.size);
  const bool clear = g.gaps.occupy(b.address, b.size);
  // Only inside the extent and below the other end of a shared arena: a
  // block reaching past either is an overflow, which has its own check.
  const uint64_t end = b.address + b.size;
  const bool fits = clear || !g.fixed || g.shared || b.address < g.gaps.low() || end < b.address ||
                    end > g.free_end() || end - g.gaps.low() > info.size;
  if (fits) [[likely]]
    g.measure(b.time);
  return fits;
}

void FragmentationAnalysis::overlapped(PoolId pool, const PoolInfo& info, const std::vector<Block>& lost,
                                       const Block& b) {
  PoolGaps& g = at(pool, info);
  for (const Block& old : lost) released(pool, info, old, b.time);
  g.gaps.occupy(b.address, b.size);
  g.measure(b.time);
}

std::optional<double> FragmentationAnalysis::rate_now(PoolId pool) {
  if (pool >= pools_.size() || !pools_[pool].measured) return std::nullopt;
  return pools_[pool].rate();
}

void FragmentationAnalysis::summarized(PoolId pool, uint64_t time, uint64_t total_free, uint64_t largest_free) {
  if (pools_.size() <= pool) pools_.resize(pool + 1);
  PoolGaps& g = pools_[pool];
  g.summary = true;
  g.fixed = true;  // the pool's size is known, or there would be no total
  g.summary_total_free = total_free;
  // An allocator's largest block can only exceed the free bytes if its size was misdeclared.
  g.summary_largest_free = std::min(largest_free, total_free);
  g.measure(time);
}

void FragmentationAnalysis::released(PoolId pool, const PoolInfo& info, const Block& b, uint64_t time) {
  PoolGaps& g = at(pool, info);
  // A block that overflowed into the other end's bytes, or past a size
  // declared smaller, frees only its part below them.
  uint64_t end = g.partner ? std::min(b.address + b.size, g.free_end()) : b.address + b.size;
  if (g.held_from) end = std::min(end, g.held_from);
  if (end > b.address) g.gaps.release(b.address, end - b.address);
  g.changed_at = time;
}

void FragmentationAnalysis::reset(PoolId pool, uint64_t time) {
  if (pool >= pools_.size()) return;
  PoolGaps& g = pools_[pool];
  g.gaps.reset();
  // All of the extent is free again, but for what lies past a smaller declaration.
  g.hold_past_end();
  if (g.partner) g.gaps.occupy(g.free_end(), g.partner);
  // Every byte of the extent is free again: the space between the regions
  // is not the pool's.
  if (!g.fixed) for_each_hole(g, [&](uint64_t from, uint64_t to) { g.gaps.occupy(from, to - from); });
  g.changed_at = time;
}

void FragmentationAnalysis::partner_used(PoolId pool, const PoolInfo& info, uint64_t used, uint64_t own_top,
                                         uint64_t time) {
  PoolGaps& g = at(pool, info);
  if (!g.fixed || g.summary) return;  // no extent to hold it against, or the device's own numbers
  g.shared = true;
  const uint64_t top = g.top();
  used = std::min(used, top - g.gaps.low());
  if (used == g.partner) return;
  if (used > g.partner) {
    g.gaps.occupy(top - used, used - g.partner);
  } else {
    // Given back: free, except below this pool's own top (its blocks there
    // overflowed into the other end; holes between them are counted used).
    const uint64_t from = std::max(top - g.partner, std::min(g.gaps.low() + own_top, top - used));
    if (top - used > from) g.gaps.release(from, top - used - from);
  }
  g.partner = used;
  g.changed_at = time;
}

void FragmentationAnalysis::failed(PoolId pool, const PoolInfo& info, uint64_t size, uint64_t align, uint64_t time,
                                   SiteId site, std::optional<uint64_t> inference, uint64_t live_blocks, uint64_t top) {
  ++failure_count_;
  const bool invalid = (align & (align - 1)) != 0 || size >= (uint64_t{1} << 48) || (info.size > 0 && size > info.size);
  const bool was_fixed = pool < pools_.size() && pools_[pool].fixed;
  PoolGaps& g = at(pool, info);
  if (g.fixed && !invalid) ++judged_failures_;
  if (g.fixed && !was_fixed) g.changed_at = time;  // the pool's size became known: more free space
  AllocFailure f;
  f.time = time;
  f.size = size;
  f.inference = inference;
  f.boot = boot_;
  f.live_blocks = live_blocks;
  // Free space beyond the blocks seen is unknown in a pool of unknown extent.
  if (g.fixed) {
    // The state a request failed in is a point of the curve, from the
    // change that made it: frees since the last allocation could make it
    // the worst (a failure said 50 % while the worst said 33 %).
    if (!g.summary && g.changed_at) g.measure(*g.changed_at);
    f.total_free = g.gaps.total_free();
    f.largest_free = g.gaps.largest_free();
    if (info.kind == PoolKind::arena && !g.summary) {
      // Above its top, below the other end's bytes: one piece. Holes below
      // once read as free (a 978 B request "failed with 980 B free", 6 B of
      // them padding, judged fragmentation and band danger).
      // Not past its declared size (declared again, smaller, after a restart).
      const uint64_t room = std::min(g.free_end() - g.gaps.low(), info.size);
      f.total_free = f.largest_free = room > top ? room - top : 0;
    }
    f.fragmentation = *f.total_free >= size && *f.largest_free < size;
    if (size > 0) {
      double ratio = static_cast<double>(*f.largest_free) / static_cast<double>(size);
      min_ratio_ = min_ratio_ ? std::min(*min_ratio_, ratio) : ratio;
    }
  }
  if (f.fragmentation) fragmentation_failure_ = true;
  if (failures_kept_.keep(pool, failures_.size())) failures_.push_back({f, pool, site});
}

void FragmentationAnalysis::finish(const TraceContext& context, uint64_t inferences, AnalysisResult& out) {
  FragmentationResult& r = out.fragmentation;
  std::string observed;
  for (size_t i = 0; i < pools_.size(); ++i) {
    PoolGaps& g = pools_[i];
    if (!g.measured) continue;
    PoolFragmentation p;
    p.pool = context.pools.at(static_cast<PoolId>(i)).name;
    p.known_extent = g.fixed;
    p.total_free = g.total_free();
    p.largest_free = g.largest_free();
    p.final_rate = g.rate();
    // The end is a state too: measured on a copy, as finish can be called mid-trace.
    BoundedSeries<uint64_t, double> curve = g.curve;
    if (g.changed_at) curve.add(*g.changed_at, p.final_rate);
    p.curve = curve.points();
    p.samples = curve.added();
    // One definition: the worst is the curve's highest point (every bucket keeps its highest).
    for (const auto& [time, rate] : p.curve) p.max_rate = std::max(p.max_rate, rate);
    if (p.known_extent) {
      r.max_rate = std::max(r.max_rate.value_or(0), p.max_rate);
      r.final_rate = std::max(r.final_rate.value_or(0), p.final_rate);
    } else {
      observed += fmt::format("{}'{}'", observed.empty() ? "" : ", ", p.pool);
    }
    r.pools.push_back(std::move(p));
  }
  r.alloc_failures = failure_count_;
  r.min_largest_to_request = min_ratio_;
  for (const auto& f : failures_) {
    AllocFailure named = f.f;
    named.pool = context.pools.at(f.pool).name;
    named.site = std::string(context.sites.name(f.site));
    r.failures.push_back(std::move(named));
  }
  // The band is the worst of: the highest rate seen, a failure that enough
  // free memory could have served, and the failure rate. Pools of unknown
  // extent are not judged: free memory past what their blocks touched is
  // not seen, so their rate could be anything, and so could the reason a
  // request failed there.
  std::optional<Band> band;
  if (r.max_rate) band = fragmentation_band(*r.max_rate);
  if (fragmentation_failure_) band = Band::danger;
  const uint64_t servable = judged_failures_;
  if (inferences > 0) {
    r.failures_per_1000_inferences = 1000.0 * static_cast<double>(failure_count_) / static_cast<double>(inferences);
    double per = 1000.0 * static_cast<double>(servable) / static_cast<double>(inferences);
    if (per > 0) band = std::max(band.value_or(Band::healthy), per > 5 ? Band::danger : Band::warning);
  } else if (servable > 0) {
    band = std::max(band.value_or(Band::healthy), Band::warning);
  }
  r.band = band;

  Check& c = out.checks.fragmentation;
  if (!band) c.status = CheckStatus::not_checked;
  else c.status = *band == Band::healthy ? CheckStatus::clean : CheckStatus::found;
  if (!observed.empty())
    c.reason = fmt::format("extent of {} unknown: rates are over the span its blocks touched (stretches over 16 MiB "
                           "between blocks left out) and are not judged; "
                           "declare its base and size (POOL name= base= size=), or for an arena pass --arena-size N", observed);
  else if (r.pools.empty() && !band && failure_count_)
    c.reason = "only failed allocations, in pools of unknown extent: whether memory could have served them is not "
               "known; declare the pool's base and size (POOL name= base= size=), or for an arena pass --arena-size N";
  else if (r.pools.empty() && !band)
    c.reason = "no allocations";
}

}  // namespace edgemem
