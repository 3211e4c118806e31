#include "printable_name.h"

#include <cstdint>

namespace edgemem {

namespace {

// Length of the valid UTF-8 sequence at s[i] that is not a control
// character, or 0 (RFC 3629: no overlong forms, surrogates or code points
// past U+10FFFF).
size_t printable_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b = byte(i);
  if (b < 0x80) return b >= 0x20 && b != 0x7F ? 1 : 0;
  size_t n = 0;
  uint8_t low = 0x80, high = 0xBF;  // the second byte's range
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, low = b == 0xE0 ? 0xA0 : 0x80, high = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, low = b == 0xF0 ? 0x90 : 0x80, high = b == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (i + n > s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  if (b == 0xC2 && byte(i + 1) <= 0x9F) return 0;  // U+0080..U+009F: C1 controls
  // Bidirectional controls reorder what follows them on a terminal or a
  // page ("Trojan Source"): a site ending in U+202E printed the report's
  // next words backwards. U+061C, U+200E-F, U+202A-E, U+2066-9.
  if (b == 0xD8 && byte(i + 1) == 0x9C) return 0;
  if (b == 0xE2 && byte(i + 1) == 0x80 &&
      (byte(i + 2) == 0x8E || byte(i + 2) == 0x8F || (byte(i + 2) >= 0xAA && byte(i + 2) <= 0xAE)))
    return 0;
  if (b == 0xE2 && byte(i + 1) == 0x81 && byte(i + 2) >= 0xA6 && byte(i + 2) <= 0xA9) return 0;
  return n;
}

}  // namespace

bool is_printable_name(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b >= 0x20 && b < 0x7F) {  // the common case
      ++i;
      continue;
    }
    const size_t n = printable_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string printable_name(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (const size_t n = printable_length(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    const auto b = static_cast<uint8_t>(text[i++]);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace edgemem
