#include "static/function_lines.h"

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

namespace edgemem {

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
  while (dwarf_get_units(dwarf, cu, &cu, nullptr, &unit_type, &unit, nullptr) == 0) {
    Dwarf_Die die;
    if (dwarf_child(&unit, &die) != 0) continue;
    do {
      // Definitions only: a declaration of a function called from this unit
      // is where a header declares it.
      if (dwarf_tag(&die) != DW_TAG_subprogram || dwarf_hasattr(&die, DW_AT_declaration)) continue;
      if (!dwarf_hasattr(&die, DW_AT_low_pc) && !dwarf_hasattr(&die, DW_AT_ranges) && !dwarf_hasattr(&die, DW_AT_inline))
        continue;
      Dwarf_Attribute attr;
      const char* name = dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_name, &attr));
      const char* file = dwarf_decl_file(&die);
      int line = 0;
      if (!name || !file || dwarf_decl_line(&die, &line) != 0) continue;
      out.emplace(name, FunctionLine{file, line});
    } while (dwarf_siblingof(&die, &die) == 0);
  }
  dwarf_end(dwarf);
  close(fd);
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace edgemem
