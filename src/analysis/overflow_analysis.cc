#include "overflow_analysis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace edgemem {

void OverflowAnalysis::allocated(PoolId pool, const PoolInfo& info, const Block& b, uint64_t shared_usage,
                                 uint64_t usage) {
  if (extents_.size() <= pool) extents_.resize(pool + 1, Extent::none);
  if (info.size == 0) {
    extents_[pool] = Extent::unknown;
    return;
  }
  // Sized after blocks it had made: those were not checked.
  if (extents_[pool] == Extent::unknown) [[unlikely]] {
    if (sized_late_.size() <= pool) sized_late_.resize(pool + 1, false);
    sized_late_[pool] = true;
  }
  // A heap's end is known only with its base: its addresses are absolute.
  if (info.kind == PoolKind::heap && !info.base_known) {
    if (extents_[pool] != Extent::known) extents_[pool] = Extent::usage_only;
    if (usage > info.size) [[unlikely]]
      used_past_size(pool, info, usage, b.time, kUsageOverflowSite);
    return;
  }
  extents_[pool] = Extent::known;
  uint64_t start = info.kind == PoolKind::arena ? 0 : info.base;
  uint64_t offset = b.address - start;
  uint64_t room = info.size > shared_usage ? info.size - shared_usage : 0;
  if (b.address >= start && offset + b.size <= room) return;
  ++overflow_count_;
  if (!overflows_kept_.keep(pool, overflows_.size())) return;
  Overflow o;
  o.time = b.time;
  o.offset = offset;
  o.size = b.size;
  o.arena_size = info.size;
  o.over_by = offset + b.size - room;
  o.available = offset < room ? room - offset : 0;
  overflows_.push_back({o, pool, b.site});
}

void OverflowAnalysis::summarized(PoolId pool, const PoolInfo& info, uint64_t peak_bytes, uint64_t time) {
  if (extents_.size() <= pool) extents_.resize(pool + 1, Extent::none);
  if (info.size == 0) {
    extents_[pool] = Extent::unknown;
    return;
  }
  extents_[pool] = Extent::known;
  if (peak_bytes > info.size) used_past_size(pool, info, peak_bytes, time, kSummaryOverflowSite);
}

void OverflowAnalysis::used_past_size(PoolId pool, const PoolInfo& info, uint64_t used, uint64_t time,
                                      std::string_view marker) {
  const uint64_t room = info.size;
  // One finding per pool, at its furthest: the use is known, not which request ran past.
  if (usage_overflow_.size() <= pool) usage_overflow_.resize(pool + 1, SIZE_MAX);
  size_t& kept = usage_overflow_[pool];
  if (kept == SIZE_MAX) {
    ++overflow_count_;
    if (!overflows_kept_.keep(pool, overflows_.size())) return;
    kept = overflows_.size();
    overflows_.push_back({Overflow{}, pool, kUnknownSite});
  }
  Overflow& o = overflows_[kept].o;
  if (used - room <= o.over_by) return;
  o.time = time;
  o.size = used;  // the pool's use from its start
  o.arena_size = info.size;
  o.over_by = used - room;
  o.available = room;
  o.site = std::string(marker);
}

void OverflowAnalysis::guard(PoolId pool, bool corrupt, uint64_t time, SiteId site, std::optional<uint64_t> inference) {
  ++guard_checks_;
  if (!corrupt) return;
  ++guard_failures_;
  if (guards_kept_.keep(pool, guards_.size())) guards_.push_back({GuardFailure{time, inference, boot_, {}, {}}, pool, site});
}

void OverflowAnalysis::finish(const TraceContext& context, AnalysisResult& out) {
  for (auto& f : overflows_) {
    f.o.pool = context.pools.at(f.pool).name;
    if (f.o.site != kSummaryOverflowSite && f.o.site != kUsageOverflowSite)
      f.o.site = std::string(context.sites.name(f.site));
    out.overflows.push_back(f.o);
  }
  for (auto& g : guards_) {
    g.g.pool = context.pools.at(g.pool).name;
    g.g.site = std::string(context.sites.name(g.site));
    out.guard_failures.push_back(g.g);
  }
  out.overflow_count = overflow_count_;
  out.guard_failure_count = guard_failures_;
  out.guard_checks = guard_checks_;

  std::string known, by_usage, unknown, late;
  for (size_t i = 0; i < extents_.size(); ++i) {
    const PoolInfo& info = context.pools.at(static_cast<PoolId>(i));
    // Sized by a POOL line after blocks it made, which no size judged (the
    // reason once said "declare its size" beside the size it declared).
    const bool sized_late =
        (extents_[i] == Extent::unknown && info.size > 0) || (i < sized_late_.size() && sized_late_[i]);
    std::string& list = sized_late                          ? late
                        : extents_[i] == Extent::known      ? known
                        : extents_[i] == Extent::usage_only ? by_usage
                                                            : unknown;
    if (extents_[i] != Extent::none) list += fmt::format("{}'{}'", list.empty() ? "" : ", ", info.name);
  }
  Check& o = out.checks.overflow;
  if (overflow_count_) o.status = CheckStatus::found;
  else if ((!known.empty() || !by_usage.empty()) && late.empty()) o.status = CheckStatus::clean;
  std::vector<std::string> why;
  if (!late.empty())
    why.push_back(fmt::format("{} declared its size after blocks it had made, whose ends were not checked against "
                              "it: declare the pool before its first allocation",
                              late));
  if (!unknown.empty())
    why.push_back(fmt::format("size of {} unknown: declare its base and size (POOL name= base= size=), "
                              "or for an arena pass --arena-size N", unknown));
  if (!by_usage.empty())
    why.push_back(fmt::format("base of {} unknown: only its live bytes are checked against its size, not where "
                              "each block lies (declare POOL name= base= size=)", by_usage));
  if (!why.empty()) o.reason = fmt::format("{}", fmt::join(why, "; "));
  else if (known.empty())
    o.reason = "no allocations";

  Check& g = out.checks.guards;
  if (guard_failures_) g.status = CheckStatus::found;
  else if (guard_checks_) g.status = CheckStatus::clean;
  else g.reason = "the trace holds no guard checks (the firmware reports no sentinels)";
}

}  // namespace edgemem
