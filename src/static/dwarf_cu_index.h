// The compile unit and the line of an address in a module's DWARF. libdw
// looks the unit up in .debug_aranges, which clang does not write unless
// asked (-gdwarf-aranges): without it every lookup of a clang-built
// program fails ("address out of range") and no frame gets its file:line.
// Then the units' own address ranges are read once and searched.
#pragma once

#include <elfutils/libdwfl.h>

#include <vector>

namespace edgemem {

class DwarfCuIndex {
 public:
  explicit DwarfCuIndex(Dwfl_Module* module) : module_(module) {}

  // The unit holding `pc` (a module address) and its bias, or nullptr.
  Dwarf_Die* unit(Dwarf_Addr pc, Dwarf_Addr& bias);
  // The source file and line of `pc`; false when no line row holds it.
  bool line(Dwarf_Addr pc, const char*& file, int& lineno);

 private:
  struct Range {
    Dwarf_Addr low, high;  // [low, high) in module addresses
    Dwarf_Die* unit;
    Dwarf_Addr bias;
  };
  void read_ranges();

  Dwfl_Module* module_;
  bool read_ = false;
  std::vector<Range> ranges_;  // by low
};

}  // namespace edgemem
