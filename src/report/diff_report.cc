#include "report/diff_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgemem/analysis_result.h"
#include "report/style.h"
#include "report/units.h"

namespace edgemem {
namespace {

int64_t whole(double v) { return static_cast<int64_t>(std::llround(v)); }

std::string_view band_name(double v) { return to_string(static_cast<Band>(std::clamp<int64_t>(whole(v), 0, 2))); }

// A number with the decimals that keep it from reading as none: a row is
// listed because its values differ, and "+0.0 points" said they did not
// (a leak of 0.03 B per inference read "0.0 B/inference").
std::string small_change(double delta, bool plus = true) {
  for (int places = 1; places < 6; ++places)
    if (std::abs(delta) >= 0.5 * std::pow(10.0, -places)) return units::decimal(delta, places, plus);
  const char* sign = delta < 0 ? "-" : plus ? "+" : "";
  return delta == 0 ? (plus ? "+0.0" : "0.0") : fmt::format("{}<0.00001", sign);
}

}  // namespace

std::string diff_value(double v, DiffUnit unit) {
  switch (unit) {
    case DiffUnit::bytes: return units::bytes(static_cast<uint64_t>(std::max<int64_t>(whole(v), 0)));
    case DiffUnit::count: return units::grouped(static_cast<uint64_t>(std::max<int64_t>(whole(v), 0)));
    case DiffUnit::fraction: return units::percent(v);
    case DiffUnit::bytes_per_inference: return small_change(v, false) + " B/inference";
    case DiffUnit::band: return std::string(band_name(v));
  }
  return "";
}

std::string diff_change(double delta, DiffUnit unit) {
  switch (unit) {
    case DiffUnit::bytes: return units::signed_bytes(whole(delta));
    case DiffUnit::count: {
      const int64_t n = whole(delta);
      return fmt::format("{}{}", n < 0 ? "-" : "+", units::grouped(static_cast<uint64_t>(n < 0 ? -n : n)));
    }
    case DiffUnit::fraction: return small_change(delta * 100) + " points";
    case DiffUnit::bytes_per_inference: return small_change(delta) + " B/inference";
    case DiffUnit::band: return delta > 0 ? "worse" : delta < 0 ? "better" : "same";
  }
  return "";
}

std::string diff_label(const DiffRow& r) {
  const std::string& name = r.label.empty() ? r.name : r.label;
  return r.upper_bound ? name + " (size only bounded by the map: the span to the next listed symbol)" : name;
}

DiffHeadline diff_headline(const DiffReport& r) {
  const DiffGroup* g = nullptr;
  for (const auto& group : r.groups)
    if (group.id == (r.kind == "images" ? "regions" : "run")) g = &group;
  if (!g || g->rows.empty()) g = r.groups.empty() ? nullptr : &r.groups.front();
  std::string parts;
  size_t shown = 0;
  if (g)
    for (const auto& row : g->rows) {
      if (row.delta() == 0 || shown == 4) break;
      parts += fmt::format("{}{} {} ({} -> {})", shown ? ", " : "", diff_label(row), diff_change(row.delta(), row.unit),
                           diff_value(row.before, row.unit), diff_value(row.after, row.unit));
      ++shown;
    }
  if (!shown)
    return {false, fmt::format("no change in {}{}", g ? g->title : "anything", g && !g->note.empty() ? " (" + g->note + ")" : "")};
  return {true, parts};
}

std::string diff_ratio(const DiffRow& row) {
  double ratio = row.before != 0 ? 100.0 * row.delta() / row.before : 0;
  // A change too small for one decimal still shows its sign and size; one
  // too small for two says so (+1 B of 200,000 B once read "+0.00 %").
  if (row.before == 0 || row.unit == DiffUnit::fraction || row.unit == DiffUnit::band) return "";
  if (row.delta() == 0) return "0 %";
  if (std::fabs(ratio) < 0.005) return ratio > 0 ? "+<0.01 %" : "-<0.01 %";
  return std::fabs(ratio) < 0.1 ? fmt::format("{:+.2f} %", ratio) : units::decimal(ratio, 1, true) + " %";
}

std::string diff_text(const DiffReport& r, size_t top, bool all) {
  DiffHeadline headline = diff_headline(r);
  std::string out = (headline.changed ? style::strong("changed: ") + headline.text : style::good(headline.text)) + "\n";
  out += fmt::format("\nedgemem diff: {} -> {} ({})\n", r.before, r.after, r.kind);
  for (const auto& [path, lost] : {std::pair{&r.before, &r.before_lost}, {&r.after, &r.after_lost}})
    if (!lost->empty())
      out += fmt::format("{} {}: {}; its numbers are of the data that arrived\n", style::warn("[DATA LOST]"), *path,
                         *lost);
  for (const auto& g : r.groups) {
    // An ELF names no memory regions and no objects: "regions (0 changed)"
    // read as if none had changed.
    if (g.rows.empty() && (g.id == "regions" || g.id == "objects")) {
      out += fmt::format("\n{}: none in either input{}\n", g.title,
                         g.id == "regions" ? " (an ELF names no memory regions, nor a map whose script has no MEMORY)"
                                           : " (an ELF names no objects: diff the linker maps)");
      continue;
    }
    size_t changed = 0;
    for (const auto& row : g.rows) changed += row.delta() != 0;
    out += fmt::format("\n{} ({} changed)\n", g.title, changed);
    if (!g.note.empty()) out += fmt::format("  {}\n", style::warn(g.note));
    size_t shown = 0;
    for (const auto& row : g.rows) {
      if ((row.delta() == 0 && !all) || shown == top) break;
      ++shown;
      std::string ratio = diff_ratio(row), pct = ratio.empty() ? "" : " (" + ratio + ")";
      std::string tag = row.added ? "  [new]" : row.removed ? "  [gone]" : "";
      out += fmt::format("  {:>18} -> {:>18}  {:>18}{:<12}  {}{}\n", diff_value(row.before, row.unit), diff_value(row.after, row.unit),
                         diff_change(row.delta(), row.unit), pct, diff_label(row), tag);
    }
  }
  return out;
}

std::string diff_json(const DiffReport& r) {
  nlohmann::json j = {{"schema", "edgemem.diff/2"}, {"before", r.before}, {"after", r.after}, {"kind", r.kind}};
  if (r.kind == "traces") {
    auto lost = [](const std::string& why) { return why.empty() ? nlohmann::json(nullptr) : nlohmann::json(why); };
    j["data_lost"] = {{"before", lost(r.before_lost)}, {"after", lost(r.after_lost)}};
  }
  j["groups"] = nlohmann::json::array();
  for (const auto& g : r.groups) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : g.rows) {
      std::string suffix(to_string(row.unit));
      nlohmann::json o = {{"name", row.name}, {"unit", suffix}, {"added", row.added}, {"removed", row.removed}};
      if (row.upper_bound) o["size_is_upper_bound"] = true;
      bool integral = row.unit == DiffUnit::bytes || row.unit == DiffUnit::count;
      auto put = [&](const char* key, double v) {
        o[std::string(key) + "_" + suffix] = integral ? nlohmann::json(whole(v)) : nlohmann::json(v);
      };
      if (row.unit == DiffUnit::band) {  // names, as analyze's fragmentation.band
        o["before_band"] = row.added ? nlohmann::json(nullptr) : nlohmann::json(band_name(row.before));
        o["after_band"] = row.removed ? nlohmann::json(nullptr) : nlohmann::json(band_name(row.after));
      } else {
        put("before", row.before);
        put("after", row.after);
        put("delta", row.delta());
      }
      rows.push_back(std::move(o));
    }
    j["groups"].push_back({{"id", g.id}, {"title", g.title}, {"rows", std::move(rows)}});
    if (!g.note.empty()) j["groups"].back()["note"] = g.note;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
