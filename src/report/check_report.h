// `edgemem check`: the verdict first, then each broken budget, then those
// that hold -- all on stdout, in that order; and the edgemem.check/2 JSON
// document with the measured number and the limit of every rule
// (docs/schemas/check.schema.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/budget.h"

namespace edgemem {

// The trace the limits were judged on, when one was given. What they rest
// on is said under the verdict: a device that started again inside the
// capture has each boot's leaks judged on their own (some boots may not be
// judgeable), and a trace
// that lost data (a cut end too) was judged on what arrived.
struct CheckTrace {
  std::string path;
  uint64_t inferences = 0;
  uint64_t latest_boot_inferences = 0;  // those leaks are judged over
  uint64_t device_restarts = 0;
  // Boots before the latest whose leak check found a leak, and those it
  // could not judge (one inference ended in it, or summary records only).
  uint64_t leaking_boots = 0, unjudged_boots = 0;
  std::string data_lost;  // analyze's [DATA LOST]; empty when nothing was
  // Pools an arena limit (no size) or a fragmentation band (no size or
  // base) was not judged on, when one was: their margins and gaps were not.
  std::vector<std::string> unsized_pools{};
  std::vector<std::string> unsized_limits{};  // beside each: "'heap' (fragmentation band)"
};

std::string check_text(const std::vector<BudgetOutcome>& outcomes, const std::optional<CheckTrace>& trace);
std::string check_json(const std::string& budget_path, const std::vector<BudgetOutcome>& outcomes,
                       const std::optional<CheckTrace>& trace);

}  // namespace edgemem
