// The analyze page embeds the analyze JSON document, whose lists the
// analysis already bounds (edgemem::listed): the page keeps fewer peak
// holders, only the persistent groups of the sites it lists, and sends the
// layout's stack names as a frame table.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace edgemem::page_bounds {

inline constexpr size_t kPeakHolders = 100;  // peak.live_at_peak, largest first, then one summed row

// Bounds the lists of an edgemem.analyze/1 document in place, and sends the
// layout's site names as layout.site_frames + layout.site_stacks.
void bound_analysis(nlohmann::json& analysis);

}  // namespace edgemem::page_bounds
