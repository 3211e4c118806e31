// `edgemem map`: a linker map (and the ELF beside it) as text, verdict
// first, and as the edgemem.map/2 JSON document (docs/schemas/map.schema.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "static/elf_image.h"
#include "static/linker_map.h"

namespace edgemem {

struct MapReport {
  std::string path;                      // the map, or the ELF read as one
  const LinkerMap* map = nullptr;
  std::optional<std::string> elf_path;   // set with `elf`
  const ElfImage* elf = nullptr;
  bool compared = false;                 // a map and its ELF were both given
  std::vector<std::string> mismatches;   // map vs ELF: not from the same link
  size_t top = 15;                       // largest symbols listed in text

  bool mismatch() const { return !mismatches.empty(); }
  // The map disagrees with its ELF or with the totals it states itself.
  bool disagrees() const { return mismatch() || !map->self_check.empty(); }
  // A region holds more than its length: the link failed or will not run.
  bool overflowed() const {
    for (const auto& r : map->regions)
      if (overflow_bytes(r)) return true;
    return false;
  }
  // Every overflow only load images the map cannot confirm make.
  bool overflow_unsure() const {
    for (const auto& r : map->regions)
      if (overflow_bytes(r) && !edgemem::overflow_unsure(r)) return false;
    return overflowed();
  }
  // The exit-1 verdicts of `edgemem map`.
  bool against_user() const { return disagrees() || overflowed(); }
};

// The verdict lines that open the text report, worst first: the map
// disagreeing with itself or its ELF, regions that overflowed, or that all is
// well. Text prints "TAG: text" for a bad one; the page makes each a card.
struct MapVerdict {
  bool bad = false;
  std::string tag;   // "SELF-CHECK FAILED", "MISMATCH", "OVERFLOWED"; empty when good
  std::string text;
};
std::vector<MapVerdict> map_verdicts(const MapReport& r);

std::string map_text(const MapReport& r);
std::string map_json(const MapReport& r);

// The page's data (regions, a region > section > object > symbol tree, the
// declared arena, the largest symbols) and `edgemem map --html`'s page.
nlohmann::json map_page_data(const MapReport& r);
std::string map_html(const MapReport& r);

}  // namespace edgemem
