#include "watch/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace edgemem::watch {

namespace {

bool system_path(const std::string& path) { return path.starts_with("/dev/") || path.starts_with("/proc/"); }

}  // namespace

std::string write_in_place(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return fmt::format("{}: cannot write: {}", path, std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int error = errno;
  ok = std::fclose(f) == 0 && ok;
  return ok ? std::string() : fmt::format("{}: cannot write: {}", path, std::strerror(error ? error : errno));
}

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

// Where a chain of links ends, also when its last target does not exist
// yet (a dangling link is written through, as a shell's `>` does).
static std::string link_target(const std::string& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = given;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    fs::path next = fs::read_symlink(p, ec);
    if (ec) return {};
    // Resolved as the kernel does: links in the directories first, then
    // `..` (a link through `dl/..` is not the link's own directory).
    p = fs::weakly_canonical(next.is_absolute() ? next : p.parent_path() / next, ec);
    if (ec) return {};
  }
  return fs::is_symlink(p, ec) ? std::string() : p.string();
}

std::string write_file_atomically(const std::string& given, const std::string& text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A device, /dev/stdout or /proc/self/fd/N: written in place, as a rename
  // would replace the node (or the file stdout is redirected to) by a file.
  if (system_path(given) || fs::is_character_file(given, ec)) return write_in_place(given, text);
  if (std::string why = target_problem(given); !why.empty()) return why;
  // The rename would replace a link by a file: the link's target is replaced.
  std::string path = given;
  if (fs::is_symlink(given, ec)) {
    path = link_target(given);
    if (path.empty()) return fmt::format("{}: cannot follow the link (a loop, or unreadable)", given);
    if (std::string why = target_problem(path); !why.empty()) return why;
  }
  struct stat old {};
  const bool exists = ::stat(path.c_str(), &old) == 0;
  // Another name of the same file would keep the old bytes: written in place.
  if (exists && old.st_nlink > 1) return write_in_place(path, text);
  // A fresh name (O_EXCL: nothing planted there is followed), short enough
  // beside a name of 255 bytes.
  const fs::path dir = fs::path(path).parent_path();
  std::string tmp = ((dir.empty() ? fs::path(".") : dir) / ".edgemem-XXXXXX").string();
  const int fd = ::mkstemp(tmp.data());
  // A directory we may not add to (the file itself writable): in place.
  if (fd < 0) return write_in_place(path, text);
  // The old file's permissions (mkstemp gives 0600); a new one's as fopen's.
  mode_t mode = old.st_mode & 07777;
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  // The old owner too (a textfile collector running as another user reads
  // it); where that cannot be given, the file is written in place.
  if (exists && (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) && ::fchown(fd, old.st_uid, old.st_gid) != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return write_in_place(path, text);
  }
  std::string error;
  if (::fchmod(fd, mode) != 0) error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
  for (size_t at = 0; error.empty() && at < text.size();) {
    const ssize_t put = ::write(fd, text.data() + at, text.size() - at);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) error = fmt::format("{}: cannot write: {}", path, std::strerror(put < 0 ? errno : EIO));
    else at += static_cast<size_t>(put);
  }
  if (::close(fd) != 0 && error.empty()) error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
  if (error.empty() && std::rename(tmp.c_str(), path.c_str()) != 0)
    error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
  if (!error.empty()) ::unlink(tmp.c_str());
  return error;
}

}  // namespace edgemem::watch
