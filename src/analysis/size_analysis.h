// Request sizes in power-of-two buckets, and the bytes lost to alignment
// padding compared with plain 8-byte alignment (seed 000: 64 B vs 8 B).
#pragma once

#include <array>

#include "edgemem/analysis_result.h"
#include "live_map.h"

namespace edgemem {

class SizeAnalysis {
 public:
  void allocated(const Block& block);
  void finish(AnalysisResult& out) const;

 private:
  std::array<SizeBucket, 65> buckets_{};
  uint64_t aligned_ = 0, padding_ = 0, padding8_ = 0, max_align_ = 0;
};

}  // namespace edgemem
