#include "report/page_bounds.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "edgemem/analysis_result.h"
#include "report/site_names.h"

namespace edgemem::page_bounds {
namespace {

using nlohmann::json;

// The persistent list labels the rows of the sites table: past the
// analysis's bound, only the groups of the sites listed are sent.
void bound_persistent(json& a) {
  if (a["sites_omitted"].is_null()) return;
  std::set<std::string> names;
  for (const json& s : a["sites"]) names.insert(s["site"].get<std::string>());
  json persistent = json::array();
  for (json& p : a["persistent"])
    if (names.contains(p["site"].get<std::string>())) persistent.push_back(std::move(p));
  a["persistent"] = std::move(persistent);
}

// The rows past kPeakHolders become one summed row, as the analysis's own
// (its last row past listed::kPeakHolders), which is summed in with the
// sites it stands for: the table still adds up to the peak. The bytes
// below an arena's top in no block are no site: kept by name, as the
// analysis keeps them, and drawn by the page's flame graph of the peak.
void bound_peak_holders(json& holders) {
  size_t others = 0;
  const bool summed = holders.size() == listed::kPeakHolders + 1 &&
                      std::sscanf(holders.back()["site"].get_ref<const std::string&>().c_str(), "(%zu other sites)",
                                  &others) == 1;
  json below;
  for (auto h = holders.begin(); h != holders.end(); ++h)
    if ((*h)["site"] == kBelowArenaTop) {
      below = std::move(*h);
      holders.erase(h);
      break;
    }
  const size_t keep = kPeakHolders - (below.is_null() ? 0 : 1);
  bool rest = summed;
  if (holders.size() > keep) {
    uint64_t bytes = 0, count = 0, sites = holders.size() - keep;
    for (size_t i = keep; i < holders.size(); ++i) {
      bytes += holders[i]["bytes"].get<uint64_t>();
      count += holders[i]["count"].get<uint64_t>();
    }
    if (summed) sites += others - 1;
    holders.erase(holders.begin() + static_cast<std::ptrdiff_t>(keep), holders.end());
    holders.push_back({{"site", fmt::format("({} other sites)", sites)}, {"bytes", bytes}, {"count", count}});
    rest = true;
  }
  if (below.is_null()) return;
  // Back in its place by bytes, before the summed row.
  const uint64_t bytes = below["bytes"].get<uint64_t>();
  auto at = std::find_if(holders.begin(), holders.end() - (rest ? 1 : 0),
                         [&](const json& h) { return h["bytes"].get<uint64_t>() < bytes; });
  holders.insert(at, std::move(below));
}

// The layout's site names, one per distinct stack, repeat their outer
// frames: sent as a frame table and index lists (the page joins them back).
// Each also gets the short label the chart's legend shows: its innermost
// frame as the text report reads it, led by the program's own frame when
// the innermost is the runtime's (std::vector's allocator, operator new).
void share_frames(json& layout) {
  json frames = json::array(), stacks = json::array(), labels = json::array();
  std::unordered_map<std::string, size_t> index;
  for (const json& site : layout["sites"]) {
    const std::string& name = site.get_ref<const std::string&>();
    std::string label = shown_site(name, 1);
    labels.push_back(label.starts_with("...;") ? label.substr(4) : label);
    json ids = json::array();
    for (size_t start = 0;;) {
      size_t end = name.find(';', start);
      std::string frame = name.substr(start, end == std::string::npos ? std::string::npos : end - start);
      auto [it, added] = index.try_emplace(frame, frames.size());
      if (added) frames.push_back(frame);
      ids.push_back(it->second);
      if (end == std::string::npos) break;
      start = end + 1;
    }
    stacks.push_back(std::move(ids));
  }
  layout.erase("sites");
  layout["site_frames"] = std::move(frames);
  layout["site_stacks"] = std::move(stacks);
  layout["site_labels"] = std::move(labels);
}

}  // namespace

void bound_analysis(json& a) {
  bound_persistent(a);
  bound_peak_holders(a["peak"]["live_at_peak"]);
  share_frames(a["layout"]);
}

}  // namespace edgemem::page_bounds
