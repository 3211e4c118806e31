#include "watch/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace edgemem::watch {

namespace {

bool system_path(const std::string& path) { return path.starts_with("/dev/") || path.starts_with("/proc/"); }

// Writes `text` to `path` (created or truncated); an error text naming `shown`, empty on success.
std::string write_whole(const std::string& path, const std::string& shown, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return fmt::format("{}: cannot write: {}", shown, std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int error = errno;
  ok = std::fclose(f) == 0 && ok;
  return ok ? std::string() : fmt::format("{}: cannot write: {}", shown, std::strerror(error ? error : errno));
}

}  // namespace

bool is_special_file(const std::string& path) {
  std::error_code ec;
  return system_path(path) || (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec));
}

std::string target_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (system_path(path)) return {};
  if (fs::is_directory(path, ec)) return fmt::format("{}: is a directory, expected a file", path);
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec) && !fs::is_character_file(path, ec))
    return fmt::format("{}: is a FIFO or socket: the file is replaced whole at each write; name a file", path);
  return {};
}

std::string write_file_atomically(const std::string& given, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A device, /dev/stdout or /proc/self/fd/N: written in place, as a rename
  // would replace the node (or the file stdout is redirected to) by a file.
  if (system_path(given) || fs::is_character_file(given, ec)) return write_whole(given, given, text);
  if (std::string why = target_problem(given); !why.empty()) return why;
  // The rename would replace a link by a file: the link's target is replaced.
  std::string path = given;
  if (fs::is_symlink(given, ec)) {
    fs::path target = fs::weakly_canonical(given, ec);
    if (ec || target.empty()) return fmt::format("{}: cannot follow the link: {}", given, ec.message());
    path = target.string();
    if (std::string why = target_problem(path); !why.empty()) return why;
  }
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  std::string error = write_whole(tmp, path, text);
  if (error.empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
    error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
  if (!error.empty()) std::remove(tmp.c_str());
  return error;
}

}  // namespace edgemem::watch
