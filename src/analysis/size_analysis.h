// Request sizes in power-of-two buckets, and the bytes lost to alignment
// padding compared with alignment capped at 8 bytes (seed 000: 64 B vs 8 B):
// a request aligned to 4 stays at 4, only stricter ones come down to 8.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "edgemem/analysis_result.h"
#include "live_map.h"

namespace edgemem {

class SizeAnalysis {
 public:
  // Inline, as it runs on every allocation.
  void allocated(const Block& b) {
    SizeBucket& bucket = buckets_[std::bit_width(b.size)];
    ++bucket.count;
    bucket.bytes += b.size;
    if (b.align > 0) [[unlikely]] {
      ++aligned_;
      padding_ += pad(b.size, b.align);
      padding8_ += pad(b.size, std::min<uint64_t>(b.align, 8));
      max_align_ = std::max<uint64_t>(max_align_, b.align);
    }
  }
  void finish(AnalysisResult& out) const;

 private:
  // Bytes from `size` up to the next multiple of `align`; a mask, not a
  // division, for the usual power of two.
  static uint64_t pad(uint64_t size, uint64_t align) {
    return std::has_single_bit(align) ? (0 - size) & (align - 1) : (align - size % align) % align;
  }
  std::array<SizeBucket, 65> buckets_{};
  uint64_t aligned_ = 0, padding_ = 0, padding8_ = 0, max_align_ = 0;
};

}  // namespace edgemem
