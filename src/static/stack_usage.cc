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

using Node = CallNode;

bool is_interrupt(const std::string& name) {
  return name != "Reset_Handler" && (name.ends_with("_Handler") || name.ends_with("_IRQHandler") || name.ends_with("IRQHandler"));
}

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

std::optional<StackReport> analyze_stack(const std::vector<std::string>& paths, bool fpu, std::string& error) {
  std::vector<fs::path> su, ci, htm;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.path().extension() == ".su") su.push_back(e.path());
        if (e.path().extension() == ".ci") ci.push_back(e.path());
        if (e.path().extension() == ".htm") htm.push_back(e.path());
      }
    } else if (fs::exists(p, ec)) {
      auto ext = fs::path(p).extension();
      (ext == ".ci" ? ci : ext == ".htm" || ext == ".html" ? htm : su).push_back(p);
    } else {
      error = fmt::format("{}: cannot open ({})", p, ec ? ec.message() : "no such file");
      return std::nullopt;
    }
  }
  // Keil: one call graph report per image, and no GCC files beside it.
  std::erase_if(htm, [](const fs::path& p) { return read(p).find("Static Call Graph for image") == std::string::npos; });
  if (!htm.empty() && su.empty() && ci.empty()) {
    if (htm.size() > 1) {
      error = fmt::format("{} Keil call graph reports found ({}, ...): name one", htm.size(), htm[0].string());
      return std::nullopt;
    }
    auto report = parse_keil_callgraph(read(htm[0]), fpu, error);
    if (!report) error = fmt::format("{}: {}", htm[0].string(), error);
    return report;
  }
  std::sort(su.begin(), su.end());
  std::sort(ci.begin(), ci.end());

  std::map<std::string, Node> nodes;        // by .ci title (static functions carry "file:")
  std::multimap<std::string, std::string> by_name;  // function name -> title
  // GCC ends every line it writes, and a call graph with its closing '}':
  // a file that does not was cut short, and its frames would add up to too little.
  auto cut_short = [&](const fs::path& p, const std::string& text, bool graph) {
    std::string_view rest(text);
    if (graph) rest = rest.substr(0, rest.find_last_not_of(" \t\r\n") + 1);
    if (text.empty() || (graph ? rest.ends_with('}') : text.ends_with('\n'))) return false;
    error = fmt::format("{}:{}: the file ends inside a line{}: it is cut short; compile again or use the whole file",
                        p.string(), std::count(text.begin(), text.end(), '\n') + 1,
                        graph ? " or before the graph's closing '}'" : "");
    return true;
  };
  for (const fs::path& p : ci) {
    std::string text = read(p);
    if (!text.empty() && !text.starts_with("graph:")) {
      error = fmt::format("{}:1: expected \"graph: {{\" (a GCC -fcallgraph-info file)", p.string());
      return std::nullopt;
    }
    if (cut_short(p, text, true)) return std::nullopt;
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
    // After the lines read as .su: a file of another kind is named as that first.
    if (cut_short(p, text, false)) return std::nullopt;
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
    error = "no .su, .ci or Keil .htm files found (compile with -fstack-usage -fcallgraph-info=su, or link with --callgraph)";
    return std::nullopt;
  }

  StackReport report = worst_case_stacks(nodes, fpu);
  report.files = su.size() + ci.size();
  if (ci.empty()) {  // without a call graph every function would look like a root
    report.roots.clear();
    report.interrupts = InterruptBudget{0, 0, 0, report.interrupts.frame_bytes, 0};
  }
  return report;
}

namespace {

// Strongly connected components of the call graph (Tarjan): functions that
// can reach each other through calls share an id.
std::map<std::string, size_t> call_cycles(const std::map<std::string, CallNode>& nodes) {
  std::map<std::string, size_t> comp, index, low;
  std::vector<std::string> open;
  std::set<std::string> on_open;
  size_t next = 0, comps = 0;
  std::function<void(const std::string&)> visit = [&](const std::string& v) {
    index[v] = low[v] = next++;
    open.push_back(v);
    on_open.insert(v);
    for (const std::string& c : nodes.at(v).callees) {
      if (!nodes.count(c)) continue;
      if (!index.count(c)) {
        visit(c);
        low[v] = std::min(low[v], low[c]);
      } else if (on_open.count(c)) {
        low[v] = std::min(low[v], index[c]);
      }
    }
    if (low[v] != index[v]) return;
    std::string w;
    do {
      w = open.back();
      open.pop_back();
      on_open.erase(w);
      comp[w] = comps;
    } while (w != v);
    ++comps;
  };
  for (const auto& [title, n] : nodes)
    if (!index.count(title)) visit(title);
  return comp;
}

}  // namespace

StackReport worst_case_stacks(const std::map<std::string, CallNode>& nodes, bool fpu) {
  StackReport report;
  std::set<std::string> called;
  for (const auto& [title, n] : nodes)
    for (const std::string& c : n.callees)
      if (c != title) called.insert(c);  // a function that only calls itself is still a root

  // Deepest path from `title` that calls no function twice; cycles, indirect
  // calls and frameless callees are recorded as reasons and contribute
  // nothing. Inside a cycle the answer depends on which functions are already
  // on the path, so functions there are searched on every path; a function
  // entered from outside its cycle cannot reach back to the path above it,
  // so its result is the same wherever it is called from and is memoised
  // (without that, shared callees make the walk exponential).
  struct Result {
    uint64_t bytes = 0;
    std::vector<std::string> path;
    std::vector<uint64_t> frames;  // beside path
    std::set<std::string> reasons;
  };
  const std::map<std::string, size_t> cycle = call_cycles(nodes);
  // Paths searched inside one cycle before its bound is given as found so far.
  constexpr uint64_t kCycleSearchLimit = 1'000'000;
  std::map<size_t, uint64_t> searched;  // by cycle, since it was entered
  std::map<std::string, Result> memo;
  std::function<Result(const std::string&, std::vector<std::string>&)> deepest =
      [&](const std::string& title, std::vector<std::string>& stack) -> Result {
    const bool entered = stack.size() < 2 || cycle.at(stack[stack.size() - 2]) != cycle.at(title);
    if (entered) {
      if (auto it = memo.find(title); it != memo.end()) return it->second;
      searched[cycle.at(title)] = 0;
    }
    const Node& n = nodes.at(title);
    Result best;
    bool any = false;
    for (const std::string& c : n.callees) {
      if (c == "__indirect_call") {
        best.reasons.insert("indirect call in " + n.fn.name);
        continue;
      }
      if (std::find(stack.begin(), stack.end(), c) != stack.end()) {
        best.reasons.insert("recursion: " + nodes.at(c).fn.name);
        continue;
      }
      auto it = nodes.find(c);
      if (it == nodes.end()) {
        best.reasons.insert("no stack info: " + c);
        continue;
      }
      if (cycle.at(c) == cycle.at(title) && ++searched[cycle.at(c)] > kCycleSearchLimit) {
        best.reasons.insert("recursion: paths through " + n.fn.name + " not all searched (the bound is what was found)");
        break;
      }
      // A callee without a frame size counts 0 B and is flagged; what it
      // calls is still walked (Keil's run-time entry code has no sizes).
      if (!it->second.has_frame) best.reasons.insert("no stack info: " + it->second.fn.name);
      stack.push_back(c);
      Result r = deepest(c, stack);
      stack.pop_back();
      best.reasons.insert(r.reasons.begin(), r.reasons.end());
      if (r.bytes > best.bytes || !any) {
        best.bytes = r.bytes;
        best.path = std::move(r.path);
        best.frames = std::move(r.frames);
        any = true;
      }
    }
    if (n.fn.qualifier == "dynamic") best.reasons.insert("dynamic frame: " + n.fn.name);
    if (!n.has_frame && stack.size() == 1) best.reasons.insert("no stack info: " + n.fn.name);
    best.bytes += n.fn.frame_bytes;
    best.path.insert(best.path.begin(), n.fn.name);
    best.frames.insert(best.frames.begin(), n.fn.frame_bytes);
    if (entered) memo.emplace(title, best);
    return best;
  };
  for (const auto& [title, n] : nodes) {
    if (n.has_frame) report.functions.push_back(n.fn);
    if (n.unused || called.count(title) || (!n.has_frame && n.callees.empty())) continue;
    StackRoot root;
    root.function = n.fn.name;
    root.interrupt = is_interrupt(n.fn.name);
    root.stated_bytes = n.stated_depth;
    std::vector<std::string> stack{title};
    const Result r = deepest(title, stack);
    root.worst_case_bytes = r.bytes;
    root.path = r.path;
    root.path_frame_bytes = r.frames;
    root.reasons.assign(r.reasons.begin(), r.reasons.end());
    root.unbounded = !root.reasons.empty();
    report.roots.push_back(std::move(root));
  }
  std::sort(report.functions.begin(), report.functions.end(),
            [](const auto& a, const auto& b) { return a.frame_bytes != b.frame_bytes ? a.frame_bytes > b.frame_bytes : a.name < b.name; });
  std::sort(report.roots.begin(), report.roots.end(), [](const auto& a, const auto& b) {
    return a.worst_case_bytes != b.worst_case_bytes ? a.worst_case_bytes > b.worst_case_bytes : a.function < b.function;
  });
  InterruptBudget& irq = report.interrupts;
  irq.frame_bytes = fpu ? 104 : 32;
  uint64_t worst_handler = 0;
  for (const StackRoot& r : report.roots) {
    if (!r.interrupt) {
      irq.thread_bytes = std::max(irq.thread_bytes, r.worst_case_bytes);
      continue;
    }
    ++irq.handlers;
    worst_handler = std::max(worst_handler, r.worst_case_bytes + irq.frame_bytes);
    irq.all_nested_bytes += r.worst_case_bytes + irq.frame_bytes;
  }
  irq.one_level_bytes = irq.thread_bytes + worst_handler;
  irq.all_nested_bytes += irq.thread_bytes;
  return report;
}

}  // namespace edgemem
