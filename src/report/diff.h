// What grew between two builds (two linker maps or ELFs: regions, sections,
// objects, symbols, like `bloaty -d`) or two runs (two traces: peak, leaks,
// fragmentation, pools, sites).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgemem/analysis_result.h"
#include "static/linker_map.h"

namespace edgemem {

// What a row counts: bytes and counts are whole numbers, a fraction is 0..1.
// band: the value is a Band (healthy 0, warning 1, danger 2), shown by name.
enum class DiffUnit { bytes, count, fraction, bytes_per_inference, band };
std::string_view to_string(DiffUnit unit);

struct DiffRow {
  std::string name;   // a symbol, section, site...; for the run's headline a stable id ("peak_bytes")
  std::string label;  // what text shows for a headline row; empty: the name
  DiffUnit unit = DiffUnit::bytes;
  double before = 0, after = 0;
  bool added = false, removed = false;  // present on one side only
  // A map symbol whose size the map only bounds on either side (the span to
  // the next listed symbol, holding statics it does not list).
  bool upper_bound = false;
  double delta() const { return after - before; }
};

struct DiffGroup {
  std::string id;             // "totals", "regions", "sections", "objects", "symbols", "run", "pool_peaks", "site_live_bytes"
  std::string title;          // what text shows
  std::vector<DiffRow> rows;  // changed rows first, by the size of the change
  std::string note{};         // what it leaves out and why; empty when nothing
};

// Groups with every row (unchanged rows last); callers decide how many to show.
std::vector<DiffGroup> diff_maps(const LinkerMap& before, const LinkerMap& after);
std::vector<DiffGroup> diff_traces(const AnalysisResult& before, const AnalysisResult& after);

}  // namespace edgemem
