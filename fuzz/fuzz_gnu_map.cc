// libFuzzer entry for the GNU ld map parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "static/gnu_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  (void)edgemem::parse_gnu_map({reinterpret_cast<const char*>(data), size}, error);
  return 0;
}
