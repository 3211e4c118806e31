// Does this model fit this chip? Model weights in flash beside the firmware
// (unless the map shows them linked in already), the recommended tensor
// arena in RAM beside the firmware's statics (replacing the arena the
// firmware declares, if the map shows one), against the chip's RAM, flash
// and largest contiguous RAM block.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/arena_budget.h"
#include "static/linker_map.h"

namespace edgemem::plan {

struct Mcu {
  std::string name, core, note;
  uint64_t ram = 0, flash = 0, largest_ram_block = 0;
};

// The built-in table (data/mcus.json), or one in the same format.
std::vector<Mcu> builtin_mcus();
std::optional<std::vector<Mcu>> parse_mcu_table(const std::string& json, std::string& error);

struct FitLine {
  std::string what;
  uint64_t bytes = 0;
};

// The RAM line of the arena: the recommendation, or (replacing a declared
// array the map shows 16-byte aligned) the recommendation less its allowance.
inline constexpr std::string_view kArenaLine = "tensor arena (recommended)";
inline constexpr std::string_view kArenaLineAligned = "tensor arena (recommended, aligned as declared)";

struct FitResult {
  std::string chip;                  // MCU name; empty: capacities are the map's regions
  uint64_t flash_capacity = 0, ram_capacity = 0, largest_ram_block = 0;
  std::vector<FitLine> flash, ram;   // what needs the space
  uint64_t flash_need = 0, ram_need = 0;
  std::string model_symbol;          // the weights array found in the map, if any
  bool model_symbol_named_as_weights = false;  // false: found by its size alone
  std::string arena_symbol;          // the declared tensor arena, if any
  uint64_t declared_arena = 0;
  // What the declared arena must hold: the recommendation, less its 16 B
  // allowance for an unaligned array when the map shows it 16-byte aligned.
  uint64_t declared_need = 0;
  uint64_t arena_need = 0;           // recommended_arena_bytes
  uint64_t arena_placed = 0;         // what the arena takes in RAM: arena_need, or declared_need replacing a declared one
  uint64_t arena_block_free = 0;     // contiguous RAM the arena can have
  // The weights are one array too, in one flash region beside what the
  // image keeps there (not checked when the map shows them linked in).
  std::optional<uint64_t> weights_block_free;
  // Of the firmware image: load images the map cannot confirm (a NOLOAD
  // section reads the same; LoadImage), and the sections they belong to.
  uint64_t flash_unsure = 0;
  std::vector<std::string> flash_unsure_sections;
  bool fits_flash = false, fits_ram = false, fits_block = false, fits_weights_block = true;
  bool firmware_counted = true;      // false: no map, the firmware's own code and data are left out
  bool fits() const { return fits_flash && fits_ram && fits_block && fits_weights_block; }
};

// The bytes a declared arena array must have for the model: TFLite Micro
// aligns the arena's start up to 16 B, so an array the map places 16-byte
// aligned does not need the recommendation's allowance for one that is not.
uint64_t declared_arena_need(const ArenaBudget& budget, const MapSymbol& arena);

// Why the map's own regions cannot stand for the chip's flash and RAM (no
// flash or no RAM region; ESP-IDF's flash regions, which are windows of
// the flash cache), or nullopt when they can.
std::optional<std::string> map_capacity_unknown(const LinkerMap& map);
// Why the map cannot tell what the firmware takes of flash or RAM (no flash
// or no RAM region: sections outside regions would count 0 B), or nullopt.
std::optional<std::string> map_usage_unknown(const LinkerMap& map);

// `chip` empty: capacities come from the map's own regions.
// `arena`: the declared arena when the caller names it (--arena-symbol: an
// arena inside a struct or class has no name of its own); else the largest
// writable symbol named like one, if any.
FitResult fit(const ArenaBudget& budget, uint64_t model_bytes, const LinkerMap& map, const std::optional<Mcu>& chip,
              const MapSymbol* arena = nullptr);

// Without a map: the model's weights and its recommended arena alone against
// the chip. A lower bound on what the firmware needs, and said to be one.
FitResult fit_without_map(const ArenaBudget& budget, uint64_t model_bytes, const Mcu& chip);

}  // namespace edgemem::plan
