// How a name with spaces fits in one `key=value` token of the [MEM] text
// log (docs/formats/textlog.md, "Escaping"): a call stack's frames carry
// spaces ("main (app.c:12)"), and a space ends the token.
#pragma once

#include <string>
#include <string_view>

namespace edgemem {

// The value of a hexadecimal digit of either case; 16 for any other character.
inline unsigned hex_digit(char c) {
  if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
  unsigned lower = static_cast<unsigned>(c | 0x20);
  return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : 16;
}

// Space, tab, '%', '=', control characters and DEL become %XX (two upper-case
// hex digits); every other byte is kept, so a name without them reads as before.
std::string textlog_escape(std::string_view text);
// The reverse: %XX with two hex digits becomes that byte; any other '%' is kept
// as it is, so logs written before escaping existed read unchanged.
std::string textlog_unescape(std::string_view text);

}  // namespace edgemem
