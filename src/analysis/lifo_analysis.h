// Arena pools are stack-like: a block freed while a later block still sits
// above it cannot be reused, so the arena's water mark does not fall even
// though alloc and free counts balance (seed 001 §4.1, the "logical leak").
#pragma once

#include <algorithm>
#include <vector>

#include "edgemem/analysis_result.h"
#include "pool_tracker.h"

namespace edgemem {

class LifoAnalysis {
 public:
  // Called after the tracker removed `freed` from an arena pool.
  void freed(PoolState& pool, const Block& freed);
  // Called after the tracker added a block to an arena pool, with its top
  // and live bytes: alignment padding and blocks placed above gaps strand
  // bytes below the top too.
  void allocated(uint64_t top, uint64_t live_bytes) {
    if (top > live_bytes) [[unlikely]]
      max_stranded_ = std::max(max_stranded_, top - live_bytes);
  }
  void finish(PoolTracker& tracker, const TraceContext& context, AnalysisResult& out);

 private:
  struct PerSite {
    uint64_t violations = 0, bytes = 0;
  };
  std::vector<PerSite> sites_;
  uint64_t violations_ = 0, max_stranded_ = 0;
};

}  // namespace edgemem
