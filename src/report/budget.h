// Memory budgets for CI (`edgemem check --budget FILE`): limits on memory
// regions, sections and symbols of the linked image, the worst-case stack
// against the configured stack, the arena margin, the leak rate and the
// fragmentation band, each evaluated against what edgemem measured. The
// budget file format is in docs/check.md (schema edgemem.budget/1).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "edgemem/analysis_result.h"
#include "plan/arena_budget.h"
#include "static/linker_map.h"
#include "static/stack_usage.h"

namespace edgemem {

// What was measured; null when that input was not given.
struct BudgetInputs {
  const LinkerMap* map = nullptr;
  const StackReport* stack = nullptr;
  const AnalysisResult* trace = nullptr;
  const plan::ArenaBudget* arena = nullptr;
};

struct BudgetOutcome {
  std::string rule;     // "regions.RAM.max_percent"
  bool ok = false;
  std::string message;  // one line: what was measured against what limit
};

// Evaluates every limit in `budget`. A malformed budget, or a limit whose
// input is missing, sets `error` (one line) and returns nothing.
std::vector<BudgetOutcome> evaluate_budget(const nlohmann::json& budget, const BudgetInputs& in, std::string& error);

}  // namespace edgemem
