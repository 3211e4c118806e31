// The high-water mark of all pools together and what held it. The holders
// are copied lazily, just before the first release after a new peak: until
// then nothing has left, so the live set is still the one at the peak.
#pragma once

#include <vector>

#include "edgemem/analysis_result.h"
#include "pool_tracker.h"

namespace edgemem {

class PeakAnalysis {
 public:
  void usage_changed(const PoolTracker& tracker, uint64_t time) {
    if (tracker.total_usage() > peak_) {
      peak_ = tracker.total_usage();
      time_ = time;
      inference_ = tracker.device_inference();
      pending_ = true;
    }
  }
  // Summary records: `total` is one pool at its peak since its last summary
  // and the others as they stand; no block is known, so nobody holds it.
  void summarized(uint64_t total, uint64_t time, std::optional<uint64_t> inference) {
    if (total > peak_) {
      peak_ = total;
      time_ = time;
      inference_ = inference;
      pending_ = false;
      holders_.clear();
    }
  }
  void before_release(const PoolTracker& tracker) {
    if (pending_) {
      holders_ = holders(tracker);
      pending_ = false;
    }
  }
  // Leaves the analysis as it was, so it can be called mid-trace.
  void finish(const PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const;

 private:
  static std::vector<std::pair<SiteId, SiteCounters>> holders(const PoolTracker& tracker);
  uint64_t peak_ = 0, time_ = 0;
  std::optional<uint64_t> inference_;
  bool pending_ = false;
  std::vector<std::pair<SiteId, SiteCounters>> holders_;
};

}  // namespace edgemem
