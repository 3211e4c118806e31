#include "non_trace_signatures.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace edgemem {
namespace {

constexpr std::string_view kCaptureAdvice =
    "run `edgemem analyze` on a trace captured from the running firmware (docs/device.md)";

uint32_t le32(std::span<const uint8_t> b, size_t at) {
  return uint32_t{b[at]} | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 | uint32_t{b[at + 3]} << 24;
}

std::string_view as_text(std::span<const uint8_t> head) {
  return {reinterpret_cast<const char*>(head.data()), head.size()};
}

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// The first `max` complete lines (a cut-off last line is left out).
std::vector<std::string_view> first_lines(std::string_view text, size_t max) {
  std::vector<std::string_view> lines;
  while (lines.size() < max) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    text.remove_prefix(nl + 1);
  }
  return lines;
}

bool all_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// ":LLAAAATT<data>CC": byte count, address, record type, data, checksum.
bool intel_hex_line(std::string_view line) {
  if (line.size() < 11 || line[0] != ':' || (line.size() - 1) % 2 != 0 || !all_hex(line.substr(1))) return false;
  unsigned count = static_cast<unsigned>(std::stoul(std::string(line.substr(1, 2)), nullptr, 16));
  return line.size() == 11 + 2 * count;
}

// "file.c:12:5:function<TAB>48<TAB>static" (gcc -fstack-usage).
bool stack_usage_line(std::string_view line) {
  size_t tab1 = line.find('\t');
  if (tab1 == std::string_view::npos || tab1 == 0 || !contains(line.substr(0, tab1), ":")) return false;
  size_t tab2 = line.find('\t', tab1 + 1);
  if (tab2 == std::string_view::npos) return false;
  std::string_view bytes = line.substr(tab1 + 1, tab2 - tab1 - 1);
  std::string_view qualifier = line.substr(tab2 + 1);
  return !bytes.empty() && std::all_of(bytes.begin(), bytes.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         (qualifier.starts_with("static") || qualifier.starts_with("dynamic"));
}

template <class Pred>
bool most_lines(const std::vector<std::string_view>& lines, Pred pred) {
  if (lines.empty()) return false;
  size_t good = static_cast<size_t>(std::count_if(lines.begin(), lines.end(), pred));
  return pred(lines.front()) && good * 10 >= lines.size() * 9;
}

std::optional<NotATrace> linker_map(std::string_view text) {
  auto map = [](std::string_view linker) {
    return NotATrace{fmt::format("{} linker map, not a trace", linker),
                     "for its regions, sections and symbols run `edgemem map {file}`"};
  };
  // GNU ld's first section ("Archive member included ...") can run for
  // megabytes before "Memory Configuration", so both ends are signatures.
  if (text.starts_with("Archive member included to satisfy reference") || contains(text, "\nMemory Configuration") ||
      contains(text, "\nLinker script and memory map"))
    return map("a GNU ld");
  if (contains(text, "Tool: armlink") || contains(text, "Memory Map of the image") ||
      contains(text, "Image Symbol Table"))
    return map("an armlink");
  if (contains(text, "IAR ELF Linker")) return map("an IAR");
  return std::nullopt;
}

}  // namespace

std::optional<NotATrace> recognise_non_trace(std::span<const uint8_t> head) {
  std::string_view text = as_text(head);
  if (text.starts_with("\x7f" "ELF"))
    return NotATrace{"an ELF file, not a trace", "for its sections and symbols run `edgemem map --elf {file}`"};
  // Compressions edgemem does not undo itself (gzip, xz and zstd it does).
  if (text.starts_with("BZh") && text.size() >= 10 && text.substr(4, 6) == "\x31\x41\x59\x26\x53\x59")
    return NotATrace{"bzip2-compressed (edgemem decompresses gzip, xz and zstd itself)",
                     "run `bzcat {file} | edgemem analyze -`"};
  if (text.starts_with("\x04\x22\x4d\x18"))
    return NotATrace{"lz4-compressed (edgemem decompresses gzip, xz and zstd itself)",
                     "run `lz4cat {file} | edgemem analyze -`"};
  if (head.size() >= 8 && text.substr(4, 4) == "TFL3")
    return NotATrace{"a TFLite model, not a trace", "for its tensor arena plan run `edgemem plan {file}`"};
  // ESP-IDF app/bootloader image header: magic E9, segment count, SPI flash
  // mode (QIO..DOUT, 0-5), flash size (high nibble) and frequency (low
  // nibble: 40, 26, 20 or 80 MHz).
  if (head.size() >= 24 && head[0] == 0xE9 && head[1] >= 1 && head[1] <= 16 && head[2] <= 5 && (head[3] >> 4) <= 7 &&
      ((head[3] & 0x0f) <= 2 || (head[3] & 0x0f) == 0x0f))
    return NotATrace{fmt::format("a firmware image (ESP app image, {} segments), not a trace", head[1]),
                     std::string(kCaptureAdvice)};
  // A raw Cortex-M image opens with its vector table: the initial stack
  // pointer (word-aligned, in the SRAM region) and an odd (Thumb) reset
  // handler in the code region.
  if (head.size() >= 16) {
    uint32_t sp = le32(head, 0), reset = le32(head, 4), nmi = le32(head, 8), hard_fault = le32(head, 12);
    auto handler = [](uint32_t v) { return v == 0 || ((v & 1) && v < 0x20000000u); };
    if (sp >= 0x20000000u && sp < 0x40000000u && sp % 4 == 0 && (reset & 1) && reset < 0x20000000u &&
        handler(nmi) && handler(hard_fault))
      return NotATrace{fmt::format("a firmware image (Cortex-M vector table: SP 0x{:08x}, reset 0x{:08x}), not a trace",
                                   sp, reset),
                       std::string(kCaptureAdvice)};
  }
  auto lines = first_lines(text, 64);
  // heaptrack's own recording: "v VERSION FILE_VERSION" (hex), then "X" and
  // the command line it recorded.
  if (lines.size() >= 2 && lines[0].starts_with("v ") && lines[1].starts_with("X ") &&
      lines[0].find_first_not_of("0123456789abcdef ", 2) == std::string_view::npos)
    return NotATrace{"a heaptrack recording, not a trace",
                     "read it with `heaptrack_print {file}`, or record the program with `edgemem record -- PROG`", true};
  if (most_lines(lines, intel_hex_line))
    return NotATrace{"a firmware image (Intel HEX), not a trace", std::string(kCaptureAdvice)};
  if (auto map = linker_map(text)) return map;
  if (contains(text, "Static Call Graph for image"))
    return NotATrace{"armlink's static call graph (Keil .htm), not a trace",
                     "for worst-case stack depth run `edgemem stack {file}`"};
  if (most_lines(lines, stack_usage_line))
    return NotATrace{"a GCC stack usage report (.su), not a trace",
                     "for worst-case stack depth run `edgemem stack {file}`"};
  return std::nullopt;
}

}  // namespace edgemem
