// The HTML report page with uPlot and the page script inlined, split where the
// analysis JSON goes. Generated at build time by web/inline.js (CMakeLists.txt).
#pragma once

#include <string_view>

namespace edgemem::html_template {

extern const std::string_view before_data;
extern const std::string_view after_data;

}  // namespace edgemem::html_template
