#include "static/dwarf_cu_index.h"

#include <elfutils/libdw.h>

#include <algorithm>
#include <iterator>

namespace edgemem {

void DwarfCuIndex::read_ranges() {
  read_ = true;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* unit = nullptr; (unit = dwfl_module_nextcu(module_, unit, &bias)) != nullptr;) {
    Dwarf_Addr base = 0, start = 0, end = 0;
    for (ptrdiff_t at = 0; (at = dwarf_ranges(unit, at, &base, &start, &end)) > 0;)
      if (end > start) ranges_.push_back({start + bias, end + bias, unit, bias});
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.low < b.low; });
}

Dwarf_Die* DwarfCuIndex::unit(Dwarf_Addr pc, Dwarf_Addr& bias) {
  if (Dwarf_Die* found = dwfl_module_addrdie(module_, pc, &bias)) return found;
  if (!read_) read_ranges();
  // Units do not share code: the range starting last at or below pc.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), pc, [](Dwarf_Addr a, const Range& r) { return a < r.low; });
  if (it != ranges_.begin() && pc < std::prev(it)->high) {
    bias = std::prev(it)->bias;
    return std::prev(it)->unit;
  }
  return nullptr;
}

bool DwarfCuIndex::line(Dwarf_Addr pc, const char*& file, int& lineno) {
  if (Dwfl_Line* found = dwfl_module_getsrc(module_, pc)) {
    file = dwfl_lineinfo(found, nullptr, &lineno, nullptr, nullptr, nullptr);
    return file != nullptr;
  }
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = unit(pc, bias);
  Dwarf_Line* row = cu ? dwarf_getsrc_die(cu, pc - bias) : nullptr;
  if (!row || dwarf_lineno(row, &lineno) != 0) return false;
  file = dwarf_linesrc(row, nullptr, nullptr);
  return file != nullptr;
}

}  // namespace edgemem
