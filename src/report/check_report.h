// `edgemem check`: the verdict first, then each broken budget, then those
// that hold -- all on stdout, in that order; and the edgemem.check/2 JSON
// document with the measured number and the limit of every rule
// (docs/schemas/check.schema.json).
#pragma once

#include <string>
#include <vector>

#include "report/budget.h"

namespace edgemem {

std::string check_text(const std::vector<BudgetOutcome>& outcomes);
std::string check_json(const std::string& budget_path, const std::vector<BudgetOutcome>& outcomes);

}  // namespace edgemem
