// edgemem map FW.map: regions, output sections, what each object costs, the
// largest symbols, and the model/arena/stack/heap among them.
#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "static/elf_image.h"
#include "static/linker_map.h"

namespace edgemem::cli {
namespace {

struct MapArgs {
  std::string map, elf;
  bool json = false;
  size_t top = 15;
};

int run_map(const MapArgs& args) {
  std::string error;
  if (args.map.empty() && args.elf.empty()) {
    fmt::print(stderr, "edgemem: map: give a map file, --elf FW.elf, or both\n");
    return 2;
  }
  std::optional<ElfImage> elf;
  if (!args.elf.empty()) {
    elf = read_elf_image(args.elf, error);
    if (!elf) {
      fmt::print(stderr, "edgemem: {}\n", error);
      return 2;
    }
  }
  std::optional<LinkerMap> map;
  if (args.map.empty()) {
    map = to_linker_map(*elf);
  } else {
    auto text = read_whole_file(args.map);
    if (!text) {
      fmt::print(stderr, "edgemem: {}: cannot open\n", args.map);
      return 2;
    }
    map = parse_linker_map(*text, error);
    if (!map) {
      fmt::print(stderr, "edgemem: {}: {}\n", args.map, error);
      return 2;
    }
  }
  std::vector<std::string> mismatches = elf && !args.map.empty() ? compare_with_map(*elf, *map) : std::vector<std::string>{};
  if (elf && !args.map.empty()) classify_by_elf(*map, *elf);
  bool disagrees = !map->self_check.empty() || !mismatches.empty();
  auto kind_of = [&](const std::string& section) { return section_kind(*map, section); };
  auto role = [&](const MapSymbol& s) { return symbol_role(s, kind_of(s.section)); };
  std::vector<const MapSymbol*> symbols;
  for (const auto& s : map->symbols) symbols.push_back(&s);
  std::sort(symbols.begin(), symbols.end(), [](auto* a, auto* b) { return a->size > b->size; });

  if (args.json) {  // built only when asked for: on a 40 MB map it costs more than parsing
    nlohmann::json j;
    j["schema"] = "edgemem.map/1";
    j["map"] = args.map.empty() ? args.elf : args.map;
    j["toolchain"] = map->toolchain;
    j["regions"] = nlohmann::json::array();
    for (const auto& r : map->regions)
      j["regions"].push_back({{"name", r.name}, {"origin", r.origin}, {"length", r.length}, {"used", r.used},
                              {"free", r.length - std::min(r.used, r.length)}, {"attributes", r.attributes},
                              {"kind", to_string(r.kind)}});
    j["sections"] = nlohmann::json::array();
    for (const auto& s : map->sections)
      j["sections"].push_back({{"name", s.name}, {"address", s.address}, {"size", s.size},
                               {"load_address", s.load_address ? nlohmann::json(*s.load_address) : nlohmann::json(nullptr)},
                               {"kind", to_string(s.kind)}, {"fill", s.fill}});
    j["contributions"] = nlohmann::json::array();
    for (const auto& c : map->contributions)
      j["contributions"].push_back({{"section", c.section}, {"object", c.object}, {"size", c.size}});
    j["symbols"] = nlohmann::json::array();
    for (const auto* s : symbols)
      j["symbols"].push_back({{"name", s->name}, {"section", s->section}, {"address", s->address}, {"size", s->size},
                              {"object", s->object}, {"role", role(*s)}});
    j["discarded_bytes"] = map->discarded_bytes;
    j["totals"] = {{"code", map->totals.code}, {"ro_data", map->totals.ro_data}, {"rw_data", map->totals.rw_data},
                   {"zi_data", map->totals.zi_data}};
    j["stated_totals"] = map->stated;
    j["self_check"] = nlohmann::json::array();
    for (const auto& c : map->self_check)
      j["self_check"].push_back({{"what", c.what}, {"stated_bytes", c.stated_bytes}, {"computed_bytes", c.computed_bytes}});
    if (elf) {
      nlohmann::json e;
      e["file"] = args.elf;
      e["text"] = elf->text;
      e["data"] = elf->data;
      e["bss"] = elf->bss;
      e["sections"] = nlohmann::json::array();
      for (const auto& s : elf->sections)
        e["sections"].push_back({{"name", s.name}, {"address", s.address}, {"size", s.size}, {"alloc", s.alloc},
                                 {"write", s.write}, {"exec", s.exec}, {"nobits", s.nobits}});
      e["symbols"] = nlohmann::json::array();
      for (const auto& s : elf->symbols)
        e["symbols"].push_back({{"name", s.name}, {"address", s.address}, {"size", s.size}, {"type", std::string(1, s.type)}});
      e["map_mismatches"] = mismatches;
      j["elf"] = std::move(e);
    }
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return disagrees ? 1 : 0;
  }

  fmt::print("edgemem map: {} ({})\n\n", args.map.empty() ? args.elf : args.map, map->toolchain);
  for (const auto& r : map->regions) {
    if (r.position_only) {
      fmt::print("{:<16} {:>10} B at 0x{:08x}\n", r.name, r.used, r.origin);
      continue;
    }
    double pct = r.used ? 100.0 * static_cast<double>(r.used) / static_cast<double>(r.length) : 0.0;
    fmt::print("{:<16} {:>10} B of {:>10} B  {:6.2f}%{}\n", r.name, r.used, r.length, pct,
               overflow_bytes(r) ? fmt::format("  OVERFLOWED by {} B", overflow_bytes(r)) : "");
  }
  fmt::print("\n{:<24} {:>12} {:>10}  kind\n", "section", "address", "size");
  for (const auto& s : map->sections)
    if (s.size && s.kind != SectionKind::debug)
      fmt::print("{:<24} 0x{:08x} {:>10}  {}\n", s.name, s.address, s.size, to_string(s.kind));
  const MapTotals& t = map->totals;
  fmt::print("\ncode {} B, read-only data {} B, read-write data {} B, zero-initialised {} B\n", t.code, t.ro_data,
             t.rw_data, t.zi_data);
  if (elf) {
    fmt::print("\nELF {}: text {} B, data {} B, bss {} B (as `size` counts them)\n", args.elf, elf->text, elf->data,
               elf->bss);
    uint64_t total = 0;
    for (const auto& s : elf->sections) {
      fmt::print("  {:<20} {:>10} {:>12}  {}{}{}{}\n", s.name, s.size, s.address, s.alloc ? "A" : "-", s.write ? "W" : "-",
                 s.exec ? "X" : "-", s.nobits ? " nobits" : "");
      total += s.size;
    }
    fmt::print("  {:<20} {:>10}\n", "Total", total);
    for (const auto& m : mismatches) fmt::print("  MISMATCH {} -- the map and the ELF are not from the same link\n", m);
  }
  for (const auto& c : map->self_check)
    fmt::print("\nSELF-CHECK FAILED: the map states {} = {} B, edgemem sums {} B from its entries\n", c.what,
               c.stated_bytes, c.computed_bytes);
  fmt::print("\nlargest symbols\n");
  for (size_t i = 0; i < symbols.size() && i < args.top; ++i)
    fmt::print("{:>10} B  {:<13} {}  ({})\n", symbols[i]->size, role(*symbols[i]),
               symbols[i]->name, symbols[i]->section);
  return disagrees ? 1 : 0;
}

}  // namespace

void add_map_command(CLI::App& app) {
  auto args = std::make_shared<MapArgs>();
  CLI::App* cmd = app.add_subcommand("map", "Read a linker map (GNU ld, armlink, IAR): regions, sections, objects, symbols");
  cmd->add_option("map", args->map, "The .map file");
  cmd->add_option("--elf", args->elf, "The linked ELF: sections and symbols as size -A and nm -S see them");
  cmd->add_flag("--json", args->json, "Print the edgemem.map/1 JSON document");
  cmd->add_option("--top", args->top, "Symbols to list")->capture_default_str();
  cmd->callback([args] { throw CLI::RuntimeError(run_map(*args)); });
}

}  // namespace edgemem::cli
