// GNU ld map files (-Wl,-Map): memory regions, output sections with their
// load addresses, what every object and archive member contributes, and the
// symbols ld lists. Read line by line: wrapped long section names, *fill*,
// COMMON, discarded sections and 32- or 64-bit address columns are handled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace edgemem {

struct MapRegion {
  std::string name;
  uint64_t origin = 0, length = 0;
  std::string attributes;
  uint64_t used = 0;  // as `ld --print-memory-usage` counts it: extent from the origin
};

enum class SectionKind : uint8_t { code, rodata, data, bss, debug, other };

struct MapSection {
  std::string name;
  uint64_t address = 0, size = 0;
  std::optional<uint64_t> load_address;  // LMA when the map states one
  SectionKind kind = SectionKind::other;
  uint64_t fill = 0;  // alignment padding inside it
};

struct MapContribution {
  std::string section;  // output section
  std::string object;   // "path/obj.o" or "lib.a(member.o)"
  uint64_t size = 0;
};

struct MapSymbol {
  std::string name, section, object;
  uint64_t address = 0, size = 0;  // size: up to the next symbol or the end of its input section
};

struct LinkerMap {
  std::vector<MapRegion> regions;
  std::vector<MapSection> sections;
  std::vector<MapContribution> contributions;  // summed per output section and object
  std::vector<MapSymbol> symbols;
  uint64_t discarded_bytes = 0;
};

// Returns nullopt with a one-line reason ("line N: ...") if this is no GNU ld map.
std::optional<LinkerMap> parse_gnu_map(std::string_view text, std::string& error);

std::string_view to_string(SectionKind kind);

}  // namespace edgemem
