#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "edgemem/trace_session.h"

namespace edgemem {

std::string read_chunks(const std::string& path, const std::function<void(std::span<const uint8_t>)>& chunk,
                        const std::function<bool()>& stop, bool* stopped) {
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fmt::format("cannot open ({})", std::strerror(errno));
  if (struct stat st; fd != STDIN_FILENO && ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return "cannot open (a directory, expected a file)";  // as the other commands say it
  }
  std::vector<uint8_t> buffer(1 << 20);
  std::string error;
  if (stopped) *stopped = false;
  for (;;) {
    if (stop && stop()) {
      if (stopped) *stopped = true;
      break;
    }
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      error = std::string("read failed: ") + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    chunk({buffer.data(), static_cast<size_t>(n)});
  }
  if (fd != STDIN_FILENO) ::close(fd);
  return error;
}

}  // namespace edgemem
