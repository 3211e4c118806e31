#include "report/fit_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "report/style.h"
#include "report/units.h"

namespace edgemem {
namespace {

using units::bytes;
using units::fraction;

std::string_view verdict_id(const FitReport& rep) {
  const plan::FitResult& r = rep.result;
  return rep.unrunnable() ? "tflm_cannot_run"
         : !r.fits()      ? "does_not_fit"
         : rep.arena_short() ? "fits_after_enlarging_arena"
                          : "fits";
}

std::string_view source_id(CapacitySource s) {
  switch (s) {
    case CapacitySource::mcu: return "mcu";
    case CapacitySource::custom: return "custom";
    case CapacitySource::map: return "map";
  }
  return "map";
}

nlohmann::json optional_string(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

}  // namespace

std::string mcu_list_json(const std::vector<plan::Mcu>& mcus) {
  nlohmann::json j = {{"mcus", nlohmann::json::array()}};
  for (const auto& m : mcus)
    j["mcus"].push_back({{"name", m.name},
                         {"core", m.core},
                         {"ram", m.ram},
                         {"flash", m.flash},
                         {"largest_ram_block", m.largest_ram_block},
                         {"note", m.note}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string mcu_list_text(const std::vector<plan::Mcu>& mcus) {
  std::string out;
  for (const auto& m : mcus)
    out += fmt::format("{:<14} {:<12} RAM {:>12} (largest block {:>12})  flash {:>12}  {}\n", m.name, m.core,
                       units::bytes(m.ram), units::bytes(m.largest_ram_block), units::bytes(m.flash), m.note);
  return out;
}

std::string fit_share(uint64_t need, uint64_t capacity) {
  const double share = fraction(need, capacity);
  return need > capacity && share < 1.0005 ? std::string("> 100.0 %") : units::percent(share);
}

std::string fit_text(const FitReport& rep) {
  const plan::FitResult& r = rep.result;
  if (rep.unrunnable())
    return style::bad(fmt::format("DOES NOT RUN: TFLite Micro cannot run {}: {}", rep.model,
                                  fmt::join(rep.budget.blockers, ", "))) +
           "\n  no arena size can be recommended, so no fit is judged (see edgemem plan)\n";
  std::string chip = r.chip.empty() ? "the map's memory regions" : r.chip;
  if (rep.source == CapacitySource::custom)  // --ram and --flash, over a table chip or none
    chip = fmt::format("{}{} RAM and {} flash", r.chip == "custom" ? "" : r.chip + " with ",
                       units::bytes(r.ram_capacity), units::bytes(r.flash_capacity));
  std::string out = !r.fits()      ? style::bad("DOES NOT FIT")
                    : rep.arena_short() ? style::warn("FITS -- once the declared arena is enlarged")
                    : !rep.budget.complete ? style::warn("FITS")
                                     : style::good("FITS");
  out += fmt::format(" on {}{}", chip, rep.core.empty() ? "" : fmt::format(" ({})", rep.core));
  // An arena estimate with parts unpriced is a floor: the fit is said to rest on it.
  if (r.fits() && !rep.budget.complete) out += style::warn(" -- if the INCOMPLETE arena estimate holds (see below)");
  // Only where the verdict rests on it: flash short by no more than those
  // bytes and RAM fitting (it was said beside a RAM shortfall). The weights'
  // flash block is short by the same bytes then.
  const bool rests_on_unsure =
      !r.fits_flash && r.flash_need - r.flash_unsure <= r.flash_capacity && r.fits_ram && r.fits_block;
  if (rests_on_unsure) out += style::warn(" -- counting a load image the map cannot confirm (see below)");
  out += "\n";
  if (!r.firmware_counted)
    out += "  without --map: the firmware's own code and data are not counted; this is the least it needs\n";
  out += fmt::format("\nedgemem fit: {}{}\n", rep.model,
                     rep.map ? fmt::format(" with {} ({})", *rep.map, rep.toolchain.value_or("")) : "");
  auto block = [&](const char* title, const std::vector<plan::FitLine>& lines, uint64_t need, uint64_t capacity,
                   bool fits) {
    out += fmt::format("\n{}\n", title);
    for (const auto& l : lines) out += fmt::format("  {:<48} {:>14}\n", l.what, bytes(l.bytes));
    out += fmt::format("  {:<48} {:>14} of {} ({})  {}\n", "total", bytes(need), bytes(capacity), fit_share(need, capacity),
                       fits ? style::good("fits") : style::bad("SHORT by " + bytes(need - capacity)));
  };
  block("flash", r.flash, r.flash_need, r.flash_capacity, r.fits_flash);
  if (r.flash_unsure)
    out += style::warn(fmt::format(
        "  {} of the image is the load image of {}, if it has one: a NOLOAD section has none, and its map reads the "
        "same; the ELF tells (--elf FW.elf){}\n",
        bytes(r.flash_unsure), fmt::join(r.flash_unsure_sections, ", "),
        !r.fits_flash && r.flash_need - r.flash_unsure <= r.flash_capacity ? ": without it flash fits" : ""));
  if (r.weights_block_free && r.firmware_counted)
    out += fmt::format("  {:<48} {:>14} of {} contiguous  {}\n", "weights in one block", bytes(r.flash.back().bytes),
                       bytes(*r.weights_block_free),
                       r.fits_weights_block ? style::good("fits") : style::bad("DOES NOT FIT"));
  if (!r.model_symbol.empty())
    out += fmt::format("  (the weights are linked in already: {}{})\n", r.model_symbol,
                       r.model_symbol_named_as_weights ? ""
                                                       : ", taken for them by its size alone: its name does not say model");
  block("RAM", r.ram, r.ram_need, r.ram_capacity, r.fits_ram);
  out += fmt::format("  {:<48} {:>14} of {} contiguous  {}\n", "arena in one block", bytes(r.arena_placed),
                     bytes(r.arena_block_free), r.fits_block ? style::good("fits") : style::bad("DOES NOT FIT"));
  if (r.arena_symbol.empty() && r.firmware_counted)
    out += "  (no tensor arena among the map's symbols: the arena is counted on top of the statics, as one allocated "
           "at run time would be; if it is inside another object, a struct or class member, name that with "
           "--arena-symbol NAME)\n";
  if (!r.arena_symbol.empty()) {
    if (r.declared_arena >= r.declared_need)
      out += fmt::format("  declared {} is {}: {} ({:.0f} %) can be reclaimed{}\n", r.arena_symbol,
                         bytes(r.declared_arena), bytes(r.declared_arena - r.declared_need),
                         100 * fraction(r.declared_arena - r.declared_need, r.declared_arena),
                         r.declared_need < r.arena_need ? " (it is 16-byte aligned)" : "");
    else
      out += fmt::format("  declared {} is {}: {}, AllocateTensors() is expected to fail\n", r.arena_symbol,
                         bytes(r.declared_arena), style::bad(bytes(r.declared_need - r.declared_arena) + " too small"));
  }
  if (!rep.budget.complete)
    out += style::warn(fmt::format("  the arena estimate is INCOMPLETE (no cost model for {}): see edgemem plan\n",
                                   fmt::join(rep.budget.unmodelled, ", ")));
  return out;
}

std::string fit_json(const FitReport& rep) {
  const plan::FitResult& r = rep.result;
  auto lines = [](const std::vector<plan::FitLine>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& l : v) a.push_back({{"what", l.what}, {"bytes", l.bytes}});
    return a;
  };
  std::vector<plan::FitLine> ram_lines;
  for (const auto& l : r.ram)
    if (!rep.unrunnable() || (l.what != plan::kArenaLine && l.what != plan::kArenaLineAligned)) ram_lines.push_back(l);
  nlohmann::json j = {
      {"schema", "edgemem.fit/2"},
      {"model", rep.model},
      {"map", rep.map ? nlohmann::json(*rep.map) : nlohmann::json(nullptr)},
      {"toolchain", rep.toolchain ? nlohmann::json(*rep.toolchain) : nlohmann::json(nullptr)},
      {"chip", optional_string(r.chip)},
      {"core", optional_string(rep.core)},
      {"capacity_source", source_id(rep.source)},
      {"target", rep.target},
      {"firmware_counted", r.firmware_counted},
      {"flash",
       {{"capacity_bytes", r.flash_capacity},
        {"need_bytes", r.flash_need},
        {"lines", lines(r.flash)},
        {"fits", r.fits_flash},
        {"unsure_bytes", r.flash_unsure},
        {"unsure_load_images", r.flash_unsure_sections},
        {"weights_block_free_bytes", r.weights_block_free ? nlohmann::json(*r.weights_block_free) : nlohmann::json(nullptr)},
        {"weights_fit_block", r.weights_block_free ? nlohmann::json(r.fits_weights_block) : nlohmann::json(nullptr)}}},
      // Without an arena size the RAM need is unknown, not the statics alone.
      {"ram",
       {{"capacity_bytes", r.ram_capacity},
        {"need_bytes", rep.unrunnable() ? nlohmann::json(nullptr) : nlohmann::json(r.ram_need)},
        {"lines", lines(ram_lines)},
        {"fits", rep.unrunnable() ? nlohmann::json(nullptr) : nlohmann::json(r.fits_ram)},
        {"arena_block_free_bytes", r.arena_block_free},
        {"arena_fits_block", rep.unrunnable() ? nlohmann::json(nullptr) : nlohmann::json(r.fits_block)}}},
      {"arena",
       {{"recommended_bytes", rep.unrunnable() ? nlohmann::json(nullptr) : nlohmann::json(r.arena_need)},
        {"placed_bytes", rep.unrunnable() ? nlohmann::json(nullptr) : nlohmann::json(r.arena_placed)},
        {"declared_bytes", r.arena_symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.declared_arena)},
        {"declared_need_bytes", r.arena_symbol.empty() || rep.unrunnable() ? nlohmann::json(nullptr)
                                                                           : nlohmann::json(r.declared_need)},
        {"symbol", optional_string(r.arena_symbol)},
        {"estimate_complete", rep.budget.complete},
        {"unmodelled_operators", rep.budget.unmodelled},
        {"tflm_blockers", rep.budget.blockers}}},
      {"model_symbol", optional_string(r.model_symbol)},
      {"verdict", verdict_id(rep)},
      {"fits", rep.fits()}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace edgemem
