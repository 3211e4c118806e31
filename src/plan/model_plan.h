// `edgemem plan` as one library call: a model in, every number the plan
// presenters show out (both planners' offsets, the lower bound, the arena
// budget, live bytes per operator and the peak), so the text, JSON and HTML
// presenters and the tests read one typed result and the CLI only parses flags.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/arena_budget.h"
#include "plan/tflite_model.h"

namespace edgemem::plan {

enum class Planner { best, tflm_greedy };  // --planner best | greedy

struct PlanOptions {
  Planner planner = Planner::best;
  Target target = Target::cortex_m;
  std::optional<uint64_t> declared;  // --declared
  bool reorder = false;              // --reorder
};

struct PlanTensorRow {
  int32_t id = 0;
  std::string name;
  uint64_t bytes = 0;          // element size x dims, as the model states it
  uint64_t aligned_bytes = 0;  // what the planner places: rounded up to 16 B
  int32_t first_op = 0, last_op = 0;
  uint64_t offset = 0;         // in the chosen planner's plan (PlanReport::planner)
  uint64_t tflm_offset = 0;    // in TFLite Micro's greedy plan
};

struct PlanReorder {
  std::vector<int32_t> order;
  bool exhaustive = true;
  uint64_t lower_bound_bytes = 0, original_lower_bound_bytes = 0, arena_bytes = 0;
};

struct PlanReport {
  std::string model;
  int32_t operators = 0;
  std::vector<std::string> operator_names;  // per operator, as operator_name() spells them
  uint64_t constant_bytes = 0;
  std::vector<PlanTensorRow> tensors;
  std::string planner;                 // "exhaustive", "tflm-greedy", ...
  uint64_t arena_bytes = 0, tflm_greedy_bytes = 0, lower_bound_bytes = 0;
  bool offline_plan = false;
  ArenaBudget budget;
  std::optional<uint64_t> declared;     // --declared
  std::vector<uint64_t> live_bytes;     // per operator: the tensors live while it runs
  int32_t peak_op = 0;                  // -1: before the first operator (graph inputs alone)
  uint64_t peak_live_bytes = 0;
  std::vector<int32_t> peak_tensors;
  std::optional<PlanReorder> reorder;

  // The verdicts: TFLite Micro cannot run the model (no size is recommended),
  // or a declared arena is smaller than the recommended one.
  bool unrunnable() const { return !budget.runnable(); }
  // The recommendation adds the 16 B an unaligned array loses: a declared
  // arena short of it by no more than that runs when it is 16-byte aligned.
  bool declared_short() const {
    // declared + alignment < recommended, without the sum wrapping for a declared size near 2^64.
    return !unrunnable() && declared && budget.recommended_bytes > budget.alignment_bytes &&
           *declared < budget.recommended_bytes - budget.alignment_bytes;
  }
  bool declared_needs_alignment() const {
    return !unrunnable() && declared && !declared_short() && *declared < budget.recommended_bytes;
  }
  bool against_user() const { return unrunnable() || declared_short(); }
};

// `path` is how the report names the model.
PlanReport plan_model(const TfliteModel& model, const std::string& path, const PlanOptions& options);

}  // namespace edgemem::plan
