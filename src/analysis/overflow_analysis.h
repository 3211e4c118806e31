// Allocations that end past their pool (seed 001 §4.3: a 4096 B request with
// 3072 B left) and guard sentinels found corrupted.
#pragma once

#include <vector>

#include "edgemem/analysis_result.h"
#include "kept_per_pool.h"
#include "pool_tracker.h"

namespace edgemem {

class OverflowAnalysis {
 public:

  // `shared_usage`: bytes the pool's partner (other end of the arena) holds;
  // `usage`: the pool's own, with the block. A heap of known size whose base
  // is not known cannot place its blocks: its live bytes past its size are
  // the overflow then.
  void allocated(PoolId pool, const PoolInfo& info, const Block& block, uint64_t shared_usage, uint64_t usage);
  // A summary record's peak past the pool's end is an overflow: one per
  // pool, at its furthest. (Against what a shared arena's other end holds
  // it is not judged: the records do not say what both held at one moment.)
  void summarized(PoolId pool, const PoolInfo& info, uint64_t peak_bytes, uint64_t time);
  void guard(PoolId pool, bool corrupt, uint64_t time, SiteId site, std::optional<uint64_t> inference);
  // As FragmentationAnalysis's: guard failures before the first end marker
  // of a boot that marks only ends are its first inference's.
  void device_restarted() {
    boot_guards_from_ = guards_.size();
    ++boot_;
  }
  void first_inference_by_its_end(uint64_t number) {
    for (size_t i = boot_guards_from_; i < guards_.size(); ++i)
      if (!guards_[i].g.inference) guards_[i].g.inference = number;
  }
  void finish(const TraceContext& context, AnalysisResult& out);

 private:
  struct Found {
    Overflow o;
    PoolId pool;
    SiteId site;
  };
  struct Guard {
    GuardFailure g;
    PoolId pool;
    SiteId site;
  };
  // A pool's use past its size, one finding per pool at its furthest; `marker`
  // says what measured it (kSummaryOverflowSite, kUsageOverflowSite).
  void used_past_size(PoolId pool, const PoolInfo& info, uint64_t used, uint64_t time, std::string_view marker);
  std::vector<Found> overflows_;
  std::vector<Guard> guards_;
  KeptPerPool overflows_kept_, guards_kept_;
  size_t boot_guards_from_ = 0;  // the first of guards_ in the latest boot
  uint64_t boot_ = 1;
  uint64_t overflow_count_ = 0, guard_failures_ = 0, guard_checks_ = 0;
  enum class Extent : uint8_t { none, known, usage_only, unknown };
  std::vector<Extent> extents_;  // per pool that had allocations: could its end be checked?
  std::vector<bool> sized_late_;  // per pool: sized after blocks it had made, which went unchecked
  std::vector<size_t> usage_overflow_;  // per pool: its use-past-size overflow in overflows_ (SIZE_MAX: none)
};

}  // namespace edgemem
