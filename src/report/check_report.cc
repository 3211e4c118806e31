#include "report/check_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/style.h"

namespace edgemem {
namespace {

size_t broken(const std::vector<BudgetOutcome>& outcomes) {
  size_t n = 0;
  for (const auto& o : outcomes) n += !o.ok;
  return n;
}

}  // namespace

std::string check_text(const std::vector<BudgetOutcome>& outcomes) {
  size_t n = broken(outcomes);
  std::string out = n ? style::bad(fmt::format("BROKEN: {} of {} budgets", n, outcomes.size()))
                      : style::good(fmt::format("all {} budgets hold", outcomes.size()));
  out += "\n\n";
  // The messages line up past the longest rule (34 columns at least, as before).
  size_t width = 34;
  for (const auto& o : outcomes) width = std::max(width, o.rule.size());
  for (const auto& o : outcomes)
    if (!o.ok) out += fmt::format("{} {:<{}} {}\n", style::bad("BROKEN"), o.rule, width, o.message);
  for (const auto& o : outcomes)
    if (o.ok) out += fmt::format("{}     {:<{}} {}\n", style::good("ok"), o.rule, width, o.message);
  return out;
}

std::string check_json(const std::string& budget_path, const std::vector<BudgetOutcome>& outcomes) {
  size_t n = broken(outcomes);
  nlohmann::json j = {{"schema", "edgemem.check/2"}, {"budget", budget_path}, {"ok", n == 0},
                      {"verdict", n ? "broken" : "holds"}, {"broken_count", n}, {"rule_count", outcomes.size()}};
  j["outcomes"] = nlohmann::json::array();
  for (const auto& o : outcomes)
    j["outcomes"].push_back({{"rule", o.rule}, {"ok", o.ok}, {"unit", to_string(o.unit)}, {"measured", o.measured},
                             {"limit", o.limit}, {"message", o.message}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
