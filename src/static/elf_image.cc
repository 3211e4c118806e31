#include "static/elf_image.h"

#include "static/demangle.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace edgemem {
namespace {

// nm's letter for a defined symbol (binutils' bfd_decode_symclass).
char nm_type(const GElf_Sym& sym, const GElf_Shdr* shdr) {
  unsigned bind = GELF_ST_BIND(sym.st_info), type = GELF_ST_TYPE(sym.st_info);
  if (sym.st_shndx == SHN_COMMON) return 'C';
  if (bind == STB_WEAK) return type == STT_OBJECT ? 'V' : 'W';
  char c = '?';
  if (sym.st_shndx == SHN_ABS) c = 'A';
  else if (shdr) {
    bool alloc = shdr->sh_flags & SHF_ALLOC, write = shdr->sh_flags & SHF_WRITE;
    if (shdr->sh_flags & SHF_EXECINSTR) c = 'T';
    else if (alloc && shdr->sh_type == SHT_NOBITS) c = 'B';
    else if (alloc && write) c = 'D';
    else if (alloc) c = 'R';
    else c = 'N';
  }
  return bind == STB_LOCAL && c != '?' ? static_cast<char>(c - 'A' + 'a') : c;
}

// The words where a Cortex-M vector table would be (ElfImage::vector_words).
std::vector<uint32_t> vector_words(Elf* elf, size_t shstrndx, bool big_endian) {
  Elf_Scn* table = nullptr;
  bool named = false;
  uint64_t lowest = UINT64_MAX;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn && !named; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type != SHT_PROGBITS || sh.sh_size < 8) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    const std::string_view n = name ? name : "";
    if ((named = n == ".isr_vector" || n == ".vectors" || n == ".vector_table") || sh.sh_addr < lowest) {
      table = scn;
      lowest = sh.sh_addr;
    }
  }
  Elf_Data* data = table ? elf_getdata(table, nullptr) : nullptr;
  if (!data || !data->d_buf) return {};
  std::vector<uint32_t> words;
  const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
  for (size_t i = 0; i + 4 <= data->d_size && words.size() < 512; i += 4)
    words.push_back(big_endian ? uint32_t{bytes[i]} << 24 | uint32_t{bytes[i + 1]} << 16 | uint32_t{bytes[i + 2]} << 8 | bytes[i + 3]
                               : uint32_t{bytes[i + 3]} << 24 | uint32_t{bytes[i + 2]} << 16 | uint32_t{bytes[i + 1]} << 8 | bytes[i]);
  return words;
}

}  // namespace

std::optional<ElfImage> read_elf_image(const std::string& path, std::string& error) {
  int fd = open(path.c_str(), O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    error = fmt::format("{}: cannot open ({})", path, fd < 0 ? strerror(errno) : "a directory");
    if (fd >= 0) close(fd);
    return std::nullopt;
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  GElf_Ehdr ehdr;
  if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0 || !gelf_getehdr(elf, &ehdr)) {
    const int err = elf_errno();  // 0 when the bytes simply are no ELF
    error = fmt::format("{}: offset 0: expected an ELF file ({})", path, err ? elf_errmsg(err) : "no ELF header");
    if (elf) elf_end(elf);
    close(fd);
    return std::nullopt;
  }
  // A copy cut short still has its header: its sections would read as
  // empty, and every total as too small.
  const auto size = static_cast<uint64_t>(st.st_size);
  std::string cut;
  if (ehdr.e_shoff + uint64_t{ehdr.e_shnum} * ehdr.e_shentsize > size)
    cut = fmt::format("offset {}: its section headers run past the end of the file ({} bytes)", ehdr.e_shoff, size);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn && cut.empty(); scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL && sh.sh_size > 0 &&
        sh.sh_offset + sh.sh_size > size) {
      const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
      cut = fmt::format("offset {}: section {} runs past the end of the file ({} bytes)", sh.sh_offset,
                        name ? name : "?", size);
    }
  }
  if (!cut.empty()) {
    error = fmt::format("{}: {}: the ELF is cut short; use the whole file", path, cut);
    elf_end(elf);
    close(fd);
    return std::nullopt;
  }
  // Section names are read from the table e_shstrndx names: out of range
  // or no string table, every section read as "" (or as garbage) and the
  // vector table went unfound, exit 0.
  size_t sections = 0;
  GElf_Shdr names;
  Elf_Scn* names_scn = elf_getscn(elf, shstrndx);
  if (elf_getshdrnum(elf, &sections) == 0 && sections > 1 &&
      (!names_scn || !gelf_getshdr(names_scn, &names) || names.sh_type != SHT_STRTAB)) {
    // SHN_UNDEF is legal ELF for "no names", but edgemem finds sections by name.
    error = shstrndx == SHN_UNDEF
                ? fmt::format("{}: offset {}: e_shstrndx is 0: the ELF has no section name table, and sections are "
                              "found by name (.text, .data, .vectors); give the linker's own output, not one "
                              "rewritten without names",
                              path, ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 62 : 50)
                : fmt::format("{}: offset {}: e_shstrndx {} is not the section name table's index (expected a string "
                              "table among its {} sections): the ELF is damaged; link it again",
                              path, ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 62 : 50, shstrndx, sections);
    elf_end(elf);
    close(fd);
    return std::nullopt;
  }
  ElfImage img;
  bool arm = ehdr.e_machine == EM_ARM;
  std::vector<GElf_Shdr> headers(1);  // by section index; 0 is the null section
  // The string tables of the symbol tables and of the section names are
  // tables; another (newlib's .stabstr) is a section `size -A` lists.
  std::set<size_t> name_tables = {shstrndx};
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)) name_tables.insert(sh.sh_link);
  }
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    headers.resize(std::max<size_t>(headers.size(), elf_ndxscn(scn) + 1));
    headers[elf_ndxscn(scn)] = sh;
    // `size -A` shows what BFD calls sections: not the symbol, string,
    // relocation and group tables, unless loaded with the image (a dynamic
    // executable's .dynsym, .dynstr and .rela.dyn are in its text).
    const bool table = sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_STRTAB && name_tables.contains(elf_ndxscn(scn))) ||
                       sh.sh_type == SHT_REL || sh.sh_type == SHT_RELA || sh.sh_type == SHT_GROUP ||
                       sh.sh_type == SHT_DYNSYM;
    if (sh.sh_type == SHT_NULL || (table && !(sh.sh_flags & SHF_ALLOC))) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    ElfSection s{name ? name : "", sh.sh_addr, sh.sh_size, (sh.sh_flags & SHF_ALLOC) != 0,
                 (sh.sh_flags & SHF_WRITE) != 0, (sh.sh_flags & SHF_EXECINSTR) != 0, sh.sh_type == SHT_NOBITS};
    // Berkeley `size` (binutils size.c): code or read-only is text, even
    // when writable or without contents; the rest is data if it has
    // contents, bss if not.
    if (s.alloc) {
      if (s.exec || !s.write) img.text += s.size;
      else if (!s.nobits) img.data += s.size;
      else img.bss += s.size;
    }
    img.sections.push_back(std::move(s));
  }
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    img.has_symbol_table = true;
    const char* file = "";  // the locals of each object follow its STT_FILE symbol
    for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      unsigned type = GELF_ST_TYPE(sym.st_info);
      if (type == STT_FILE) {
        const char* named = elf_strptr(elf, sh.sh_link, sym.st_name);
        file = named ? named : "";
        img.source_files.push_back(file);
      }
      if (sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (GELF_ST_BIND(sym.st_info) == STB_LOCAL && name && *name) img.has_local_symbols = true;
      if (!name || !*name || name[0] == '$') continue;  // ARM mapping symbols ($t, $d), hidden by nm
      const GElf_Shdr* owner = sym.st_shndx < headers.size() && sym.st_shndx < SHN_LORESERVE ? &headers[sym.st_shndx] : nullptr;
      // Bit 0 of an ARM function's address only says "Thumb"; nm clears it.
      uint64_t address = arm && type == STT_FUNC ? sym.st_value & ~uint64_t{1} : sym.st_value;
      img.symbols.push_back({name, address, sym.st_size, nm_type(sym, owner),
                             GELF_ST_BIND(sym.st_info) == STB_LOCAL ? file : "", type == STT_TLS});
    }
  }
  if (arm && ehdr.e_ident[EI_CLASS] == ELFCLASS32)
    img.vector_words = vector_words(elf, shstrndx, ehdr.e_ident[EI_DATA] == ELFDATA2MSB);
  elf_end(elf);
  close(fd);
  return img;
}

namespace {

void add_to_totals(MapTotals& t, SectionKind kind, uint64_t size) {
  uint64_t* total[] = {&t.code, &t.ro_data, &t.rw_data, &t.zi_data};
  if (kind <= SectionKind::bss) *total[static_cast<int>(kind)] += size;
}

}  // namespace

SectionKind elf_section_kind(const ElfSection& e) {
  if (!e.alloc) return SectionKind::debug;
  if (e.exec) return SectionKind::code;
  if (!e.write) return SectionKind::rodata;
  return e.nobits ? SectionKind::bss : SectionKind::data;
}

void classify_by_elf(LinkerMap& map, const ElfImage& elf) {
  if (map.toolchain != "GNU ld") return;  // armlink and IAR sections are per region, not ELF sections
  // The section type settles which load images the map could not tell
  // from NOLOAD: SHT_NOBITS has none. Counted with the map's own kinds.
  for (MapSection& s : map.sections)
    if (s.load_address && *s.load_address != s.address)
      for (const ElfSection& e : elf.sections)
        if (e.name == s.name && e.address == s.address) s.load_image = e.nobits ? LoadImage::no : LoadImage::yes;
  count_gnu_regions(map);
  map.totals = {};
  for (MapSection& s : map.sections) {
    for (const ElfSection& e : elf.sections)
      if (e.name == s.name && e.address == s.address) s.kind = elf_section_kind(e);
    add_to_totals(map.totals, s.kind, s.size);
  }
  // A size the map could only bound is the ELF's own (nm -S) when the ELF
  // has the symbol at the same address. The map prints C++ names demangled
  // (`app::tensor_arena`), the ELF keeps them mangled: demangled only when
  // some size is to be looked up.
  if (std::none_of(map.symbols.begin(), map.symbols.end(), [](const MapSymbol& s) { return s.size_is_upper_bound; }))
    return;
  std::vector<std::string> demangled;
  demangled.reserve(elf.symbols.size());
  std::unordered_multimap<std::string_view, const ElfSymbol*> by_name;
  for (const ElfSymbol& e : elf.symbols) {
    by_name.emplace(e.name, &e);
    if (e.name.starts_with("_Z")) by_name.emplace(demangled.emplace_back(demangle(e.name)), &e);
  }
  for (MapSymbol& s : map.symbols) {
    if (!s.size_is_upper_bound) continue;
    for (auto [it, end] = by_name.equal_range(s.name); it != end; ++it)
      if (it->second->address == (s.address & ~uint64_t{1}) && it->second->size) {
        s.size = it->second->size;
        s.size_is_upper_bound = false;
        break;
      }
  }
}

LinkerMap to_linker_map(const ElfImage& elf) {
  LinkerMap m;
  m.toolchain = "ELF";
  for (const ElfSection& e : elf.sections) {
    SectionKind kind = elf_section_kind(e);
    m.sections.push_back({e.name, e.address, e.size, std::nullopt, kind, 0});
    add_to_totals(m.totals, kind, e.size);
  }
  for (const ElfSymbol& s : elf.symbols) {
    if (s.size == 0) continue;
    std::string section;
    for (const ElfSection& e : elf.sections)
      if (e.alloc && s.address >= e.address && s.address < e.address + e.size) section = e.name;
    m.symbols.push_back({s.name, section, "", s.address, s.size});
  }
  return m;
}

std::vector<std::string> compare_with_map(const ElfImage& elf, const LinkerMap& map) {
  std::vector<std::string> out;
  size_t agreed = 0;  // sections and symbols found at the same place in both
  // ld's map lists every output section it wrote, and the ELF holds each
  // one with contents. Two of one name (a script's two .text statements,
  // --unique, the default scripts' ONLY_IF_RO/ONLY_IF_RW pair leaving an
  // empty second .eh_frame) are compared by their total.
  const bool gnu = map.toolchain == "GNU ld";
  std::set<std::string_view> compared;
  for (const ElfSection& e : elf.sections) {
    if (!e.alloc || !compared.insert(e.name).second) continue;
    uint64_t elf_bytes = 0, map_bytes = 0;
    const ElfSection* only_elf = nullptr;
    const MapSection* only_map = nullptr;
    size_t in_elf = 0, in_map = 0;
    for (const ElfSection& x : elf.sections)
      if (x.alloc && x.name == e.name) elf_bytes += x.size, only_elf = &x, ++in_elf;
    for (const MapSection& s : map.sections)
      if (s.name == e.name) map_bytes += s.size, only_map = &s, ++in_map;
    if (in_map == 0) {
      if (gnu && elf_bytes != 0) out.push_back(fmt::format("{}: not in the map, ELF {} B", e.name, elf_bytes));
    } else if (map_bytes != elf_bytes) {
      out.push_back(fmt::format("{}: map {} B, ELF {} B", e.name, map_bytes, elf_bytes));
    } else if (in_map == 1 && in_elf == 1 && only_map->address != only_elf->address) {
      out.push_back(fmt::format("{}: map at {:#010x}, ELF at {:#010x}", e.name, only_map->address, only_elf->address));
    } else if (map_bytes != 0) {
      ++agreed;
    }
  }
  // Sections the script made unallocated ((COPY), (INFO): pico-sdk's .heap)
  // are in the ELF without SHF_ALLOC.
  if (gnu)
    for (const MapSection& s : map.sections)
      if (s.size != 0 && s.kind <= SectionKind::bss && compared.insert(s.name).second &&
          std::none_of(elf.sections.begin(), elf.sections.end(), [&](const ElfSection& e) { return e.name == s.name; }))
        out.push_back(fmt::format("{}: map {} B, not in the ELF", s.name, s.size));
  // Sections of one size can hold other code: a name the ELF also has must
  // stand where the map puts it, at one of its places in either (statics
  // repeat; a `.rodata.f` input section, the map's second `f`, is f's
  // tables). Bit 0 of an ARM function's address says Thumb.
  std::unordered_multimap<std::string_view, uint64_t> elf_at, map_at;
  constexpr size_t kNamed = 10;
  size_t misplaced = 0;
  for (const ElfSymbol& e : elf.symbols)
    if (!e.tls) elf_at.emplace(e.name, e.address & ~uint64_t{1});
  for (const MapSymbol& s : map.symbols) map_at.emplace(s.name, s.address & ~uint64_t{1});
  std::unordered_set<std::string_view> judged;
  for (const MapSymbol& s : map.symbols) {
    if (!judged.insert(s.name).second) continue;
    // Ranges, not structured bindings: clang 14 (the fuzz build) cannot capture those.
    const auto in_map = map_at.equal_range(s.name);
    const auto in_elf = elf_at.equal_range(s.name);
    if (in_elf.first == in_elf.second) continue;
    const bool placed = std::any_of(in_map.first, in_map.second, [&](const auto& m) {
      return std::any_of(in_elf.first, in_elf.second, [&](const auto& e) { return e.second == m.second; });
    });
    if (placed)
      ++agreed;
    else if (++misplaced <= kNamed)
      out.push_back(
          fmt::format("{}: map at {:#010x}, ELF at {:#010x}", s.name, in_map.first->second, in_elf.first->second));
  }
  if (misplaced > kNamed) out.push_back(fmt::format("and {} more symbols at other addresses", misplaced - kNamed));
  if (out.empty() && agreed == 0 && !map.sections.empty())
    out.push_back("no section or symbol of the map is in the ELF at the map's address");
  return out;
}

}  // namespace edgemem
