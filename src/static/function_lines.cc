#include "static/function_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

namespace edgemem {

namespace {

// Every function a unit defines, nested ones (GNU C) too. A definition
// without code stays: one the linker removed, or one GCC merged into an
// identical one (-fipa-icf), is still defined at its line.
void collect(Dwarf_Die* parent, std::unordered_multimap<std::string, FunctionLine>& out) {
  Dwarf_Die die;
  if (dwarf_child(parent, &die) != 0) return;
  do {
    const int tag = dwarf_tag(&die);
    // A declaration is where a header declares a function the unit calls.
    if (tag == DW_TAG_subprogram && !dwarf_hasattr(&die, DW_AT_declaration)) {
      Dwarf_Attribute attr;
      const char* name = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_name, &attr));
      const char* file = dwarf_decl_file(&die);
      int line = 0;
      if (name && file && dwarf_decl_line(&die, &line) == 0) out.emplace(name, FunctionLine{file, line});
    }
    if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block) collect(&die, out);
  } while (dwarf_siblingof(&die, &die) == 0);
}

}  // namespace

std::optional<std::unordered_multimap<std::string, FunctionLine>> read_function_lines(const std::string& elf_path) {
  const int fd = open(elf_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  Dwarf* dwarf = dwarf_begin(fd, DWARF_C_READ);
  if (!dwarf) {
    close(fd);
    return std::nullopt;
  }
  std::unordered_multimap<std::string, FunctionLine> out;
  Dwarf_CU* cu = nullptr;
  Dwarf_Die unit;
  uint8_t unit_type = 0;
  while (dwarf_get_units(dwarf, cu, &cu, nullptr, &unit_type, &unit, nullptr) == 0) collect(&unit, out);
  dwarf_end(dwarf);
  close(fd);
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace edgemem
