// armlink (Keil MDK, Arm Compiler 5 and 6) map files: the Image Symbol
// Table, the Memory Map of the image (load regions holding execution
// regions, one line per input section) and the component size totals.
//
// armlink has no output sections; its nearest thing is the execution region,
// so each region becomes up to four sections, one per category armlink
// totals: code, RO data, RW data, ZI data. A load region is what sits in
// flash: its used bytes are the COMPRESSED size when armlink compressed the
// RW initialisers, which is what its "Total ROM Size" counts.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "static/linker_map.h"

namespace edgemem {
namespace {

// "(Base: 0x08000000, Size: 0x00001f58, Max: 0x00100000, ABSOLUTE, COMPRESSED[0x00001844])"
bool field(std::string_view line, std::string_view key, uint64_t& out) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return false;
  std::string_view rest = line.substr(at + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  size_t end = rest.find_first_of(",])");
  return map_hex(rest.substr(0, end), out);
}

struct Entry {
  uint64_t address = 0, size = 0;
  MapCategory category = kCode;
  size_t region = 0;  // index into the execution regions, in file order
};

}  // namespace

std::optional<LinkerMap> parse_armlink_map(std::string_view text, std::string& error) {
  enum class Part { preamble, symbols, memory, sizes } part = Part::preamble;
  LinkerMap map;
  map.toolchain = "armlink";
  std::map<std::pair<std::string, std::string>, uint64_t> contrib;
  std::vector<Entry> entries;
  struct RegionSums {
    uint64_t bytes[kMapCategories] = {};
    uint64_t first[kMapCategories] = {};
    bool seen[kMapCategories] = {};
    uint64_t load_base = 0;
    uint64_t exec_base = 0, size = 0;
    std::optional<uint64_t> compressed;  // its RW initialisers' stored size
    size_t load_region = 0;              // index into map.regions
    bool load_given = false;  // the older layout gives an execution region's base only
  };
  std::map<std::string, RegionSums> sums;
  std::vector<std::string> region_order;
  size_t load_region = 0;      // index into map.regions of the current load region
  std::string region;          // current execution region
  size_t region_index = 0;     // its MapRegion
  // PAD counts as armlink's totals count it: with the entry before it
  // (Code, PAD 4, RO data: Code), except before ZI data, where only what
  // rounds the entry before up to 4 bytes is its (RW data ending at ...9a,
  // PAD 6, Zero: 2 B RW, 4 B ZI). A PAD opening a region goes with the entry
  // after it; bytes an execution region's Size holds past its last entry,
  // with that entry.
  uint64_t pending_pad = 0, pending_round = 0;  // pending_round: the part up to a 4-byte boundary
  MapCategory last = kCode;
  bool region_has_entry = false;
  uint64_t region_size = 0, region_listed = 0;
  bool saw_memory = false;
  // Arm Compiler 5.05 and older print one address column ("Base Addr");
  // later ones print "Exec Addr    Load Addr".
  bool load_column = true;

  auto flush_pad = [&](MapCategory next) {
    if (pending_pad && !region.empty()) {
      uint64_t to_previous = !region_has_entry ? 0 : next == kZiData ? pending_round : pending_pad;
      sums[region].bytes[last] += to_previous;
      sums[region].bytes[next] += pending_pad - to_previous;
      region_listed += pending_pad;
    }
    pending_pad = pending_round = 0;
  };
  auto close_region = [&]() {
    flush_pad(last);
    if (!region.empty() && region_has_entry && region_size > region_listed)
      sums[region].bytes[last] += region_size - region_listed;
  };

  TextLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    if (line.starts_with("Image Symbol Table")) { part = Part::symbols; continue; }
    if (line.starts_with("Memory Map of the image")) { part = Part::memory; saw_memory = true; continue; }
    if (line.starts_with("Image component sizes")) {
      close_region();
      part = Part::sizes;
      continue;
    }
    auto w = map_words(line);
    if (w.empty()) continue;

    if (part == Part::symbols) {
      // name VALUE [Ov] TYPE SIZE object(section); "- Undefined Weak Reference" has no value.
      size_t v = 1;
      while (v < w.size() && !w[v].starts_with("0x")) ++v;
      uint64_t address = 0, size = 0;
      if (v + 2 >= w.size() || !map_hex(w[v], address)) continue;
      size_t t = v + 1;
      std::string_view type = w[t];
      if ((type == "Thumb" || type == "ARM") && t + 1 < w.size() && w[t + 1] == "Code") ++t;
      if (type == "Section" && w[0] == "STACK" && t + 2 < w.size() && w[t + 2].ends_with("(STACK)"))
        map_decimal(w[t + 1], map.startup_stack_area);
      if (type != "Data" && type != "Thumb" && type != "ARM") continue;  // Number, Section: no storage
      if (t + 2 >= w.size() || !map_decimal(w[t + 1], size) || size == 0) continue;
      std::string name;
      for (size_t i = 0; i < v; ++i) name += (i ? " " : "") + std::string(w[i]);
      std::string_view object = w[t + 2];
      std::string section;
      if (size_t paren = object.find('('); paren != std::string_view::npos && object.back() == ')') {
        section = std::string(object.substr(paren + 1, object.size() - paren - 2));
        object = object.substr(0, paren);
      }
      map.symbols.push_back({std::move(name), std::move(section), std::string(object), address, size});
      continue;
    }

    if (part == Part::memory) {
      uint64_t base = 0, size = 0, max = 0, compressed = 0;
      if (w[0] == "Load" && w.size() > 2 && w[1] == "Region") {
        close_region();
        field(line, "Base:", base);
        field(line, "Size:", size);
        field(line, "Max:", max);
        bool packed = field(line, "COMPRESSED[", compressed);
        map.regions.push_back({std::string(w[2]), base, max, "load", packed ? compressed : size, RegionKind::flash});
        load_region = map.regions.size() - 1;
        region.clear();
        continue;
      }
      if (w[0] == "Execution" && w.size() > 2 && w[1] == "Region") {
        close_region();
        if (!field(line, "Exec base:", base)) field(line, "Base:", base);
        uint64_t load = base;
        const bool load_given = field(line, "Load base:", load);
        field(line, "Size:", size);
        field(line, "Max:", max);
        region = std::string(w[2]);
        region_has_entry = false;
        region_size = size;
        region_listed = 0;
        region_order.push_back(region);
        RegionSums& r = sums[region];
        r.load_base = load;
        r.exec_base = base;
        r.size = size;
        r.load_region = load_region;
        r.load_given = load_given;
        if (field(line, "COMPRESSED[", compressed)) r.compressed = compressed;
        map.regions.push_back({region, base, max, "exec", size, RegionKind::other});
        region_index = map.regions.size() - 1;
        continue;
      }
      if (w.size() > 2 && w[1] == "Addr") {
        load_column = w[0] == "Exec";
        continue;
      }
      // EXEC LOAD SIZE TYPE ATTR IDX [*] SECTION OBJECT, or EXEC LOAD SIZE PAD;
      // the older layout has no LOAD.
      const size_t at = load_column ? 2 : 1;
      uint64_t exec = 0, bytes = 0;
      if (region.empty() || w.size() < at + 2 || !map_hex(w[0], exec) || !map_hex(w[at], bytes)) continue;
      if (w[at + 1] == "PAD") {
        if (!pending_pad) pending_round = std::min(bytes, (4 - exec % 4) % 4);
        pending_pad += bytes;
        continue;
      }
      if (w.size() < at + 5) continue;
      std::string_view type = w[at + 1], attr = w[at + 2];
      MapCategory c = type == "Code" ? kCode : type == "Zero" ? kZiData : attr == "RW" ? kRwData : kRoData;
      if (attr == "RW") map.regions[region_index].kind = RegionKind::ram;
      flush_pad(c);
      last = c;
      region_has_entry = true;
      region_listed += bytes;
      RegionSums& r = sums[region];
      if (!r.seen[c]) r.first[c] = exec;
      r.seen[c] = true;
      r.bytes[c] += bytes;
      size_t s = w[at + 4] == "*" ? at + 6 : at + 5;  // the E column marks the entry point
      std::string object;
      for (size_t i = s; i < w.size(); ++i) object += (object.empty() ? "" : " ") + std::string(w[i]);
      if (!object.empty()) contrib[{fmt::format("{}:{}", region, kMapCategoryName[c]), object}] += bytes;
      entries.push_back({exec, bytes, c, region_order.size() - 1});
      continue;
    }

    if (part == Part::sizes) {
      // "  2422  152  2242  3360  88248  258987   Grand Totals"
      uint64_t v[6];
      bool six = w.size() >= 7;
      for (size_t i = 0; six && i < 6; ++i) six = map_decimal(w[i], v[i]);
      std::string label;
      for (size_t i = six ? 6 : 0; i < w.size(); ++i) label += (label.empty() ? "" : " ") + std::string(w[i]);
      if (six && label == "Grand Totals") {
        map.stated["Code"] = v[0];
        map.stated["inc. data"] = v[1];
        map.stated["RO Data"] = v[2];
        map.stated["RW Data"] = v[3];
        map.stated["ZI Data"] = v[4];
        map.stated["Debug"] = v[5];
      } else if (six && label.starts_with("ELF Image Totals (compressed)")) {
        map.stated["RW Data (compressed)"] = v[3];
      } else if (w.size() >= 4 && w[0] == "Total" && w[2] == "Size") {
        // "Total ROM Size (Code + RO Data + RW Data)       6212 (   6.07kB)"
        for (size_t i = 3; i < w.size(); ++i)
          if (uint64_t n = 0; !w[i].starts_with("(") && map_decimal(w[i], n)) {
            map.stated[fmt::format("Total {} Size", w[1])] = n;
            break;
          }
      }
    }
  }
  if (!saw_memory) {
    error = fmt::format("line {}: expected armlink's \"Memory Map of the image\" (link with --map; or the map is cut "
                        "short)",
                        lines.number());
    return std::nullopt;
  }
  // armlink closes its map with the image's totals: without them the map
  // was cut short, and nothing would check what was read of it.
  if (!map.stated.contains("Total ROM Size")) {
    error = fmt::format("line {}: the map ends before armlink's closing \"Total ROM Size\" line: it is cut short; "
                        "link again or use the whole file",
                        lines.number());
    return std::nullopt;
  }

  for (const std::string& name : region_order) {
    const RegionSums& r = sums[name];
    for (int c = 0; c < kMapCategories; ++c) {
      if (!r.seen[c] && r.bytes[c] == 0) continue;
      MapSection s;
      s.name = fmt::format("{}:{}", name, kMapCategoryName[c]);
      s.address = r.first[c];
      s.size = r.bytes[c];
      s.kind = kMapCategoryKind[c];
      if (c == kRwData) s.load_address = r.load_base;
      map.sections.push_back(std::move(s));
      uint64_t* total[kMapCategories] = {&map.totals.code, &map.totals.ro_data, &map.totals.rw_data, &map.totals.zi_data};
      *total[c] += r.bytes[c];
    }
  }
  // Symbols take the section of the entry that holds them (an empty one at
  // _sys_exit's address, taken first, made the function read-only data).
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.address < b.address; });
  for (MapSymbol& s : map.symbols)
    if (const Entry* e = entry_holding(entries, s.address))
      s.section = fmt::format("{}:{}", region_order[e->region], kMapCategoryName[e->category]);
  for (const auto& [key, size] : contrib) map.contributions.push_back({key.first, key.second, size});
  // What each execution region stores in its load region: all of it when it
  // runs in place, its initialisers (as compressed) when copied, nothing for
  // zero-initialised data. Between them, in load address order, alignment.
  std::map<size_t, std::vector<std::pair<uint64_t, uint64_t>>> stored;  // load region -> (load base, bytes)
  std::set<size_t> unknown;  // load regions holding an execution region of unknown load address
  for (const std::string& name : region_order) {
    const RegionSums& r = sums[name];
    if (!r.load_given) unknown.insert(r.load_region);
    const uint64_t bytes = r.compressed                    ? *r.compressed
                           : r.load_base == r.exec_base ? r.size
                                                          : r.bytes[kCode] + r.bytes[kRoData] + r.bytes[kRwData];
    if (bytes) stored[r.load_region].push_back({r.load_base, bytes});
  }
  for (auto& [index, extents] : stored) {
    if (unknown.contains(index)) continue;
    std::sort(extents.begin(), extents.end());
    for (size_t i = 1; i < extents.size(); ++i) {
      const uint64_t end = extents[i - 1].first + extents[i - 1].second;
      if (extents[i].first > end) map.load_gaps += extents[i].first - end;
    }
  }
  return map;
}

}  // namespace edgemem
