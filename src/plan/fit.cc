#include "plan/fit.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plan/lifetimes.h"

namespace edgemem::plan {

extern const char kMcuTableJson[];

std::optional<std::vector<Mcu>> parse_mcu_table(const std::string& json, std::string& error) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte: the 1-based offset where the JSON stopped making sense.
    error = fmt::format("offset {}: not valid JSON ({}); expected a JSON object with an \"mcus\" array",
                        e.byte ? e.byte - 1 : 0, e.what());
    return std::nullopt;
  } catch (const nlohmann::json::out_of_range&) {  // 1e400: a number no double holds
    error = "a number too large for any size (over 1.8e308); expected a JSON object with an \"mcus\" array";
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("mcus") || !doc["mcus"].is_array()) {
    error = "expected a JSON object with an \"mcus\" array";
    return std::nullopt;
  }
  std::vector<Mcu> out;
  for (const auto& m : doc["mcus"]) {
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string() || !m.contains("ram") ||
        !m["ram"].is_number_unsigned() || !m.contains("flash") || !m["flash"].is_number_unsigned()) {
      error = "mcus[" + std::to_string(out.size()) + "]: expected name, ram and flash (bytes)";
      return std::nullopt;
    }
    Mcu mcu;
    mcu.name = m["name"];
    mcu.core = m.value("core", "");
    mcu.note = m.value("note", "");
    mcu.ram = m["ram"];
    mcu.flash = m["flash"];
    mcu.largest_ram_block = m.value("largest_ram_block", mcu.ram);
    out.push_back(std::move(mcu));
  }
  return out;
}

std::vector<Mcu> builtin_mcus() {
  std::string error;
  return parse_mcu_table(kMcuTableJson, error).value_or(std::vector<Mcu>{});
}

uint64_t declared_arena_need(const ArenaBudget& budget, const MapSymbol& arena) {
  const bool aligned = arena.address % kBufferAlignment == 0;
  return aligned && budget.recommended_bytes > budget.alignment_bytes ? budget.recommended_bytes - budget.alignment_bytes
                                                                       : budget.recommended_bytes;
}

namespace {

// An ESP32 app is linked into windows of the flash cache (irom/drom, MiBs
// of addresses each over the same flash chip) and into IRAM, regions named
// *_seg that are no flash of their own. ESP-IDF's maps have nothing else;
// Zephyr's also have the flash the image is loaded from (ROM), which is then
// the flash.
enum class EspLayout : uint8_t { none, windows_only, with_rom };

EspLayout esp_layout(const LinkerMap& map) {
  auto window = [](const MapRegion& r) {
    return r.name.ends_with("_seg") && (r.name.starts_with("drom") || r.name.starts_with("irom") || r.name == "iram0_2_seg");
  };
  if (std::none_of(map.regions.begin(), map.regions.end(), window)) return EspLayout::none;
  const bool rom = std::any_of(map.regions.begin(), map.regions.end(), [](const MapRegion& r) {
    return r.kind == RegionKind::flash && !r.name.ends_with("_seg");
  });
  return rom ? EspLayout::with_rom : EspLayout::windows_only;
}

// Whether a region's bytes are the image in flash.
bool holds_image(const MapRegion& r, EspLayout esp) {
  return r.kind == RegionKind::flash && (esp != EspLayout::with_rom || !r.name.ends_with("_seg"));
}

bool within(const MapRegion& r, uint64_t address) { return address >= r.origin && address - r.origin < r.length; }

// Bytes of the image in a flash region: what it uses less the sections that
// are only fill there. ESP-IDF places such placeholders (.flash_rodata_dummy)
// to line the rodata window up after the code window; they hold no bytes
// of the image. Elsewhere a fill-only section reserves flash and counts.
uint64_t image_bytes(const LinkerMap& map, const MapRegion& region, EspLayout esp) {
  if (esp != EspLayout::windows_only) return region.occupied();
  // Addresses of the region's use that only placeholders cover: an ESP32-S3's
  // .ext_ram.dummy (external RAM's window over the same addresses) reaches
  // over the rodata too, and those bytes are the image's.
  const uint64_t end = region.origin + region.used;
  std::vector<std::pair<uint64_t, int>> edges;  // address, +1/-1 placeholder, +2/-2 real section
  for (const MapSection& s : map.sections) {
    if (!s.size || s.kind == SectionKind::debug || !within(region, s.address) || s.address >= end) continue;
    const int weight = s.fill >= s.size ? 1 : 2;
    edges.push_back({s.address, weight});
    edges.push_back({std::min(s.address + s.size, end), -weight});
  }
  std::sort(edges.begin(), edges.end());
  uint64_t only_placeholders = 0, at = 0;
  int placeholders = 0, real = 0;
  for (const auto& [address, step] : edges) {
    if (placeholders > 0 && real == 0) only_placeholders += address - at;
    at = address;
    if (step == 1 || step == -1) placeholders += step;
    else real += step / 2;
  }
  return region.used - std::min(region.used, only_placeholders);
}

}  // namespace

std::optional<std::string> map_capacity_unknown(const LinkerMap& map) {
  if (esp_layout(map) == EspLayout::windows_only)
    return "the map's flash regions (irom/drom *_seg) are an ESP32's or ESP8266's windows of the flash cache (MiBs of "
           "addresses each, over one flash chip), not the chip's flash; the app must fit its partition (ESP-IDF's "
           "factory app partition is 1 MiB by default)";
  return map_usage_unknown(map);
}

std::optional<std::string> map_usage_unknown(const LinkerMap& map) {
  if (esp_layout(map) == EspLayout::windows_only) return std::nullopt;  // counted from its windows
  const bool flash = std::any_of(map.regions.begin(), map.regions.end(), [](const MapRegion& r) { return holds_image(r, EspLayout::none); });
  const bool ram = std::any_of(map.regions.begin(), map.regions.end(), [](const MapRegion& r) { return r.kind == RegionKind::ram; });
  if (!flash && !ram) return "the map names no flash and no RAM region";
  if (!flash) return "the map names no flash region (an image that runs from RAM, such as a bootloader)";
  if (!ram) return "the map names no RAM region";
  return std::nullopt;
}

FitResult fit(const ArenaBudget& budget, uint64_t model_bytes, const LinkerMap& map, const std::optional<Mcu>& chip,
              const MapSymbol* arena) {
  FitResult r;
  r.arena_need = budget.recommended_bytes;

  // The weights are linked in if a symbol other than the arena has the
  // model's size (a .tflite embedded as a C array, maybe padded for
  // alignment) and holds bytes: a .bss array of that size is a buffer,
  // zeros at start-up, not the model.
  // Named by what it is called as if it were read-only data: many linker
  // scripts put .rodata in .text.
  auto named_as_weights = [](const MapSymbol& s) { return symbol_role(s, SectionKind::rodata) == "model weights"; };
  const MapSymbol* weights = nullptr;
  for (const MapSymbol& s : map.symbols) {
    const SectionKind kind = section_kind(map, s.section);
    if (kind == SectionKind::bss || symbol_role(s, kind) == "tensor arena" || &s == arena) continue;
    if (s.size >= model_bytes && s.size <= model_bytes + 64 && (!weights || named_as_weights(s))) weights = &s;
  }
  if (!arena) arena = largest_symbol_with_role(map, "tensor arena");

  const EspLayout esp = esp_layout(map);
  uint64_t flash_used = 0, ram_used = 0;
  const MapRegion* arena_region = nullptr;
  // ESP-IDF's loader copies initialised data out of the image; no load
  // address in a flash region says so, as a GNU ld map's .data has.
  if (esp == EspLayout::windows_only)
    for (const MapSection& s : map.sections)
      if (s.kind == SectionKind::data)
        for (const MapRegion& reg : map.regions)
          if (reg.kind == RegionKind::ram && within(reg, s.address)) flash_used += s.size;
  for (const MapRegion& reg : map.regions) {
    if (!reg.within.empty()) continue;  // its bytes are counted in the region it lies in
    if (holds_image(reg, esp)) {
      flash_used += image_bytes(map, reg, esp);
      r.flash_unsure += reg.unsure_bytes;
      r.flash_unsure_sections.insert(r.flash_unsure_sections.end(), reg.unsure_images.begin(), reg.unsure_images.end());
    }
    if (reg.kind != RegionKind::ram) continue;
    ram_used += reg.occupied();
    if (arena && within(reg, arena->address)) arena_region = &reg;
  }
  r.flash.push_back({"firmware image (map)", flash_used});
  if (weights) {
    r.model_symbol = weights->name;
    r.model_symbol_named_as_weights = named_as_weights(*weights);
  } else {
    r.flash.push_back({"model weights (.tflite, not found in the map)", model_bytes});
  }

  if (arena) {
    r.arena_symbol = arena->name;
    r.declared_arena = arena->size;
    r.declared_need = declared_arena_need(budget, *arena);
    r.ram.push_back({"statics (map, without the declared arena)", ram_used - std::min(ram_used, arena->size)});
  } else {
    r.ram.push_back({"statics (map)", ram_used});
  }
  // An arena array the map places 16-byte aligned replaces the declared one
  // without the recommendation's allowance for an unaligned start.
  r.arena_placed = arena ? r.declared_need : r.arena_need;
  r.ram.push_back({std::string(r.arena_placed < r.arena_need ? kArenaLineAligned : kArenaLine), r.arena_placed});
  for (const FitLine& l : r.flash) r.flash_need += l.bytes;
  for (const FitLine& l : r.ram) r.ram_need += l.bytes;

  if (chip) {
    r.chip = chip->name;
    r.flash_capacity = chip->flash;
    r.ram_capacity = chip->ram;
    r.largest_ram_block = chip->largest_ram_block;
  } else {
    for (const MapRegion& reg : map.regions) {
      if (holds_image(reg, esp)) r.flash_capacity += reg.length;
      if (reg.kind == RegionKind::ram) {
        r.ram_capacity += reg.length;
        r.largest_ram_block = std::max(r.largest_ram_block, reg.length);
      }
    }
  }
  // The arena is one array, placed by the linker in a RAM region of the map
  // beside that region's statics: the region with the most room once the
  // declared arena is taken out. Against a chip, a region is no larger than
  // the chip's largest contiguous block, and its statics are in that block
  // too (a map written for a bigger part still puts them there).
  bool ram_regions = false;
  for (const MapRegion& reg : map.regions) {
    if (reg.kind != RegionKind::ram) continue;
    const uint64_t below = reg.used_without_placed();  // what grows toward a placed section
    uint64_t used = below - (&reg == arena_region ? std::min(below, r.declared_arena) : 0);
    // The statics grow up to a section the script placed at its own address.
    const uint64_t room = reg.grow_limit() - reg.origin;
    uint64_t length = chip ? std::min(room, chip->largest_ram_block) : room;
    r.arena_block_free = std::max(r.arena_block_free, length > used ? length - used : 0);
    ram_regions = true;
  }
  if (chip && !ram_regions) r.arena_block_free = chip->largest_ram_block;  // the map names no RAM
  if (!weights) {
    // The weights array goes into one flash region, beside what the image
    // keeps there: the region with the most room. A boot-configuration
    // region or a bootloader's region adds to the total, not to that room.
    // ESP-IDF's windows are not flash: the chip's flash less the image.
    uint64_t room = 0;
    bool flash_regions = false;
    if (esp != EspLayout::windows_only)
      for (const MapRegion& reg : map.regions) {
        if (!holds_image(reg, esp)) continue;
        const uint64_t reach = reg.grow_limit() - reg.origin, below = reg.used_without_placed();
        const uint64_t length = chip ? std::min(reach, chip->flash) : reach;
        room = std::max(room, length > below ? length - below : 0);
        flash_regions = true;
      }
    if (!flash_regions) room = r.flash_capacity > flash_used ? r.flash_capacity - flash_used : 0;
    r.weights_block_free = room;
    r.fits_weights_block = model_bytes <= room;
  }
  r.fits_flash = r.flash_need <= r.flash_capacity;
  r.fits_ram = r.ram_need <= r.ram_capacity;
  r.fits_block = r.arena_placed <= r.arena_block_free;
  return r;
}

FitResult fit_without_map(const ArenaBudget& budget, uint64_t model_bytes, const Mcu& chip) {
  FitResult r;
  r.firmware_counted = false;
  r.arena_need = r.arena_placed = budget.recommended_bytes;
  r.flash.push_back({"model weights (.tflite)", model_bytes});
  r.ram.push_back({std::string(kArenaLine), r.arena_need});
  r.flash_need = model_bytes;
  r.ram_need = r.arena_need;
  r.chip = chip.name;
  r.flash_capacity = chip.flash;
  r.ram_capacity = chip.ram;
  r.largest_ram_block = chip.largest_ram_block;
  r.arena_block_free = chip.largest_ram_block;
  r.weights_block_free = chip.flash;
  r.fits_weights_block = model_bytes <= chip.flash;
  r.fits_flash = r.flash_need <= r.flash_capacity;
  r.fits_ram = r.ram_need <= r.ram_capacity;
  r.fits_block = r.arena_placed <= r.arena_block_free;
  return r;
}

}  // namespace edgemem::plan
