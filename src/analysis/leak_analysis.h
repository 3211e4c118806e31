// Leaks by site at the end of the trace. "Live is not leaked": blocks made
// before the first inference, and blocks of a site whose live count stopped
// growing (a one-off cache, a ring of the last N buffers) are persistent;
// a site whose live count still reaches new highs in the second half of the
// run is leaking. Without inference markers the two cannot be told apart
// and every live block is listed as a leak.
#pragma once

#include "edgemem/analysis_result.h"
#include "pool_tracker.h"

namespace edgemem {

class LeakAnalysis {
 public:
  void finish(PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const;
};

std::string type_hint(uint64_t block_size);

}  // namespace edgemem
