#include "watch/atomic_file.h"

#include <fcntl.h>
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

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

std::string AtomicFileWriter::fail(const char* why) {
  if (error_.empty()) error_ = fmt::format("{}: cannot write: {}", path_, why);
  return error_;
}

std::string AtomicFileWriter::open_in_place() {
  tmp_.clear();
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  return fd_ < 0 ? fail(std::strerror(errno)) : std::string();
}

std::string AtomicFileWriter::open(const std::string& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  path_ = given;
  // A device, /dev/stdout or /proc/self/fd/N: written in place, as a rename
  // would replace the node (or the file stdout is redirected to) by a file.
  if (system_path(given) || fs::is_character_file(given, ec)) return open_in_place();
  if (std::string why = target_problem(given); !why.empty()) return error_ = why;
  // The rename would replace a link by a file: the link's target is replaced.
  if (fs::is_symlink(given, ec)) {
    path_ = link_target(given);
    if (path_.empty()) return error_ = fmt::format("{}: cannot follow the link (a loop, or unreadable)", given);
    if (std::string why = target_problem(path_); !why.empty()) return error_ = why;
  }
  struct stat old {};
  const bool exists = ::stat(path_.c_str(), &old) == 0;
  // Another name of the same file would keep the old bytes: written in place.
  if (exists && old.st_nlink > 1) return open_in_place();
  // A fresh name (O_EXCL: nothing planted there is followed), short enough
  // beside a name of 255 bytes.
  const fs::path dir = fs::path(path_).parent_path();
  tmp_ = ((dir.empty() ? fs::path(".") : dir) / ".edgemem-XXXXXX").string();
  fd_ = ::mkstemp(tmp_.data());
  // A directory we may not add to (the file itself writable): in place.
  if (fd_ < 0) return open_in_place();
  // The old file's permissions (mkstemp gives 0600); a new one's as fopen's.
  mode_t mode = old.st_mode & 07777;
  if (!exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  // The old owner too (a textfile collector running as another user reads
  // it); where that cannot be given, the file is written in place.
  if (exists && (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) && ::fchown(fd_, old.st_uid, old.st_gid) != 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
    return open_in_place();
  }
  return ::fchmod(fd_, mode) != 0 ? fail(std::strerror(errno)) : std::string();
}

std::string AtomicFileWriter::write(std::string_view bytes) {
  for (size_t at = 0; error_.empty() && at < bytes.size();) {
    const ssize_t put = ::write(fd_, bytes.data() + at, bytes.size() - at);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) fail(std::strerror(put < 0 ? errno : EIO));
    else at += static_cast<size_t>(put);
  }
  return error_;
}

std::string AtomicFileWriter::commit() {
  if (fd_ >= 0 && ::close(fd_) != 0) fail(std::strerror(errno));
  fd_ = -1;
  if (error_.empty() && !tmp_.empty() && std::rename(tmp_.c_str(), path_.c_str()) != 0) fail(std::strerror(errno));
  else if (error_.empty()) tmp_.clear();  // in place now: nothing to remove
  return error_;
}

std::string write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFileWriter file;
  if (std::string error = file.open(path); !error.empty()) return error;
  file.write(text);
  return file.commit();
}

}  // namespace edgemem::watch
