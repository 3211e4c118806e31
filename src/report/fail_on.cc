#include <stdexcept>

#include <fmt/format.h>

#include "edgemem/report.h"

namespace edgemem {

FailOn parse_fail_on(std::string_view spec) {
  FailOn f;
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (item == "leak") f.leak = true;
    else if (item == "overflow") f.overflow = true;
    else if (item == "guard") f.guard = true;
    else if (item == "lifo") f.lifo = true;
    else if (item == "alloc-failure") f.alloc_failure = true;
    else if (item == "fragmentation" || item == "fragmentation=warning") f.fragmentation = 1;
    else if (item == "fragmentation=danger") f.fragmentation = 2;
    else if (!item.empty())
      throw std::invalid_argument(fmt::format(
          "unknown --fail-on item '{}' (expected leak, overflow, guard, lifo, alloc-failure, "
          "fragmentation=warning or fragmentation=danger)", item));
  }
  return f;
}

std::vector<std::string> broken_rules(const FailOn& rules, const AnalysisResult& r) {
  std::vector<std::string> out;
  if (rules.leak && !r.leaks.empty())
    out.push_back(fmt::format("leak: {} site(s), {} B leaked at {} first", r.leaks.size(), r.leaks.front().bytes,
                              r.leaks.front().site));
  if (rules.overflow && r.overflow_count)
    out.push_back(fmt::format("overflow: {} allocation(s) past the end of their pool", r.overflow_count));
  if ((rules.guard || rules.overflow) && r.guard_failure_count)
    out.push_back(fmt::format("guard: {} corrupted sentinel check(s)", r.guard_failure_count));
  if (rules.lifo && r.lifo.violations)
    out.push_back(fmt::format("lifo: {} out-of-order arena free(s)", r.lifo.violations));
  if (rules.alloc_failure && r.fragmentation.alloc_failures)
    out.push_back(fmt::format("alloc-failure: {} failed allocation(s)", r.fragmentation.alloc_failures));
  int rank = r.fragmentation.band == "danger" ? 2 : r.fragmentation.band == "warning" ? 1 : 0;
  if (rules.fragmentation > 0 && rank >= rules.fragmentation)
    out.push_back(fmt::format("fragmentation: band {} (final {:.0f}%, max {:.0f}%)", r.fragmentation.band,
                              r.fragmentation.final_rate * 100, r.fragmentation.max_rate * 100));
  return out;
}

}  // namespace edgemem
