// The analyze page embeds the analyze JSON document, whose site lists grow
// with the number of distinct call stacks: a node + ONNX Runtime recording
// has 30,000 of them, a 50 MB page. The page keeps what it can draw or a
// reader can scan, and says how much it left out; --json keeps everything.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace edgemem::page_bounds {

inline constexpr size_t kSiteRows = 1000;       // rows of the sites table (leaking sites always kept)
inline constexpr size_t kPeakHolders = 100;     // peak.live_at_peak, largest first
inline constexpr unsigned kFlameFraction = 10000;  // stacks under 1/10,000 of a moment's bytes: one entry per pool

// Bounds the lists of an edgemem.analyze/1 document in place, and sends the
// layout's site names as layout.site_frames + layout.site_stacks.
void bound_analysis(nlohmann::json& analysis);

}  // namespace edgemem::page_bounds
