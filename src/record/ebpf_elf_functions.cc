#include "record/ebpf_elf_functions.h"

#include "static/demangle.h"

#include <algorithm>

#include <elf.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace edgemem {

namespace {

// "ns::f(int)" -> "ns::f"; templates and operators keep their brackets.
std::string_view without_parameters(std::string_view demangled) {
  if (demangled.empty() || demangled.back() != ')') return demangled;
  int depth = 0;
  for (size_t i = demangled.size(); i-- > 0;) {
    if (demangled[i] == ')') ++depth;
    if (demangled[i] == '(' && --depth == 0) return demangled.substr(0, i);
  }
  return demangled;
}

std::string_view unqualified(std::string_view name) {
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    char c = name[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') --depth;
    if (depth == 0 && c == ':' && i > 0 && name[i - 1] == ':') return name.substr(i + 1);
  }
  return name;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const ElfFunction* ElfFunctions::find_exact(std::string_view name) const {
  for (const ElfFunction& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

const ElfFunction* ElfFunctions::find_user_named(std::string_view name) const {
  const auto all = all_user_named(name);
  return all.empty() ? nullptr : all.front();
}

std::vector<const ElfFunction*> ElfFunctions::all_user_named(std::string_view name) const {
  if (const ElfFunction* f = find_exact(name)) return {f};
  std::vector<const ElfFunction*> out;
  for (const ElfFunction& f : functions) {
    if (f.demangled == name) return {&f};
    std::string_view plain = without_parameters(f.demangled);
    const bool named = plain == name || (plain.size() > name.size() + 2 && plain.ends_with(name) &&
                                         plain.substr(0, plain.size() - name.size()).ends_with("::"));
    if (named && std::none_of(out.begin(), out.end(), [&](const ElfFunction* o) { return o->address == f.address; }))
      out.push_back(&f);
  }
  return out;
}

std::string ElfFunctions::nearest(std::string_view name) const {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const ElfFunction& f : functions) {
    std::string_view candidate = unqualified(without_parameters(f.demangled));
    size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

std::optional<ElfFunctions> read_elf_functions(const std::string& path, std::string& error) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = fmt::format("{}: {}", path, strerror(errno));
    return std::nullopt;
  }
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    error = fmt::format("{}: not an ELF file", path);
    if (elf) elf_end(elf);
    close(fd);
    return std::nullopt;
  }
  ElfFunctions out;
  const void* id = nullptr;
  if (ssize_t n = dwelf_elf_gnu_build_id(elf, &id); n > 0) out.build_id.assign(static_cast<const char*>(id), n);
  size_t headers = 0;
  elf_getphdrnum(elf, &headers);
  for (size_t i = 0; i < headers; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    if (ph.p_offset == 0) out.first_load_page = ph.p_vaddr & ~uint64_t{0xFFF};
    out.loads.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
  }
  std::set<std::string> seen;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC && sh.sh_entsize != 0) {
      Elf_Data* data = elf_getdata(scn, nullptr);
      GElf_Dyn dyn;
      for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize && gelf_getdyn(data, static_cast<int>(i), &dyn); ++i)
        if (const char* name = dyn.d_tag == DT_SONAME ? elf_strptr(elf, sh.sh_link, dyn.d_un.d_val) : nullptr)
          out.soname = name;
      continue;
    }
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_entsize == 0)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
          sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
        continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      // "f.cold" and "f.part.0" are pieces of f, not functions to probe.
      if (!name || !*name || std::strchr(name, '.') || !seen.insert(name).second) continue;
      out.functions.push_back({name, demangle(name), sym.st_value, sym.st_size});
    }
  }
  elf_end(elf);
  close(fd);
  return out;
}

std::optional<bool> direct_call_before(const std::string& path, const std::vector<ElfFunctions::Load>& loads,
                                       uint64_t return_address) {
#if defined(__x86_64__)
  constexpr uint64_t kLength = 5;  // E8 rel32
#elif defined(__aarch64__)
  constexpr uint64_t kLength = 4;  // BL imm26
#else
  constexpr uint64_t kLength = 0;
#endif
  if (kLength == 0 || return_address < kLength) return std::nullopt;
  const uint64_t at = return_address - kLength;
  const auto load = std::find_if(loads.begin(), loads.end(), [&](const ElfFunctions::Load& l) {
    return at >= l.vaddr && return_address <= l.vaddr + l.size;
  });
  if (load == loads.end()) return std::nullopt;
  uint8_t code[kLength > 0 ? kLength : 1] = {};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const bool read_whole =
      pread(fd, code, kLength, static_cast<off_t>(load->offset + (at - load->vaddr))) == static_cast<ssize_t>(kLength);
  close(fd);
  if (!read_whole) return std::nullopt;
#if defined(__aarch64__)
  uint32_t insn;  // instructions are aligned: this one is the call
  std::memcpy(&insn, code, sizeof insn);
  return (insn & 0xFC000000u) == 0x94000000u;
#else
  // An E8 byte can also end a longer instruction (a call through a
  // register is 2-3 bytes): a direct call's target lies in the file too.
  if (code[0] != 0xE8) return false;
  int32_t rel;
  std::memcpy(&rel, code + 1, sizeof rel);
  const uint64_t target = return_address + static_cast<uint64_t>(static_cast<int64_t>(rel));
  return std::any_of(loads.begin(), loads.end(),
                     [&](const ElfFunctions::Load& l) { return target >= l.vaddr && target < l.vaddr + l.size; });
#endif
}

}  // namespace edgemem
