// Temporary allocations, as heaptrack counts them but per thread: a block
// freed by the thread that made it, with no allocation and no free of that
// thread in between (a scratch buffer made and dropped at once, the first
// thing to move to the stack or a reused buffer). Counted per call site.
#pragma once

#include <cstdint>
#include <vector>

#include "dense_index.h"
#include "edgemem/analysis_result.h"
#include "edgemem/decoder.h"
#include "live_map.h"
#include "pool_tracker.h"

namespace edgemem {

class TemporaryAnalysis {
 public:
  void allocated(PoolId pool, uint32_t thread, const Block& block);
  // A free made by `thread`.
  void freed(PoolId pool, uint32_t thread, const Block& block);
  void finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const;

 private:
  // A thread's last allocation while no free of that thread followed it.
  struct Last {
    uint64_t address = 0, time = 0;
    PoolId pool = 0;
    bool open = false;
  };
  Last& last_of(uint32_t thread);
  struct Counts {
    uint64_t count = 0, bytes = 0;
  };

  DenseIndex threads_{4096};
  std::vector<Last> last_;  // by thread index; the overflow index shares the last one
  std::vector<Counts> sites_;  // by SiteId (SiteTable is bounded)
  uint64_t count_ = 0, bytes_ = 0, allocations_ = 0;
};

}  // namespace edgemem
