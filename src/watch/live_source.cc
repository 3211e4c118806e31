// Choosing a source from the command line, and stdin.
#include "watch/live_source.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace edgemem::watch {
namespace {

class StdinSource final : public LiveSource {
 public:
  SourceRead read(std::span<uint8_t> buffer, std::chrono::milliseconds timeout) override {
    SourceRead out;
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return out;
    ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return out;
    if (n < 0) out.notes.push_back(fmt::format("-: read failed: {}", std::strerror(errno)));
    if (n <= 0) out.ended = true;
    else out.bytes = static_cast<size_t>(n);
    return out;
  }
};

}  // namespace

std::unique_ptr<LiveSource> read_stdin() { return std::make_unique<StdinSource>(); }

std::unique_ptr<LiveSource> open_live_source(const std::string& spec, unsigned baud) {
  if (spec == "-") return read_stdin();
  if (spec.starts_with("tcp://")) {
    std::string rest = spec.substr(6);
    while (!rest.empty() && rest.back() == '/') rest.pop_back();
    size_t colon = rest.rfind(':');
    std::string host = colon == std::string::npos ? "" : rest.substr(0, colon);
    std::string port = colon == std::string::npos ? "" : rest.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty() || port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(port) == 0 || std::stoul(port) > 65535)
      throw std::invalid_argument(
          fmt::format("{}: expected tcp://HOST:PORT with a port from 1 to 65535, e.g. tcp://127.0.0.1:3443", spec));
    return connect_tcp(host, port);
  }
  struct stat st;
  const bool exists = ::stat(spec.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    throw std::invalid_argument(
        fmt::format("{}: is a directory; expected a capture file, -, tcp://HOST:PORT or a serial device", spec));
  bool device = exists && S_ISCHR(st.st_mode);
  if (device || baud) return open_serial(spec, baud);
  return follow_file(spec);
}

}  // namespace edgemem::watch
