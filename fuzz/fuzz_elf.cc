// libFuzzer entry for the ELF readers: the input, written to a private
// file, is read as `map --elf` reads it (sections, symbols, the map built
// from them) and as `analyze --elf` does (libdwfl's symbols and DWARF lines).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "static/elf_image.h"
#include "static/elf_symbolizer.h"

namespace {

// Removed when the fuzzer exits.
struct PrivateFile {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("edgemem_fuzz_elf_" + std::to_string(getpid()) + ".elf");
  ~PrivateFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const PrivateFile file;
  std::ofstream(file.path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  std::string error;
  if (auto image = edgemem::read_elf_image(file.path.string(), error)) (void)edgemem::to_linker_map(*image);
  if (auto symbolizer = edgemem::ElfSymbolizer::open(file.path.string(), error))
    for (uint64_t address : {0x0ull, 0x101ull, 0x8000ull, 0x08000201ull, 0x20000000ull})
      (void)symbolizer->describe_return_address(address);
  return 0;
}
