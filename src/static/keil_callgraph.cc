// armlink's static call graph (--callgraph; Keil MDK writes <image>.htm):
// one block per function — "NAME (Thumb, N bytes, Stack size S bytes,
// obj(section))", its [Stack] Max Depth, its [Calls] — plus the image's
// "Maximum Stack Usage" and the chain that reaches it. edgemem rebuilds the
// graph and runs the same worst-case walk as for GCC; Keil's own numbers are
// kept beside ours (stated_bytes, stated_max_bytes).
#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "static/stack_usage.h"
#include "static/text_lines.h"

namespace edgemem {
namespace {

std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) {
      out += s[i];
      continue;
    }
    std::string_view entity = s.substr(i + 1, semi - i - 1);
    if (entity == "gt") out += '>';
    else if (entity == "lt") out += '<';
    else if (entity == "amp") out += '&';
    else if (entity == "nbsp") out += ' ';
    else if (entity == "rArr") out += "=>";
    else if (entity.starts_with("#")) {
      unsigned code = 0;
      std::from_chars(entity.data() + 1, entity.data() + entity.size(), code);
      out += static_cast<char>(code);
    } else {
      out.append(s.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

// The anchor id in `<a name="[1e]">` or `<a href="#[1e]">`.
std::string anchor(std::string_view line, std::string_view attr) {
  size_t at = line.find(attr);
  if (at == std::string_view::npos) return {};
  size_t open = line.find('[', at), close = line.find(']', at);
  return open != std::string_view::npos && close != std::string_view::npos && close > open
             ? std::string(line.substr(open, close - open + 1))
             : std::string();
}

// `past_2_64`: the digits are more than 64 bits hold (the result is then UINT64_MAX).
uint64_t number_after(std::string_view s, std::string_view key, bool& found, bool& past_2_64) {
  found = false;
  size_t at = s.find(key);
  if (at == std::string_view::npos) return 0;
  at += key.size();
  while (at < s.size() && s[at] == ' ') ++at;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data() + at, s.data() + s.size(), v);
  found = (ec == std::errc() || ec == std::errc::result_out_of_range) && end != s.data() + at;
  past_2_64 = ec == std::errc::result_out_of_range;
  return ec == std::errc::result_out_of_range ? UINT64_MAX : v;  // too large for any stack, not unknown
}

std::vector<std::string> chain(std::string_view text) {
  std::vector<std::string> out;
  std::string s = unescape(text);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t arrow = s.find("=>", pos);
    std::string part = s.substr(pos, arrow == std::string::npos ? std::string::npos : arrow - pos);
    size_t b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(part.substr(b, e - b + 1));
    if (arrow == std::string::npos) break;
    pos = arrow + 2;
  }
  return out;
}

}  // namespace

std::optional<StackReport> parse_keil_callgraph(std::string_view html, bool fpu, std::string& error) {
  if (html.find("Static Call Graph for image") == std::string_view::npos) {
    error = "line 1: expected armlink's \"Static Call Graph for image\" report (link with --callgraph)";
    return std::nullopt;
  }
  std::map<std::string, CallNode> graph;
  std::optional<uint64_t> max_bytes;
  std::string unknown;
  std::vector<std::string> max_chain;
  CallNode* current = nullptr;
  enum class List { none, calls, other } list = List::none;
  bool want_chain = false;

  TextLines lines(html);
  std::string_view line;
  bool too_deep = false;
  // A depth or frame beyond any stack is damage: refused, so no sum can wrap.
  auto bytes_after = [&](std::string_view s, std::string_view key, bool& found) {
    bool past_2_64 = false;
    uint64_t v = number_after(s, key, found, past_2_64);
    if (found && v >= kMaxStackBytes && !too_deep) {
      error = fmt::format("line {}: {} {} bytes: expected less than 4 GiB (the report is damaged)", lines.number(), key,
                          past_2_64 ? std::string("2^64 or more") : std::to_string(v));
      too_deep = true;
    }
    return v;
  };
  while (lines.next(line)) {

    // "<H3>Maximum Stack Usage =   96 bytes + Unknown(...)</H3>", the chain on a later line.
    if (line.find("Maximum Stack Usage =") != std::string_view::npos) {
      bool found = false;
      uint64_t v = bytes_after(line, "Maximum Stack Usage =", found);
      if (found) max_bytes = v;
      size_t u = line.find("Unknown(");
      if (u != std::string_view::npos) unknown = std::string(line.substr(u + 8, line.find(')', u) - u - 8));
      continue;
    }
    if (line.find("Call chain for Maximum Stack Depth") != std::string_view::npos) {
      want_chain = true;
      continue;
    }
    if (want_chain) {
      if (line.find("&rArr;") != std::string_view::npos || (!line.empty() && line[0] != '<')) max_chain = chain(line);
      want_chain = false;
      continue;
    }

    // "<P><STRONG><a name="[28]"></a>main</STRONG> (Thumb, 2600 bytes, Stack size 216 bytes, main.o(.text.main))"
    if (line.starts_with("<P><STRONG><a name=\"[")) {
      std::string id = anchor(line, "name=");
      size_t name_start = line.find("</a>"), name_end = line.find("</STRONG>");
      if (id.empty() || name_start == std::string_view::npos || name_end == std::string_view::npos) continue;
      current = &graph[id];
      current->fn.name = unescape(line.substr(name_start + 4, name_end - name_start - 4));
      std::string_view rest = line.substr(name_end);
      bool found = false;
      uint64_t frame = bytes_after(rest, "Stack size", found);
      current->has_frame = found;
      current->fn.frame_bytes = frame;
      current->fn.qualifier = found ? "static" : "unknown";
      current->unused = rest.find(", UNUSED)") != std::string_view::npos;
      // "(Thumb, 0 bytes, Stack size 0 bytes, ...)": a label sharing the
      // next one's code (the startup's weak IRQ labels on Default_Handler).
      current->label_only = found && frame == 0 &&
                            (rest.find("(Thumb, 0 bytes,") != std::string_view::npos ||
                             rest.find("(ARM, 0 bytes,") != std::string_view::npos);
      // The object(section) is the last comma-separated field.
      size_t last = rest.rfind(", ");
      if (last != std::string_view::npos) {
        std::string_view where = rest.substr(last + 2);
        if (where.starts_with("UNUSED")) {
          size_t prev = rest.rfind(", ", last - 1);
          where = prev == std::string_view::npos ? where : rest.substr(prev + 2, last - prev - 2);
        } else if (where.ends_with(")")) {
          where.remove_suffix(1);
        }
        current->fn.file = unescape(where);
      }
      list = List::none;
      continue;
    }
    if (!current) continue;
    if (line.find("Max Depth =") != std::string_view::npos) {
      bool found = false;
      uint64_t v = bytes_after(line, "Max Depth =", found);
      if (found) current->stated_depth = v;
    }
    if (line.find("[Calls]") != std::string_view::npos) list = List::calls;
    else if (line.find("[Called By]") != std::string_view::npos || line.find("[Address Reference") != std::string_view::npos ||
             line.find("[Stack]") != std::string_view::npos)
      list = List::other;
    if (list == List::calls && line.find("href=\"#[") != std::string_view::npos)
      current->callees.push_back(anchor(line, "href="));
  }
  if (too_deep) return std::nullopt;
  if (graph.empty()) {
    error = "no function entries found in the Keil call graph report";
    return std::nullopt;
  }
  // armlink ends the page with </html>: a report cut before it lacks
  // functions and callees, and its worst case would read too small.
  std::string_view end = html.substr(0, html.find_last_not_of(" \t\r\n") + 1);
  if (!end.ends_with("</html>") && !end.ends_with("</HTML>")) {
    error = fmt::format("line {}: the report ends before its closing </html>: it is cut short; link again or use the "
                        "whole file",
                        std::count(html.begin(), html.end(), '\n') + 1);
    return std::nullopt;
  }
  // The labels' code is counted once: by the 0-byte label that carries it
  // (Keil lists its `B .` as a call to itself: badshun's ADC1_2_IRQHandler),
  // or, where the code's own label is UNUSED (TI MSPM0's Default_Handler),
  // by one of the labels, per object.
  std::set<std::string> carried;
  for (auto& [id, node] : graph)
    if (node.label_only && !node.callees.empty()) {
      node.label_only = false;  // code after all
      if (!node.unused && std::find(node.callees.begin(), node.callees.end(), id) != node.callees.end())
        carried.insert(node.fn.file);
    }
  for (auto& [id, node] : graph)
    if (node.label_only && is_interrupt(node.fn.name) && !carried.contains(node.fn.file)) {
      node.label_only = false;
      carried.insert(node.fn.file);
    }
  StackReport report = worst_case_stacks(graph, fpu);
  report.source = "Keil";
  report.files = 1;
  report.stated_max_bytes = max_bytes;
  report.stated_unknown = unknown;
  report.stated_chain = max_chain;
  return report;
}

}  // namespace edgemem
