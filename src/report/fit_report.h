// `edgemem fit`: does the model fit the chip, verdict first, as text and as
// the edgemem.fit/2 JSON document (docs/schemas/fit.schema.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/arena_budget.h"
#include "plan/fit.h"

namespace edgemem {

enum class CapacitySource { mcu, custom, map };  // where RAM and flash sizes come from

struct FitReport {
  std::string model;
  std::optional<std::string> map, toolchain;  // none: fit without a map
  std::string core;                           // the MCU's core, if known
  CapacitySource source = CapacitySource::map;
  std::string target;                         // "cortex-m" | "x86-64"
  plan::ArenaBudget budget;
  plan::FitResult result;

  // TFLite Micro cannot run the model: there is no arena to fit.
  bool unrunnable() const { return !budget.runnable(); }
  bool fits() const { return !unrunnable() && result.fits(); }
  // The firmware as built declares an arena too small for the model:
  // AllocateTensors() fails until it is enlarged.
  bool arena_short() const { return !result.arena_symbol.empty() && result.declared_arena < result.declared_need; }
};

std::string fit_text(const FitReport& r);
// A need's share of its capacity, "42.1 %"; one over by less than the
// rounding shows is "> 100.0 %", never "100.0 %" beside SHORT.
std::string fit_share(uint64_t need, uint64_t capacity);
// `fit --list-mcus`: one line per MCU of the table.
std::string mcu_list_text(const std::vector<plan::Mcu>& mcus);
// The table as `fit --mcu-table` reads it: {"mcus": [{name, core, ram, flash, largest_ram_block, note}]}.
std::string mcu_list_json(const std::vector<plan::Mcu>& mcus);
std::string fit_json(const FitReport& r);

// The self-contained HTML page (web/pages/fit.js): the verdict, then flash
// and RAM as bars of their parts against the capacity.
std::string fit_html(const FitReport& r);

}  // namespace edgemem
