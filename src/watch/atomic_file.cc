#include "watch/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace edgemem::watch {

std::string write_file_atomically(const std::string& given, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The rename would replace a link by a file, or a device (/dev/full) by one.
  const std::string path = fs::is_symlink(given, ec) ? fs::weakly_canonical(given, ec).string() : given;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    return fmt::format("{}: is not a regular file (a device, pipe or directory): it is written by a rename over it; "
                       "name a file",
                       given);
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return fmt::format("{}: cannot write: {}", path, std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return fmt::format("{}: cannot write: {}", path, why);
  }
  return {};
}

}  // namespace edgemem::watch
