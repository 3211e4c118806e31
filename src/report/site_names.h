// Short names for call sites in text output. A site is its frames joined by
// ';', outermost first; a list of sites is shown by their innermost frames,
// with as many callers as it takes to tell two rows apart.
#pragma once

#include <string_view>
#include <vector>

namespace edgemem {

// The innermost frame of a site.
std::string_view innermost_frame(std::string_view site);

// For each site, its shortest tail of whole frames (at least the innermost)
// that no other listed site ends with, or the whole site when none is.
std::vector<std::string_view> distinct_tails(const std::vector<std::string_view>& sites);

}  // namespace edgemem
