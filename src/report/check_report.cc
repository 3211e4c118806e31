#include "report/check_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "report/style.h"
#include "report/units.h"

namespace edgemem {
namespace {

size_t broken(const std::vector<BudgetOutcome>& outcomes) {
  size_t n = 0;
  for (const auto& o : outcomes) n += !o.ok;
  return n;
}

}  // namespace

std::string check_text(const std::vector<BudgetOutcome>& outcomes, const std::optional<CheckTrace>& trace) {
  size_t n = broken(outcomes);
  std::string out = n                      ? style::bad(fmt::format("BROKEN: {} of {} budgets", n, outcomes.size()))
                    : outcomes.size() == 1 ? style::good("the 1 budget holds")
                                           : style::good(fmt::format("all {} budgets hold", outcomes.size()));
  out += "\n";
  // Under the verdict, what it rests on: a tag as analyze's, then the trace.
  auto note = [&](std::string_view tag, const std::string& what) {
    out += fmt::format("{} {}: {}\n", style::warn(fmt::format("{:<11}", tag)), trace->path, what);
  };
  if (trace && trace->device_restarts)
    note("[RESTART]",
         fmt::format("the device started again {} time{}: leaks are judged in each boot on its own (the latest: {} "
                     "of {} inferences){}{}",
                     units::grouped(trace->device_restarts), trace->device_restarts == 1 ? "" : "s",
                     units::grouped(trace->latest_boot_inferences), units::grouped(trace->inferences),
                     trace->leaking_boots ? fmt::format("; {} boot{} before the latest leaked",
                                                        units::grouped(trace->leaking_boots),
                                                        trace->leaking_boots == 1 ? "" : "s")
                                          : "",
                     trace->unjudged_boots ? fmt::format("; {} boot{} before it could not be judged",
                                                         units::grouped(trace->unjudged_boots),
                                                         trace->unjudged_boots == 1 ? "" : "s")
                                           : ""));
  if (trace && !trace->data_lost.empty())
    note("[DATA LOST]", trace->data_lost + "; the limits were judged on the data that arrived");
  if (trace && !trace->unsized_pools.empty())
    note("[UNSIZED]", fmt::format("not judged for {}: an arena margin needs the pool's size, a fragmentation band its "
                                  "base and size (declare each in the trace: POOL name= base= size=)",
                                  fmt::join(trace->unsized_limits, ", ")));
  out += "\n";
  // The messages line up past the longest rule (34 columns at least, as before).
  size_t width = 34;
  for (const auto& o : outcomes) width = std::max(width, o.rule.size());
  for (const auto& o : outcomes)
    if (!o.ok) out += fmt::format("{} {:<{}} {}\n", style::bad("BROKEN"), o.rule, width, o.message);
  for (const auto& o : outcomes)
    if (o.ok) out += fmt::format("{}     {:<{}} {}\n", style::good("ok"), o.rule, width, o.message);
  return out;
}

std::string check_json(const std::string& budget_path, const std::vector<BudgetOutcome>& outcomes,
                       const std::optional<CheckTrace>& trace) {
  size_t n = broken(outcomes);
  nlohmann::json j = {{"schema", "edgemem.check/2"}, {"budget", budget_path}, {"ok", n == 0},
                      {"verdict", n ? "broken" : "holds"}, {"broken_count", n}, {"rule_count", outcomes.size()}};
  if (trace)
    j["trace"] = {{"path", trace->path},
                  {"inferences", trace->inferences},
                  {"latest_boot_inferences", trace->latest_boot_inferences},
                  {"device_restarts", trace->device_restarts},
                  {"leaking_boots", trace->leaking_boots},
                  {"unjudged_boots", trace->unjudged_boots},
                  {"data_lost", trace->data_lost.empty() ? nlohmann::json(nullptr) : nlohmann::json(trace->data_lost)},
                  {"unsized_pools", trace->unsized_pools}};
  j["outcomes"] = nlohmann::json::array();
  for (const auto& o : outcomes) {
    j["outcomes"].push_back({{"rule", o.rule}, {"ok", o.ok}, {"unit", to_string(o.unit)}, {"measured", o.measured},
                             {"limit", o.limit}, {"message", o.message}});
    if (o.unbounded) j["outcomes"].back()["unbounded"] = *o.unbounded;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
