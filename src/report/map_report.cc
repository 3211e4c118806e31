#include "report/map_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/style.h"
#include "report/units.h"

namespace edgemem {
namespace {

using units::address;
using units::bytes;

// "tensor arena" -> "tensor_arena": JSON carries identifiers, text the words.
std::string role_id(std::string_view role) {
  std::string id(role);
  std::replace(id.begin(), id.end(), ' ', '_');
  return id;
}

std::vector<const MapSymbol*> by_size(const LinkerMap& map) {
  std::vector<const MapSymbol*> symbols;
  symbols.reserve(map.symbols.size());
  for (const auto& s : map.symbols) symbols.push_back(&s);
  std::stable_sort(symbols.begin(), symbols.end(), [](auto* a, auto* b) { return a->size > b->size; });
  return symbols;
}

std::string role(const LinkerMap& map, const MapSymbol& s) {
  return std::string(symbol_role(s, section_kind(map, s.section)));
}

nlohmann::json placed_json(const MapRegion& reg) {
  nlohmann::json out = nlohmann::json::array();
  for (const PlacedSection& p : reg.placed)
    out.push_back({{"section", p.name}, {"address", p.address}, {"size_bytes", p.size}});
  return out;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? (i + 1 == names.size() ? " and " : ", ") : "") + names[i];
  return out;
}

// Why a region's use is a bound: ld prints the same map for a section with
// contents and a NOLOAD one.
std::string unsure_images_text(const MapReport& r) {
  return fmt::format("a NOLOAD section has none, and its map reads the same; the ELF tells: edgemem map {} --elf FW.elf",
                     r.path);
}

nlohmann::json load_image_json(const MapSection& s) {
  if (!s.load_address || *s.load_address == s.address) return nullptr;
  switch (s.load_image) {
    case LoadImage::yes: return "yes";
    case LoadImage::no: return "no";
    case LoadImage::unsure: return "unsure";
  }
  return nullptr;
}

}  // namespace

std::vector<MapVerdict> map_verdicts(const MapReport& r) {
  const LinkerMap& map = *r.map;
  std::vector<MapVerdict> out;
  for (const auto& c : map.self_check)
    out.push_back({true, "SELF-CHECK FAILED",
                   fmt::format("the map states {} = {}, edgemem sums {} from its entries", c.what, bytes(c.stated_bytes),
                               bytes(c.computed_bytes))});
  if (r.mismatch())
    out.push_back({true, "MISMATCH",
                   "the map and the ELF are not from the same link"});
  for (const auto& reg : map.regions)
    if (overflow_unsure(reg))
      out.push_back({true, "MAY HAVE OVERFLOWED",
                     fmt::format("{} by {}, if {} {} a load image there ({})", reg.name, bytes(overflow_bytes(reg)),
                                 join(reg.unsure_images), reg.unsure_images.size() == 1 ? "has" : "have",
                                 unsure_images_text(r))});
    else if (overflow_bytes(reg))
      out.push_back({true, "OVERFLOWED", fmt::format("{} by {}", reg.name, bytes(overflow_bytes(reg)))});
  // An ELF alone names no memory regions: nothing could overflow, or be said to.
  if (out.empty() && map.regions.empty())
    out.push_back({false, "", map.toolchain == "ELF"
                                  ? "no memory regions to check (an ELF names none: give the linker map for them)"
                                  : "no memory regions to check (the linker script has no MEMORY block)"});
  else if (out.empty())
    out.push_back({false, "", r.compared ? "map and ELF agree, no region overflowed" : "no region overflowed"});
  return out;
}

std::string map_text(const MapReport& r) {
  const LinkerMap& map = *r.map;
  std::string out;
  for (const auto& v : map_verdicts(r))
    out += (v.bad ? style::bad(v.tag + ": " + v.text) : style::good(v.text)) + "\n";

  out += fmt::format("\nedgemem map: {} ({})\n\n", r.path, map.toolchain);
  if (!map.regions.empty())
    out += fmt::format("{:<16} {:>14}    {:>14}  {:>7}  {:>10}\n", "region", "used", "length", "used", "origin");
  for (const auto& reg : map.regions) {
    if (reg.position_only) {  // IAR "place at address": a position, not a capacity
      out += fmt::format("{:<16} {:>14}    {:>14}  {:>7}  {}{}\n", reg.name, bytes(reg.used), "", "", address(reg.origin),
                         reg.within.empty() ? "" : fmt::format("  (inside {}'s range, counted there)", reg.within));
      continue;
    }
    std::string pct = reg.length ? units::percent(units::fraction(reg.used, reg.length)) : std::string("    -  ");
    out += fmt::format("{:<16} {:>14} of {:>14}  {:>7}  {}{}\n", reg.name, bytes(reg.used), bytes(reg.length), pct,
                       address(reg.origin),
                       overflow_bytes(reg) ? style::bad(fmt::format("  {}OVERFLOWED by {}", overflow_unsure(reg) ? "MAY HAVE " : "",
                                                                     bytes(overflow_bytes(reg))))
                                           : "");
    if (reg.unsure_bytes)
      out += fmt::format("  {} of it if {} {} a load image there, {} used if not ({})\n", bytes(reg.unsure_bytes),
                         join(reg.unsure_images), reg.unsure_images.size() == 1 ? "has" : "have",
                         bytes(reg.used - reg.unsure_bytes), unsure_images_text(r));
    for (const PlacedSection& p : reg.placed)
      out += fmt::format("  {} {} at {}: placed at its own address, counted to its end as ld counts it with > {}; "
                         "without > {} ld counts {} of {}\n",
                         p.name, bytes(p.size), address(p.address), reg.name, reg.name,
                         bytes(reg.used_without_placed()), reg.name);
  }
  out += fmt::format("{}{:<24} {:>10} {:>14}  kind\n", map.regions.empty() ? "" : "\n", "section", "address", "size");
  for (const auto& s : map.sections)
    if (s.size && s.kind != SectionKind::debug)
      out += fmt::format("{:<24} {} {:>14}  {}\n", s.name, address(s.address), bytes(s.size), to_string(s.kind));
  const MapTotals& t = map.totals;
  out += fmt::format("\ncode {}, read-only data {}, read-write data {}, zero-initialised {}\n", bytes(t.code),
                     bytes(t.ro_data), bytes(t.rw_data), bytes(t.zi_data));
  if (r.elf) {
    const ElfImage& e = *r.elf;
    out += fmt::format("\nELF {}: text {}, data {}, bss {} (as `size` counts them)\n", r.elf_path.value_or(""),
                       bytes(e.text), bytes(e.data), bytes(e.bss));
    uint64_t total = 0;
    for (const auto& s : e.sections) {
      out += fmt::format("  {:<20} {:>14} {}  {}{}{}{}\n", s.name, bytes(s.size), address(s.address), s.alloc ? "A" : "-",
                         s.write ? "W" : "-", s.exec ? "X" : "-", s.nobits ? " nobits" : "");
      total += s.size;
    }
    out += fmt::format("  {:<20} {:>14}\n", "total", bytes(total));
    for (const auto& m : r.mismatches) out += fmt::format("  {} {}\n", style::bad("MISMATCH"), m);
  }
  out += "\nlargest symbols\n";
  // Aliases at one address (__adddf3 = __aeabi_dadd) are one row, not one each.
  std::vector<std::pair<const MapSymbol*, std::string>> rows;
  std::map<std::pair<std::string_view, uint64_t>, size_t> row_at;  // (section, address) -> row
  for (const MapSymbol* s : by_size(map)) {
    if (auto it = row_at.find({s->section, s->address}); it != row_at.end()) {
      rows[it->second].second += " = " + s->name;
    } else if (rows.size() < r.top) {
      row_at[{s->section, s->address}] = rows.size();
      rows.push_back({s, s->name});
    }
  }
  for (const auto& [s, names] : rows)
    out += fmt::format("{:>14}  {:<13} {}  ({})\n", (s->size_is_upper_bound ? "≤ " : "") + bytes(s->size), role(map, *s),
                       names, s->section);
  return out;
}

std::string map_json(const MapReport& r) {
  const LinkerMap& map = *r.map;
  nlohmann::json j;
  j["schema"] = "edgemem.map/2";
  j["map"] = r.path;
  j["toolchain"] = map.toolchain;
  j["verdict"] = r.mismatch()                ? "elf_mismatch"
                 : !map.self_check.empty() ? "self_check_failed"
                 : r.overflowed()          ? "region_overflow"
                                           : "ok";
  // Every overflow only a load image the map cannot confirm makes.
  j["overflow_unsure"] = r.overflow_unsure();
  j["regions"] = nlohmann::json::array();
  for (const auto& reg : map.regions)
    j["regions"].push_back({{"name", reg.name}, {"origin", reg.origin}, {"length_bytes", reg.length},
                            {"used_bytes", reg.used}, {"free_bytes", reg.length - std::min(reg.used, reg.length)},
                            {"used_without_placed_bytes", reg.used_without_placed()},
                            {"unsure_bytes", reg.unsure_bytes}, {"unsure_load_images", reg.unsure_images},
                            {"attributes", reg.attributes}, {"kind", to_string(reg.kind)}, {"placed", placed_json(reg)},
                            {"within", reg.within.empty() ? nlohmann::json(nullptr) : nlohmann::json(reg.within)}});
  j["sections"] = nlohmann::json::array();
  for (const auto& s : map.sections)
    j["sections"].push_back({{"name", s.name}, {"address", s.address}, {"size_bytes", s.size},
                             {"load_address", s.load_address ? nlohmann::json(*s.load_address) : nlohmann::json(nullptr)},
                             {"load_image", load_image_json(s)}, {"kind", to_string(s.kind)}, {"fill_bytes", s.fill}});
  j["contributions"] = nlohmann::json::array();
  for (const auto& c : map.contributions)
    j["contributions"].push_back({{"section", c.section}, {"object", c.object}, {"size_bytes", c.size}});
  j["symbols"] = nlohmann::json::array();
  for (const auto* s : by_size(map))
    j["symbols"].push_back({{"name", s->name},
                            {"section", s->section.empty() ? nlohmann::json(nullptr) : nlohmann::json(s->section)}, {"address", s->address}, {"size_bytes", s->size},
                            {"size_is_upper_bound", s->size_is_upper_bound},
                            {"object", s->object.empty() ? nlohmann::json(nullptr) : nlohmann::json(s->object)},
                            {"role", role_id(role(map, *s))}});
  j["discarded_bytes"] = map.discarded_bytes;
  j["totals"] = {{"code_bytes", map.totals.code}, {"ro_data_bytes", map.totals.ro_data},
                 {"rw_data_bytes", map.totals.rw_data}, {"zi_data_bytes", map.totals.zi_data}};
  j["stated_totals_bytes"] = map.stated;
  j["self_check"] = nlohmann::json::array();
  for (const auto& c : map.self_check)
    j["self_check"].push_back({{"what", c.what}, {"stated_bytes", c.stated_bytes}, {"computed_bytes", c.computed_bytes}});
  j["elf"] = nullptr;
  if (r.elf) {
    const ElfImage& e = *r.elf;
    nlohmann::json x;
    x["file"] = r.elf_path.value_or("");
    x["text_bytes"] = e.text;
    x["data_bytes"] = e.data;
    x["bss_bytes"] = e.bss;
    x["sections"] = nlohmann::json::array();
    for (const auto& s : e.sections)
      x["sections"].push_back({{"name", s.name}, {"address", s.address}, {"size_bytes", s.size}, {"alloc", s.alloc},
                               {"write", s.write}, {"exec", s.exec}, {"nobits", s.nobits}});
    x["symbols"] = nlohmann::json::array();
    for (const auto& s : e.symbols)
      x["symbols"].push_back({{"name", s.name}, {"address", s.address}, {"size_bytes", s.size}, {"type", std::string(1, s.type)}});
    x["map_mismatches"] = r.mismatches;
    j["elf"] = std::move(x);
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
