#include "cli/report_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "report/units.h"
#include "watch/atomic_file.h"

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

namespace {

// Whether two paths name one file: the same file if both exist (links,
// "./x" and "x"), else the same path once made absolute and normal.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec) && !ec) return true;
  const auto normal = [](const std::string& p) {
    std::error_code e;
    return std::filesystem::weakly_canonical(std::filesystem::absolute(p, e), e).lexically_normal();
  };
  return normal(a) == normal(b);
}

}  // namespace

std::string clashing_outputs(const std::vector<std::string>& inputs, const OutputFiles& outputs) {
  // Devices, FIFOs and /dev/stdout take any number of writes (--folded /dev/stdout --folded-peak /dev/stdout).
  auto file = [](const std::string& path) { return !path.empty() && path != "-" && !watch::is_special_file(path); };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (!file(path)) continue;
    for (const std::string& input : inputs)
      if (!input.empty() && input != "-" && same_file(path, input))
        return fmt::format("{} {}: is an input; writing it would destroy what is read (name another file)", option,
                           path);
    for (size_t j = 0; j < i; ++j)
      if (file(outputs[j].second) && same_file(path, outputs[j].second))
        return fmt::format("{} {}: is also {}'s file; one would overwrite the other (name another file)", option,
                           path, outputs[j].first);
  }
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
