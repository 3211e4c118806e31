#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "edgemem/report.h"
#include "report/names.h"
#include "report/units.h"

namespace edgemem {

FailOn parse_fail_on(std::string_view spec) {
  static const std::vector<std::string> kItems = {"leak",          "overflow",      "guard",
                                                  "lifo",          "alloc-failure", "fragmentation",
                                                  "fragmentation=warning", "fragmentation=danger"};
  FailOn f;
  // An empty list would check nothing and pass: a CI line built from an
  // unset variable, not a choice.
  if (spec.find_first_not_of(", ") == std::string_view::npos)
    throw std::invalid_argument(fmt::format("--fail-on: no rule given; expected one or more of {}", fmt::join(kItems, ",")));
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view typed = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (typed.empty()) continue;
    auto item = names::match(typed, kItems);
    if (!item) throw std::invalid_argument(names::unknown("--fail-on item", typed, kItems));
    if (*item == "leak") f.leak = true;
    else if (*item == "overflow") f.overflow = true;
    else if (*item == "guard") f.guard = true;
    else if (*item == "lifo") f.lifo = true;
    else if (*item == "alloc-failure") f.alloc_failure = true;
    else if (*item == "fragmentation") f.fragmentation = Band::warning;
    else f.fragmentation = parse_band(std::string_view(*item).substr(14));
  }
  return f;
}

std::vector<std::string> broken_rules(const FailOn& rules, const AnalysisResult& r) {
  std::vector<std::string> out;
  // Groups listed while the leak check could not run (a recording cut
  // off) neither break nor hold the rule: unjudged_rules says why.
  if (rules.leak && !r.leaks.empty() && r.checks.leaks.status != CheckStatus::not_checked)
    out.push_back(fmt::format("leak: {} site(s), {} B leaked at {} first", r.leaks.size(), r.leaks.front().bytes,
                              r.leaks.front().site));
  // A summary-mode trace's leak check does not run by site, but a pool's
  // growth it prints as [LEAK] breaks the rule (it passed over one).
  if (rules.leak)
    if (auto pools = summary_mode_leaks(r); !pools.empty())
      out.push_back(fmt::format("leak: {} growing (summary records name no site), pool '{}' first",
                                units::counted(pools.size(), "pool", "pools"), pools.front()->pool));
  // A boot before the latest leaked: judged as it went down, a leak whatever the latest boot shows.
  if (rules.leak && r.restarts.leaking_boots > 0) {
    const Restart* first = r.restarts.first_leaking_kept();
    const Restart* named = first ? first : &*r.restarts.most_leaked;
    out.push_back(fmt::format("leak: in {} before the device started again; in boot {}: {}, {} leaked at {} first",
                              units::counted(r.restarts.leaking_boots, "boot", "boots"), units::grouped(named->boot),
                              units::counted(named->leaking_groups, "site", "sites"), units::bytes(named->leaked_bytes),
                              named->leaks.front().site));
  }
  if (rules.overflow && r.overflow_count)
    out.push_back(fmt::format("overflow: {} allocation(s) past the end of their pool", r.overflow_count));
  if ((rules.guard || rules.overflow) && r.guard_failure_count)
    out.push_back(fmt::format("guard: {} corrupted sentinel check(s)", r.guard_failure_count));
  if (rules.lifo && r.lifo.violations)
    out.push_back(fmt::format("lifo: {} out-of-order arena free(s)", r.lifo.violations));
  if (rules.alloc_failure && r.fragmentation.alloc_failures)
    out.push_back(fmt::format("alloc-failure: {} failed allocation(s)", r.fragmentation.alloc_failures));
  const FragmentationResult& f = r.fragmentation;
  if (rules.fragmentation && f.band && *f.band >= *rules.fragmentation)
    out.push_back(fmt::format("fragmentation: band {} (max {}, final {}, {} failed allocation(s))", to_string(*f.band),
                              f.max_rate ? fmt::format("{:.0f}%", *f.max_rate * 100) : "not measured",
                              f.final_rate ? fmt::format("{:.0f}%", *f.final_rate * 100) : "not measured",
                              f.alloc_failures));
  return out;
}

size_t rule_count(const FailOn& rules) {
  return size_t{rules.leak} + rules.overflow + rules.guard + rules.lifo + rules.alloc_failure +
         rules.fragmentation.has_value();
}

std::vector<std::string> unjudged_rules(const FailOn& rules, const AnalysisResult& r) {
  std::vector<std::string> out;
  auto unjudged = [&](bool asked, const Check& c, std::string_view rule) {
    if (asked && c.status == CheckStatus::not_checked)
      out.push_back(fmt::format("{}: not checked, so it neither holds nor breaks ({})", rule,
                                c.reason.empty() ? "see the report" : c.reason));
  };
  unjudged(rules.leak && summary_mode_leaks(r).empty(), r.checks.leaks, "leak");
  // Records lost mid-trace can hide a leak: no leak in what arrived is no pass.
  if (rules.leak && r.checks.leaks.status == CheckStatus::clean && !r.lost_mid_trace.empty())
    out.push_back(fmt::format("leak: none in what arrived, but records were lost mid-trace ({}), so it neither holds "
                              "nor breaks",
                              r.lost_mid_trace));
  unjudged(rules.overflow, r.checks.overflow, "overflow");
  unjudged(rules.guard, r.checks.guards, "guard");
  unjudged(rules.lifo, r.checks.lifo, "lifo");
  unjudged(rules.fragmentation.has_value(), r.checks.fragmentation, "fragmentation");
  // A band under the rule's, of the measured pools only, shows nothing of the others.
  const FragmentationResult& f = r.fragmentation;
  if (rules.fragmentation && f.band && f.unmeasured_pools && *f.band < *rules.fragmentation)
    out.push_back(fmt::format("fragmentation: band {} where it was measured, but not known in every pool, so it "
                              "neither holds nor breaks ({})",
                              to_string(*f.band), r.checks.fragmentation.reason));
  return out;
}

}  // namespace edgemem
