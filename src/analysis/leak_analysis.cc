#include "leak_analysis.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace edgemem {

std::string type_hint(uint64_t n) {
  if (n == 0) return {};
  if (n % 4 == 0) return fmt::format("float32[{}]", n / 4);
  if (n % 2 == 0) return fmt::format("int16[{}]", n / 2);
  return fmt::format("int8[{}]", n);
}

namespace {

struct Group {
  uint64_t pre_bytes = 0, pre_count = 0;
  uint64_t bytes = 0, count = 0, min_size = UINT64_MAX, max_size = 0;
  uint64_t first = UINT64_MAX, last = 0;
};

}  // namespace

void LeakAnalysis::finish(PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const {
  const bool markers = tracker.inference() > 0;
  // Key: pool, site, and for blocks without a site their size, so an
  // anonymous 256 KiB session leak is not mixed with 54 KiB tensors.
  std::map<std::tuple<PoolId, SiteId, uint64_t>, Group> groups;
  for (size_t pid = 0; pid < tracker.pools().size(); ++pid) {
    tracker.pools()[pid].live.for_each([&](const Block& b) {
      Group& g = groups[{static_cast<PoolId>(pid), b.site, b.site == kUnknownSite ? b.size : 0}];
      if (markers && b.inference == 0) {
        g.pre_bytes += b.size;
        ++g.pre_count;
        return;
      }
      g.bytes += b.size;
      ++g.count;
      g.min_size = std::min(g.min_size, b.size);
      g.max_size = std::max(g.max_size, b.size);
      g.first = std::min(g.first, b.time);
      g.last = std::max(g.last, b.time);
    });
  }
  for (auto& [key, g] : groups) {
    auto [pid, site, size] = key;
    std::string name(context.sites.name(site));
    if (site == kUnknownSite) name = fmt::format("? ({} B blocks)", size);
    const std::string& pool = context.pools.at(pid).name;
    bool grows = !markers;
    if (markers && site < tracker.sites().size()) {
      const SiteCounters& c = tracker.sites()[site];
      // Still setting records late in the run: a ring buffer stops early.
      grows = g.count >= 2 && 2 * uint64_t{c.last_high_inference} > tracker.inference();
    }
    if (g.count > 0 && grows) {
      SiteLeak leak;
      leak.site = name;
      leak.pool = pool;
      leak.bytes = g.bytes;
      leak.count = g.count;
      if (markers && tracker.completed() > 0)
        leak.bytes_per_inference = static_cast<double>(g.bytes) / static_cast<double>(tracker.completed());
      if (g.min_size == g.max_size) {
        leak.block_size = g.min_size;
        leak.type_hint = type_hint(g.min_size);
      }
      leak.first_time = g.first;
      leak.last_time = g.last;
      if (site < tracker.sites().size()) {
        leak.allocs = tracker.sites()[site].allocs;
        leak.frees = tracker.sites()[site].frees;
      }
      out.leaks.push_back(std::move(leak));
    } else {
      g.pre_bytes += g.bytes;
      g.pre_count += g.count;
    }
    if (g.pre_count > 0) out.persistent.push_back({name, pool, g.pre_bytes, g.pre_count});
  }
  auto by_bytes = [](const auto& a, const auto& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site; };
  std::sort(out.leaks.begin(), out.leaks.end(), by_bytes);
  std::sort(out.persistent.begin(), out.persistent.end(), by_bytes);

  for (size_t id = 0; id < tracker.sites().size(); ++id) {
    const SiteCounters& s = tracker.sites()[id];
    if (s.allocs == 0) continue;
    out.sites.push_back({std::string(context.sites.name(static_cast<SiteId>(id))), s.allocs, s.frees,
                         s.alloc_bytes, s.live_bytes, s.live_count});
  }
  std::sort(out.sites.begin(), out.sites.end(), [](const auto& a, const auto& b) {
    return a.live_bytes != b.live_bytes ? a.live_bytes > b.live_bytes : a.alloc_bytes > b.alloc_bytes;
  });
}

}  // namespace edgemem
