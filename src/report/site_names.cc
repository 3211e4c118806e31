#include "site_names.h"

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

}  // namespace

std::string readable_frame(std::string_view frame) {
  const std::string_view where = location_suffix(frame);
  std::string_view name = frame.substr(0, frame.size() - where.size());
  for (size_t clone; name.ends_with(']') && (clone = name.rfind(" [clone ")) != std::string_view::npos;)
    name = name.substr(0, clone);
  constexpr std::string_view anonymous = "(anonymous namespace)", op = "operator";
  std::string out;
  std::vector<size_t> spaces;  // where a return type or a qualifier ends
  int depth = 0;
  bool parameters = false;  // a function's signature, not just a name
  for (size_t i = 0; i < name.size(); ++i) {
    std::string_view rest = name.substr(i);
    if (depth == 0 && rest.starts_with(anonymous)) {
      out += anonymous;
      i += anonymous.size() - 1;
    } else if (depth == 0 && rest.starts_with(op) && (i == 0 || !identifier_char(name[i - 1])) &&
               (rest.size() == op.size() || !identifier_char(rest[op.size()]))) {
      // The operator's own symbols are its name, not brackets: operator(),
      // operator<<, operator->, operator new[].
      size_t end = op.size();
      if (rest.substr(end).starts_with("()")) {
        end += 2;
      } else {
        if (end < rest.size() && rest[end] == ' ')
          for (++end; end < rest.size() && identifier_char(rest[end]);) ++end;
        while (end < rest.size() && operator_symbol(rest[end])) ++end;
      }
      out += rest.substr(0, end);
      i += end - 1;
    } else if (depth == 0 && rest.starts_with("[abi:") && rest.find(']') != std::string_view::npos) {
      i += rest.find(']');
    } else if (rest[0] == '(' || (rest[0] == '<' && template_opens(name, i, depth))) {
      if (depth++ == 0 && rest[0] == '(') parameters = true;
    } else if (depth > 0 && (rest[0] == ')' || (rest[0] == '>' && name[i - 1] != '-'))) {
      --depth;
    } else if (depth == 0) {
      if (rest[0] == ' ') spaces.push_back(out.size());
      out += rest[0];
    }
  }
  if (depth != 0) return std::string(frame);  // not a name this reads: leave it whole
  if (!parameters) return out + std::string(where);
  // Qualifiers after the parameter list, then the return type before the name.
  for (bool cut = true; cut;) {
    cut = false;
    while (out.ends_with(' ')) out.pop_back();
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"})
      if (out.ends_with(q)) {
        out.resize(out.size() - q.size());
        cut = true;
      }
  }
  while (!spaces.empty() && spaces.back() >= out.size()) spaces.pop_back();
  if (!spaces.empty()) out.erase(0, spaces.back() + 1);
  if (out.empty()) return std::string(frame);
  return out + std::string(where);
}

std::string shown_site(std::string_view site, size_t width) {
  std::string shown;
  size_t end = site.size();
  while (true) {
    size_t cut = end == 0 ? std::string_view::npos : site.rfind(';', end - 1);
    size_t start = cut == std::string_view::npos ? 0 : cut + 1;
    std::string frame = readable_frame(site.substr(start, end - start));
    if (!shown.empty() && shown.size() + 1 + frame.size() > width) return "...;" + shown;
    shown = shown.empty() ? frame : frame + ";" + shown;
    if (cut == std::string_view::npos) return shown;
    end = cut;
  }
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
