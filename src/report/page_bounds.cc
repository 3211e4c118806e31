#include "report/page_bounds.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace edgemem::page_bounds {
namespace {

using nlohmann::json;

// The sites table: every leaking site, then the first kSiteRows others in
// the document's order (live bytes, then bytes allocated); the rest summed.
void bound_sites(json& a) {
  json& sites = a["sites"];
  if (sites.size() <= kSiteRows) return;
  std::set<std::string> leaking;
  for (const json& l : a["leaks"]) leaking.insert(l["site"].get<std::string>());
  json kept = json::array();
  json omitted = {{"count", 0}, {"allocs", 0}, {"frees", 0}, {"alloc_bytes", 0}, {"live_bytes", 0}, {"live_count", 0}};
  size_t others = 0;
  for (json& s : sites) {
    if (leaking.contains(s["site"].get<std::string>()) || others++ < kSiteRows) {
      kept.push_back(std::move(s));
      continue;
    }
    omitted["count"] = omitted["count"].get<uint64_t>() + 1;
    for (const char* k : {"allocs", "frees", "alloc_bytes", "live_bytes", "live_count"})
      omitted[k] = omitted[k].get<uint64_t>() + s[k].get<uint64_t>();
  }
  std::set<std::string> names;
  for (const json& s : kept) names.insert(s["site"].get<std::string>());
  json persistent = json::array();  // the page reads it only to label the rows it shows
  for (json& p : a["persistent"])
    if (names.contains(p["site"].get<std::string>())) persistent.push_back(std::move(p));
  sites = std::move(kept);
  a["persistent"] = std::move(persistent);
  a["sites_omitted"] = std::move(omitted);
}

// A flame graph 1,080 px wide cannot show a stack narrower than a pixel:
// stacks under 1/kFlameFraction of the moment's bytes become one entry per
// pool, so every pool's width stays exact.
void bound_flame(json& entries) {
  uint64_t total = 0;
  for (const json& e : entries) total += e["bytes"].get<uint64_t>();
  json kept = json::array();
  std::map<std::string, std::vector<json>> small;  // per pool
  for (json& e : entries) {
    if (e["bytes"].get<uint64_t>() * kFlameFraction >= total) kept.push_back(std::move(e));
    else small[e["pool"].get<std::string>()].push_back(std::move(e));
  }
  for (auto& [pool, list] : small) {
    if (list.size() == 1) {
      kept.push_back(std::move(list[0]));
      continue;
    }
    uint64_t bytes = 0, count = 0;
    for (const json& e : list) {
      bytes += e["bytes"].get<uint64_t>();
      count += e["count"].get<uint64_t>();
    }
    kept.push_back({{"pool", pool},
                    {"site", fmt::format("({} stacks under 1/{} of the bytes each)", list.size(), kFlameFraction)},
                    {"bytes", bytes}, {"count", count}});
  }
  entries = std::move(kept);
}

// The layout's site names, one per distinct stack, repeat their outer
// frames: sent as a frame table and index lists (the page joins them back).
void share_frames(json& layout) {
  json frames = json::array(), stacks = json::array();
  std::unordered_map<std::string, size_t> index;
  for (const json& site : layout["sites"]) {
    const std::string& name = site.get_ref<const std::string&>();
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
}

}  // namespace

void bound_analysis(json& a) {
  bound_sites(a);
  json& holders = a["peak"]["live_at_peak"];
  if (holders.size() > kPeakHolders) holders.erase(holders.begin() + kPeakHolders, holders.end());
  bound_flame(a["layout"]["live_at_end"]);
  bound_flame(a["layout"]["live_at_peak"]);
  share_frames(a["layout"]);
}

}  // namespace edgemem::page_bounds
