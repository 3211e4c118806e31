// A module's ELF symbol table sorted by address, so that naming a return
// address costs a binary search instead of libdwfl's scan of every symbol
// (node's .symtab holds 110,000 symbols: that scan was most of the time of
// `analyze` on a recording of node). It answers only where libdwfl's own
// choice is certain — the sized symbols holding the address all cover
// one range (aliases), and no sizeless one could take precedence — and
// says "ask libdwfl" otherwise.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <vector>

namespace edgemem {

class SymbolIndex {
 public:
  explicit SymbolIndex(Dwfl_Module* module);

  // The name libdwfl's dwfl_module_addrname gives `address`, or nullptr
  // when this index cannot be sure of it (then call libdwfl).
  const char* find(uint64_t address) const;

 private:
  struct Symbol {
    uint64_t start, end;
    const char* name;
    bool global;  // weak or global: libdwfl searches these before the locals
    int binding;  // libdwfl's preference among equals: global 3, weak 2, local 1
  };
  std::vector<Symbol> sized_;          // by start
  std::vector<uint64_t> reach_;        // reach_[i]: the highest end of sized_[0..i]
  std::vector<uint64_t> sizeless_global_;  // their addresses, sorted
  uint64_t unloaded_end_ = 0;  // addresses below are where symbols of unloaded sections lie
};

}  // namespace edgemem
