// The one band table and the stable identifiers of the result enums; JSON,
// budgets and --fail-on all read them from here.
#include "edgemem/analysis_result.h"

namespace edgemem {

// Computed as (total - largest) / total, one rounding: a fraction equal to
// 1/10 gives the double nearest 1/10, which is the literal 0.10, and one on
// either side of it stays on its side while total < 2^53 (the two differ by
// at least 1 / (10 total), more than half a step of doubles near 0.1).
// 1 - largest / total rounds twice: 1 - 900/1000 gave 0.09999999999999998,
// healthy, for 10 % exactly.
double fragmentation_rate(uint64_t total_free, uint64_t largest_free) {
  if (total_free == 0) return 0.0;
  return static_cast<double>(total_free - largest_free) / static_cast<double>(total_free);
}

Band fragmentation_band(double rate) {
  if (rate < 0.10) return Band::healthy;
  if (rate <= 0.25) return Band::warning;
  return Band::danger;
}

std::string_view to_string(Band band) {
  switch (band) {
    case Band::healthy: return "healthy";
    case Band::warning: return "warning";
    case Band::danger: return "danger";
  }
  return "danger";
}

std::optional<Band> parse_band(std::string_view name) {
  for (Band b : {Band::healthy, Band::warning, Band::danger})
    if (to_string(b) == name) return b;
  return std::nullopt;
}

std::string_view to_string(Shape shape) {
  switch (shape) {
    case Shape::flat: return "flat";
    case Shape::linear: return "linear";
    case Shape::stair: return "stair";
    case Shape::irregular: return "irregular";
  }
  return "irregular";
}

std::string_view to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::found: return "found";
    case CheckStatus::clean: return "clean";
    case CheckStatus::not_checked: return "not_checked";
  }
  return "not_checked";
}

std::string_view to_string(LeakPattern pattern) {
  switch (pattern) {
    case LeakPattern::every_inference: return "every_inference";
    case LeakPattern::every_nth: return "every_nth";
    case LeakPattern::irregular: return "irregular";
  }
  return "irregular";
}

std::string_view to_string(LiveReason reason) {
  switch (reason) {
    case LiveReason::before_first_inference: return "before_first_inference";
    case LiveReason::not_growing: return "not_growing";
    case LiveReason::kept_by_c_runtime: return "kept_by_c_runtime";
  }
  return "not_growing";
}

}  // namespace edgemem
