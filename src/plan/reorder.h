// Operator reordering (Liberis & Lane, "Neural networks on microcontrollers:
// saving memory at inference via operator reordering"): any topological
// order of the graph computes the same result, but the tensors live at once
// differ. A dynamic program over sets of executed operators finds the order
// with the lowest peak; graphs with too many such sets get a greedy order.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/tflite_model.h"

namespace edgemem::plan {

struct ReorderResult {
  std::vector<int32_t> order;  // operator indices in execution order
  uint64_t peak_bytes = 0;     // most tensor bytes live at once in that order
  uint64_t original_peak_bytes = 0;
  bool exhaustive = true;      // false: the search was too large, greedy order
};

ReorderResult best_operator_order(const TfliteModel& model, size_t max_states = 200000);

// The same model with its operators in `order`.
TfliteModel with_operator_order(const TfliteModel& model, const std::vector<int32_t>& order);

}  // namespace edgemem::plan
