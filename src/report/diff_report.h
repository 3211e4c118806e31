// `edgemem diff`: what changed most, first; then each group with units on
// every number; and the edgemem.diff/2 JSON document, where a row's value
// keys carry its unit (before_bytes, delta_fraction, ...) and bytes and
// counts are integers (docs/schemas/diff.schema.json).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/diff.h"

namespace edgemem {

struct DiffReport {
  std::string before, after;
  std::string kind;  // "images" | "traces"
  std::vector<DiffGroup> groups;
  // Two traces: what each lost (analyze's [DATA LOST]), empty when nothing:
  // its numbers are of the data that arrived, so a change may be the loss.
  std::string before_lost, after_lost;
};

// The line that opens the text report: the biggest changes of the group a
// reader looks at first (regions of an image, the run's numbers for traces).
struct DiffHeadline {
  bool changed = false;
  std::string text;  // "FLASH +1,024 B (...), ..." or "no change in regions"
};
DiffHeadline diff_headline(const DiffReport& r);

// A row's numbers as text prints them: "1,024 B", "+8 B", "+0.8 %" ("" when
// there is no ratio), and its label.
std::string diff_value(double v, DiffUnit unit);
std::string diff_change(double delta, DiffUnit unit);
std::string diff_ratio(const DiffRow& row);
std::string diff_label(const DiffRow& row);

std::string diff_text(const DiffReport& r, size_t top, bool all);
std::string diff_json(const DiffReport& r);

// The page's data (each group's changed rows, `top` of them as in text, with
// the numbers as text prints them) and `edgemem diff --html`'s page.
nlohmann::json diff_page_data(const DiffReport& r, size_t top);
std::string diff_html(const DiffReport& r, size_t top);

}  // namespace edgemem
