// libFuzzer entry for the .tflite reader and the planners behind it.
#include <cstddef>
#include <cstdint>

#include "plan/arena_budget.h"
#include "plan/lifetimes.h"
#include "plan/planners.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto model = edgemem::plan::read_tflite({data, size}, error);
  if (!model) return 0;
  if (model->tensors.size() <= 64 && model->ops.size() <= 64)
    (void)edgemem::plan::arena_budget(*model, edgemem::plan::Target::cortex_m);
  auto buffers = edgemem::plan::planner_input(edgemem::plan::planned_buffers(*model));
  if (buffers.size() > 64) buffers.resize(64);  // keep each run fast; the planners are O(n^2)
  (void)edgemem::plan::best_plan(buffers);
  (void)edgemem::plan::lower_bound(buffers);
  return 0;
}
