// Memory budgets for CI (`edgemem check --budget FILE`): limits on memory
// regions, sections and symbols of the linked image, the worst-case stack
// against the configured stack, the arena margin, the leak rate and the
// fragmentation band, each evaluated against what edgemem measured. The
// budget file format is in docs/check.md (schema edgemem.budget/1).
#pragma once

#include <optional>
#include <string>
#include <string_view>
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

// What a measured number and its limit count.
enum class BudgetUnit { bytes, fraction, bytes_per_inference, count, band };
std::string_view to_string(BudgetUnit unit);

struct BudgetOutcome {
  std::string rule;     // "regions.RAM.max_percent"
  bool ok = false;
  std::string message;  // one line: what was measured against what limit
  BudgetUnit unit = BudgetUnit::bytes;
  nlohmann::json measured, limit;  // integers for bytes and counts, 0..1 for fractions, a band's name
  // A stack need's roots that have no bound, each "function: why", which
  // `measured` leaves out; empty when every root is bounded, unset for
  // other rules.
  std::optional<std::vector<std::string>> unbounded;
};

// Reads a budget's JSON text. Refused, with one line in `error`: text that
// is no JSON (with its offset), nesting past 64 levels, and a key given
// twice in one object (JSON would keep the last and drop a limit unsaid;
// keys match in any case, except section, symbol and stack root names,
// which the linker tells apart by case).
std::optional<nlohmann::json> parse_budget(std::string_view text, std::string& error);

// Evaluates every limit in `budget`. Keys and region names match in any
// case; byte limits may be sizes as the command line takes them ("64K").
// A malformed budget, or a limit whose input is missing, sets `error` (one
// line, naming the nearest known key on a typo) and returns nothing; a limit
// refused for what its input cannot tell sets it too and returns the limits
// the other groups broke.
std::vector<BudgetOutcome> evaluate_budget(const nlohmann::json& budget, const BudgetInputs& in, std::string& error);

}  // namespace edgemem
