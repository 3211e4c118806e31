// Sections and symbols straight from an ELF image (elfutils' libelf): what
// `size -A`, `size` (Berkeley) and `nm -S` print, to cross-check a linker map
// or replace it when only the ELF is at hand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "static/linker_map.h"

namespace edgemem {

struct ElfSection {
  std::string name;
  uint64_t address = 0, size = 0;
  bool alloc = false, write = false, exec = false, nobits = false;
};

struct ElfSymbol {
  std::string name;
  uint64_t address = 0, size = 0;
  char type = '?';  // nm's letter: T/t code, D/d data, B/b bss, R/r read-only, A absolute, W/V weak...
  std::string file;  // a local symbol's source file, as the STT_FILE symbol before it names it
  bool tls = false;  // STT_TLS: the address is an offset into the thread's block, not where the map puts it
};

struct ElfImage {
  std::vector<ElfSection> sections;  // as `size -A` lists them, in file order
  std::vector<ElfSymbol> symbols;    // defined symbols as `nm` lists them (no section, file or $-mapping symbols)
  bool has_symbol_table = false;     // false when stripped
  std::vector<std::string> source_files;  // the symbol table's STT_FILE names (none after ld -x)
  // Local symbols besides STT_FILE and sections (statics, ARM's $t/$d):
  // none after strip -x or objcopy --discard-all, which keep STT_FILE.
  bool has_local_symbols = false;
  uint64_t text = 0, data = 0, bss = 0;  // Berkeley `size`: alloc code or read-only; alloc writable with contents; the rest
  // A 32-bit ARM image's first words (up to 512) where a Cortex-M vector
  // table sits: its own section (.isr_vector, .vectors, .vector_table) or
  // else the start of the lowest allocated section (CMSIS's gcc_arm.ld puts
  // it at the start of .text). Read as one by read_vector_table.
  std::vector<uint32_t> vector_words;
};

// nullopt with a one-line reason when the file is unreadable or not ELF.
std::optional<ElfImage> read_elf_image(const std::string& path, std::string& error);

// The ELF seen as a linker map (sections by flags, its symbols, no memory
// regions: the ELF does not know the chip), for when no map is at hand.
LinkerMap to_linker_map(const ElfImage& elf);

// What an ELF section holds by its flags, as Berkeley `size` splits them:
// code (executable), rodata (read-only, with or without contents), data
// (writable with contents), bss (writable without); debug if not allocated.
SectionKind elf_section_kind(const ElfSection& section);

// A GNU ld map read with its ELF: a section loaded elsewhere has a load
// image unless it is SHT_NOBITS (NOLOAD), and the regions are counted again
// with that; each output section takes the kind its flags give, not the one
// its name suggests, and the totals are summed again, so code + rodata, data
// and bss are `size`'s text, data and bss.
void classify_by_elf(LinkerMap& map, const ElfImage& elf);

// Allocated sections whose size differs between a map and an ELF: the two
// are not from the same link. "name: map N B, ELF M B" per difference.
std::vector<std::string> compare_with_map(const ElfImage& elf, const LinkerMap& map);

}  // namespace edgemem
