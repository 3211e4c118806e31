// edgemem fit MODEL --map FW.map [--mcu NAME | --ram N --flash N]: does the
// model, with the arena it needs, fit beside this firmware on this chip?

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/input_stream.h"
#include "plan/fit.h"

namespace edgemem::cli {
namespace {

struct FitArgs {
  std::string model, map, mcu, mcu_table;
  uint64_t ram = 0, flash = 0;
  std::string target = "cortex-m";
  bool json = false, list = false;
};

double percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

int run_fit(const FitArgs& args) {
  std::string error;
  std::vector<plan::Mcu> mcus = plan::builtin_mcus();
  if (!args.mcu_table.empty()) {
    auto text = read_whole_file(args.mcu_table);
    if (!text) return fail(args.mcu_table, "cannot open");
    auto table = plan::parse_mcu_table(*text, error);
    if (!table) return fail(args.mcu_table, error);
    mcus = std::move(*table);
  }
  if (args.list) {
    for (const auto& m : mcus)
      fmt::print("{:<14} {:<12} RAM {:>8} B (largest block {:>8} B)  flash {:>8} B  {}\n", m.name, m.core, m.ram,
                 m.largest_ram_block, m.flash, m.note);
    return 0;
  }
  if (args.model.empty() || args.map.empty()) return fail("fit", "needs MODEL and --map FW.map (or --list-mcus)");

  std::optional<plan::Mcu> chip;
  if (!args.mcu.empty()) {
    for (const auto& m : mcus)
      if (m.name == args.mcu) chip = m;
    if (!chip) return fail(args.mcu, "not in the MCU table (edgemem fit --list-mcus); use --ram and --flash");
  }
  if (args.ram || args.flash) {
    if (!args.ram || !args.flash) return fail("fit", "--ram and --flash go together");
    plan::Mcu custom = chip.value_or(plan::Mcu{"custom", "", "", 0, 0, 0});
    custom.ram = args.ram;
    custom.flash = args.flash;
    custom.largest_ram_block = chip ? std::min(chip->largest_ram_block, args.ram) : args.ram;
    chip = custom;
  }

  auto model_bytes = read_whole_file(args.model);
  if (!model_bytes) return fail(args.model, "cannot open");
  auto model = plan::read_tflite({reinterpret_cast<const uint8_t*>(model_bytes->data()), model_bytes->size()}, error);
  if (!model) return fail(args.model, error);
  auto map_text = read_whole_file(args.map);
  if (!map_text) return fail(args.map, "cannot open");
  auto map = parse_linker_map(*map_text, error);
  if (!map) return fail(args.map, error);

  plan::ArenaBudget budget =
      plan::arena_budget(*model, plan::target_named(args.target));
  if (!budget.runnable()) {  // no arena size to fit: say why, as a verdict
    if (args.json)
      fmt::print("{}\n", nlohmann::json{{"schema", "edgemem.fit/1"}, {"model", args.model}, {"map", args.map},
                                        {"fits", false}, {"tflm_blockers", budget.blockers}}.dump(2));
    else
      fmt::print("edgemem fit: TFLite Micro cannot run {}: {}\n", args.model, fmt::join(budget.blockers, ", "));
    return 1;
  }
  plan::FitResult r = plan::fit(budget, model_bytes->size(), *map, chip);

  if (args.json) {
    auto lines = [](const std::vector<plan::FitLine>& v) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& l : v) a.push_back({{"what", l.what}, {"bytes", l.bytes}});
      return a;
    };
    nlohmann::json j = {
        {"schema", "edgemem.fit/1"},
        {"model", args.model},
        {"map", args.map},
        {"toolchain", map->toolchain},
        {"chip", r.chip},
        {"target", args.target},
        {"flash", {{"capacity", r.flash_capacity}, {"need", r.flash_need}, {"lines", lines(r.flash)}, {"fits", r.fits_flash}}},
        {"ram",
         {{"capacity", r.ram_capacity}, {"need", r.ram_need}, {"lines", lines(r.ram)}, {"fits", r.fits_ram},
          {"arena_block_free", r.arena_block_free}, {"arena_fits_block", r.fits_block}}},
        {"arena",
         {{"recommended_bytes", r.arena_need}, {"declared_bytes", r.declared_arena}, {"symbol", r.arena_symbol},
          {"estimate_complete", budget.complete}}},
        {"model_symbol", r.model_symbol},
        {"fits", r.fits()}};
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return r.fits() ? 0 : 1;
  }

  fmt::print("edgemem fit: {} with {} ({}) on {}{}\n", args.model, args.map, map->toolchain, r.chip,
             chip && !chip->core.empty() ? fmt::format(" ({})", chip->core) : "");
  auto block = [](const char* title, const std::vector<plan::FitLine>& lines, uint64_t need, uint64_t capacity,
                   bool fits) {
    fmt::print("\n{}\n", title);
    for (const auto& l : lines) fmt::print("  {:<48} {:>10} B\n", l.what, l.bytes);
    fmt::print("  {:<48} {:>10} B of {} B ({:.1f} %)  {}\n", "total", need, capacity, percent(need, capacity),
               fits ? "fits" : fmt::format("SHORT by {} B", need - capacity));
  };
  block("flash", r.flash, r.flash_need, r.flash_capacity, r.fits_flash);
  if (!r.model_symbol.empty()) fmt::print("  (the weights are linked in already: {})\n", r.model_symbol);
  block("RAM", r.ram, r.ram_need, r.ram_capacity, r.fits_ram);
  fmt::print("  {:<48} {:>10} B of {} B contiguous  {}\n", "arena in one block", r.arena_need, r.arena_block_free,
             r.fits_block ? "fits" : "DOES NOT FIT");
  if (!r.arena_symbol.empty()) {
    if (r.declared_arena >= r.arena_need)
      fmt::print("  declared {} is {} B: {} B ({:.0f} %) can be reclaimed\n", r.arena_symbol, r.declared_arena,
                 r.declared_arena - r.arena_need, percent(r.declared_arena - r.arena_need, r.declared_arena));
    else
      fmt::print("  declared {} is {} B: {} B too small, AllocateTensors() is expected to fail\n", r.arena_symbol,
                 r.declared_arena, r.arena_need - r.declared_arena);
  }
  if (!budget.complete)
    fmt::print("  the arena estimate is INCOMPLETE (no cost model for {}): see edgemem plan\n",
               fmt::join(budget.unmodelled, ", "));
  bool arena_short = !r.arena_symbol.empty() && r.declared_arena < r.arena_need;
  fmt::print("\n{}\n", !r.fits()      ? "DOES NOT FIT"
                        : arena_short ? "FITS -- once the declared arena is enlarged"
                                      : "FITS");
  return r.fits() ? 0 : 1;
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = app.add_subcommand("fit", "Does the model, with its tensor arena, fit beside the firmware on the chip?");
  cmd->add_option("model", args->model, "The .tflite model");
  cmd->add_option("--map", args->map, "The firmware's linker map (GNU ld, armlink or IAR)");
  cmd->add_option("--mcu", args->mcu, "A chip from the built-in table (--list-mcus); default: the map's regions");
  cmd->add_option("--ram", args->ram, "RAM in bytes (with --flash, instead of or over --mcu)");
  cmd->add_option("--flash", args->flash, "Flash in bytes");
  cmd->add_option("--target", args->target, "Struct sizes of the runtime: cortex-m | x86-64")
      ->check(CLI::IsMember({"cortex-m", "x86-64"}))
      ->capture_default_str();
  cmd->add_option("--mcu-table", args->mcu_table, "Use this MCU table (JSON, as data/mcus.json)");
  cmd->add_flag("--list-mcus", args->list, "List the MCU table");
  cmd->add_flag("--json", args->json, "Print the edgemem.fit/1 JSON document");
  cmd->callback([args] { throw CLI::RuntimeError(run_fit(*args)); });
}

}  // namespace edgemem::cli
