// edgemem map FW.map: regions, output sections, what each object costs, the
// largest symbols, and the model/arena/stack/heap among them.
#include <algorithm>
#include <fstream>
#include <iterator>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "static/linker_map.h"

namespace edgemem::cli {
namespace {

struct MapArgs {
  std::string map;
  bool json = false;
  size_t top = 15;
};

int run_map(const MapArgs& args) {
  std::ifstream in(args.map, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "edgemem: {}: cannot open\n", args.map);
    return 2;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  auto map = parse_linker_map(text, error);
  if (!map) {
    fmt::print(stderr, "edgemem: {}: {}\n", args.map, error);
    return 2;
  }
  auto kind_of = [&](const std::string& section) { return section_kind(*map, section); };
  auto role = [&](const MapSymbol& s) { return symbol_role(s, kind_of(s.section)); };
  std::vector<const MapSymbol*> symbols;
  for (const auto& s : map->symbols) symbols.push_back(&s);
  std::sort(symbols.begin(), symbols.end(), [](auto* a, auto* b) { return a->size > b->size; });

  nlohmann::json j;
  j["schema"] = "edgemem.map/1";
  j["map"] = args.map;
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
  if (args.json) {
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return 0;
  }

  fmt::print("edgemem map: {} ({})\n\n", args.map, map->toolchain);
  for (const auto& r : map->regions) {
    double pct = r.length ? 100.0 * static_cast<double>(r.used) / static_cast<double>(r.length) : 0;
    fmt::print("{:<16} {:>10} B of {:>10} B  {:6.2f}%{}\n", r.name, r.used, r.length, pct,
               r.used > r.length ? fmt::format("  OVERFLOWED by {} B", r.used - r.length) : "");
  }
  fmt::print("\n{:<24} {:>12} {:>10}  kind\n", "section", "address", "size");
  for (const auto& s : map->sections)
    if (s.size && s.kind != SectionKind::debug)
      fmt::print("{:<24} 0x{:08x} {:>10}  {}\n", s.name, s.address, s.size, to_string(s.kind));
  const MapTotals& t = map->totals;
  fmt::print("\ncode {} B, read-only data {} B, read-write data {} B, zero-initialised {} B\n", t.code, t.ro_data,
             t.rw_data, t.zi_data);
  fmt::print("\nlargest symbols\n");
  for (size_t i = 0; i < symbols.size() && i < args.top; ++i)
    fmt::print("{:>10} B  {:<13} {}  ({})\n", symbols[i]->size, role(*symbols[i]),
               symbols[i]->name, symbols[i]->section);
  return 0;
}

}  // namespace

void add_map_command(CLI::App& app) {
  auto args = std::make_shared<MapArgs>();
  CLI::App* cmd = app.add_subcommand("map", "Read a linker map (GNU ld, armlink, IAR): regions, sections, objects, symbols");
  cmd->add_option("map", args->map, "The .map file")->required();
  cmd->add_flag("--json", args->json, "Print the edgemem.map/1 JSON document");
  cmd->add_option("--top", args->top, "Symbols to list")->capture_default_str();
  cmd->callback([args] { throw CLI::RuntimeError(run_map(*args)); });
}

}  // namespace edgemem::cli
