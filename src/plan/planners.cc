#include "plan/planners.h"

#include <algorithm>
#include <map>
#include <functional>
#include <numeric>

namespace edgemem::plan {
namespace {

bool live_together(const Buffer& a, const Buffer& b) { return !(a.first > b.last || b.first > a.last); }

// Places buffers in `order`: each at the first (or best-fitting) gap among
// already placed buffers that are live at the same time.
Plan place(const std::vector<Buffer>& buffers, const std::vector<size_t>& order, bool best_fit) {
  Plan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;  // kept sorted by offset, ties in placement order
  for (size_t id : order) {
    const Buffer& want = buffers[id];
    uint64_t offset = 0;
    if (want.offline_offset >= 0) {
      offset = static_cast<uint64_t>(want.offline_offset);
    } else {
      uint64_t candidate = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
      for (size_t other : placed) {
        const Buffer& b = buffers[other];
        if (!live_together(b, want)) continue;
        uint64_t start = plan.offsets[other];
        if (start >= candidate + want.size) {
          uint64_t gap = start - candidate;
          if (!best_fit) {
            best = candidate;
            break;
          }
          if (gap < best_gap) {
            best_gap = gap;
            best = candidate;
          }
        }
        candidate = std::max(candidate, start + b.size);
      }
      offset = best != UINT64_MAX ? best : candidate;
    }
    plan.offsets[id] = offset;
    auto at = std::upper_bound(placed.begin(), placed.end(), offset,
                               [&](uint64_t v, size_t other) { return v < plan.offsets[other]; });
    placed.insert(at, id);
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + buffers[i].size);
  return plan;
}

std::vector<size_t> offline_first(const std::vector<Buffer>& buffers, std::vector<size_t> online) {
  std::vector<size_t> order;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].offline_offset >= 0) order.push_back(i);
  order.insert(order.end(), online.begin(), online.end());
  return order;
}

std::vector<size_t> online_ids(const std::vector<Buffer>& buffers) {
  std::vector<size_t> ids;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].offline_offset < 0) ids.push_back(i);
  return ids;
}

// Exact search over placement orders for small graphs: every order, first
// fit. Optimal among first-fit plans, which contain an optimal plan for
// interval graphs of this size in practice; bounded to keep it instant.
Plan exhaustive(const std::vector<Buffer>& buffers, uint64_t bound) {
  std::vector<size_t> ids = online_ids(buffers);
  std::sort(ids.begin(), ids.end());
  Plan best;
  best.arena_bytes = UINT64_MAX;
  do {
    Plan p = place(buffers, offline_first(buffers, ids), false);
    if (p.arena_bytes < best.arena_bytes) best = p;
    if (best.arena_bytes == bound) break;  // cannot do better than the bound
  } while (std::next_permutation(ids.begin(), ids.end()));
  best.strategy = "exhaustive";
  return best;
}

}  // namespace

Plan tflm_greedy_plan(const std::vector<Buffer>& buffers) {
  // Online buffers enter the sort array from its tail, then a stable sort
  // by size descending: equal sizes keep that reversed order.
  std::vector<size_t> online = online_ids(buffers);
  std::reverse(online.begin(), online.end());
  std::stable_sort(online.begin(), online.end(),
                   [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; });
  Plan plan = place(buffers, offline_first(buffers, online), false);
  plan.strategy = "tflm-greedy";
  return plan;
}

Plan best_plan(const std::vector<Buffer>& buffers) {
  const uint64_t bound = lower_bound(buffers);
  std::vector<Plan> candidates;
  candidates.push_back(tflm_greedy_plan(buffers));
  std::vector<size_t> ids = online_ids(buffers);
  auto span = [&](size_t i) { return static_cast<uint64_t>(buffers[i].last - buffers[i].first + 1); };
  struct Order {
    const char* name;
    std::function<bool(size_t, size_t)> less;
  };
  const std::vector<Order> orders = {
      {"size", [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; }},
      {"size-x-lifetime", [&](size_t a, size_t b) { return buffers[a].size * span(a) > buffers[b].size * span(b); }},
      {"lifetime", [&](size_t a, size_t b) { return span(a) > span(b); }},
      {"first-use", [&](size_t a, size_t b) {
         return buffers[a].first != buffers[b].first ? buffers[a].first < buffers[b].first
                                                     : buffers[a].size > buffers[b].size;
       }},
  };
  for (const Order& o : orders) {
    std::vector<size_t> sorted = ids;
    std::stable_sort(sorted.begin(), sorted.end(), o.less);
    for (bool best_fit : {false, true}) {
      Plan p = place(buffers, offline_first(buffers, sorted), best_fit);
      p.strategy = std::string(o.name) + (best_fit ? "/best-fit" : "/first-fit");
      candidates.push_back(std::move(p));
    }
  }
  if (ids.size() <= 8) candidates.push_back(exhaustive(buffers, bound));
  Plan* winner = nullptr;
  for (Plan& p : candidates)
    if (plan_is_valid(buffers, p) && (!winner || p.arena_bytes < winner->arena_bytes)) winner = &p;
  return winner ? *winner : candidates.front();
}

uint64_t lower_bound(const std::vector<Buffer>& buffers) {
  // Offline buffers sit where the plan says (and may share bytes on
  // purpose, as Vela's do); online buffers cannot overlap each other nor an
  // offline buffer live at the same time. So at every scope the arena holds
  // the online bytes live then beside the bytes the live offline buffers
  // cover, and all of the offline plan's extent.
  uint64_t bound = 0;
  std::vector<int32_t> scopes;
  for (const Buffer& b : buffers) {
    if (b.offline_offset >= 0) bound = std::max(bound, static_cast<uint64_t>(b.offline_offset) + b.size);
    scopes.push_back(b.first);  // the bytes live only grow at a buffer's first scope
  }
  std::sort(scopes.begin(), scopes.end());
  scopes.erase(std::unique(scopes.begin(), scopes.end()), scopes.end());
  std::vector<std::pair<uint64_t, uint64_t>> fixed;
  for (int32_t s : scopes) {
    uint64_t online = 0;
    fixed.clear();
    for (const Buffer& b : buffers) {
      if (b.first > s || b.last < s) continue;
      if (b.offline_offset >= 0) fixed.emplace_back(static_cast<uint64_t>(b.offline_offset), static_cast<uint64_t>(b.offline_offset) + b.size);
      else online += b.size;
    }
    std::sort(fixed.begin(), fixed.end());
    uint64_t covered = 0, end = 0;
    for (const auto& [from, to] : fixed) {
      if (to <= end) continue;
      covered += to - std::max(from, end);
      end = to;
    }
    bound = std::max(bound, online + covered);
  }
  return bound;
}

bool plan_is_valid(const std::vector<Buffer>& buffers, const Plan& plan) {
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!live_together(buffers[i], buffers[j])) continue;
      if (buffers[i].offline_offset >= 0 && buffers[j].offline_offset >= 0) continue;  // the offline plan's call
      uint64_t a = plan.offsets[i], b = plan.offsets[j];
      if (a < b + buffers[j].size && b < a + buffers[i].size) return false;
    }
  return true;
}

}  // namespace edgemem::plan
