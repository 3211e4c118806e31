#include "cli/input_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "cli/interrupt.h"
#include "edgemem/trace_session.h"
#include "report/units.h"

namespace edgemem::cli {

ReadProgress::ReadProgress(const std::string& path) : path_(path), show_(::isatty(STDERR_FILENO)) {}

ReadProgress::~ReadProgress() {
  if (shown_) fmt::print(stderr, "\r\x1b[K");
}

void ReadProgress::update(uint64_t bytes) {
  if (!show_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  shown_ = true;
  fmt::print(stderr, "\redgemem: reading {}: {}\x1b[K", path_ == "-" ? "stdin" : path_, units::bytes_human(bytes));
}

std::string read_stream(const std::string& path, const std::function<void(std::span<const uint8_t>)>& chunk) {
  ReadProgress progress(path);
  uint64_t total = 0;
  return read_chunks(
      path,
      [&](std::span<const uint8_t> bytes) {
        chunk(bytes);
        total += bytes.size();
        progress.update(total);
      },
      [] { return interrupted() != 0; });
}

namespace {

// Reads until `limit` bytes or the end, then closes `fd`.
std::string read_up_to(int fd, size_t limit) {
  std::string out(limit, '\0');
  size_t done = 0;
  while (done < limit) {
    ssize_t n = ::read(fd, out.data() + done, limit - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

}  // namespace

std::optional<std::string> read_head(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return std::nullopt;
  return read_up_to(fd, limit);
}

std::optional<std::string> read_whole_file(const std::string& path) {
  // A regular file is read straight into a string of its size; stdin and
  // pipes in blocks.
  struct stat st;
  int fd = path == "-" ? -1 : ::open(path.c_str(), O_RDONLY);
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    return read_up_to(fd, static_cast<size_t>(st.st_size));
  }
  if (fd >= 0) ::close(fd);
  std::string out;
  std::string error = read_stream(path, [&](std::span<const uint8_t> bytes) {
    out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  });
  if (!error.empty()) return std::nullopt;
  return out;
}

std::string cannot_open(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return fmt::format("cannot open ({})", std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return "cannot open (a directory, expected a file)";
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fmt::format("cannot open ({})", std::strerror(errno));
  ::close(fd);
  return "cannot read it";
}

}  // namespace edgemem::cli
