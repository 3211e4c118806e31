// Alignment padding: a mask for powers of two, a division otherwise; both
// must count the bytes up to the next multiple of the alignment.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/size_analysis.h"

namespace edgemem {
namespace {

uint64_t padding_counted_up(uint64_t size, uint64_t align) {
  uint64_t pad = 0;
  while ((size + pad) % align != 0) ++pad;
  return pad;
}

TEST(SizeAnalysis, PaddingIsTheBytesUpToTheNextMultipleForAnyAlignment) {
  SizeAnalysis sizes;
  uint64_t expected = 0, expected_at_8 = 0, requests = 0;
  for (uint64_t align : {1, 2, 3, 8, 12, 16, 24, 64, 100, 4096}) {
    for (uint64_t size : {0, 1, 7, 8, 9, 63, 64, 65, 100, 1000, 4095, 4096, 4097}) {
      Block b;
      b.size = size;
      b.align = static_cast<uint32_t>(align);
      sizes.allocated(b);
      expected += padding_counted_up(size, align);
      expected_at_8 += padding_counted_up(size, std::min<uint64_t>(align, 8));
      ++requests;
    }
  }
  AnalysisResult out;
  sizes.finish(out);
  EXPECT_EQ(out.sizes.aligned_requests, requests);
  EXPECT_EQ(out.sizes.padding_bytes, expected);
  EXPECT_EQ(out.sizes.padding_bytes_at_8, expected_at_8);
  EXPECT_EQ(out.sizes.max_align, 4096u);
}

}  // namespace
}  // namespace edgemem
