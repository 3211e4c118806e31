#include "overflow_analysis.h"

namespace edgemem {

namespace {
constexpr size_t kKept = 100;  // records kept; counts are always exact
}

void OverflowAnalysis::allocated(PoolId pool, const PoolInfo& info, const Block& b, uint64_t shared_usage) {
  if (info.size == 0) return;
  uint64_t start = info.kind == PoolKind::arena ? 0 : info.base;
  if (info.kind == PoolKind::heap && info.base == 0) return;  // placement unknown
  uint64_t offset = b.address - start;
  uint64_t room = info.size > shared_usage ? info.size - shared_usage : 0;
  if (b.address >= start && offset + b.size <= room) return;
  ++overflow_count_;
  if (overflows_.size() >= kKept) return;
  Overflow o;
  o.time = b.time;
  o.offset = offset;
  o.size = b.size;
  o.arena_size = info.size;
  o.over_by = offset + b.size - room;
  o.available = offset < room ? room - offset : 0;
  overflows_.push_back({o, pool, b.site});
}

void OverflowAnalysis::guard(PoolId pool, bool corrupt, uint64_t time, SiteId site, uint64_t inference) {
  ++guard_checks_;
  if (!corrupt) return;
  ++guard_failures_;
  if (guards_.size() < kKept) guards_.push_back({GuardFailure{time, inference, {}, {}}, pool, site});
}

void OverflowAnalysis::finish(const TraceContext& context, AnalysisResult& out) {
  for (auto& f : overflows_) {
    f.o.pool = context.pools.at(f.pool).name;
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
}

}  // namespace edgemem
