// What a linker map says about a firmware image, whichever linker wrote it:
// GNU ld (-Wl,-Map), Arm's armlink (Keil MDK) or IAR's ILINK (EWARM). Each
// parser fills the same model, so `map`, `fit`, `check` and `diff` do not
// care which toolchain built the image.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "static/text_lines.h"

namespace edgemem {

// flash: holds the image (GNU regions without 'w', armlink load regions, IAR
// ro placements); ram: holds data at run time; other: an armlink execution
// region that runs from its load region, shown but not counted twice.
enum class RegionKind : uint8_t { flash, ram, other };

// A section a GNU ld script placed at an address of its own, past the rest
// of its region by more than any alignment (boot flags in RAM's last
// bytes, a signature block near the end of flash).
struct PlacedSection {
  std::string name;
  uint64_t address = 0, size = 0;
};

struct MapRegion {
  std::string name;
  uint64_t origin = 0, length = 0;
  std::string attributes;
  uint64_t used = 0;  // GNU: as `ld --print-memory-usage` counts it; others: as the linker states it
  RegionKind kind = RegionKind::other;
  bool position_only = false;  // IAR "place at address": a position, not a capacity
  // IAR: a position inside a capacity region's range (the vector table
  // placed at the start of the flash range "P1" fills): that region's
  // `used` counts these bytes too, as ILINK's unused ranges do; sums over
  // regions skip this one.
  std::string within{};
  // Counted in `used` to their ends, as ld counts them when the script
  // also gives them `> REGION` (WCH's stack at RAM's end); without it ld
  // leaves them out (boot flags placed at 0x2001FFE0), and the map is the
  // same either way. By address; the rest grows up to the first of them.
  std::vector<PlacedSection> placed{};
  uint64_t flow_used = 0;  // `used` without them (GNU, when `placed` is not empty)
  // Of `used`: what the load images of `unsure_images` add (GNU; see
  // LoadImage). Without them the region would use `used - unsure_bytes`.
  uint64_t unsure_bytes = 0;
  std::vector<std::string> unsure_images{};
  uint64_t used_without_placed() const { return placed.empty() ? used : flow_used; }
  uint64_t placed_bytes() const;
  // Bytes really there: the rest of the region and the placed sections.
  uint64_t occupied() const { return used_without_placed() + placed_bytes(); }
  // Where the rest can grow to: the first placed section, else the end.
  uint64_t grow_limit() const { return placed.empty() ? origin + length : placed.front().address; }
};

// Bytes used beyond a region's length (0 when it fits). A region of length 0
// that holds bytes overflowed by all of them, unless it only names a position.
// Of entries sorted by address (each with an `address` and a `size`), the
// one that holds `address`: one with bytes, else an empty one at it (armlink
// lists a 0-byte .text at a function's address). Null when none does.
template <typename Entry>
const Entry* entry_holding(const std::vector<Entry>& sorted, uint64_t address) {
  const Entry* empty_at = nullptr;
  for (auto it = std::upper_bound(sorted.begin(), sorted.end(), address,
                                  [](uint64_t a, const Entry& e) { return a < e.address; });
       it != sorted.begin();) {
    --it;
    if (it->size > 0) return address < it->address + it->size ? &*it : empty_at;
    if (it->address == address && !empty_at) empty_at = &*it;
  }
  return empty_at;
}

uint64_t overflow_bytes(const MapRegion& region);
// An overflow that only load images the map cannot confirm make (see
// LoadImage): without them the region fits.
bool overflow_unsure(const MapRegion& region);

enum class SectionKind : uint8_t { code, rodata, data, bss, debug, other };

// Whether a section's load address holds bytes of the image. ld prints the
// same map for a section with contents and for a NOLOAD one that took a load
// address in flash (the STM32H7 LwIP examples' `.lwip_sec (NOLOAD) : {...}
// >RAM_D2 AT> FLASH`), and counts only the first in --print-memory-usage.
// The map's own evidence decides where it has some (the next section's load
// address, the input sections), the ELF's section type where it is given;
// else it stays unsure, counted, and said so.
enum class LoadImage : uint8_t { yes, no, unsure };

struct MapSection {
  std::string name;
  uint64_t address = 0, size = 0;
  std::optional<uint64_t> load_address;  // LMA when the map states one
  SectionKind kind = SectionKind::other;
  uint64_t fill = 0;  // alignment padding inside it
  LoadImage load_image = LoadImage::yes;  // when load_address differs from address
};

struct MapContribution {
  std::string section;  // output section (armlink: execution region; IAR: placement)
  std::string object;   // "path/obj.o" or "lib.a(member.o)"
  uint64_t size = 0;
};

struct MapSymbol {
  std::string name, section, object;
  uint64_t address = 0, size = 0;
  // The map gives where the symbol starts, not where it ends: its size runs
  // to the next symbol listed, and may hold statics ld does not list (an
  // input section of several functions or objects: no -ffunction-sections
  // or -fdata-sections, or LTO). At most `size`; the ELF has the exact one.
  bool size_is_upper_bound = false;
};

// Image totals in the categories armlink and IAR print.
struct MapTotals {
  uint64_t code = 0, ro_data = 0, rw_data = 0, zi_data = 0;
};

// A total the map file (or its ELF) states that edgemem's own sum of the
// map's entries does not reproduce: one of the two readings is wrong.
struct SelfCheck {
  std::string what;  // the file's own label: "Code", "Total ROM Size", "readonly code"
  uint64_t stated_bytes = 0, computed_bytes = 0;
};

struct LinkerMap {
  std::string toolchain;  // "GNU ld", "armlink", "IAR ILINK"
  std::vector<MapRegion> regions;
  std::vector<MapSection> sections;
  std::vector<MapContribution> contributions;  // summed per section and object
  std::vector<MapSymbol> symbols;
  uint64_t discarded_bytes = 0;
  MapTotals totals;                            // summed from the map's own entries
  std::map<std::string, uint64_t> stated;      // totals the file prints, by its own label
  std::vector<SelfCheck> self_check;           // stated totals that disagree with ours (empty: all agree)
  // armlink: bytes between execution regions inside a load region (an RW
  // region's initialisers aligned after the code), in the load region's
  // size but not in armlink's "Total ROM Size".
  uint64_t load_gaps = 0;
  // armlink: the size of the startup file's STACK area (CMSIS startup code
  // reserves the main stack there), listed even where its Stack_Mem symbol
  // is not; 0 when none.
  uint64_t startup_stack_area = 0;
  // GNU ld: the script's `_Min_Stack_Size` (STM32CubeIDE and CubeMX
  // scripts), the stack `._user_heap_stack` keeps room for below _estack;
  // 0 when none.
  uint64_t script_min_stack = 0;
};

// Detects the toolchain and parses; nullopt with a one-line reason ("line N:
// ...") if the text is no map edgemem reads.
std::optional<LinkerMap> parse_linker_map(std::string_view text, std::string& error);

std::optional<LinkerMap> parse_gnu_map(std::string_view text, std::string& error);
std::optional<LinkerMap> parse_armlink_map(std::string_view text, std::string& error);
std::optional<LinkerMap> parse_iar_map(std::string_view text, std::string& error);

// A GNU ld map's region use from its sections (`used`, `placed`,
// `unsure_bytes`), as `ld --print-memory-usage` counts it; again after the
// ELF settled which load images exist.
void count_gnu_regions(LinkerMap& map);

std::string_view to_string(SectionKind kind);
std::string_view to_string(RegionKind kind);

// What a symbol is to someone fitting a model on a chip: "tensor arena",
// "model weights", "stack", "heap", "code" or "data".
std::string_view symbol_role(const MapSymbol& symbol, SectionKind kind);

// The kind of the section a symbol lives in (other if unknown).
SectionKind section_kind(const LinkerMap& map, const std::string& section);

// The largest symbol whose symbol_role is `role` (the first of equals), or
// nullptr. The declared tensor arena is the largest "tensor arena" symbol
// that names a tensor, else the largest: `fit`, `check` and the map page
// must all name the same one.
const MapSymbol* largest_symbol_with_role(const LinkerMap& map, std::string_view role);

// The main stack the image reserves: a stack section (.stack, IAR's
// CSTACK), the startup code's Stack_Mem, armlink's STACK area or a CubeIDE
// script's _Min_Stack_Size, else the largest symbol named like a stack; its name and size. `check` holds a stack budget against it; the map page
// marks it.
std::optional<std::pair<std::string, uint64_t>> reserved_stack(const LinkerMap& map);

// "0x1f58" (IAR's "0x800'0000" too) and "1'572" / "4664": numbers as maps
// print them; false if the word is not one.
bool map_hex(std::string_view word, uint64_t& out);
bool map_decimal(std::string_view word, uint64_t& out);

// armlink and IAR have no output sections: their maps are summed per region
// in the four categories both linkers total (code, RO data, RW data, ZI).
enum MapCategory { kCode, kRoData, kRwData, kZiData, kMapCategories };
inline constexpr std::string_view kMapCategoryName[kMapCategories] = {"code", "ro-data", "rw-data", "zi"};
inline constexpr SectionKind kMapCategoryKind[kMapCategories] = {SectionKind::code, SectionKind::rodata,
                                                                SectionKind::data, SectionKind::bss};

// Splits a line into blank-separated words; the second form reuses `out`
// (no allocation per line in the parsers' hot loops).
std::vector<std::string_view> map_words(std::string_view line);
void map_words(std::string_view line, std::vector<std::string_view>& out);

}  // namespace edgemem
