// The HTML report: the page built from web/ with the analyze JSON document and
// the text report's findings embedded as data. The page script renders from
// that data with textContent, so trace strings never become markup.
#include <algorithm>
#include <string_view>

#include "edgemem/report.h"
#include "report/html_template.h"
#include "report/style.h"

namespace edgemem {
namespace {

using nlohmann::json;

// The text report's findings as {tag, text, more[]}, in its order (worst
// first), so the page and the terminal always agree on wording and order.
// Its lines are "TAG" padded to 14 columns, then text; continuation lines
// start with 14 spaces.
json summary_entries(const std::string& text) {
  constexpr size_t kTagWidth = 14;
  json entries = json::array();
  size_t start = text.find('\n');  // the first line is the title the page builds itself
  while (start != std::string::npos && start + 1 < text.size()) {
    size_t end = text.find('\n', start + 1);
    std::string_view line(text.data() + start + 1, (end == std::string::npos ? text.size() : end) - start - 1);
    start = end;
    if (line.empty()) continue;
    std::string_view tag = line.substr(0, std::min(kTagWidth, line.size()));
    std::string_view rest = line.size() > kTagWidth ? line.substr(kTagWidth) : std::string_view();
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    if (tag.empty() && !entries.empty()) {
      entries.back()["more"].push_back(rest);
      continue;
    }
    entries.push_back({{"tag", tag}, {"text", rest}, {"more", json::array()}});
  }
  return entries;
}

// JSON inside <script>: "<" only occurs inside JSON strings, where \u003c
// means the same, so no "</script>" or "<!--" from a trace can end the block.
std::string script_safe(const std::string& json_text) {
  std::string out;
  out.reserve(json_text.size());
  for (char c : json_text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string html_report(const InputSummary& input, const AnalysisResult& result) {
  std::string text;
  {
    style::Plain plain;  // the page takes the text report's words, not its terminal colours
    text = text_report(input, result);
  }
  json data = {{"analysis", to_json(input, result)}, {"summary", summary_entries(text)}};
  std::string page(html_template::before_data);
  page += script_safe(data.dump(-1, ' ', false, json::error_handler_t::replace));
  page += html_template::after_data;
  return page;
}

}  // namespace edgemem
