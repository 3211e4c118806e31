// Names come from the device or a damaged capture: a pool name can hold an
// escape sequence that rewrites the terminal the report is printed on, or
// bytes that are not UTF-8. Each table keeps its names in this printable form.
#pragma once

#include <string>
#include <string_view>

namespace edgemem {

// True if `text` holds no control character (C0, DEL, C1, bidirectional
// formatting) and is valid UTF-8.
bool is_printable_name(std::string_view text);
// Each control character's bytes and each byte that is not part of valid
// UTF-8 as \xNN (two upper-case hex digits); everything else as it is.
std::string printable_name(std::string_view text);

}  // namespace edgemem
