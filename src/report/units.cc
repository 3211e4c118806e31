#include "report/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace edgemem::units {

std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string inference_of_boot(uint64_t inference, uint64_t boot, bool restarted) {
  return restarted ? fmt::format("inference {} of boot {}", grouped(inference), grouped(boot))
                   : fmt::format("inference {}", grouped(inference));
}

std::string_view fit_columns(std::string_view text, size_t columns) {
  size_t characters = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (characters++ == columns) return text.substr(0, i);
  }
  return text;
}

std::string counted(uint64_t n, std::string_view one, std::string_view many) {
  return grouped(n) + ' ' + std::string(n == 1 ? one : many);
}

std::string group_digits(const std::string& text) {
  const size_t start = text.find_first_of("0123456789");
  if (start == std::string::npos) return text;  // inf, nan
  const size_t end = std::min(text.find_first_not_of("0123456789", start), text.size());
  std::string out(text, 0, start);
  for (size_t i = start; i < end; ++i) {
    if (i > start && (end - i) % 3 == 0) out += ',';
    out += text[i];
  }
  return out.append(text, end, std::string::npos);
}

std::string decimal(double v, int places, bool plus) {
  return group_digits(plus ? fmt::format("{:+.{}f}", v, places) : fmt::format("{:.{}f}", v, places));
}

std::string bytes(uint64_t n) { return grouped(n) + " B"; }

std::string bytes_human(uint64_t n) {
  constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  auto d = static_cast<double>(n);
  if (n >= kGiB) return fmt::format("{} ({:.2f} GiB)", bytes(n), d / static_cast<double>(kGiB));
  if (n >= kMiB) return fmt::format("{} ({:.2f} MiB)", bytes(n), d / static_cast<double>(kMiB));
  if (n >= 10 * kKiB) return fmt::format("{} ({:.1f} KiB)", bytes(n), d / static_cast<double>(kKiB));
  return bytes(n);
}

std::string signed_bytes(int64_t n) {
  if (n == 0) return "0 B";
  uint64_t magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  return fmt::format("{}{}", n < 0 ? '-' : '+', bytes(magnitude));
}

std::string address(uint64_t a) { return fmt::format("0x{:08x}", a); }

std::string percent_value(double v) {
  auto side = [](double x, double edge) { return (x > edge) - (x < edge); };
  for (int places = 1; places <= 9; ++places) {
    std::string s = fmt::format("{:.{}f}", v, places);
    const double shown = std::strtod(s.c_str(), nullptr);
    if (side(shown, 0) == side(v, 0) && side(shown, 100) == side(v, 100)) return s;
  }
  return v > 100 ? "> 100.0" : v < 0 ? "< 0.0" : v < 50 ? "> 0.0" : "< 100.0";
}

std::string percent(double fraction) { return percent_value(fraction * 100.0) + " %"; }

double fraction(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::optional<uint64_t> parse_size(std::string_view text, std::string& error) {
  auto expected = [&](std::string_view why) {
    error = fmt::format("'{}' is not a size: {} (expected bytes > 0 as 65536, 0x10000, 64K or 1M)", text, why);
    return std::nullopt;
  };
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return expected("empty");
  if (s.front() == '-') return expected("negative");
  if (s.front() == '+') s.remove_prefix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec == std::errc::result_out_of_range) return expected("too large");
  if (ec != std::errc() || end == s.data()) return expected("no number");
  std::string unit(end, s.data() + s.size());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // 16kB is 16,000 B in SI and 16,384 B to many tools: read the one way
  // where the other was meant, a budget limit passed 384 B unsaid.
  const bool ambiguous = unit.size() == 2 && unit.back() == 'b' && unit.front() != 'b';
  if (unit.size() > 1 && unit.back() == 'b') unit.pop_back();  // 64KiB
  if (unit.size() > 1 && unit.back() == 'i') unit.pop_back();
  uint64_t scale = 1, si = 1;
  if (unit == "k") scale = 1024, si = 1000;
  else if (unit == "m") scale = 1024 * 1024, si = 1000 * 1000;
  else if (unit == "g") scale = 1024ull * 1024 * 1024, si = 1000ull * 1000 * 1000;
  else if (!unit.empty() && unit != "b") return expected(unit.front() == '.' ? "not a whole number" : "unknown unit");
  if (base == 16 && scale != 1) return expected("a hex size takes no unit");
  if (value > std::numeric_limits<uint64_t>::max() / scale) return expected("too large");
  if (value == 0) return expected("zero");
  if (ambiguous) {
    const char prefix = static_cast<char>(std::toupper(static_cast<unsigned char>(unit.front())));
    error = fmt::format("'{}' is ambiguous: {} B in SI, {} B as many tools count; write {}{} or {}{}iB for {}, or {}",
                        text, grouped(value * si), grouped(value * scale), value, prefix, value, prefix,
                        grouped(value * scale), value * si);
    return std::nullopt;
  }
  return value * scale;
}

}  // namespace edgemem::units
