// The one band table and the stable identifiers of the result enums; JSON,
// budgets and --fail-on all read them from here.
#include "edgemem/analysis_result.h"

namespace edgemem {

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
