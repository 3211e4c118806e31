// IAR ILINK (EWARM) map files: the PLACEMENT SUMMARY (placement directives
// with their address ranges, then every section placed by each), the
// MODULE SUMMARY, the ENTRY LIST and the closing "bytes of readonly code
// memory" lines. Numbers carry thousands separators: an apostrophe in 8.x
// and later ("0x800'0000", "1'572"), a space in 7.x totals ("1 156").
//
// A placement ("A0", "P1", "P2") is a region: ro placements are flash, rw
// ones RAM. Its sections become up to four per category, as for armlink.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "static/linker_map.h"

namespace edgemem {
namespace {

// The "Kind" column; nullopt for blocks and other containers.
std::optional<MapCategory> category_of(std::string_view kind) {
  if (kind == "ro code" || kind == "rw code") return kCode;
  if (kind == "const" || kind == "ro data") return kRoData;
  if (kind == "inited" || kind == "rw data" || kind == "data") return kRwData;
  if (kind == "zero" || kind == "uninit" || kind == "noinit" || kind == "zi") return kZiData;
  return std::nullopt;
}

// The placement name a line starts with: "\"P1\":" or "\"P4\", part 1 of 2:".
std::optional<std::string> placement_name(std::string_view line) {
  if (line.size() < 3 || line[0] != '"') return std::nullopt;
  size_t close = line.find('"', 1);
  if (close == std::string_view::npos) return std::nullopt;
  return std::string(line.substr(1, close - 1));
}

struct Leaf {
  uint64_t address = 0, size = 0;
  MapCategory category = kCode;
  std::string object;
};

}  // namespace

std::optional<LinkerMap> parse_iar_map(std::string_view text, std::string& error) {
  enum class Part { preamble, placement, table, modules, entries } part = Part::preamble;
  LinkerMap map;
  map.toolchain = "IAR ILINK";
  std::map<std::string, size_t> region_of;  // placement name -> map.regions index
  std::map<std::string, std::string> footnote;
  std::map<std::string, std::set<std::pair<uint64_t, uint64_t>>> ranges;  // a directive may be printed twice
  std::string directive;                     // a placement directive spanning lines
  std::string group;                         // placement whose sections are listed
  std::vector<Leaf> leaves;                  // of the current group
  std::map<std::pair<std::string, int>, uint64_t> bytes;
  std::map<std::pair<std::string, int>, uint64_t> first;
  std::map<std::tuple<std::string, int, std::string>, uint64_t> contrib;
  std::vector<std::string> section_order;
  bool saw_placement = false;

  auto region = [&](const std::string& name) -> MapRegion& {
    auto [it, fresh] = region_of.try_emplace(name, map.regions.size());
    if (fresh) map.regions.push_back({name, 0, 0, "", 0, RegionKind::other});
    return map.regions[it->second];
  };
  // A directive: ranges "[from A to B]" (or "place at address A") and the
  // section selectors in braces.
  auto close_directive = [&]() {
    auto name = placement_name(directive);
    if (!name) return;
    MapRegion& r = region(*name);
    auto w = map_words(directive);
    for (size_t i = 0; i + 3 < w.size(); ++i) {
      uint64_t from = 0, to = 0;
      if ((w[i] == "[from" || w[i] == "from") && map_hex(w[i + 1], from) && w[i + 2] == "to" &&
          map_hex(std::string_view(w[i + 3]).substr(0, w[i + 3].find(']')), to)) {
        if (!ranges[*name].insert({from, to}).second) continue;
        if (r.length == 0) r.origin = from;
        r.length += to - from + 1;
      }
    }
    for (size_t i = 0; i + 3 < w.size(); ++i)
      if (w[i] == "place" && w[i + 1] == "at" && map_hex(w[i + 2] == "address" ? w[i + 3] : w[i + 2], r.origin))
        r.position_only = r.length == 0;
    std::string_view selectors = directive;
    selectors = selectors.substr(std::min(selectors.find('{'), selectors.size()));
    bool rw = selectors.find("rw") != std::string_view::npos || selectors.find("block") != std::string_view::npos;
    r.attributes = rw ? "rw" : "ro";
    r.kind = rw ? RegionKind::ram : RegionKind::flash;
    directive.clear();
  };
  // An alignment gap between a group's sections counts with the section
  // after it, as IAR's own totals do.
  auto close_group = [&]() {
    std::sort(leaves.begin(), leaves.end(), [](const Leaf& a, const Leaf& b) { return a.address < b.address; });
    for (size_t i = 0; i < leaves.size(); ++i) {
      const Leaf& l = leaves[i];
      uint64_t gap = i > 0 && l.address > leaves[i - 1].address + leaves[i - 1].size
                         ? l.address - (leaves[i - 1].address + leaves[i - 1].size)
                         : 0;
      auto key = std::make_pair(group, static_cast<int>(l.category));
      if (!bytes.count(key)) {
        first[key] = l.address;
        section_order.push_back(fmt::format("{}:{}", group, kMapCategoryName[l.category]));
      }
      bytes[key] += l.size + gap;
      contrib[{group, l.category, l.object}] += l.size;
    }
    leaves.clear();
  };

  TextLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    if (line.starts_with("*** ") && part == Part::table) close_group();
    if (line.starts_with("*** PLACEMENT SUMMARY")) { part = Part::placement; saw_placement = true; continue; }
    if (line.starts_with("*** MODULE SUMMARY")) { part = Part::modules; continue; }
    if (line.starts_with("*** ENTRY LIST")) { part = Part::entries; continue; }
    if (line.starts_with("*** ")) { part = Part::preamble; continue; }  // another chapter
    if (line.starts_with("***")) continue;                               // banner rows
    auto w = map_words(line);
    if (w.empty()) continue;

    // "  3'292 bytes of readonly  code memory" / "  1 156 bytes of ..."
    if (size_t at = line.find(" bytes of read"); at != std::string_view::npos && line.ends_with(" memory")) {
      std::string digits;
      for (char c : line.substr(0, at))
        if (c >= '0' && c <= '9') digits += c;
      uint64_t n = 0;
      if (map_decimal(digits, n)) {
        auto what = map_words(line.substr(at + 10));  // "readonly  code memory"
        if (what.size() >= 2) map.stated[fmt::format("{} {}", what[0], what[1])] = n;
      }
      continue;
    }

    if (part == Part::placement) {
      if (w[0] == "Section" && w.size() > 1 && w[1] == "Kind") {
        part = Part::table;
        continue;
      }
      if (!directive.empty() || (placement_name(line) && line.find("place") != std::string_view::npos)) {
        if (!directive.empty()) directive += ' ';
        directive += line;
        if (line.find('}') != std::string_view::npos) close_directive();
      }
      continue;
    }

    if (part == Part::table) {
      if (line.starts_with("Unused ranges")) {
        close_group();
        part = Part::preamble;
        continue;
      }
      if (auto name = placement_name(line)) {  // "\"P1\":   0xd80" starts a group
        close_group();
        group = *name;
        uint64_t total = 0;
        if (map_hex(w.back(), total)) region(group).used += total;
        continue;
      }
      // name [kind words] ADDRESS SIZE object; the address is the first hex word.
      size_t a = 0;
      while (a < w.size() && !w[a].starts_with("0x")) ++a;
      uint64_t address = 0, size = 0;
      if (a == 0 || a + 1 >= w.size() || !map_hex(w[a], address) || !map_hex(w[a + 1], size)) continue;
      std::string kind;
      for (size_t k = a; k-- > 1;) {  // the kind is the longest known phrase ending before the address
        std::string candidate;
        for (size_t i = k; i < a; ++i) candidate += (candidate.empty() ? "" : " ") + std::string(w[i]);
        if (category_of(candidate)) kind = candidate;
      }
      auto c = category_of(kind);
      if (!c) continue;  // a block or init block: its contents follow
      std::string object;
      for (size_t i = a + 2; i < w.size(); ++i) object += (object.empty() ? "" : " ") + std::string(w[i]);
      leaves.push_back({address, size, *c, object});
      // Blocks (CSTACK, HEAP) have no ENTRY LIST size: name them here.
      if (object.starts_with("<Block")) map.symbols.push_back({std::string(w[0]), "", "", address, size});
      continue;
    }

    if (w.size() >= 3 && w[0].starts_with("[") && w[1] == "=") {  // "[2] = dl7M_tln.a"
      std::string target;
      for (size_t i = 2; i < w.size(); ++i) target += (target.empty() ? "" : " ") + std::string(w[i]);
      footnote[std::string(w[0])] = target;
      continue;
    }

    if (part == Part::entries) {
      // name ADDRESS [SIZE] TYPE SCOPE object
      uint64_t address = 0, size = 0;
      if (w.size() < 5 || !map_hex(w[1], address)) continue;
      size_t t = map_hex(w[2], size) ? 3 : 2;
      if (t + 1 >= w.size() || (w[t] != "Code" && w[t] != "Data") || size == 0) continue;
      std::string object;
      for (size_t i = t + 2; i < w.size(); ++i) object += (object.empty() ? "" : " ") + std::string(w[i]);
      map.symbols.push_back({std::string(w[0]), "", object, address, size});
    }
  }
  if (part == Part::table) close_group();
  if (!saw_placement) {
    error = fmt::format("line {}: expected IAR's \"PLACEMENT SUMMARY\" (link with --map)", lines.number());
    return std::nullopt;
  }

  // "obj.o [2]" with "[2] = lib.a" reads "lib.a(obj.o)", as GNU ld writes it.
  auto resolve = [&](std::string object) {
    size_t open = object.rfind(" [");
    if (open == std::string::npos) return object;
    auto it = footnote.find(object.substr(open + 1));
    if (it == footnote.end()) return object;
    std::string base = object.substr(0, open);
    return it->second.ends_with(".a") ? fmt::format("{}({})", it->second, base) : base;
  };
  uint64_t* total[kMapCategories] = {&map.totals.code, &map.totals.ro_data, &map.totals.rw_data, &map.totals.zi_data};
  for (const auto& [key, size] : bytes) *total[key.second] += size;
  for (const std::string& name : section_order) {
    size_t colon = name.rfind(':');
    std::string placement = name.substr(0, colon);
    int c = static_cast<int>(std::find(std::begin(kMapCategoryName), std::end(kMapCategoryName), name.substr(colon + 1)) -
                             std::begin(kMapCategoryName));
    MapSection s;
    s.name = name;
    s.address = first[{placement, c}];
    s.size = bytes[{placement, c}];
    s.kind = kMapCategoryKind[c];
    map.sections.push_back(std::move(s));
  }
  for (const auto& [key, size] : contrib)
    map.contributions.push_back({fmt::format("{}:{}", std::get<0>(key), kMapCategoryName[std::get<1>(key)]),
                                 resolve(std::get<2>(key)), size});
  for (MapSymbol& s : map.symbols) {
    s.object = resolve(s.object);
    for (const MapSection& sec : map.sections)  // the section whose span holds it
      if (s.address >= sec.address && s.address < sec.address + sec.size) s.section = sec.name;
  }
  return map;
}

}  // namespace edgemem
