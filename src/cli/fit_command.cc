// edgemem fit MODEL [--map FW.map] [--mcu NAME | --ram N --flash N]: does the
// model, with the arena it needs, fit beside this firmware on this chip?

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <set>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "cli/kind_hint.h"
#include "cli/options.h"
#include "cli/report_file.h"
#include "plan/fit.h"
#include "report/fit_report.h"
#include "report/names.h"
#include "report/units.h"
#include "static/elf_image.h"

namespace edgemem::cli {
namespace {

struct FitArgs {
  std::string model, map, elf, mcu, mcu_table, html, arena_symbol;
  uint64_t ram = 0, flash = 0;
  std::string target = "cortex-m";
  bool json = false, list = false;
};

// A map's place given an ELF: fit reads the two side by side.
std::string elf_not_map(const std::string& path) {
  return fmt::format("an ELF file, not a linker map: fit reads the chip's regions from the map (link with "
                     "-Wl,-Map=FW.map) and takes the ELF beside it: --map FW.map --elf {}",
                     path);
}

int run_fit(const FitArgs& args) {
  if (std::string clash = clashing_outputs({args.model, args.map, args.elf, args.mcu_table}, {{"--html", args.html}}); !clash.empty()) return fail(clash);
  if (!args.elf.empty() && args.map.empty()) return fail("fit", "--elf goes with --map FW.map: the ELF does not know the chip's regions");
  if (!args.arena_symbol.empty() && args.map.empty())
    return fail("fit", "--arena-symbol names a symbol of the map: give --map FW.map too");
  std::string error;
  std::vector<plan::Mcu> mcus = plan::builtin_mcus();
  if (!args.mcu_table.empty()) {
    auto text = read_whole_file(args.mcu_table, error, text_input("an MCU table (JSON)"));
    if (!text) return fail(args.mcu_table, error);
    auto table = plan::parse_mcu_table(*text, error);
    if (!table) return fail(args.mcu_table, error);
    mcus = std::move(*table);
  }
  if (args.list) {
    fmt::print("{}", args.json ? mcu_list_json(mcus) : mcu_list_text(mcus));
    return 0;
  }
  if (args.model.empty()) return fail("fit", "needs MODEL (edgemem fit MODEL.tflite --mcu NAME [--map FW.map]), or --list-mcus");

  FitReport report;
  report.model = args.model;
  report.target = args.target;
  std::optional<plan::Mcu> chip;
  if (!args.mcu.empty()) {
    std::vector<std::string> names;
    for (const auto& m : mcus) names.push_back(m.name);
    auto name = names::match(args.mcu, names);
    if (!name) return fail("--mcu", names::unknown("MCU", args.mcu, names) + "; see edgemem fit --list-mcus, or give --ram and --flash");
    for (const auto& m : mcus)
      if (m.name == *name) chip = m;
    report.source = CapacitySource::mcu;
  }
  if (args.ram || args.flash) {
    if (!args.ram || !args.flash) return fail("fit", "--ram and --flash go together");
    // A 32-bit core addresses 4 GiB in all: no RAM or flash can be larger.
    constexpr uint64_t k4GiB = uint64_t{1} << 32;
    if (plan::target_named(args.target) == plan::Target::cortex_m && (args.ram > k4GiB || args.flash > k4GiB))
      return fail(args.ram > k4GiB ? "--ram" : "--flash",
                  fmt::format("{} B is more than a 32-bit cortex-m target addresses (4 GiB); for a 64-bit one give "
                              "--target x86-64", units::grouped(args.ram > k4GiB ? args.ram : args.flash)));
    plan::Mcu custom = chip.value_or(plan::Mcu{"custom", "", "", 0, 0, 0});
    custom.ram = args.ram;
    custom.flash = args.flash;
    custom.largest_ram_block = chip ? std::min(chip->largest_ram_block, args.ram) : args.ram;
    chip = custom;
    report.source = CapacitySource::custom;
  }
  if (args.map.empty() && !chip)
    return fail("fit", "without --map FW.map the chip must be named: --mcu NAME (edgemem fit --list-mcus) or --ram and --flash");
  if (chip) report.core = chip->core;

  auto model_bytes = read_whole_file(args.model, error, hinted(plan::tflite_input(), args.model, "plan"));
  if (!model_bytes) return fail(args.model, error);
  auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(model_bytes->data()), model_bytes->size()}, error);
  if (!model) return fail(args.model, error + kind_hint(args.model, *model_bytes, "plan"));
  report.budget = plan::arena_budget(*model, plan::target_named(args.target));

  if (args.map.empty()) {
    report.result = plan::fit_without_map(report.budget, model_bytes->size(), *chip);
  } else {
    auto map_text = read_whole_file(args.map, error, linker_map_input(args.map, elf_not_map(args.map)));
    if (!map_text) return fail(args.map, error);
    auto map = parse_linker_map(*map_text, error);
    if (!map) return fail(args.map, error + kind_hint(args.map, *map_text, "map"));
    if (!args.elf.empty()) {
      auto elf = read_elf_image(args.elf, error);
      if (!elf) return fail(error);
      // It settles what the map cannot (sizes it only bounds, NOLOAD load
      // images), if it is of the same link.
      if (const auto differ = compare_with_map(*elf, *map); !differ.empty())
        return fail(args.elf, fmt::format("is not of the link {} describes ({}{}): give the ELF and the map of one build",
                                          args.map, differ.front(), differ.size() > 1 ? ", ..." : ""));
      classify_by_elf(*map, *elf);
      // Statics the map does not list (all of them, after LTO): the arena
      // and the weights array may be among them.
      // By address: the map's C++ names are demangled, the ELF's are not.
      std::set<uint64_t> listed;
      for (const MapSymbol& s : map->symbols) listed.insert(s.address & ~uint64_t{1});
      for (MapSymbol& s : to_linker_map(*elf).symbols)
        if (!listed.count(s.address)) map->symbols.push_back(std::move(s));
    }
    const MapSymbol* named = nullptr;
    if (!args.arena_symbol.empty()) {
      for (const MapSymbol& s : map->symbols)
        if (s.name == args.arena_symbol && (!named || s.size > named->size)) named = &s;
      if (!named)
        return fail(args.map, fmt::format("no symbol {} in the map (--arena-symbol): `edgemem map {}` lists them{}",
                                          args.arena_symbol, args.map,
                                          args.elf.empty() ? "; a static's may be in the ELF only: add --elf FW.elf" : ""));
    }
    // The declared arena's size decides the verdict: a bound is no size.
    if (const MapSymbol* arena = named ? named : largest_symbol_with_role(*map, "tensor arena");
        arena && arena->size_is_upper_bound)
      return fail(args.map, fmt::format("the map gives the declared arena {} as at most {}: ld lists where it starts, "
                                        "not where it ends (an LTO build, no -fdata-sections, or a section of its own that may hold more); give the ELF too: "
                                        "--elf FW.elf",
                                        arena->name, units::bytes(arena->size)));
    // Sections in no flash or RAM region would count 0 B, chip named or not.
    if (auto why = plan::map_usage_unknown(*map))
      return fail(args.map, *why + (map->regions.empty()
                                        ? " (a linker script without MEMORY: GNU ld lists only *default*), so what the "
                                          "firmware takes of flash and RAM is not known: give the linker script a "
                                          "MEMORY block, or leave out --map to count the model alone (with --mcu NAME, "
                                          "or --ram and --flash)"
                                        : ", so what the firmware takes of the chip is not known: leave out --map to "
                                          "count the model alone (with --mcu NAME, or --ram and --flash)"));
    if (!chip)
      if (auto why = plan::map_capacity_unknown(*map))
        return fail(args.map, *why + ", so the chip's capacity is not known: name it with --mcu NAME (edgemem fit "
                                     "--list-mcus) or --ram SIZE --flash SIZE");
    report.map = args.map;
    report.toolchain = map->toolchain;
    report.result = plan::fit(report.budget, model_bytes->size(), *map, chip, named);
  }
  fmt::print("{}", args.json ? fit_json(report) : fit_text(report));
  if (!args.html.empty() && !write_report_file(args.html, fit_html(report), "--html")) return 2;
  // A firmware whose declared arena is short fails at start-up: CI stops it too.
  return report.fits() && !report.arena_short() ? 0 : 1;
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = app.add_subcommand("fit", "Does the model, with its tensor arena, fit beside the firmware on the chip?");
  file_name(cmd->add_option("model", args->model, "The .tflite model"));
  file_name(cmd->add_option(
      "--map", args->map, "The firmware's linker map (GNU ld, armlink or IAR); without it only the model is counted"));
  file_name(cmd->add_option("--elf", args->elf, "The firmware's ELF, beside --map: symbol sizes the map cannot give (LTO builds)"));
  cmd->add_option("--arena-symbol", args->arena_symbol,
                  "The map's symbol that holds the tensor arena, when it is not named like one (a struct or class "
                  "member: the arena is then among the statics, not added to them)");
  cmd->add_option("--mcu", args->mcu, "A chip from the built-in table (--list-mcus, any case); default: the map's regions");
  add_size_option(*cmd, "--ram", args->ram, "RAM (with --flash, instead of or over --mcu)");
  add_size_option(*cmd, "--flash", args->flash, "Flash");
  add_name_option(*cmd, "--target", args->target, "Struct sizes of the runtime: cortex-m | x86-64", "--target",
                  {"cortex-m", "x86-64"});
  file_name(cmd->add_option("--mcu-table", args->mcu_table, "Use this MCU table (JSON, as data/mcus.json)"));
  cmd->add_flag("--list-mcus", args->list, "List the MCU table (with --json, in the form --mcu-table reads)");
  cmd->add_flag("--json", args->json, "Print the edgemem.fit/2 JSON document");
  file_name(cmd->add_option("--html", args->html, "Also write a self-contained HTML page (flash and RAM against the chip)"));
  exit_code_help(*cmd,
                 "the model does not fit (flash, RAM or one contiguous block for the arena), fits only once the "
                 "declared arena is enlarged, or TFLite Micro cannot run it",
                 "edgemem fit model.tflite --mcu nrf52840 --map fw.map || echo 'does not fit'");
  cmd->callback([args] { throw CLI::RuntimeError(run_fit(*args)); });
}

}  // namespace edgemem::cli
