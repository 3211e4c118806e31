// Numbers written and read the one way in every command: thousands
// separators and a unit on every byte count, KiB/MiB beside large ones, hex
// addresses, ratios as percent in text; sizes typed as 64K, 1M, 0x10000 or
// plain decimal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace edgemem::units {

std::string grouped(uint64_t n);           // 1,081,344
// "inference 12", or "inference 12 of boot 2" in a trace where the device
// restarted (each boot numbers its inferences anew).
std::string inference_of_boot(uint64_t inference, uint64_t boot, bool restarted);
// The longest start of UTF-8 `text` of at most `columns` characters, none
// cut in two (a terminal line is cut to its width in characters, not bytes).
std::string_view fit_columns(std::string_view text, size_t columns);
// A count and its noun, singular for 1: counted(1, "byte", "bytes") is "1 byte", counted(4096, ...) "4,096 bytes".
std::string counted(uint64_t n, std::string_view one, std::string_view many);
// A real number with `places` decimals, its whole part grouped as grouped()
// does ("8,588.0"); a sign only where fmt's spec gives one ("+" forced).
std::string decimal(double v, int places, bool plus = false);
// A number already written ("-6000.25", "+7600.0"), its first run of
// digits grouped.
std::string group_digits(const std::string& text);
std::string bytes(uint64_t n);             // 1,081,344 B
std::string bytes_human(uint64_t n);       // 1,081,344 B (1.03 MiB); no suffix below 10 KiB
std::string signed_bytes(int64_t n);       // +1,024 B, -8 B, 0 B
std::string address(uint64_t a);           // 0x08000000
// A percentage with one decimal, or more where one would put it on an edge
// it is not on: 99.96 read "100.0" (no margin left), 0.04 "0.0", -0.01 "-0.0".
std::string percent_value(double percent);  // 12.3 -> "12.3"
std::string percent(double fraction);      // 0.123 -> 12.3 %
double fraction(uint64_t part, uint64_t whole);  // part / whole, 0 when whole is 0

// A size option (--arena-size, --declared, --ram, --flash) or budget value:
// decimal, 0x hex, or a K/M/G suffix (1024-based, optional "iB").
// Refuses zero, negatives, fractions, overflow and kB/MB/GB (1000-based in
// SI, 1024-based to many tools); `error` says what was expected.
std::optional<uint64_t> parse_size(std::string_view text, std::string& error);

}  // namespace edgemem::units
