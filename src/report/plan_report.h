// `edgemem plan`: what the arena of a model needs, as text (verdict first)
// and as the edgemem.plan/1 JSON document (docs/schemas/plan.schema.json).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/arena_budget.h"

namespace edgemem {

struct PlanTensorRow {
  int32_t id = 0;
  std::string name;
  uint64_t bytes = 0;          // element size x dims, as the model states it
  uint64_t aligned_bytes = 0;  // what the planner places: rounded up to 16 B
  int32_t first_op = 0, last_op = 0;
  uint64_t offset = 0;
};

struct PlanReorder {
  std::vector<int32_t> order;
  bool exhaustive = true;
  uint64_t lower_bound_bytes = 0, original_lower_bound_bytes = 0, arena_bytes = 0;
};

struct PlanReport {
  std::string model;
  int32_t operators = 0;
  uint64_t constant_bytes = 0;
  std::vector<PlanTensorRow> tensors;  // offsets from `planner`'s plan
  std::string planner;                 // "exhaustive", "tflm-greedy", ...
  uint64_t arena_bytes = 0, tflm_greedy_bytes = 0, lower_bound_bytes = 0;
  bool offline_plan = false;
  plan::ArenaBudget budget;
  std::optional<uint64_t> declared;     // --declared
  std::vector<uint64_t> live_bytes;     // per operator
  int32_t peak_op = 0;
  uint64_t peak_live_bytes = 0;
  std::vector<int32_t> peak_tensors;
  std::optional<PlanReorder> reorder;

  // The verdicts: TFLite Micro cannot run the model (no size is recommended),
  // or a declared arena is smaller than the recommended one.
  bool unrunnable() const { return !budget.runnable(); }
  bool declared_short() const { return !unrunnable() && declared && *declared < budget.recommended_bytes; }
  bool against_user() const { return unrunnable() || declared_short(); }
};

std::string plan_text(const PlanReport& r);
std::string plan_json(const PlanReport& r);

}  // namespace edgemem
