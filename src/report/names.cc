#include "report/names.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace edgemem::names {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance: a swap of two neighbours ("anaylze")
// costs one edit, as it is one slip of the fingers.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> match(std::string_view typed, const std::vector<std::string>& known) {
  std::string t = lower(typed);
  for (const auto& k : known)
    if (lower(k) == t) return k;
  return std::nullopt;
}

std::string nearest(std::string_view typed, const std::vector<std::string>& known) {
  std::string t = lower(typed), best;
  size_t best_distance = 0;
  for (const auto& k : known) {
    std::string l = lower(k);
    // A typed prefix of a longer name ("nrf52" for nRF52840) counts as close.
    size_t d = l.starts_with(t) && t.size() >= 3 ? 1 : distance(t, l);
    if (best.empty() || d < best_distance) best = k, best_distance = d;
  }
  // Up to a third of the name may be wrong, at least one edit, at most three.
  size_t allowed = std::clamp<size_t>(t.size() / 3, 1, 3);
  return !best.empty() && best_distance <= allowed ? best : std::string();
}

std::string unknown(std::string_view kind, std::string_view typed, const std::vector<std::string>& known) {
  std::string guess = nearest(typed, known);
  std::string list;
  if (known.size() <= 8)
    for (size_t i = 0; i < known.size(); ++i)
      list += (i == 0 ? "" : i + 1 == known.size() ? " or " : ", ") + known[i];
  std::string hint = guess.empty() ? "" : fmt::format("did you mean {}?", guess);
  std::string expected = list.empty() ? "" : "expected " + list;
  std::string paren = hint.empty() ? expected : expected.empty() ? hint : hint + " " + expected;
  return fmt::format("unknown {} '{}'{}", kind, typed, paren.empty() ? "" : " (" + paren + ")");
}

}  // namespace edgemem::names
