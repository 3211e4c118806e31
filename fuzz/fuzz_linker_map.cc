// libFuzzer entry for the linker map parsers (GNU ld, armlink, IAR), through
// the same format detection `edgemem map` uses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "static/linker_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  (void)edgemem::parse_linker_map({reinterpret_cast<const char*>(data), size}, error);
  return 0;
}
