// `edgemem diff`: what changed most, first; then each group with units on
// every number; and the edgemem.diff/2 JSON document, where a row's value
// keys carry its unit (before_bytes, delta_fraction, ...) and bytes and
// counts are integers (docs/schemas/diff.schema.json).
#pragma once

#include <string>
#include <vector>

#include "report/diff.h"

namespace edgemem {

struct DiffReport {
  std::string before, after;
  std::string kind;  // "images" | "traces"
  std::vector<DiffGroup> groups;
};

std::string diff_text(const DiffReport& r, size_t top, bool all);
std::string diff_json(const DiffReport& r);

}  // namespace edgemem
