// IAR ILINK (EWARM) map files: the PLACEMENT SUMMARY (placement directives
// with their address ranges, then every section placed by each), the
// MODULE SUMMARY, the ENTRY LIST and the closing "bytes of readonly code
// memory" lines. Numbers carry thousands separators: an apostrophe in 8.x
// and later ("0x800'0000", "1'572"), a space in 7.x totals ("1 156").
//
// A placement ("A0", "P1", "P2") is a region. It is RAM when it holds a
// writable section (the Kind column: inited, zero, uninit, rw code) and flash
// when it holds only read-only ones; selector words decide only for a
// placement that holds nothing. Names decide nothing: a `block` may hold a
// vector table in flash, and EWSTM8 names read-only selectors
// ".near_func.textrw_init". A table group "P3-P5" is the placements P3 to P5
// filled as one. Its sections become up to four per category, as for armlink.
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

// Kinds of sections written at run time: they place their placement in RAM.
bool writable(std::string_view kind) {
  return kind == "rw code" || kind == "inited" || kind == "rw data" || kind == "data" || kind == "zero" ||
         kind == "uninit" || kind == "noinit" || kind == "zi";
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
  std::string group{};  // the placement group that lists it
};

// A placement directive of the PLACEMENT SUMMARY.
struct Placement {
  std::set<std::pair<uint64_t, uint64_t>> ranges;  // "[from A to B]" or "[A-B]"; a directive may be printed twice
  std::optional<uint64_t> at;                      // "place at address A" / "place at start of [A-B]"
  bool position = false;                           // any "place at": a position, not a capacity
  std::optional<RegionKind> selected;              // from its ro / rw selector words
};

// What the section table lists under one group ("P1", "P3-P5").
struct Group {
  uint64_t used = 0;
  std::optional<uint64_t> lowest;
  bool any_writable = false, any_section = false;
};

// "ro", "rw", "zi" and their long forms at the start of each comma-separated
// selector; "block X" and "section X" alone say nothing.
std::optional<RegionKind> selected_kind(std::string_view selectors) {
  bool ro = false, rw = false;
  for (const auto& word : map_words(selectors)) {
    std::string_view w = word;
    while (!w.empty() && (w.front() == '{' || w.front() == ',')) w.remove_prefix(1);
    while (!w.empty() && (w.back() == ',' || w.back() == '}' || w.back() == ';')) w.remove_suffix(1);
    ro |= w == "ro" || w == "readonly";
    rw |= w == "rw" || w == "readwrite" || w == "zi" || w == "zeroinit";
  }
  if (rw) return RegionKind::ram;
  if (ro) return RegionKind::flash;
  return std::nullopt;
}

// The placements a table group stands for: itself, or "P3-P5" for P3, P4, P5.
std::vector<std::string> members(const std::string& group, const std::map<std::string, Placement>& placements) {
  if (placements.count(group)) return {group};
  size_t dash = group.find('-');
  if (dash == std::string::npos) return {};
  auto split = [](std::string_view name, std::string& prefix, uint64_t& n) {
    size_t digits = name.find_first_of("0123456789");
    prefix = std::string(name.substr(0, digits));
    return digits != std::string_view::npos && map_decimal(name.substr(digits), n);
  };
  std::string first_prefix, last_prefix;
  uint64_t first = 0, last = 0;
  if (!split(std::string_view(group).substr(0, dash), first_prefix, first) ||
      !split(std::string_view(group).substr(dash + 1), last_prefix, last) || first_prefix != last_prefix || first > last)
    return {};
  std::vector<std::string> out;
  for (uint64_t n = first; n <= last; ++n)
    if (placements.count(first_prefix + std::to_string(n))) out.push_back(first_prefix + std::to_string(n));
  return out;
}

}  // namespace

std::optional<LinkerMap> parse_iar_map(std::string_view text, std::string& error) {
  enum class Part { preamble, placement, table, modules, entries } part = Part::preamble;
  LinkerMap map;
  map.toolchain = "IAR ILINK";
  std::map<std::string, Placement> placements;
  std::vector<std::string> placement_order;
  std::map<std::string, Group> groups;
  std::vector<std::string> group_order;
  std::map<std::string, std::string> footnote;
  std::string directive;                     // a placement directive spanning lines
  std::string group;                         // placement whose sections are listed
  std::vector<Leaf> leaves;                  // of the current group
  std::vector<Leaf> placed_leaves;           // every group's
  std::map<std::pair<std::string, int>, uint64_t> bytes;
  std::map<std::pair<std::string, int>, uint64_t> first;
  std::map<std::tuple<std::string, int, std::string>, uint64_t> contrib;
  std::vector<std::string> section_order;
  bool saw_placement = false;
  bool saw_errors_line = false;  // ILINK's last lines: "Errors: none", "Warnings: none"

  // A directive: its ranges ("[from A to B]", "[A-B]", joined by '|'), any
  // "place at" position, and the section selectors in braces.
  auto close_directive = [&]() {
    auto name = placement_name(directive);
    if (!name) return;
    auto [it, fresh] = placements.try_emplace(*name);
    if (fresh) placement_order.push_back(*name);
    Placement& p = it->second;
    std::string_view head = directive;
    head = head.substr(0, std::min(head.find('{'), head.size()));
    auto w = map_words(head);
    for (size_t i = 0; i < w.size(); ++i) {
      std::string_view word = w[i];
      uint64_t from = 0, to = 0;
      if ((word == "[from" || word == "from") && i + 3 < w.size() && map_hex(w[i + 1], from) && w[i + 2] == "to" &&
          map_hex(std::string_view(w[i + 3]).substr(0, w[i + 3].find(']')), to))
        p.ranges.insert({from, to});
      if (word.starts_with('[') && word.find('-') != std::string_view::npos) {  // EWSTM8: "[0x008000-0x00ffff]"
        word.remove_prefix(1);
        size_t dash = word.find('-');
        if (map_hex(word.substr(0, dash), from) && map_hex(word.substr(dash + 1, word.find(']') - dash - 1), to))
          p.ranges.insert({from, to});
      }
      if (word == "place" && i + 2 < w.size() && w[i + 1] == "at") {
        p.position = true;
        uint64_t at = 0;
        if (map_hex(w[i + 2] == "address" && i + 3 < w.size() ? w[i + 3] : w[i + 2], at)) p.at = at;
      }
    }
    std::string_view selectors = directive;
    selectors = selectors.substr(std::min(selectors.find('{'), selectors.size()));
    if (auto kind = selected_kind(selectors)) p.selected = kind;
    directive.clear();
  };
  // An alignment gap between a group's sections counts with the section
  // after it, as IAR's own totals do.
  auto close_group = [&]() {
    std::sort(leaves.begin(), leaves.end(), [](const Leaf& a, const Leaf& b) { return a.address < b.address; });
    if (!leaves.empty()) {
      Group& g = groups[group];
      g.lowest = std::min(g.lowest.value_or(leaves.front().address), leaves.front().address);
    }
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
      placed_leaves.push_back(l);
      placed_leaves.back().group = group;
    }
    leaves.clear();
  };

  TextLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    if (line.starts_with("Errors: ")) saw_errors_line = true;
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
        auto [it, fresh] = groups.try_emplace(group);
        if (fresh) group_order.push_back(group);
        uint64_t total = 0;
        if (map_hex(w.back(), total)) it->second.used += total;
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
      Group& g = groups[group];
      g.any_section = true;
      g.any_writable |= writable(kind);
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
  if (!saw_errors_line) {
    error = fmt::format("line {}: the map ends before ILINK's closing \"Errors: ...\" line: it is cut short; link "
                        "again or use the whole file",
                        lines.number());
    return std::nullopt;
  }

  // One region per table group, in the order the directives come; a
  // directive no group lists is a region holding nothing.
  std::vector<std::set<std::pair<uint64_t, uint64_t>>> region_spans;  // beside map.regions
  auto add_region = [&](const std::string& name, const std::vector<std::string>& names, const Group* g) {
    MapRegion r{name, 0, 0, "", g ? g->used : 0, RegionKind::other};
    std::set<std::pair<uint64_t, uint64_t>> spans;
    bool position = !names.empty();
    std::optional<uint64_t> at;
    std::optional<RegionKind> selected;
    for (const auto& n : names) {
      const Placement& p = placements.at(n);
      spans.insert(p.ranges.begin(), p.ranges.end());
      position &= p.position;
      if (p.at && !at) at = p.at;
      if (p.selected && selected != RegionKind::ram) selected = p.selected;
    }
    bool listed = g && g->lowest;  // the table gives the address it got
    if (!spans.empty()) r.origin = spans.begin()->first;
    if (position) {  // "place at": where the table puts it, else where the directive says
      r.position_only = true;
      r.origin = listed ? *g->lowest : at.value_or(r.origin);
    } else {
      for (const auto& [from, to] : spans) r.length += to - from + 1;
      if (spans.empty() && listed) r.origin = *g->lowest;
    }
    if (g && g->any_section) r.kind = g->any_writable ? RegionKind::ram : RegionKind::flash;
    else if (selected) r.kind = *selected;
    r.attributes = r.kind == RegionKind::ram ? "rw" : r.kind == RegionKind::flash ? "ro" : "";
    map.regions.push_back(std::move(r));
    region_spans.push_back(position ? decltype(spans){} : spans);
  };
  std::map<std::string, std::string> group_of;  // placement -> the table group that lists it
  for (const auto& name : group_order)
    for (const auto& m : members(name, placements)) group_of.try_emplace(m, name);
  std::set<std::string> done;
  for (const auto& name : placement_order) {
    auto it = group_of.find(name);
    if (it == group_of.end()) add_region(name, {name}, nullptr);
    else if (done.insert(it->second).second) add_region(it->second, members(it->second, placements), &groups[it->second]);
  }
  for (const auto& name : group_order)
    if (done.insert(name).second) add_region(name, members(name, placements), &groups[name]);

  // A "place at" inside a range another directive fills ("A0" at
  // 0x800'0000, the start of "P1" [0x800'0000-0x81f'ffff]) takes those
  // bytes from it: P1 read 64 B freer than ILINK's own unused ranges.
  for (MapRegion& at : map.regions) {
    if (!at.position_only || at.used == 0) continue;
    for (size_t i = 0; i < map.regions.size(); ++i) {
      MapRegion& range = map.regions[i];
      const bool holds = std::any_of(region_spans[i].begin(), region_spans[i].end(), [&](const auto& span) {
        return at.origin >= span.first && at.origin + at.used - 1 <= span.second;
      });
      if (&range == &at || range.position_only || !holds) continue;
      range.used += at.used;
      at.within = range.name;
      break;
    }
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
  // A symbol is of the section entry that holds it. The sections edgemem
  // sums (one per placement and kind) overlap where a placement mixes code
  // and constants, so by their spans getchar read as read-only data, and
  // functions past the last constant as of no section.
  std::sort(placed_leaves.begin(), placed_leaves.end(),
            [](const Leaf& a, const Leaf& b) { return a.address < b.address; });
  for (MapSymbol& s : map.symbols) {
    s.object = resolve(s.object);
    if (const Leaf* l = entry_holding(placed_leaves, s.address))
      s.section = fmt::format("{}:{}", l->group, kMapCategoryName[l->category]);
  }
  return map;
}

}  // namespace edgemem
