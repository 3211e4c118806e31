// The high-water mark of all pools together and what held it: the pool
// tracker's copy-on-write snapshot of the sites' live counts, taken at each
// new high.
#pragma once

#include <vector>

#include "edgemem/analysis_result.h"
#include "pool_tracker.h"

namespace edgemem {

class PeakAnalysis {
 public:
  void usage_changed(PoolTracker& tracker, uint64_t time) {
    if (tracker.total_usage() > peak_) {
      peak_ = tracker.total_usage();
      time_ = time;
      inference_ = tracker.current_inference();
      boot_ = tracker.boot();
      before_first_ = !inference_ && tracker.boot_began_no_inference();
      tracker.snapshot_sites();
      blocks_known_ = true;
    }
  }
  // With end markers only, the first inference began where the boot did:
  // a peak before its end is that inference's (it once read "before the
  // first inference").
  void inference_begun(const PoolTracker& tracker, bool by_its_end) {
    if (before_first_ && by_its_end && boot_ == tracker.boot()) inference_ = tracker.device_inference();
    before_first_ = false;
  }
  // Summary records: `total` is one pool at its peak since its last summary
  // and the others as they stand; no block is known, so nobody holds it.
  void summarized(uint64_t total, uint64_t time, const PoolTracker& tracker) {
    if (total > peak_) {
      peak_ = total;
      time_ = time;
      inference_ = tracker.device_inference();
      boot_ = tracker.boot();
      before_first_ = false;
      blocks_known_ = false;
    }
  }
  // Leaves the analysis as it was, so it can be called mid-trace.
  void finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const;

 private:
  uint64_t peak_ = 0, time_ = 0;
  std::optional<uint64_t> inference_;
  uint64_t boot_ = 1;
  bool blocks_known_ = false;  // the peak was reached by blocks (not a summary record)
  bool before_first_ = false;  // reached before its boot's first inference began
};

}  // namespace edgemem
