// Turns code addresses into "function (file:line)" with the ELF's DWARF
// line table (elfutils libdwfl); works for ARM firmware ELFs on the host.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "edgemem/site_table.h"

namespace edgemem {

class ElfSymbolizer {
 public:
  // nullptr and `error` set when the file cannot be read as an ELF.
  static std::unique_ptr<ElfSymbolizer> open(const std::string& path, std::string& error);
  ~ElfSymbolizer();
  // A return address names the instruction after the call; the call itself
  // is one byte before it (Thumb addresses carry bit 0, which is cleared).
  std::optional<std::string> describe_return_address(uint64_t address) const;
  // Renames every "0x…" site of the table; returns how many it resolved.
  size_t symbolize(SiteTable& sites) const;

 private:
  struct Impl;
  explicit ElfSymbolizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgemem
