#include "report/html_page.h"

#include <algorithm>

#include "report/html_template.h"

namespace edgemem::html {

using nlohmann::json;

json findings(const std::string& text) {
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

json verdict_lines(const std::string& text) {
  json lines = json::array();
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    if (end == start) break;
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string page(std::string_view kind, json data) {
  data["kind"] = kind;
  // Invalid UTF-8 from a trace becomes U+FFFD instead of failing the report.
  std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out(html_template::before_data);
  out.reserve(out.size() + text.size() + html_template::after_data.size());
  // "<" occurs only inside JSON strings, where \u003c means the same.
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  out += html_template::after_data;
  return out;
}

}  // namespace edgemem::html
