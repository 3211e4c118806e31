#include "cli/report_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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

bool is_stdout(const std::string& path) {
  if (path == "-") return true;
  struct stat named {}, out {}, null {};
  if (path.empty() || ::stat(path.c_str(), &named) != 0 || ::fstat(STDOUT_FILENO, &out) != 0) return false;
  if (named.st_dev != out.st_dev || named.st_ino != out.st_ino) return false;
  return ::stat("/dev/null", &null) != 0 || named.st_dev != null.st_dev || named.st_ino != null.st_ino;
}

std::string clashing_outputs(const std::vector<std::string>& inputs, const OutputFiles& outputs,
                             bool report_on_stdout) {
  // Standard output takes one of them; opened by name, a file the shell
  // redirected it to would be emptied under what was printed before.
  const std::string* on_stdout = nullptr;
  for (const auto& [option, path] : outputs) {
    if (path.empty() || !is_stdout(path)) continue;
    if (report_on_stdout)
      return fmt::format("{} {}: is standard output, where the report goes (write it to a file)", option, path);
    if (on_stdout)
      return fmt::format("{} {}: is standard output, as {} is (write one of them to a file)", option, path,
                         *on_stdout);
    on_stdout = &option;
  }
  // Devices, FIFOs and /dev/stdout take any number of writes (--folded /dev/stderr --folded-peak /dev/stderr).
  auto file = [](const std::string& path) { return !path.empty() && !is_stdout(path) && !watch::is_special_file(path); };
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
  if (is_stdout(path)) {
    const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
    if (!ok) fmt::print(stderr, "edgemem: standard output: cannot write: {} (pass {} PATH to write it to a file)\n",
                        std::strerror(errno ? errno : EIO), option);
    else fmt::print(stderr, "edgemem: {} written to standard output, {}\n", what, units::bytes_human(text.size()));
    return ok;
  }
  // A file through a temporary and a rename: a write that fails half-way
  // (a full disk) leaves the last good report, not a cut one that opens as
  // an empty page or a partial trace. A FIFO or a device is written in place.
  const std::string error =
      watch::is_special_file(path) ? watch::write_in_place(path, text) : watch::write_file_atomically(path, text);
  if (!error.empty()) {
    fmt::print(stderr, "edgemem: {} (pass {} PATH to write it elsewhere)\n", error, option);
    return false;
  }
  std::error_code ec;
  std::filesystem::path shown = std::filesystem::absolute(path, ec);
  fmt::print(stderr, "edgemem: {} written to {}, {}\n", what, ec ? path : shown.string(), units::bytes_human(text.size()));
  return true;
}

}  // namespace edgemem::cli
