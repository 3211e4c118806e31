// Where an ELF's DWARF says each function is defined (DW_AT_decl_file and
// DW_AT_decl_line of its definition): the place GCC also writes into the
// .su and .ci files of the same compile, so a function that stands
// elsewhere in the image was compiled from another version of its source.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

namespace edgemem {

struct FunctionLine {
  std::string file;  // the source file's path as the line table names it
  int line = 0;
};

// By function name (statics repeat). nullopt when the ELF holds no DWARF.
std::optional<std::unordered_multimap<std::string, FunctionLine>> read_function_lines(const std::string& elf_path);

}  // namespace edgemem
