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

struct DiffRow {
  std::string name;
  double before = 0, after = 0;
  bool added = false, removed = false;  // present on one side only
  double delta() const { return after - before; }
};

struct DiffGroup {
  std::string title;       // "regions", "sections", "objects", "symbols", "pools", ...
  std::string unit = "B";  // "B", "%", "B/inference", ""
  std::vector<DiffRow> rows;  // changed rows first, by the size of the change
};

// Groups with every row (unchanged rows last); callers decide how many to show.
std::vector<DiffGroup> diff_maps(const LinkerMap& before, const LinkerMap& after);
std::vector<DiffGroup> diff_traces(const AnalysisResult& before, const AnalysisResult& after);

}  // namespace edgemem
