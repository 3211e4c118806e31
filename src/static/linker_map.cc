#include "static/linker_map.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace edgemem {

namespace {

uint64_t used_in(const LinkerMap& map, RegionKind kind) {
  uint64_t sum = 0;
  for (const MapRegion& r : map.regions)
    if (r.kind == kind && r.within.empty()) sum += r.used;  // a position inside another region counts there
  return sum;
}

// Compares edgemem's sums with the totals armlink and IAR print, under the
// file's own labels; GNU ld states none.
void check_stated_totals(LinkerMap& map) {
  const MapTotals& t = map.totals;
  auto check = [&](const std::string& label, uint64_t computed) {
    auto it = map.stated.find(label);
    if (it != map.stated.end() && it->second != computed) map.self_check.push_back({label, it->second, computed});
  };
  if (map.toolchain == "armlink") {
    check("Code", t.code);
    check("RO Data", t.ro_data);
    check("RW Data", t.rw_data);
    check("ZI Data", t.zi_data);
    // Compressed RW counts as armlink stores it; the gaps between execution regions armlink leaves out.
    check("Total ROM Size", used_in(map, RegionKind::flash) - std::min(map.load_gaps, used_in(map, RegionKind::flash)));
  } else if (map.toolchain == "IAR ILINK") {
    check("readonly code", t.code);
    check("readonly data", t.ro_data);
    check("readwrite data", t.rw_data + t.zi_data);
  }
}

}  // namespace

std::optional<LinkerMap> parse_linker_map(std::string_view text, std::string& error) {
  std::string_view head = text.substr(0, 4096);
  // XLINK (EW430, EW8051, EWAVR, EWARM before 5) lists segments, not
  // sections: a different format, refused by name rather than misread.
  if (size_t at = head.find("IAR Universal Linker"); at != std::string_view::npos) {
    size_t line = 1 + static_cast<size_t>(std::count(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    error = fmt::format("line {}: an IAR XLINK map (\"IAR Universal Linker\"): edgemem reads IAR ILINK, GNU ld and "
                        "armlink maps, not XLINK's segment lists", line);
    return std::nullopt;
  }
  // LLVM's lld (`ld.lld -Map`, Rust's embedded targets) writes one table
  // headed "VMA LMA Size Align Out In Symbol" and no MEMORY regions.
  if (const std::vector<std::string_view> first = map_words(head.substr(0, head.find('\n')));
      first.size() == 7 && first[0] == "VMA" && first[1] == "LMA" && first[6] == "Symbol") {
    error = "line 1: an LLVM lld map (\"VMA LMA Size Align Out In Symbol\"): edgemem reads GNU ld, armlink and IAR "
            "maps; read the linked image instead: edgemem map --elf FW.elf";
    return std::nullopt;
  }
  // TI's linkers (armcl, tiarmclang, C2000, MSP430) write their own layout:
  // "TI ARM Linker Unix v20.2.7" in a banner, "MEMORY CONFIGURATION" in capitals.
  for (std::string_view banner : {"TI ARM Linker", "TI ARM Clang Linker", "TMS320C2000 Linker", "MSP430 Linker"})
    if (size_t at = head.find(banner); at != std::string_view::npos) {
      size_t line = 1 + static_cast<size_t>(std::count(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
      error = fmt::format("line {}: a TI linker map (\"{}\"): edgemem reads GNU ld, armlink and IAR ILINK maps; read "
                          "the linked image instead: edgemem map --elf FW.elf",
                          line, banner);
      return std::nullopt;
    }
  std::optional<LinkerMap> map;
  if (head.find("IAR ELF Linker") != std::string_view::npos) map = parse_iar_map(text, error);
  else if (head.find("Tool: armlink") != std::string_view::npos ||
           text.find("Memory Map of the image") != std::string_view::npos ||
           text.find("Image Symbol Table") != std::string_view::npos)
    map = parse_armlink_map(text, error);
  else map = parse_gnu_map(text, error);
  if (map) check_stated_totals(*map);
  return map;
}

uint64_t MapRegion::placed_bytes() const {
  uint64_t sum = 0;
  for (const PlacedSection& p : placed) sum += p.size;
  return sum;
}

uint64_t overflow_bytes(const MapRegion& r) {
  return !r.position_only && r.used > r.length ? r.used - r.length : 0;
}

bool overflow_unsure(const MapRegion& r) {
  return overflow_bytes(r) && r.used - r.unsure_bytes <= r.length;
}

std::string_view to_string(SectionKind kind) {
  switch (kind) {
    case SectionKind::code: return "code";
    case SectionKind::rodata: return "rodata";
    case SectionKind::data: return "data";
    case SectionKind::bss: return "bss";
    case SectionKind::debug: return "debug";
    case SectionKind::other: return "other";
  }
  return "?";
}

std::string_view to_string(RegionKind kind) {
  switch (kind) {
    case RegionKind::flash: return "flash";
    case RegionKind::ram: return "ram";
    case RegionKind::other: return "other";
  }
  return "?";
}

std::string_view symbol_role(const MapSymbol& s, SectionKind kind) {
  // A function named like an arena, stack or heap (sys_heap_alloc) is code, not memory.
  if (kind == SectionKind::code) return "code";
  std::string lower = s.name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // An arena is memory the interpreter writes: read-only data named after
  // one is TFLite Micro's own strings (..ResizeBufferEPhjj.str1.4), and its
  // vtables, typeinfo and guards are the compiler's, in .rodata or, in a
  // position-independent build, writable .data.rel.ro.
  auto compilers = [&] {
    for (std::string_view made : {"_ZTV", "_ZTI", "_ZTS", "_ZGV"})
      if (s.name.find(made) != std::string::npos) return true;
    const size_t str = lower.find(".str");
    return lower.find("rel.ro") != std::string::npos ||
           (str != std::string::npos && str + 4 < lower.size() && std::isdigit(static_cast<unsigned char>(lower[str + 4])));
  };
  // An allocator's arena (heap_arena, malloc_arena) is a heap, not the
  // interpreter's; a variable named after one (tensor_arena_used,
  // arena_size, g_arena_ptr) is data about it. A small array is still the
  // arena: a 32 B one is declared too small, not missing.
  const bool heap = lower.find("heap") != std::string::npos || lower.find("malloc") != std::string::npos;
  auto about_one = [&] {
    const size_t at = lower.rfind("arena");
    for (std::string_view word : {"used", "size", "len", "count", "ptr", "pointer", "head", "top", "end", "offset",
                                  "index", "idx", "bytes", "mutex", "lock"})
      if (lower.find(word, at) != std::string::npos) return true;
    return false;
  };
  if (lower.find("arena") != std::string::npos && !heap && !about_one() && kind != SectionKind::rodata &&
      !compilers())
    return "tensor arena";
  if (kind == SectionKind::rodata || kind == SectionKind::data || kind == SectionKind::other)
    for (std::string_view w : {"model", "weight", "tflite", "_wt", "bias"})  // g_model, conv2_wt, fc1_bias
      if (lower.find(w) != std::string::npos) return "model weights";
  if (lower.find("stack") != std::string::npos) return "stack";
  if (lower.find("heap") != std::string::npos) return "heap";
  return "data";
}

SectionKind section_kind(const LinkerMap& map, const std::string& section) {
  for (const auto& s : map.sections)
    if (s.name == section) return s.kind;
  return SectionKind::other;
}

std::optional<std::pair<std::string, uint64_t>> reserved_stack(const LinkerMap& map) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  for (const MapSection& s : map.sections)
    if (s.kind == SectionKind::bss && lower(s.name).find("stack") != std::string::npos &&
        lower(s.name).find("heap") == std::string::npos && s.size)
      return std::make_pair(s.name, s.size);
  // The startup code's own reservation before any other stack-named array:
  // an RTOS's task stacks (task1_stack) are not the main stack.
  for (const MapSymbol& s : map.symbols)
    if (s.name == "Stack_Mem" && s.size) return std::make_pair(s.name, s.size);
  if (map.startup_stack_area) return std::make_pair(std::string("STACK"), map.startup_stack_area);
  if (map.script_min_stack) return std::make_pair(std::string("_Min_Stack_Size"), map.script_min_stack);
  const MapSymbol* best = largest_symbol_with_role(map, "stack");
  if (best && best->size) return std::make_pair(best->name, best->size);
  return std::nullopt;
}

const MapSymbol* largest_symbol_with_role(const LinkerMap& map, std::string_view role) {
  // Of tensor arenas, one that says so (tensor_arena, g_tensor_arena) before
  // a larger one named only an arena (an RTOS's mem_arena).
  auto says_tensor = [&](const MapSymbol& s) {
    if (role != "tensor arena") return false;
    std::string lower = s.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return lower.find("tensor") != std::string::npos;
  };
  const MapSymbol* best = nullptr;
  bool best_says = false;
  for (const MapSymbol& s : map.symbols) {
    if (symbol_role(s, section_kind(map, s.section)) != role) continue;
    const bool says = says_tensor(s);
    if (!best || says > best_says || (says == best_says && s.size > best->size)) {
      best = &s;
      best_says = says;
    }
  }
  return best;
}

namespace {
bool number(std::string_view word, int base, uint64_t& out) {
  if (word.find('\'') == std::string_view::npos) {
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out, base);
    return !word.empty() && ec == std::errc() && end == word.data() + word.size();
  }
  std::string digits;
  for (char c : word)
    if (c != '\'') digits += c;
  if (digits.empty()) return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out, base);
  return ec == std::errc() && end == digits.data() + digits.size();
}
}  // namespace

bool map_hex(std::string_view w, uint64_t& out) {
  if (w.size() < 3 || w[0] != '0' || (w[1] != 'x' && w[1] != 'X')) return false;
  return number(w.substr(2), 16, out);
}

bool map_decimal(std::string_view w, uint64_t& out) { return number(w, 10, out); }

std::vector<std::string_view> map_words(std::string_view line) {
  std::vector<std::string_view> out;
  map_words(line, out);
  return out;
}

void map_words(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
}

}  // namespace edgemem
