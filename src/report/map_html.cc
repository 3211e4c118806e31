// The map page's data: the text report's verdicts as cards, regions with
// their use, the image as a tree (region > output section > input object >
// symbol) for the treemap, the declared arena, weights, stack and heap, and
// the largest symbols (web/pages/map.js draws them).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/html_page.h"
#include "report/map_report.h"
#include "report/units.h"

namespace edgemem {
namespace {

using nlohmann::json;

// A treemap node. A map of a large image has thousands of symbols, so the
// page data keeps the largest children of each node and folds the rest into
// one "(N smaller)" node; the page folds further for what fits on screen.
struct Node {
  std::string name;
  uint64_t bytes = 0;
  std::string kind;  // section kind, on sections and below
  std::string role;  // "tensor arena", "model weights", "stack", "heap" on symbols; "stack" on a stack section
  std::vector<Node> children;
  bool marked = false;  // holds a symbol with a role: never folded away
};

constexpr size_t kMaxChildren = 120;

// Roles a reader looks for on the map; "code" and "data" are everything else.
bool highlighted(std::string_view role) {
  return role == "tensor arena" || role == "model weights" || role == "stack" || role == "heap";
}

json to_json(Node& n) {
  std::stable_sort(n.children.begin(), n.children.end(), [](const Node& a, const Node& b) { return a.bytes > b.bytes; });
  json j = {{"n", n.name}, {"b", n.bytes}};
  if (!n.kind.empty()) j["k"] = n.kind;
  if (!n.role.empty()) j["r"] = n.role;
  if (n.children.empty()) return j;
  json children = json::array();
  uint64_t folded_bytes = 0;
  size_t folded = 0;
  for (size_t i = 0; i < n.children.size(); ++i) {
    if (i < kMaxChildren || n.children[i].marked) {
      children.push_back(to_json(n.children[i]));
    } else {
      folded_bytes += n.children[i].bytes;
      ++folded;
    }
  }
  if (folded) {
    json rest = {{"n", fmt::format("({} smaller)", folded)}, {"b", folded_bytes}, {"folded", folded}};
    if (!n.kind.empty()) rest["k"] = n.kind;
    children.push_back(std::move(rest));
  }
  j["c"] = std::move(children);
  return j;
}

// A leaf for the bytes of `parent` its children do not account for.
void add_remainder(Node& parent, uint64_t stated, std::string_view what) {
  uint64_t sum = 0;
  for (const Node& c : parent.children) sum += c.bytes;
  if (stated > sum) parent.children.push_back({std::string(what), stated - sum, parent.kind, "", {}, false});
  parent.bytes = std::max(stated, sum);
  for (const Node& c : parent.children) parent.marked = parent.marked || c.marked;
}

// The region whose span holds `address` (an overflowed region spans what it holds).
const MapRegion* region_at(const LinkerMap& map, uint64_t address) {
  for (const MapRegion& reg : map.regions)
    if (!reg.position_only && address >= reg.origin && address - reg.origin < std::max(reg.length, reg.used)) return &reg;
  return nullptr;
}

// The region a section runs in: armlink and IAR name theirs "REGION:category";
// GNU ld sections lie in the region that holds their address.
const MapRegion* region_of(const LinkerMap& map, const MapSection& s) {
  if (size_t colon = s.name.rfind(':'); colon != std::string::npos)
    for (const MapRegion& reg : map.regions)
      if (s.name.compare(0, colon, reg.name) == 0 && reg.name.size() == colon) return &reg;
  return region_at(map, s.address);
}

// `stack_section`: the section reserved_stack() names, when it is one (.stack, CSTACK).
Node section_node(const LinkerMap& map, const MapSection& s,
                  const std::map<std::pair<std::string, std::string>, std::vector<const MapSymbol*>>& symbols,
                  const std::string& stack_section) {
  std::string kind(to_string(s.kind));
  Node sec{s.name, 0, kind, "", {}, false};
  std::map<std::string, uint64_t> objects;  // contributed bytes, by object
  for (const MapContribution& c : map.contributions)
    if (c.section == s.name && c.size) objects[c.object] += c.size;
  // armlink lists "c_w.l(__printf.o)" as the contributor but names only
  // "__printf.o" beside its symbols: the member finds its library.
  std::map<std::string, std::string> member_of;
  for (const auto& [object, contributed] : objects)
    if (size_t open = object.rfind('('); open != std::string::npos && object.back() == ')')
      member_of.emplace(object.substr(open + 1, object.size() - open - 2), object);
  std::map<std::string, std::vector<const MapSymbol*>> by_object;
  for (auto it = symbols.lower_bound({s.name, ""}); it != symbols.end() && it->first.first == s.name; ++it) {
    const std::string& object = it->first.second;
    auto member = member_of.find(object);
    std::string home = objects.count(object) || member == member_of.end() ? object : member->second;
    objects.try_emplace(home, 0);
    auto& list = by_object[home];
    list.insert(list.end(), it->second.begin(), it->second.end());
  }
  for (const auto& [object, contributed] : objects) {
    Node obj{object.empty() ? "(no object named)" : object, 0, kind, "", {}, false};
    // Aliases at one address (printf and iprintf) are one block of bytes.
    std::map<uint64_t, size_t> at_address;
    for (const MapSymbol* sym : by_object[object]) {
      if (auto seen = at_address.find(sym->address); seen != at_address.end()) {
        obj.children[seen->second].name += " = " + sym->name;
        continue;
      }
      std::string role(symbol_role(*sym, s.kind));
      bool marked = highlighted(role);
      at_address[sym->address] = obj.children.size();
      obj.children.push_back({sym->name, sym->size, kind, marked ? role : "", {}, marked});
    }
    add_remainder(obj, contributed, "(no symbol)");
    sec.children.push_back(std::move(obj));
  }
  add_remainder(sec, s.size, "(padding, no object)");
  if (s.name == stack_section) {
    sec.role = "stack";
    sec.marked = true;
  }
  return sec;
}

json image_tree(const LinkerMap& map) {
  std::map<std::pair<std::string, std::string>, std::vector<const MapSymbol*>> symbols;  // by (section, object)
  for (const MapSymbol& s : map.symbols)
    if (s.size && !s.section.empty()) symbols[{s.section, s.object}].push_back(&s);
  auto stack = reserved_stack(map);
  std::string stack_section = stack ? stack->first : "";
  // Where a section's load image is a verbatim copy (GNU ld, an ELF), flash
  // holds it too; armlink compresses RW data, so its copy's size is unknown.
  bool verbatim_copies = map.toolchain != "armlink";
  std::vector<Node> regions(map.regions.size());
  Node outside{"(outside any region)", 0, "", "", {}, false};
  for (size_t i = 0; i < map.regions.size(); ++i) regions[i].name = map.regions[i].name;
  for (const MapSection& s : map.sections) {
    if (!s.size || s.kind == SectionKind::debug) continue;
    const MapRegion* reg = region_of(map, s);
    Node& home = reg ? regions[static_cast<size_t>(reg - map.regions.data())] : outside;
    home.children.push_back(section_node(map, s, symbols, stack_section));
    if (!verbatim_copies || !s.load_address || !reg || s.load_image == LoadImage::no) continue;  // NOLOAD: no image
    const MapRegion* load = region_at(map, *s.load_address);
    if (load && load != reg)
      regions[static_cast<size_t>(load - map.regions.data())].children.push_back(
          {s.name + (s.load_image == LoadImage::unsure ? " (load image, unsure: NOLOAD?)" : " (load image)"), s.size,
           std::string(to_string(s.kind)), "", {}, false});
  }
  Node image{"image", 0, "", "", {}, false};
  for (size_t i = 0; i < map.regions.size(); ++i) {
    if (regions[i].children.empty()) continue;  // an armlink load region: its execution regions show its bytes
    // A range's used counts the IAR place-at blocks inside it, drawn under their own nodes.
    uint64_t used = map.regions[i].position_only ? 0 : map.regions[i].used;
    for (const MapRegion& at : map.regions)
      if (at.within == map.regions[i].name) used -= std::min(used, at.used);
    add_remainder(regions[i], used, "(gaps between sections)");
    image.children.push_back(std::move(regions[i]));
  }
  if (!outside.children.empty()) {
    add_remainder(outside, 0, "");
    image.children.push_back(std::move(outside));
  }
  add_remainder(image, 0, "");
  return to_json(image);
}

json symbol_json(const LinkerMap& map, const MapSymbol& s) {
  return {{"name", s.name}, {"bytes", s.size}, {"at_most", s.size_is_upper_bound},
          {"role", symbol_role(s, section_kind(map, s.section))}, {"section", s.section}, {"object", s.object}};
}

// What someone fitting a model looks for first: the arena `fit` and `check`
// take as declared, the weights, the stack `check` budgets against, the heap.
json highlights(const LinkerMap& map) {
  json h;
  for (std::string_view role : {"tensor arena", "heap"}) {
    const MapSymbol* s = largest_symbol_with_role(map, role);
    h[std::string(role)] = s ? symbol_json(map, *s) : json(nullptr);
  }
  auto stack = reserved_stack(map);
  h["stack"] = stack ? json{{"name", stack->first}, {"bytes", stack->second}} : json(nullptr);
  std::vector<const MapSymbol*> weights;
  uint64_t weight_bytes = 0;
  bool at_most = false;
  for (const MapSymbol& s : map.symbols)
    if (symbol_role(s, section_kind(map, s.section)) == "model weights") {
      weights.push_back(&s);
      weight_bytes += s.size;
      at_most |= s.size_is_upper_bound;
    }
  std::stable_sort(weights.begin(), weights.end(), [](auto* a, auto* b) { return a->size > b->size; });
  json largest = json::array();
  for (size_t i = 0; i < weights.size() && i < 5; ++i) largest.push_back(symbol_json(map, *weights[i]));
  h["model weights"] = {{"count", weights.size()}, {"bytes", weight_bytes}, {"at_most", at_most}, {"largest", std::move(largest)}};
  return h;
}

}  // namespace

json map_page_data(const MapReport& r) {
  const LinkerMap& map = *r.map;
  json d = {{"map", r.path}, {"toolchain", map.toolchain}};
  json verdicts = json::array();
  for (const MapVerdict& v : map_verdicts(r)) {
    json more = json::array();
    if (v.tag == "MISMATCH") more = r.mismatches;
    verdicts.push_back({{"tag", v.bad ? "[" + v.tag + "]" : "[OK]"}, {"text", v.text}, {"more", std::move(more)}});
  }
  d["verdicts"] = std::move(verdicts);
  d["regions"] = json::array();
  for (const MapRegion& reg : map.regions)
    d["regions"].push_back({{"name", reg.name}, {"kind", to_string(reg.kind)}, {"origin", units::address(reg.origin)},
                            {"length_bytes", reg.length}, {"used_bytes", reg.used}, {"overflow_bytes", overflow_bytes(reg)},
                            {"position_only", reg.position_only},
                            {"used_percent", reg.length ? json(units::percent(units::fraction(reg.used, reg.length)))
                                                        : json(nullptr)}});
  d["totals"] = {{"code_bytes", map.totals.code}, {"ro_data_bytes", map.totals.ro_data},
                 {"rw_data_bytes", map.totals.rw_data}, {"zi_data_bytes", map.totals.zi_data}};
  d["tree"] = image_tree(map);
  d["highlights"] = highlights(map);
  std::vector<const MapSymbol*> symbols;
  for (const MapSymbol& s : map.symbols) symbols.push_back(&s);
  std::stable_sort(symbols.begin(), symbols.end(), [](auto* a, auto* b) { return a->size > b->size; });
  d["symbols"] = json::array();
  for (size_t i = 0; i < symbols.size() && i < r.top; ++i) d["symbols"].push_back(symbol_json(map, *symbols[i]));
  d["symbol_count"] = map.symbols.size();
  d["elf"] = r.elf ? json{{"file", r.elf_path.value_or("")}, {"text_bytes", r.elf->text}, {"data_bytes", r.elf->data},
                          {"bss_bytes", r.elf->bss}}
                   : json(nullptr);
  return d;
}

std::string map_html(const MapReport& r) { return html::page("map", map_page_data(r)); }

}  // namespace edgemem
