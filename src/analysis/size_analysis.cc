#include "size_analysis.h"

namespace edgemem {

void SizeAnalysis::finish(AnalysisResult& out) const {
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (!buckets_[i].count) continue;
    SizeBucket b = buckets_[i];
    b.min = i == 0 ? 0 : uint64_t{1} << (i - 1);
    b.max = i == 0 ? 0 : i == 64 ? UINT64_MAX : (uint64_t{1} << i) - 1;
    out.sizes.histogram.push_back(b);
  }
  out.sizes.aligned_requests = aligned_;
  out.sizes.padding_bytes = padding_;
  out.sizes.padding_bytes_at_8 = padding8_;
  out.sizes.max_align = max_align_;
}

}  // namespace edgemem
