// Names the user types -- subcommands, MCUs, formats, targets, budget keys
// and regions -- match without regard to case, and a near miss is answered
// with the name that was probably meant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edgemem::names {

// The listed name equal to `typed` ignoring case, if any.
std::optional<std::string> match(std::string_view typed, const std::vector<std::string>& known);

// The listed name closest to `typed` (edit distance, ignoring case) if it is
// close enough to be a typo; empty otherwise.
std::string nearest(std::string_view typed, const std::vector<std::string>& known);

// "unknown KIND 'typed' (did you mean X?; expected a, b or c)"; the list is
// left out when it is long.
std::string unknown(std::string_view kind, std::string_view typed, const std::vector<std::string>& known);

}  // namespace edgemem::names
