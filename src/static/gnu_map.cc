#include "static/linker_map.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

namespace edgemem {
namespace {

// Whether a lower-case part occurs in a section name, in any case
// (TF-M's .TFM_BSS, .ER_TFM_CODE).
bool has(std::string_view name, std::initializer_list<std::string_view> parts) {
  auto same = [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; };
  for (std::string_view p : parts)
    if (std::search(name.begin(), name.end(), p.begin(), p.end(), same) != name.end()) return true;
  return false;
}

// The largest alignment gap between a region's last section and one that
// ld placed past the region's end after it overflowed.
constexpr uint64_t kSpillAlignment = 4096;

// Input sections of one function or object each (-ffunction-sections,
// -fdata-sections): `.bss.tensor_arena` holds tensor_arena and nothing else.
constexpr std::string_view kOneSymbolPrefixes[] = {".text.", ".rodata.", ".data.", ".bss.", ".sbss.", ".sdata.", ".noinit."};

// Whether an input section holds one function or object. GCC's own groups
// (`.text.startup` for main and constructors at -O2, `.text.unlikely`,
// `.text.hot`, `.text.exit`; `.data.rel.ro`, `.data.rel.ro.local`,
// `.data.rel.local` in PIC and C++ builds) hold as many as the object has.
bool one_symbol_section(std::string_view name) {
  for (std::string_view prefix : kOneSymbolPrefixes)
    if (name.starts_with(prefix) && name.size() > prefix.size()) {
      std::string_view rest = name.substr(prefix.size());
      if (prefix == ".text.") return rest != "startup" && rest != "unlikely" && rest != "hot" && rest != "exit";
      if (prefix == ".data.")
        for (std::string_view group : {"rel.ro.local", "rel.ro", "rel.local", "rel"})
          if (rest == group) return false;
      return true;
    }
  return false;
}

// ld prints no section flags, so the kind comes from where the section
// runs: a writable region holds data (copied from flash when its load
// address differs, or loaded by a ROM bootloader as on ESP32), an
// executable one code, a read-only one constants. Names decide only what
// regions cannot: debug sections, and NOLOAD ones (bss, noinit, .heap).
SectionKind classify(std::string_view name, bool loaded_elsewhere, uint64_t address, const MapRegion* region) {
  if (name.starts_with(".debug") || name.starts_with(".stab") || name == ".comment" ||
      name.starts_with(".ARM.attributes") || name.starts_with(".riscv.attributes") ||
      name.starts_with(".xt.") || name == ".xtensa.info" || name.starts_with(".gnu.attributes") ||
      (address == 0 && name.starts_with(".note")))
    return SectionKind::debug;
  // ESP-IDF's .rtc_reserved is NOLOAD too (its sections.ld): RTC memory
  // the bootloader and timers keep across sleep, no bytes of the image.
  if (has(name, {"bss", "noinit", "rtc_reserved"}) || (name.starts_with(".") && has(name, {"heap", "stack"})))
    return SectionKind::bss;
  // ESP-IDF's .flash_rodata_dummy and .dram0.dummy only reserve addresses
  // the cache maps elsewhere: no bytes of the image.
  if (has(name, {"dummy"})) return SectionKind::other;
  if (has(name, {"_array"})) return SectionKind::data;  // .init_array & co. are writable (WA) in GCC's ELF
  if (has(name, {"rodata", "const", "exidx", "extab"})) return SectionKind::rodata;
  if (region && !region->attributes.empty()) {  // MEMORY lines may omit (rwx)
    const std::string& a = region->attributes;
    bool writable = a.find('w') != std::string::npos && a.find("!w") == std::string::npos;
    bool executable = a.find('x') != std::string::npos && a.find("!x") == std::string::npos;
    if (!writable) return executable ? SectionKind::code : SectionKind::rodata;
    // An rwx region (ESP32's IRAM, many a RAM) holds code and data: there
    // the name decides.
    return executable && has(name, {"text", "vector", "literal"}) ? SectionKind::code : SectionKind::data;
  }
  if (loaded_elsewhere) return SectionKind::data;
  if (has(name, {"text", "vector"})) return SectionKind::code;
  return SectionKind::other;
}

const MapRegion* sized_region_at(const LinkerMap& map, uint64_t at) {
  const MapRegion* found = nullptr;
  for (const MapRegion& r : map.regions)
    if (r.length && at >= r.origin && at - r.origin < r.length) found = &r;
  return found;
}

// A region without attributes within the addresses of one that has them is
// another name for them (Zephyr's devicetree memory regions, SRAM1 = RAM):
// ld assigns it no section, and its bytes are not the chip's twice. (One
// that reaches past them holds bytes of its own.)
std::vector<bool> region_aliases(const LinkerMap& map) {
  auto inside = [](const MapRegion& a, const MapRegion& b) {  // a lies within b
    return a.length && b.length && a.origin >= b.origin && a.origin + a.length <= b.origin + b.length;
  };
  std::vector<bool> alias(map.regions.size(), false);
  for (size_t i = 0; i < map.regions.size(); ++i)
    for (const MapRegion& other : map.regions)
      if (map.regions[i].attributes.empty() && !other.attributes.empty() && inside(map.regions[i], other)) alias[i] = true;
  return alias;
}

// Input sections whose bytes are the program's (initialised data, code
// run from RAM), not a reservation.
bool contents_input(std::string_view name) {
  if (has(name, {"bss", "noinit", "no_init", "uninit"})) return false;
  for (std::string_view prefix : {".data", ".sdata", ".tdata", ".text", ".rodata", ".srodata", ".ramfunc",
                                   ".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors"})
    if (name.size() >= prefix.size() && has(name.substr(0, prefix.size()), {prefix}))  // starts with, any case: .RamFunc
      return true;
  return false;
}

// What an output section's lines show it holds: any input bytes or data
// the script writes, and whether they are initialised data or code.
struct SectionInput {
  bool any = false, contents = false;  // any input line (size 0 too: ld keeps its contents flag), or data
  bool written = false;                // bytes the script writes (LONG()): an image, unless the section is NOLOAD
  bool unnamed = false;  // input bytes named neither as data or code nor .bss (a startup's .stack, a .no_init variable)
};

// Where a section lies in the region that holds its bytes: its load
// address when the map states one apart from its run address.
uint64_t image_address(const MapSection& s) {
  return s.load_address && *s.load_address != s.address ? *s.load_address : s.address;
}

// Whether ld may have set section j's load address from an earlier
// section's: without AT or AT>, a section keeps the run-to-load offset of
// the last section placed in its run region (a NOLOAD .bss after .data has
// .data's offset whatever .data holds). Such a load address is no evidence
// of where a region's load pointer stood.
bool offset_inherited(const LinkerMap& map, size_t j) {
  const MapSection& f = map.sections[j];
  const MapRegion* runs_in = sized_region_at(map, f.address);
  for (size_t k = j; runs_in && k-- > 0;) {
    const MapSection& before = map.sections[k];
    if (before.kind == SectionKind::debug || sized_region_at(map, before.address) != runs_in) continue;
    return image_address(before) - before.address == *f.load_address - f.address;
  }
  return false;
}

// Which sections loaded elsewhere have a load image (LoadImage). A section
// that only assignments fill (no input line at all, no LONG(): WCH's
// .dalign aligning .data in RAM) has none: ld makes it NOBITS. ld moves a
// region's pointer past a load image only when there is one, so the next
// section placed from that pointer (run there, or loaded there by AT>
// REGION: not a load address kept from the section before) at or past this
// one's end says it has one; inside it, it may have none (NOLOAD) or one
// (ld does not move the pointer past an AT(address) section either):
// unsure. Without a next section, input sections of initialised data or
// code say it has one; bytes the script writes (LONG()) do not, as a NOLOAD
// section may hold them too. A section named zero-initialised has none,
// unless such bytes or input not named as zero make it unsure.
void settle_load_images(LinkerMap& map, const std::vector<SectionInput>& input) {
  for (size_t i = 0; i < map.sections.size(); ++i) {
    MapSection& s = map.sections[i];
    if (!s.load_address || *s.load_address == s.address || !s.size) continue;
    // All of it fill the assignments made, no input line (not even one of
    // size 0) and no data: ld makes such a section NOBITS.
    const bool only_assignments = !input[i].any && s.fill >= s.size;
    // A name that says zero-initialised is overruled by input of data or
    // code (`.stack_guard_table : { *(.data.x) } AT> FLASH` has an image),
    // and made unsure by bytes the script writes or input not named as
    // zero-initialised (a `.stack` that writes a LONG() canary, or holds a
    // startup file's `.section .stack,"aw"`, is loaded unless it is NOLOAD).
    const SectionInput& in = input[i];
    if ((s.kind == SectionKind::bss && !in.contents && !in.written && !in.unnamed) || only_assignments) {
      s.load_image = LoadImage::no;
      // No bytes to copy: zeroed or left as it was at start-up.
      if (s.kind == SectionKind::data) s.kind = SectionKind::bss;
      continue;
    }
    const uint64_t lma = *s.load_address, end = lma + s.size;
    s.load_image = input[i].contents ? LoadImage::yes : LoadImage::unsure;
    const MapRegion* loaded_in = sized_region_at(map, lma);
    for (size_t j = i + 1; loaded_in && j < map.sections.size(); ++j) {
      const MapSection& next = map.sections[j];
      const uint64_t at = image_address(next);
      if (next.kind == SectionKind::debug || sized_region_at(map, at) != loaded_in || at < lma) continue;
      if (next.load_address && *next.load_address != next.address && offset_inherited(map, j)) continue;
      // Inside: NOLOAD, or an AT(address) section with contents, past which
      // ld does not move the pointer either.
      s.load_image = at >= end ? LoadImage::yes : LoadImage::unsure;
      break;
    }
  }
}

}  // namespace

std::optional<LinkerMap> parse_gnu_map(std::string_view text, std::string& error) {
  enum class Part { preamble, common, discarded, memory, script } part = Part::preamble;
  LinkerMap map;
  // hash(section, object) -> index into map.contributions, in link order:
  // no string is allocated for a lookup, and a collision is told apart by
  // comparing the names.
  // Open addressing over a power-of-two table of (hash, index + 1) pairs:
  // no allocation per entry (node maps spent a quarter of the parse in
  // malloc and free on a 40 MB map).
  std::vector<std::pair<uint64_t, size_t>> contrib(64);
  size_t contrib_used = 0;
  // Reserve rather than grow: reallocating tens of MB of symbols cost a third
  // of the parse in copies and page faults. Untouched capacity costs no RAM.
  map.symbols.reserve(text.size() / 64);
  map.contributions.reserve(text.size() / 128);
  std::vector<std::string_view> w;
  std::string pending_output, pending_input;  // names wrapped onto the next line
  MapSection* current = nullptr;
  std::string input_object, input_name;
  uint64_t input_start = 0, input_end = 0;
  size_t symbols_before_input = 0;
  // The contribution the current output section's last input section went
  // to (index + 1; 0: none yet).
  size_t last_contribution = 0;
  bool saw_memory = false, saw_script = false, saw_output = false, saw_discarded = false;
  // "Allocating common symbols": each COMMON symbol's own size. In the
  // COMMON input section the next symbol begins only after alignment
  // (c_odd[5]: 8 B to the next one), so the span to it is no size.
  std::map<std::string, uint64_t, std::less<>> common_size;
  std::string common_pending;  // a long name: its size follows on the next line
  // Per output section: what its input lines show it holds.
  std::vector<SectionInput> input;

  // Aliases at one address (printf and iprintf, __adddf3 and
  // __aeabi_dadd) all end where the next symbol begins: only the last of
  // them read its size, the others 0 B.
  auto close_symbol = [&](uint64_t end) {
    if (map.symbols.empty() || end <= map.symbols.back().address) return;
    const uint64_t at = map.symbols.back().address;
    for (size_t i = map.symbols.size(); i-- > symbols_before_input && map.symbols[i].address == at &&
                                        map.symbols[i].size == 0;)
      map.symbols[i].size = end - at;
  };
  // ld lists global symbols only; a static object built with -ffunction-
  // or -fdata-sections is still named by its input section (.bss.tensor_arena).
  auto close_input = [&]() {
    const size_t listed = map.symbols.size() - symbols_before_input;
    if (current && !input_name.empty() && listed &&
        !(listed == 1 && map.symbols.back().address == input_start && one_symbol_section(input_name)) &&
        input_name != "COMMON") {  // COMMON holds globals only, each listed
      for (size_t i = symbols_before_input; i < map.symbols.size(); ++i) map.symbols[i].size_is_upper_bound = true;
    }
    if (current && input_name == "COMMON")
      for (size_t i = symbols_before_input; i < map.symbols.size(); ++i)
        if (auto it = common_size.find(map.symbols[i].name); it != common_size.end() && it->second <= map.symbols[i].size)
          map.symbols[i].size = it->second;
    // ld's own veneers (`.text.__stub  ... linker stubs`) are no function
    // named "__stub": nm names them `fn_veneer`, several to an input section.
    if (!current || input_name.empty() || listed || input_end <= input_start || input_object == "linker stubs") {
      input_name.clear();
      return;
    }
    bool named = false;
    for (std::string_view prefix : kOneSymbolPrefixes)
      if (input_name.starts_with(prefix) && input_name.size() > prefix.size()) {
        map.symbols.push_back({input_name.substr(prefix.size()), current->name, input_object, input_start,
                               input_end - input_start});
        named = true;
        break;
      }
    // A static arena placed by a section attribute of its own
    // (`.tensor_arena`, `.ccm.tensor_arena`) lists no symbol: named after
    // the section, at most its size (it may hold more), so fit and check
    // see an arena declared there and ask for the ELF, not count it twice.
    // Not code or constants named after a function (ESP32's
    // `.literal._ZN6tflite14MicroAllocator...InArena...`).
    const std::string_view last = std::string_view(input_name).substr(input_name.rfind('.') + 1);
    if (std::string lower(last); !named && input_name.starts_with(".") && !last.starts_with("_Z")) {
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      bool code = false;
      for (std::string_view kind : {".text", ".literal", ".rodata", ".iram", ".flash.text", ".ARM.ex"})
        code |= input_name.starts_with(kind);
      if (!code && lower.find("arena") != std::string::npos) {
        map.symbols.push_back({std::string(last), current->name, input_object, input_start, input_end - input_start});
        map.symbols.back().size_is_upper_bound = true;
      }
    }
    input_name.clear();
  };
  // An input section ends where the next one (or *fill*, or its output
  // section) begins. Newer ld lists a merged input section (SHF_MERGE:
  // .rodata.*.str1.1, .cst8) at its size before merging, at the address of
  // the next one, when its bytes went into the merged block: it holds none.
  auto trim_previous = [&](uint64_t at) {
    if (!last_contribution || at < input_start || at >= input_end) return;
    map.contributions[last_contribution - 1].size -= input_end - at;
    input_end = at;
  };
  auto contribution = [&](std::string_view section, std::string_view object) -> MapContribution& {
    uint64_t key = std::hash<std::string_view>{}(section) * 0x9e3779b97f4a7c15ull ^ std::hash<std::string_view>{}(object);
    if (2 * (contrib_used + 1) > contrib.size()) {  // grow at half full
      std::vector<std::pair<uint64_t, size_t>> bigger(contrib.size() * 2);
      for (const auto& e : contrib)
        if (e.second) {
          size_t i = e.first & (bigger.size() - 1);
          while (bigger[i].second) i = (i + 1) & (bigger.size() - 1);
          bigger[i] = e;
        }
      contrib.swap(bigger);
    }
    size_t slot = key & (contrib.size() - 1);
    for (; contrib[slot].second; slot = (slot + 1) & (contrib.size() - 1)) {
      const MapContribution& c = map.contributions[contrib[slot].second - 1];
      if (contrib[slot].first == key && c.object == object && c.section == section) break;
    }
    if (!contrib[slot].second) {
      map.contributions.push_back({std::string(section), std::string(object), 0});
      contrib[slot] = {key, map.contributions.size()};
      ++contrib_used;
    }
    last_contribution = contrib[slot].second;
    return map.contributions[last_contribution - 1];
  };
  // "0x208d ... 0xf (size before relaxing)": newer ld gives the first
  // merged input section the whole merged block, every object's strings,
  // and keeps its own size before merging beside it. The block is no one
  // object's: it is listed under a name of its own.
  auto merged_block = [&](uint64_t before) {
    if (!last_contribution || input_name.empty() || before >= input_end - input_start) return;
    const std::string_view name(input_name);
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return;  // COMMON and other names without a suffix
    const std::string_view kind = name.substr(0, dot);       // ".rodata.f.str1" of ".rodata.f.str1.1"
    const size_t kind_dot = kind.rfind('.');
    const bool strings = kind_dot != std::string_view::npos && kind.substr(kind_dot).starts_with(".str");
    if (!strings && !name.substr(dot).starts_with(".cst")) return;
    const uint64_t size = input_end - input_start;
    map.contributions[last_contribution - 1].size -= size;
    const std::string section = map.contributions[last_contribution - 1].section;
    input_object = strings ? "(strings merged by ld)" : "(constants merged by ld)";
    contribution(section, input_object).size += size;
    input_name = input_name.substr(0, input_name.find('.', 1) + 1) + input_object;
  };
  auto start_output = [&](std::string name, const std::vector<std::string_view>& w, size_t at) {
    last_contribution = 0;
    MapSection s;
    s.name = std::move(name);
    if (w.size() > at + 1) {
      map_hex(w[at], s.address);
      map_hex(w[at + 1], s.size);
    }
    for (size_t i = at + 2; i + 2 < w.size() + 1; ++i)
      if (w[i] == "load" && i + 2 < w.size() && w[i + 1] == "address") {
        uint64_t lma = 0;
        if (map_hex(w[i + 2], lma)) s.load_address = lma;
      }
    map.sections.push_back(std::move(s));
    input.push_back({});
    current = &map.sections.back();
  };
  auto input_line = [&](std::string_view name, const std::vector<std::string_view>& w, size_t at) {
    // name ADDRESS SIZE object
    uint64_t address = 0, size = 0;
    if (w.size() < at + 2 || !map_hex(w[at], address) || !map_hex(w[at + 1], size)) return;
    if (part == Part::discarded) {
      map.discarded_bytes += size;
      return;
    }
    if (!current) return;
    trim_previous(address);
    close_symbol(address);
    close_input();
    if (name == "*fill*") {
      current->fill += size;
      return;
    }
    // The object is the rest of the line (a path may hold blanks).
    if (w.size() <= at + 2) return;
    std::string_view object(w[at + 2].data(), static_cast<size_t>(w.back().data() + w.back().size() - w[at + 2].data()));
    contribution(current->name, object).size += size;
    // An input section of size 0 still gives the output section contents
    // when it has them (`.data 0x0 c.o`, in nearly every object): ld then
    // writes the fill an assignment made as bytes of the image.
    input.back().any = true;
    if (size && !input.back().contents) input.back().contents = contents_input(name);
    // Only names the compiler keeps zero say no bytes: .bss, .sbss, COMMON,
    // and .noinit (GCC and gas refuse a non-zero value there); a `.no_init`
    // input may hold an initialised variable.
    if (size && !input.back().contents && name != "COMMON" && !has(name, {"bss", "noinit"}))
      input.back().unnamed = true;
    input_object.assign(object);
    input_name.assign(name);
    input_start = address;
    input_end = address + size;
    symbols_before_input = map.symbols.size();
  };

  TextLines lines(text);
  std::string_view line;
  while (lines.next(line)) {
    // ld writes each part once: a second is another map joined to this one
    // (`cat a.map b.map`), whose regions, sections and objects would all
    // be counted twice.
    if ((line == "Memory Configuration" && saw_memory) || (line == "Linker script and memory map" && saw_script)) {
      error = fmt::format("line {}: a second \"{}\": two maps joined in one file; give each map on its own "
                          "(`edgemem diff A.map B.map` compares two)",
                          lines.number(), line);
      return std::nullopt;
    }
    if (line == "Allocating common symbols") { part = Part::common; continue; }
    if (line == "Discarded input sections") { part = Part::discarded; saw_discarded = true; continue; }
    if (line == "Memory Configuration") { part = Part::memory; saw_memory = true; continue; }
    if (line == "Linker script and memory map") { part = Part::script; saw_script = true; continue; }
    map_words(line, w);
    if (w.empty()) continue;

    if (part == Part::memory) {
      uint64_t origin = 0, length = 0;
      if (w.size() >= 3 && map_hex(w[1], origin) && map_hex(w[2], length) && w[0] != "*default*")
        map.regions.push_back({std::string(w[0]), origin, length, w.size() > 3 ? std::string(w[3]) : "", 0,
                               RegionKind::other});
      continue;
    }
    if (part == Part::common) {  // "name 0xSIZE object", a long name alone with the rest on the next line
      uint64_t size = 0;
      if (w.size() == 1 && line[0] != ' ') common_pending.assign(w[0]);
      else if (w.size() >= 2 && map_hex(w[0], size) && !common_pending.empty()) common_size[common_pending] = size;
      else if (w.size() >= 3 && map_hex(w[1], size)) common_size[std::string(w[0])] = size;
      if (w.size() > 1) common_pending.clear();
      continue;
    }
    if (part != Part::script && part != Part::discarded) continue;

    bool indented = line[0] == ' ' || line[0] == '\t';
    // A long name stands alone and its numbers follow, indented. A name
    // with nothing after it is an empty section (nRF's dummy sections).
    bool continuation = indented && w.size() >= 2 && w[0].starts_with("0x") && w[1].starts_with("0x");
    if (!pending_output.empty()) {
      // A name alone is an output section when ld wrapped its numbers onto
      // this line (Zephyr's `log_const_sections`, TouchGFX's
      // `IntFlashSection`: no leading dot), or an empty one when it starts
      // with a dot; anything else alone on a line is a script keyword.
      std::string name = std::move(pending_output);
      pending_output.clear();
      if (continuation || name.starts_with("."))
        start_output(std::move(name), continuation ? w : std::vector<std::string_view>{}, 0);
      if (continuation) continue;
    }
    if (!pending_input.empty()) {
      if (continuation) {
        input_line(pending_input, w, 0);
        pending_input.clear();
        continue;
      }
      pending_input.clear();
    }
    if (!indented && part == Part::script) {
      std::string_view name = w[0];
      bool section_like = name.starts_with(".") || (w.size() >= 3 && w[1].starts_with("0x") && w[2].starts_with("0x"));
      if (name.starts_with("OUTPUT(")) saw_output = true;
      if ((!section_like && w.size() > 1) || name == "LOAD" || name.starts_with("OUTPUT(")) continue;
      if (current) trim_previous(current->address + current->size);
      close_symbol(input_end);
      close_input();
      if (w.size() == 1) pending_output = std::string(name);
      else if (section_like) start_output(std::string(name), w, 1);
      continue;
    }
    if (!indented) continue;
    // Indented: an input section, *fill*, a symbol, an assignment or a pattern.
    if (w[0].starts_with("0x")) {
      uint64_t address = 0;
      // "0x00000400 _Min_Stack_Size = 0x400": the stack a CubeIDE script
      // keeps room for.
      if (part == Part::script && w.size() >= 3 && w[1] == "_Min_Stack_Size" && w[2] == "=")
        map_hex(w[0], map.script_min_stack);
      // "0x20010000 0x4 LONG 0x11111111": bytes the script writes, in a
      // NOLOAD section too (where ld loads none of them).
      if (current && part == Part::script && w.size() >= 3 &&
          (w[2] == "LONG" || w[2] == "SHORT" || w[2] == "BYTE" || w[2] == "QUAD" || w[2] == "SQUAD"))
        input.back().any = input.back().written = true;
      if (w.size() == 4 && w[1] == "(size" && w[3] == "relaxing)") {
        if (uint64_t before = 0; map_hex(w[0], before)) merged_block(before);
        continue;
      }
      // A symbol is its address and its name to the end of the line, which
      // holds blanks when ld demangles a C++ name (`vtable for Filter`,
      // `big_unsigned(unsigned int, char const*)`). Two numbers are a
      // wrapped section's address and size, never a symbol; ` = ` is an
      // assignment (`operator=` has no blanks around it).
      if (w.size() >= 2 && map_hex(w[0], address) && current && line.find(" = ") == std::string_view::npos &&
          !w[1].starts_with("PROVIDE") && !w[1].starts_with("ASSERT") && !w[1].starts_with("0x")) {
        std::string_view name(w[1].data(), static_cast<size_t>(w.back().data() + w.back().size() - w[1].data()));
        close_symbol(address);
        map.symbols.push_back({std::string(name), current->name, input_object, address, 0});
      }
      continue;
    }
    if (w[0].starts_with("KEEP") || w[0].starts_with("SORT") || (w[0][0] == '*' && w[0] != "*fill*")) continue;
    if (w.size() == 1) {  // long input section name: the numbers follow on the next line
      // Any name: a section named without a dot (`fast_ram_code_section`)
      // is input too, and losing it read its output section as empty.
      pending_input.assign(w[0]);
      continue;
    }
    input_line(w[0], w, 1);
  }
  if (current) trim_previous(current->address + current->size);
  close_symbol(input_end);
  close_input();

  if (lines.number() == 0) {
    error = "empty: expected a GNU ld map (link with -Wl,-Map=FILE)";
    return std::nullopt;
  }
  // ld writes "Archive member included ..." and "Discarded input sections"
  // before its Memory Configuration: a map that has them and not that was cut.
  if ((!saw_memory || !saw_script) && (saw_discarded || text.starts_with("Archive member included"))) {
    error = fmt::format("line {}: the map ends before ld's \"{}\" part: it is cut short (copied while the link still "
                        "wrote it?); link again or use the whole file",
                        lines.number(), saw_memory ? "Linker script and memory map" : "Memory Configuration");
    return std::nullopt;
  }
  if (!saw_memory || !saw_script) {
    error = fmt::format("line {}: expected the \"{}\" part of a GNU ld map (link with -Wl,-Map=FILE)", lines.number(),
                        saw_memory ? "Linker script and memory map" : "Memory Configuration");
    return std::nullopt;
  }
  // ld writes OUTPUT(FILE FORMAT) after the last output section: a map
  // without it was cut short, and its sections and regions would add up
  // to too little.
  if (!saw_output) {
    error = fmt::format("line {}: the map ends before ld's OUTPUT(...) line that closes its memory map: it is cut "
                        "short (copied while the link still wrote it?); link again or use the whole file",
                        lines.number());
    return std::nullopt;
  }

  for (MapRegion& r : map.regions) {
    bool writable = r.attributes.find('w') != std::string::npos && r.attributes.find("!w") == std::string::npos;
    r.kind = writable ? RegionKind::ram : RegionKind::flash;
    // AVR's linker scripts declare EEPROM, fuse, lock and signature bytes
    // "rw !x" like its SRAM: only the name says they are not RAM.
    static const std::set<std::string_view> avr_non_volatile = {"fuse", "lock", "signature", "user_signatures"};
    if (writable && (has(r.name, {"eeprom"}) || avr_non_volatile.count(r.name))) r.kind = RegionKind::other;
    // Zephyr's IDT_LIST holds the interrupt tables its build reads and drops
    // from the image, at a made-up address; ESP-IDF's extern_ram_seg is the
    // window of external PSRAM (over the same addresses as the rodata
    // window on an ESP32-S2/S3), not the chip's RAM.
    if (r.name == "IDT_LIST" || r.name == "extern_ram_seg") r.kind = RegionKind::other;
  }
  const std::vector<bool> alias = region_aliases(map);
  for (size_t i = 0; i < alias.size(); ++i)
    if (alias[i]) map.regions[i].kind = RegionKind::other;
  // The region a section's kind is read from: not an alias, a pseudo-region
  // or external memory, where the same addresses have a region of their own.
  auto kind_region_at = [&](uint64_t at) -> const MapRegion* {
    const MapRegion* found = nullptr;
    for (const MapRegion& r : map.regions)
      if (r.length && at >= r.origin && at - r.origin < r.length && r.kind != RegionKind::other) found = &r;
    return found ? found : sized_region_at(map, at);
  };
  for (MapSection& s : map.sections)
    s.kind = classify(s.name, s.load_address && *s.load_address != s.address, s.address, kind_region_at(s.address));
  // A region without attributes (`RAM : ORIGIN = ...`) is RAM if data or
  // zero-initialised sections run in it, and flash if it holds only code,
  // constants and load images.
  for (size_t i = 0; i < map.regions.size(); ++i) {
    MapRegion& r = map.regions[i];
    if (!r.attributes.empty() || alias[i] || r.kind != RegionKind::flash) continue;
    for (const MapSection& s : map.sections)
      if (s.size && (s.kind == SectionKind::data || s.kind == SectionKind::bss) && r.length && s.address >= r.origin &&
          s.address - r.origin < r.length)
        r.kind = RegionKind::ram;
  }
  settle_load_images(map, input);
  count_gnu_regions(map);
  // LTO lists a symbol per object in .debug_info (`lfs.c.c392b76d`): they
  // take no memory and name nothing in the image.
  std::set<std::string_view> debug_sections;
  for (const MapSection& s : map.sections)
    if (s.kind == SectionKind::debug) debug_sections.insert(s.name);
  std::erase_if(map.symbols, [&](const MapSymbol& s) { return debug_sections.count(s.section) != 0; });
  // Each address once: sections a script lays over each other (nRF's
  // .heap and .stack_dummy, both COPY at one address) share their bytes.
  std::vector<const MapSection*> by_address;
  for (const MapSection& s : map.sections)
    if (s.size && s.kind != SectionKind::debug) by_address.push_back(&s);
  std::stable_sort(by_address.begin(), by_address.end(),
                   [](const MapSection* a, const MapSection* b) { return a->address < b->address; });
  uint64_t covered_to = 0;
  for (const MapSection* s : by_address) {
    const uint64_t end = s->address + s->size;
    const uint64_t fresh = end > std::max(covered_to, s->address) ? end - std::max(covered_to, s->address) : 0;
    covered_to = std::max(covered_to, end);
    switch (s->kind) {
      case SectionKind::code: map.totals.code += fresh; break;
      case SectionKind::rodata: map.totals.ro_data += fresh; break;
      case SectionKind::data: map.totals.rw_data += fresh; break;
      case SectionKind::bss: map.totals.zi_data += fresh; break;
      default: break;
    }
  }
  map.toolchain = "GNU ld";
  return map;
}

void count_gnu_regions(LinkerMap& map) {
  const std::vector<bool> alias = region_aliases(map);
  // Counts every region's use, with the load images that are unsure or
  // without them.
  auto count = [&](std::vector<MapRegion>& regions, bool with_unsure) {
    for (MapRegion& r : regions) {
      r.used = r.flow_used = 0;
      r.placed.clear();
    }
    // Per region, the extent of every section at its run address there,
    // placeholders included (ESP-IDF's rodata follows .flash_rodata_dummy),
    // and at its load address (Zephyr's .last_section follows the data's).
    std::vector<uint64_t> seen(regions.size(), 0);
    for (const MapSection& s : map.sections) {
      if (s.size == 0) continue;
      const bool elsewhere = s.load_address && *s.load_address != s.address;
      const bool loads = elsewhere && (s.load_image == LoadImage::yes || (with_unsure && s.load_image == LoadImage::unsure));
      // A placeholder (ESP-IDF's .ext_ram.dummy) at addresses two regions
      // share reserves them in the one that is not flash: no image bytes.
      size_t holding = 0;
      for (const MapRegion& r : regions) holding += r.length && s.address >= r.origin && s.address - r.origin < r.length;
      // Region usage: the extent of every section that occupies the region,
      // at its run address, and at its load address when that differs and the
      // section has contents to load.
      for (size_t i = 0; i < regions.size(); ++i) {
        MapRegion& r = regions[i];
        // Past everything in the region so far by more than aligning to its
        // address would skip: the script placed it there (`.boot_flags
        // 0x2001FFE0 :`, WCH's `.stack ORIGIN(RAM) + LENGTH(RAM) - size :`).
        const bool run_inside = r.length && s.kind != SectionKind::debug && s.address >= r.origin &&
                                s.address - r.origin < r.length;
        const uint64_t alignment = s.address & (~s.address + 1);
        const bool placed = run_inside && seen[i] && s.address - r.origin > seen[i] &&
                            s.address - r.origin - seen[i] >= alignment;
        if (placed) r.placed.push_back({s.name, s.address, s.size});
        if (run_inside) seen[i] = std::max(seen[i], s.address + s.size - r.origin);
        if (loads && r.length && *s.load_address >= r.origin && *s.load_address - r.origin < r.length)
          seen[i] = std::max(seen[i], *s.load_address + s.size - r.origin);
        if (alias[i] || (s.kind == SectionKind::other && holding > 1 && r.kind == RegionKind::flash)) continue;
        // A region of length 0 still holds what ld put at its origin when no
        // other region does: a failed link (LENGTH = 0) has bytes there, and
        // that is an overflow.
        auto claim = [&](uint64_t at, bool run) {
          bool inside = r.length ? at >= r.origin && at - r.origin < r.length : at == r.origin && !sized_region_at(map, at);
          // A failed link goes on placing what did not fit past the region's
          // end, where no region is: ld counts it to the region (its "overflowed
          // by"), as long as it follows the region's last section.
          const uint64_t extent = r.origin + r.used;
          // Only once a section crossed the end: a region filled exactly (a
          // .heap to its end) may be followed by a section in no region.
          bool spilled = r.length && r.used > r.length && at >= extent && at - extent <= kSpillAlignment &&
                         !sized_region_at(map, at);
          if (inside || spilled) {
            r.used = std::max(r.used, at + s.size - r.origin);
            if (!(placed && run)) r.flow_used = std::max(r.flow_used, at + s.size - r.origin);
          }
        };
        if (s.kind == SectionKind::debug) continue;
        claim(s.address, true);
        if (loads) claim(*s.load_address, false);
      }
    }
    // A section taken for placed that the rest of the region reached after all
    // was part of it.
    for (MapRegion& r : regions) {
      std::sort(r.placed.begin(), r.placed.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
      while (!r.placed.empty() && r.placed.front().address - r.origin < r.flow_used) {
        r.flow_used = std::max(r.flow_used, r.placed.front().address + r.placed.front().size - r.origin);
        r.placed.erase(r.placed.begin());
      }
    }
  };
  count(map.regions, true);
  for (MapRegion& r : map.regions) {
    r.unsure_bytes = 0;
    r.unsure_images.clear();
  }
  if (std::none_of(map.sections.begin(), map.sections.end(),
                   [](const MapSection& s) { return s.load_image == LoadImage::unsure; }))
    return;
  std::vector<MapRegion> without = map.regions;
  count(without, false);
  for (size_t i = 0; i < map.regions.size(); ++i) {
    MapRegion& r = map.regions[i];
    r.unsure_bytes = r.used - std::min(r.used, without[i].used);
    if (!r.unsure_bytes) continue;
    for (const MapSection& s : map.sections)
      if (s.load_image == LoadImage::unsure && s.size && s.load_address && *s.load_address >= r.origin &&
          *s.load_address - r.origin < std::max(r.length, r.used))
        r.unsure_images.push_back(s.name);
  }
}

}  // namespace edgemem
