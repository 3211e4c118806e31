// The one self-contained HTML page every command's --html writes: the data
// document names its kind ("analyze", "plan", "map", "stack", "fit", "diff")
// and web/pages/KIND.js draws it. Presenters build the data; this file owns
// how it is embedded.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace edgemem::html {

// The page with `data` (plus "kind") embedded. Strings in `data` stay data:
// the page script renders them with textContent, and "<" is escaped so no
// "</script>" inside a name can end the data block.
std::string page(std::string_view kind, nlohmann::json data);

// A text report's findings as [{tag, text, more[]}] in its order (worst
// first), so a page and the terminal agree on wording and order. The text's
// first line is its title (the page builds its own); then lines are a tag
// padded to 14 columns and the text, continuation lines start with 14
// spaces. Pass text rendered without colour (style::Plain).
nlohmann::json findings(const std::string& text);

// A text report's verdict: its lines up to the first blank one, for the
// reports (plan, fit) that state the verdict first without tagged findings.
nlohmann::json verdict_lines(const std::string& text);

}  // namespace edgemem::html
