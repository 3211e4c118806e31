#include "cli/report_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "report/units.h"

namespace edgemem::cli {

bool write_report_file(const std::string& path, const std::string& text, const std::string& option,
                       const std::string& what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  int error = out ? 0 : errno;  // taken at once: later calls may overwrite errno
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.close();
  if (!out) {
    if (!error) error = errno ? errno : EIO;
    fmt::print(stderr, "edgemem: {}: cannot write: {} (pass {} PATH to write it elsewhere)\n", path, std::strerror(error),
               option);
    return false;
  }
  std::error_code ec;
  std::filesystem::path shown = std::filesystem::absolute(path, ec);
  fmt::print(stderr, "edgemem: {} written to {}, {}\n", what, ec ? path : shown.string(), units::bytes_human(text.size()));
  return true;
}

}  // namespace edgemem::cli
