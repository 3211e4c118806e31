// `edgemem stack`: the worst-case main stack first (with its unbounded
// flag), then every root and the heaviest frames; and the edgemem.stack/1
// JSON document (docs/schemas/stack.schema.json).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "static/stack_usage.h"

namespace edgemem {

// The lines that open the text report: the main stack's worst case, and the
// roots it cannot bound (or that there is no call graph at all).
struct StackVerdict {
  bool warn = false;
  std::string tag;    // "main stack worst case", "UNBOUNDED", "no call graph"
  std::string value;  // the number, when there is one
  std::string text;   // what follows it
};
std::vector<StackVerdict> stack_verdicts(const StackReport& r);

std::string stack_text(const StackReport& r, size_t top);
std::string stack_json(const StackReport& r);

// The page's data (each root's worst path with every frame and the running
// total, the heaviest frames) and `edgemem stack --html`'s page; `top` as in text.
nlohmann::json stack_page_data(const StackReport& r, size_t top);
std::string stack_html(const StackReport& r, size_t top);

}  // namespace edgemem
