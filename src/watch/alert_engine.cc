#include "watch/alert_engine.h"

#include <algorithm>

#include <fmt/format.h>

#include "edgemem/analyzer.h"
#include "report/units.h"

namespace edgemem::watch {

std::string_view to_string(AlertKind kind) {
  switch (kind) {
    case AlertKind::leak: return "leak";
    case AlertKind::fragmentation: return "fragmentation";
    case AlertKind::overflow: return "overflow";
    case AlertKind::guard: return "guard";
    case AlertKind::alloc_failure: return "alloc-failure";
    case AlertKind::data_loss: return "data-loss";
  }
  return "?";
}

namespace {

// The first of each pool's entries in a kept list, in order, with the
// pool's count: exact while the list holds every one (`total`), else the
// total of all pools (a count the list cannot split).
template <typename T>
std::vector<std::pair<const T*, uint64_t>> first_per_pool(const std::vector<T>& kept, uint64_t total) {
  std::vector<std::pair<const T*, uint64_t>> out;
  for (const T& x : kept) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first->pool == x.pool; });
    if (it == out.end()) out.emplace_back(&x, 1);
    else ++it->second;
  }
  if (kept.size() < total)
    for (auto& p : out) p.second = total;
  return out;
}

}  // namespace

void AlertEngine::raise(AlertKind kind, std::string pool, double value, std::string message, std::string_view detail) {
  std::tuple<AlertKind, std::string, std::string> cause{kind, pool, std::string(detail)};
  if (raised_.contains(cause)) return;
  Alert alert{kind, std::move(pool), inferences_, value, std::move(message)};
  // Fragmentation waits for the next status tick, which tells whether
  // records were lost: the inference ends before it (a backlog) once raised
  // the band beside a status line saying "frag unjudged".
  if (kind == AlertKind::fragmentation) {
    if (std::none_of(held_.begin(), held_.end(), [&](const auto& h) { return h.first == cause; }))
      held_.emplace_back(std::move(cause), std::move(alert));
    return;
  }
  raised_.insert(std::move(cause));
  pending_.push_back(std::move(alert));
  history_.push_back(pending_.back());
}

void AlertEngine::judge_fragmentation(const std::string& pool) {
  auto it = fragmentation_.find(pool);
  if (fragmentation_unjudged_ || it == fragmentation_.end() || !it->second.worst_floor || !known_extent_.contains(pool))
    return;
  double floor = *it->second.worst_floor;
  for (Band b : {Band::warning, Band::danger}) {
    if (fragmentation_band(floor) < b) continue;
    raise(AlertKind::fragmentation, pool, floor,
          fmt::format("pool {} stayed fragmented into the {} band: at least {:.0f}% (1 - largest free / total free) "
                      "at every end of {} inferences",
                      pool, to_string(b), floor * 100, LeakTrend::kWindow),
          to_string(b));
  }
}

void AlertEngine::on_inference(const InferenceRecord& record) {
  ++inferences_;
  if (record.boot != boot_) {
    boot_ = record.boot;
    trends_.clear();
    confirmed_.clear();
    fragmentation_.clear();
  }
  for (const PoolInferenceUsage& p : record.pools) {
    if (!p.fragmentation_rate) continue;
    // Known from the inference itself: a status tick may come only after
    // many inferences (a file already written, a bulk pipe).
    if (p.known_extent && !known_extent_.contains(p.pool)) known_extent_.insert(std::string(p.pool));
    auto f = fragmentation_.find(p.pool);
    if (f == fragmentation_.end()) f = fragmentation_.emplace(std::string(p.pool), FragmentationFloor{}).first;
    FragmentationFloor& floor = f->second;
    floor.last[floor.ends++ % floor.last.size()] = *p.fragmentation_rate;
    if (floor.ends < floor.last.size()) continue;
    const double lowest = *std::min_element(floor.last.begin(), floor.last.end());
    floor.worst_floor = std::max(floor.worst_floor.value_or(0), lowest);
    judge_fragmentation(f->first);
  }
  for (const PoolInferenceUsage& p : record.pools) {
    // The analysis's own trend, so the alert and the final summary judge the same fit.
    if (!p.leak_trend) continue;
    auto it = trends_.find(p.pool);
    if (it == trends_.end()) it = trends_.emplace(std::string(p.pool), *p.leak_trend).first;
    else it->second = *p.leak_trend;
    const TrendEstimate* e = &it->second;
    if (!e->confirmed) continue;
    confirmed_.insert(it->first);
    // Once raised (in this boot), skip building a message per inference for the rest of a long soak.
    const std::string boot = boot_ > 1 ? fmt::format("boot {}", boot_) : "";
    if (raised_.contains({AlertKind::leak, it->first, boot})) continue;
    raise(AlertKind::leak, it->first, e->bytes_per_inference,
          fmt::format("pool {} leaks: its lowest usage in each {} inferences rose {} B per inference over the "
                      "last {} (p {}), above any earlier in the {}; now {} at inference {}{}",
                      it->first, LeakTrend::kWindow, units::decimal(e->bytes_per_inference, 0), e->inferences,
                      e->p_value < 1e-15 ? "< 1e-15" : fmt::format("= {:.1e}", e->p_value),
                      boot_ > 1 ? "boot" : "run", units::bytes(p.used_bytes), record.number,
                      boot_ > 1 ? fmt::format(" of boot {}", boot_) : ""),
          boot);
  }
}

void AlertEngine::on_snapshot(const TraceRun& run) {
  const AnalysisResult& r = run.result;
  if (!r.lost_mid_trace.empty()) fragmentation_unjudged_ = true;
  // A leak that filled its pool before the trend's 80 inferences (the QEMU
  // leak firmware's 40 KiB arena, full at inference 63) never confirms a
  // trend: its floor stops where the requests start failing. The analysis
  // tells it by the failures, and that is the leak's alert.
  const std::string boot = boot_ > 1 ? fmt::format("boot {}", boot_) : "";
  // Three refusals at least: a cache that fills the heap, is refused once
  // and then emptied reads as stopped between the refusal and the free (a
  // reviewer's trace raised a leak alert its final report contradicted).
  for (const SiteLeak& l : r.leaks) {
    if (!l.growth || !l.growth->stopped_after_inference || !l.bytes_per_inference || l.growth->failed_requests < 3)
      continue;
    confirmed_.insert(l.pool);
    if (!raised_.contains({AlertKind::leak, l.pool, boot}))
      raise(AlertKind::leak, l.pool, *l.bytes_per_inference,
            fmt::format("pool {} leaks: {} B per inference at {} until it was full at inference {}{}; its {} "
                        "request{} since failed",
                        l.pool, units::decimal(*l.bytes_per_inference, 0), l.site, *l.growth->stopped_after_inference,
                        boot_ > 1 ? fmt::format(" of boot {}", boot_) : "", l.growth->failed_requests,
                        l.growth->failed_requests == 1 ? "" : "s"),
            boot);
  }
  // Once per pool: the first of each pool's, with the pool's own count
  // while every one is kept (once only the first pool's was raised, with
  // every pool's count).
  for (const auto& [o, count] : first_per_pool(r.overflows, r.overflow_count))
    raise(AlertKind::overflow, o->pool, static_cast<double>(count),
          fmt::format("pool {} overflowed: {} at offset {} runs {} past its {} end ({})", o->pool, units::bytes(o->size),
                      units::grouped(o->offset), units::bytes(o->over_by), units::bytes(o->arena_size),
                      o->site.empty() ? "site unknown" : o->site));
  for (const auto& [g, count] : first_per_pool(r.guard_failures, r.guard_failure_count))
    raise(AlertKind::guard, g->pool, static_cast<double>(count),
          fmt::format("pool {}: guard bytes corrupted{} ({} failed checks so far{})", g->pool,
                      g->inference ? " at " + units::inference_of_boot(*g->inference, g->boot, r.restarts.total > 0) : "",
                      count, count == r.guard_failure_count && r.guard_failures.size() < count ? " in all pools" : ""));
  const FragmentationResult& f = r.fragmentation;
  for (const auto& [a, count] : first_per_pool(f.failures, f.alloc_failures)) {
    // The inference it failed in: a status tick, and so the alert, may come many inferences later.
    const std::string when = a->inference ? " in " + units::inference_of_boot(*a->inference, a->boot, r.restarts.total > 0) : "";
    raise(AlertKind::alloc_failure, a->pool, static_cast<double>(count),
          // "As the trace tells it": it sees requests, not the allocator's
          // chunks (newlib's free chunk below its sbrk top does not grow
          // into the unclaimed space past it: the fragment firmware's
          // "2,820 B" was newlib's 2,320 B).
          a->total_free ? fmt::format("pool {}: a {} request failed{} with {} free, {} in the largest block as "
                                      "the trace tells it{}",
                                      a->pool, units::bytes(a->size), when, units::bytes(*a->total_free),
                                      units::bytes(*a->largest_free),
                                      a->fragmentation ? " (fragmentation)" : "")
                        : fmt::format("pool {}: a {} request failed{} (free space not known: the pool's extent is not "
                                      "declared)",
                                      a->pool, units::bytes(a->size), when));
  }
  // A device in summary mode tells how many requests each pool refused, not their sizes.
  for (const PoolSummary& p : r.pools)
    if (p.refused_in_summaries && !raised_.contains({AlertKind::alloc_failure, p.name, ""}))
      raise(AlertKind::alloc_failure, p.name, static_cast<double>(p.refused_in_summaries),
            fmt::format("pool {}: {} request{} refused (the device's summary records give no sizes)", p.name,
                        p.refused_in_summaries, p.refused_in_summaries == 1 ? "" : "s"));
  for (const PoolFragmentation& p : f.pools) {
    if (!p.known_extent || known_extent_.contains(p.pool)) continue;
    known_extent_.insert(p.pool);
    judge_fragmentation(p.pool);
  }
  // A live stream is cut wherever the watch stops: its last record (or
  // compressed block) being incomplete is the watch's doing, not data the
  // device lost.
  DecodeStats stats = run.input.stats;
  stats.truncated_bytes = 0;
  if (stats.compression_cut) stats.compression_problem.clear();
  Check loss = data_loss_check(stats, r.counts);
  if (loss.status == CheckStatus::found) {
    // A count, as the other alerts give: records and ITM packets lost, else the bytes that could not be read.
    const uint64_t lost = stats.dropped_records + stats.overflows;
    const uint64_t value = lost ? lost : stats.corrupt_bytes + stats.malformed_lines + stats.stream_cut_bytes;
    // Lost frees or allocations, or an impossible event, alone: 1, the loss is told.
    raise(AlertKind::data_loss, "", static_cast<double>(value ? value : 1),
          fmt::format("trace data lost: {}; findings may be missing or wrong", loss.reason));
  }
  // The fragmentation alerts held for this tick, now that it told whether records were lost.
  for (auto& [cause, alert] : held_) {
    if (fragmentation_unjudged_) continue;
    raised_.insert(cause);
    pending_.push_back(std::move(alert));
    history_.push_back(pending_.back());
  }
  held_.clear();
}

std::vector<Alert> AlertEngine::take() { return std::exchange(pending_, {}); }

std::vector<PoolTrend> AlertEngine::trends() const {
  std::vector<PoolTrend> out;
  for (const auto& [pool, estimate] : trends_) {
    out.push_back({pool, estimate});
    out.back().estimate.confirmed |= confirmed_.contains(pool);
  }
  // Confirmed by filling up, before 80 inferences gave a trend.
  for (const std::string& pool : confirmed_)
    if (!trends_.contains(pool)) {
      TrendEstimate filled;
      filled.confirmed = true;
      out.push_back({pool, filled, false});
    }
  return out;
}

}  // namespace edgemem::watch
