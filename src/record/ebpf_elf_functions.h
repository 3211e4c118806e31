// The function symbols of one ELF file (executable or shared object), from
// .symtab and .dynsym: what the eBPF recorder probes (the libc allocation
// functions, a user's --inference-fn) and how it finds a module's load bias.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edgemem {

struct ElfFunction {
  std::string name;       // as in the symbol table (mangled for C++)
  std::string demangled;  // the same for C
  uint64_t address = 0;   // link-time address
  uint64_t size = 0;      // bytes of code (the symbol's st_size; 0 where not told)
};

struct ElfFunctions {
  // p_vaddr of the PT_LOAD at file offset 0, rounded down to its page: the
  // mapping of offset 0 lies at this address plus the load bias.
  uint64_t first_load_page = 0;
  struct Load {
    uint64_t vaddr, offset, size;  // of the file's bytes
  };
  std::vector<Load> loads;
  std::vector<ElfFunction> functions;
  std::string soname;  // DT_SONAME, empty for an executable without one
  std::string build_id;  // the GNU build ID's bytes, empty without one

  const ElfFunction* find_exact(std::string_view name) const;
  // NAME as a user writes it: the symbol, or the C++ function with that
  // (qualified or unqualified) name, whatever its parameters.
  const ElfFunction* find_user_named(std::string_view name) const;
  // Every function NAME names that way at a different address (overloads:
  // nn::Model::run(int) and run(double)); the symbol or the whole
  // signature names one.
  std::vector<const ElfFunction*> all_user_named(std::string_view name) const;
  // The function name nearest to `name` by edit distance, for "did you
  // mean"; empty when none is near.
  std::string nearest(std::string_view name) const;
};

// nullopt with a one-line reason when the file cannot be read as an ELF.
std::optional<ElfFunctions> read_elf_functions(const std::string& path, std::string& error);

// Whether the call that returns to `return_address` (a link-time address in
// the file at `path`, whose load segments are `loads`) is a direct one
// (x86-64 `call rel32`, AArch64 `bl`), not through a register; nullopt when
// the bytes cannot be read.
std::optional<bool> direct_call_before(const std::string& path, const std::vector<ElfFunctions::Load>& loads,
                                       uint64_t return_address);

}  // namespace edgemem
