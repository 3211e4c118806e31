#include "cli/report_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "report/units.h"

namespace edgemem::cli {

std::string cannot_write_later(const std::string& path) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, ec)) return fmt::format("no directory {}", dir.string());
  if (std::filesystem::is_directory(path, ec)) return "a directory, expected a file";
  if (::access(dir.c_str(), W_OK) != 0) return fmt::format("directory {} is not writable ({})", dir.string(), std::strerror(errno));
  return {};
}

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
