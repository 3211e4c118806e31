#include "static/stack_usage.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

namespace edgemem {
namespace {

namespace fs = std::filesystem;

struct Node {
  StackFunction fn;
  bool has_frame = false;
  std::vector<std::string> callees;  // node titles
};

// "path:line:col:name" where the path may hold ':' (Windows) and the name
// too (C++): the location is the first ":digits:digits:".
bool split_location(std::string_view s, std::string& location, std::string& name) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ':') continue;
    size_t j = i + 1, k;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i + 1 || j >= s.size() || s[j] != ':') continue;
    k = j + 1;
    while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
    if (k == j + 1 || k >= s.size() || s[k] != ':') continue;
    location = std::string(s.substr(0, k));
    name = std::string(s.substr(k + 1));
    return true;
  }
  return false;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Value of `key: "..."` in a VCG line.
std::optional<std::string> vcg_field(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  size_t open = line.find('"', at + key.size());
  if (open == std::string_view::npos) return std::nullopt;
  std::string out;
  for (size_t i = open + 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      out += line[i + 1] == 'n' ? '\n' : line[i + 1];
      ++i;
    } else if (line[i] == '"') {
      return out;
    } else {
      out += line[i];
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<StackReport> analyze_stack(const std::vector<std::string>& paths, std::string& error) {
  std::vector<fs::path> su, ci;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.path().extension() == ".su") su.push_back(e.path());
        if (e.path().extension() == ".ci") ci.push_back(e.path());
      }
    } else if (fs::exists(p, ec)) {
      (fs::path(p).extension() == ".ci" ? ci : su).push_back(p);
    } else {
      error = fmt::format("{}: cannot open", p);
      return std::nullopt;
    }
  }
  std::sort(su.begin(), su.end());
  std::sort(ci.begin(), ci.end());

  std::map<std::string, Node> nodes;        // by .ci title (static functions carry "file:")
  std::multimap<std::string, std::string> by_name;  // function name -> title
  for (const fs::path& p : ci) {
    std::string text = read(p);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      if (line.starts_with("node:")) {
        auto title = vcg_field(line, "title:"), label = vcg_field(line, "label:");
        if (!title || !label) continue;
        Node& n = nodes[*title];
        // label: "name\nfile:line:col\nN bytes (qualifier)" - external callees stop after the location.
        std::vector<std::string> parts;
        size_t start = 0;
        for (size_t i = 0; i <= label->size(); ++i)
          if (i == label->size() || (*label)[i] == '\n') {
            parts.push_back(label->substr(start, i - start));
            start = i + 1;
          }
        // A callee declared elsewhere appears again without a frame; the
        // defining file's node keeps its location.
        if (!n.has_frame) {
          n.fn.name = parts[0];
          if (parts.size() > 1) n.fn.file = parts[1];
        }
        if (parts.size() > 2 && !n.has_frame) {
          uint64_t bytes = 0;
          std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), bytes);
          size_t q = parts[2].find('('), e = parts[2].find(')');
          n.fn.frame_bytes = bytes;
          if (q != std::string::npos && e != std::string::npos) n.fn.qualifier = parts[2].substr(q + 1, e - q - 1);
          n.has_frame = true;
        }
        by_name.emplace(n.fn.name, *title);
      } else if (line.starts_with("edge:")) {
        auto from = vcg_field(line, "sourcename:"), to = vcg_field(line, "targetname:");
        if (from && to) nodes[*from].callees.push_back(*to);
      }
    }
  }
  // .su files give frames for functions the .ci files do not describe.
  std::vector<StackFunction> su_functions;
  for (const fs::path& p : su) {
    std::string text = read(p);
    size_t pos = 0, line_no = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, (nl == std::string::npos ? text.size() : nl) - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      size_t t1 = line.find('\t'), t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
      StackFunction f;
      if (t2 == std::string::npos || !split_location(std::string_view(line).substr(0, t1), f.file, f.name) ||
          std::from_chars(line.data() + t1 + 1, line.data() + t2, f.frame_bytes).ec != std::errc()) {
        error = fmt::format("{}:{}: expected \"file:line:col:function<TAB>bytes<TAB>qualifier\" (a GCC -fstack-usage file)",
                            p.string(), line_no);
        return std::nullopt;
      }
      f.qualifier = line.substr(t2 + 1);
      su_functions.push_back(f);
    }
  }
  for (const StackFunction& f : su_functions) {
    // A .ci node already holds this function (clones: "f.constprop" vs "f.constprop.0").
    bool known = false;
    for (auto [it, end] = by_name.equal_range(f.name); it != end; ++it)
      if (nodes[it->second].has_frame) known = true;
    if (known) continue;
    Node& n = nodes[f.name];
    n.fn = f;
    n.has_frame = true;
    by_name.emplace(f.name, f.name);
  }
  if (nodes.empty()) {
    error = "no .su or .ci files found (compile with -fstack-usage -fcallgraph-info=su)";
    return std::nullopt;
  }

  StackReport report;
  report.files = su.size() + ci.size();
  std::set<std::string> called;
  for (const auto& [title, n] : nodes)
    for (const std::string& c : n.callees) called.insert(c);

  // Deepest path from `title`; cycles, indirect calls and frameless callees
  // are recorded as reasons and contribute nothing.
  struct Result {
    uint64_t bytes = 0;
    std::vector<std::string> path;
  };
  std::function<Result(const std::string&, std::vector<std::string>&, StackRoot&)> deepest =
      [&](const std::string& title, std::vector<std::string>& stack, StackRoot& root) -> Result {
    const Node& n = nodes.at(title);
    Result best;
    for (const std::string& c : n.callees) {
      if (c == "__indirect_call") {
        root.unbounded = true;
        root.reasons.push_back("indirect call in " + n.fn.name);
        continue;
      }
      if (std::find(stack.begin(), stack.end(), c) != stack.end()) {
        root.unbounded = true;
        root.reasons.push_back("recursion: " + nodes.at(c).fn.name);
        continue;
      }
      auto it = nodes.find(c);
      if (it == nodes.end() || !it->second.has_frame) {
        root.unbounded = true;
        root.reasons.push_back("no stack info: " + (it == nodes.end() ? c : it->second.fn.name));
        continue;
      }
      stack.push_back(c);
      Result r = deepest(c, stack, root);
      stack.pop_back();
      if (r.bytes > best.bytes || best.path.empty()) best = r;
    }
    if (n.fn.qualifier == "dynamic") {
      root.unbounded = true;
      root.reasons.push_back("dynamic frame: " + n.fn.name);
    }
    best.bytes += n.fn.frame_bytes;
    best.path.insert(best.path.begin(), n.fn.name);
    return best;
  };
  for (const auto& [title, n] : nodes) {
    if (!n.has_frame) continue;
    report.functions.push_back(n.fn);
    // Without a call graph every function would look like a root.
    if (ci.empty() || called.count(title)) continue;
    StackRoot root;
    root.function = n.fn.name;
    std::vector<std::string> stack{title};
    Result r = deepest(title, stack, root);
    root.worst_case_bytes = r.bytes;
    root.path = r.path;
    std::sort(root.reasons.begin(), root.reasons.end());
    root.reasons.erase(std::unique(root.reasons.begin(), root.reasons.end()), root.reasons.end());
    report.roots.push_back(std::move(root));
  }
  std::sort(report.functions.begin(), report.functions.end(),
            [](const auto& a, const auto& b) { return a.frame_bytes != b.frame_bytes ? a.frame_bytes > b.frame_bytes : a.name < b.name; });
  std::sort(report.roots.begin(), report.roots.end(), [](const auto& a, const auto& b) {
    return a.worst_case_bytes != b.worst_case_bytes ? a.worst_case_bytes > b.worst_case_bytes : a.function < b.function;
  });
  return report;
}

}  // namespace edgemem
