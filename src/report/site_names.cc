#include "site_names.h"

#include <algorithm>
#include <string>
#include <vector>

namespace edgemem {

std::string_view innermost_frame(std::string_view site) {
  size_t cut = site.rfind(';');
  return cut == std::string_view::npos ? site : site.substr(cut + 1);
}

namespace {

// " (file:line)" at the end of a frame, or empty.
std::string_view location_suffix(std::string_view frame) {
  size_t open = frame.rfind(" (");
  if (open == std::string_view::npos || !frame.ends_with(')')) return {};
  std::string_view inside = frame.substr(open + 2, frame.size() - open - 3);
  size_t colon = inside.rfind(':');
  if (inside.find_first_of("()") != std::string_view::npos || colon == std::string_view::npos || colon + 1 == inside.size())
    return {};
  for (char c : inside.substr(colon + 1))
    if (c < '0' || c > '9') return {};
  return frame.substr(open);
}

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool operator_symbol(char c) { return std::string_view("<>=!+-*/%&|^~[],").find(c) != std::string_view::npos; }

// A '<' at `i` opens template arguments: after a name ("vector<"), after an
// operator's symbols ("operator<< <"), or inside brackets; not in text
// that only looks like markup ("</script>").
bool template_opens(std::string_view name, size_t i, int depth) {
  if (depth > 0) return true;
  if (i == 0) return false;
  return identifier_char(name[i - 1]) || (name[i - 1] == ' ' && i >= 2 && operator_symbol(name[i - 2]));
}

// Length of the cv/ref qualifiers at the start of `rest` (after a
// parameter list: " const", " &&", " noexcept" ...), 0 if none.
size_t qualifiers(std::string_view rest) {
  size_t at = 0;
  for (bool more = true; more;) {
    more = false;
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      std::string_view after = rest.substr(at);
      if (after.starts_with(q) && (after.size() == q.size() || q.ends_with('&') || !identifier_char(after[q.size()]))) {
        at += q.size();
        more = true;
      }
    }
  }
  return at;
}

}  // namespace

std::string readable_frame(std::string_view frame) {
  // Only a symbolised frame (with its file:line) or demangled C++: a
  // device's or a log's own site text is its name.
  const std::string_view where = location_suffix(frame);
  if (frame.find("::") == std::string_view::npos && !frame.starts_with("operator") && where.empty())
    return std::string(frame);
  std::string_view name = frame.substr(0, frame.size() - where.size());
  for (size_t clone; name.ends_with(']') && (clone = name.rfind(" [clone ")) != std::string_view::npos;)
    name = name.substr(0, clone);
  constexpr std::string_view anonymous = "(anonymous namespace)", op = "operator";
  std::string out;
  std::vector<size_t> spaces;  // where a return type may end
  int depth = 0, braces = 0;
  bool parameters = false;  // a function's signature, not just a name
  for (size_t i = 0; i < name.size(); ++i) {
    std::string_view rest = name.substr(i);
    if (depth == 0 && rest.starts_with(anonymous)) {
      out += anonymous;
      i += anonymous.size() - 1;
    } else if (depth == 0 && rest.starts_with(op) && (i == 0 || !identifier_char(name[i - 1])) &&
               (rest.size() == op.size() || !identifier_char(rest[op.size()]))) {
      // The operator's own symbols are its name, not brackets: operator(),
      // operator<<, operator->; and a named one up to its parameters:
      // operator new[], operator char const*, operator"" _km.
      size_t end = op.size();
      if (rest.substr(end).starts_with("()")) {
        end += 2;
      } else if (end < rest.size() && (rest[end] == ' ' || rest[end] == '"')) {
        // Up to the parameter list, past a type's own brackets
        // ("operator std::function<void (int)>").
        for (int angles = 0; end < rest.size() && (angles > 0 || rest[end] != '('); ++end)
          angles += rest[end] == '<' ? 1 : rest[end] == '>' && angles > 0 ? -1 : 0;
        while (end > op.size() && rest[end - 1] == ' ') --end;
      } else {
        while (end < rest.size() && operator_symbol(rest[end])) ++end;
      }
      out += rest.substr(0, end);
      i += end - 1;
    } else if (depth == 0 && rest.starts_with("[abi:") && rest.find(']') != std::string_view::npos) {
      i += rest.find(']');
    } else if (depth == 0 && rest[0] == '(' && rest.size() > 1 && (rest[1] == '*' || rest[1] == '&')) {
      return std::string(frame);  // a declarator (a function returning a pointer): left whole
    } else if (depth == 0 && rest[0] == '(' && (out.ends_with("decltype") || out.ends_with("decltype "))) {
      // A return type "decltype (expr)": dropped with its word, not parameters.
      out.erase(out.rfind("decltype"));
      ++depth;
    } else if (rest[0] == '(' || (rest[0] == '<' && template_opens(name, i, depth))) {
      if (depth++ == 0 && rest[0] == '(') parameters = true;
    } else if (depth > 0 && (rest[0] == ')' || (rest[0] == '>' && name[i - 1] != '-'))) {
      if (--depth == 0 && rest[0] == ')') i += qualifiers(name.substr(i + 1));
    } else if (depth == 0) {
      braces += rest[0] == '{';
      braces -= rest[0] == '}' && braces > 0;
      out += rest[0];
      // A space between words, outside {lambda()#1} and before any
      // parameter list, ends a return type ("CLI::Option* CLI::App::add").
      if (rest[0] == ' ' && braces == 0 && !parameters) spaces.push_back(out.size());
    }
  }
  if (depth != 0) return std::string(frame);  // not a name this reads: leave it whole
  while (out.ends_with(' ')) out.pop_back();
  while (!spaces.empty() && spaces.back() >= out.size()) spaces.pop_back();
  if (!spaces.empty()) out.erase(0, spaces.back());
  if (out.empty()) return std::string(frame);
  return out + std::string(where);
}

namespace {

// Frames of the C and C++ runtimes, the allocation path below the
// program's own code (std::vector's allocator, operator new, libc).
bool runtime_frame(std::string_view f) {
  for (std::string_view p : {"std::", "__gnu_cxx::", "__cxxabiv1::", "operator new", "operator delete", "libstdc++.so",
                             "libc.so"})
    if (f.starts_with(p)) return true;
  std::string_view function = f.substr(0, f.find(" ("));
  return function == "malloc" || function == "calloc" || function == "realloc";
}

// A frame that is only an address or a module offset (a library without
// symbols), or the "..." an exporter left for frames it cut, tells the
// reader nothing the frames around it do not.
bool unnamed_frame(std::string_view f) {
  return f == "..." || f.starts_with("0x") || (f.find("+0x") != std::string_view::npos && f.find_first_of(" (") == std::string_view::npos);
}

bool uninformative_frame(std::string_view f) { return runtime_frame(f) || unnamed_frame(f); }

std::vector<std::string> readable_frames(std::string_view site) {
  std::vector<std::string> frames;
  for (size_t start = 0;;) {
    size_t cut = site.find(';', start);
    frames.push_back(readable_frame(site.substr(start, cut == std::string_view::npos ? std::string_view::npos : cut - start)));
    if (cut == std::string_view::npos) return frames;
    start = cut + 1;
  }
}

}  // namespace

std::string shown_site(std::string_view site, size_t width) {
  const std::vector<std::string> frames = readable_frames(site);
  auto join = [&](size_t from, size_t to) {
    std::string s;
    for (size_t i = from; i < to; ++i) s += (i > from ? ";" : "") + frames[i];
    return s;
  };
  // The innermost frames that fit (at least one).
  size_t first = frames.size() - 1, used = frames.back().size();
  while (first > 0 && used + 1 + frames[first - 1].size() <= width) used += 1 + frames[--first].size();
  if (first == 0) return join(0, frames.size());
  bool own = false;
  for (size_t i = first; i < frames.size() && !own; ++i) own = !uninformative_frame(frames[i]);
  if (own) return "...;" + join(first, frames.size());
  // Only the runtime, or addresses without names, fit: the program's
  // innermost named frame leads, then as many of the innermost as still fit.
  size_t caller = first;
  while (caller > 0 && uninformative_frame(frames[caller - 1])) --caller;
  if (caller == 0) return "...;" + join(first, frames.size());
  --caller;
  used = frames[caller].size() + frames.back().size();
  size_t from = frames.size() - 1;
  while (from > caller + 1 && used + 1 + frames[from - 1].size() <= width) used += 1 + frames[--from].size();
  return (caller > 0 ? "...;" : "") + frames[caller] + (from > caller + 1 ? ";...;" : ";") + join(from, frames.size());
}

std::vector<std::string> shown_sites(const std::vector<std::string_view>& sites, size_t width) {
  std::vector<std::string> shown;
  for (std::string_view s : sites) shown.push_back(shown_site(s, width));
  auto alike = [&] {
    std::vector<bool> a(shown.size(), false);
    for (size_t i = 0; i < shown.size(); ++i)
      for (size_t j = i + 1; j < shown.size(); ++j)
        if (shown[i] == shown[j] && sites[i] != sites[j]) a[i] = a[j] = true;
    return a;
  };
  // Rows that read alike get wider until they differ; frames that read
  // alike however wide (overloads, one template for two types) are shown
  // as written, as many as tell the rows apart.
  for (size_t wider = width * 2; wider <= width * 8; wider *= 2) {
    std::vector<bool> a = alike();
    if (std::find(a.begin(), a.end(), true) == a.end()) return shown;
    for (size_t i = 0; i < shown.size(); ++i)
      if (a[i]) shown[i] = shown_site(sites[i], wider);
  }
  std::vector<bool> a = alike();
  const std::vector<std::string_view> tails = distinct_tails(sites);
  for (size_t i = 0; i < shown.size(); ++i)
    if (a[i]) shown[i] = std::string(tails[i]);
  return shown;
}

namespace {

// The tail of `site` with `frames` frames (all of it if it has no more).
std::string_view tail(std::string_view site, size_t frames) {
  size_t cut = site.size();
  for (size_t i = 0; i < frames; ++i) {
    if (cut == 0) return site;
    cut = site.rfind(';', cut - 1);
    if (cut == std::string_view::npos) return site;
  }
  return site.substr(cut + 1);
}

// A site ends with `t` as whole frames.
bool ends_with_frames(std::string_view site, std::string_view t) {
  return site.ends_with(t) && (site.size() == t.size() || site[site.size() - t.size() - 1] == ';');
}

}  // namespace

std::vector<std::string_view> distinct_tails(const std::vector<std::string_view>& sites) {
  std::vector<std::string_view> out;
  out.reserve(sites.size());
  for (size_t i = 0; i < sites.size(); ++i) {
    std::string_view t;
    for (size_t frames = 1;; ++frames) {
      t = tail(sites[i], frames);
      bool shared = false;
      for (size_t j = 0; j < sites.size() && !shared; ++j) shared = j != i && ends_with_frames(sites[j], t);
      if (!shared || t.size() == sites[i].size()) break;
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace edgemem
