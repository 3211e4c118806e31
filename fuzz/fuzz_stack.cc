// libFuzzer entry for the stack readers: the input, split in two, becomes
// one .su and one .ci file in a private directory; whole, it is read as a
// Keil call graph report.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "static/stack_usage.h"

namespace {

// The private directory, removed when the fuzzer exits (one per process:
// fork mode left one behind per job).
struct PrivateDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("edgemem_fuzz_stack_" + std::to_string(getpid()));
  PrivateDir() { std::filesystem::create_directories(path); }
  ~PrivateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const PrivateDir private_dir;
  const std::filesystem::path& dir = private_dir.path;
  size_t half = size / 2;
  std::ofstream(dir / "a.su", std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(half));
  std::ofstream(dir / "a.ci", std::ios::binary)
      .write(reinterpret_cast<const char*>(data + half), static_cast<std::streamsize>(size - half));
  std::string error;
  (void)edgemem::analyze_stack({dir.string()}, false, error);
  (void)edgemem::parse_keil_callgraph({reinterpret_cast<const char*>(data), size}, true, error);
  return 0;
}
