// libFuzzer entry for the .tflite reader and the planners behind it.
#include <cstddef>
#include <cstdint>

#include "plan/lifetimes.h"
#include "plan/planners.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto model = edgemem::plan::read_tflite({data, size}, error);
  if (!model) return 0;
  std::vector<edgemem::plan::Buffer> buffers;
  for (const auto& b : edgemem::plan::planned_buffers(*model))
    if (buffers.size() < 64) buffers.push_back({b.bytes, b.first, b.last, b.offline_offset});
  (void)edgemem::plan::best_plan(buffers);
  (void)edgemem::plan::lower_bound(buffers);
  return 0;
}
