// A TCP stream from a debug probe's trace server or an emulator's socket
// chardev. The probe may not be up yet and may drop the connection when the
// target resets, so the client keeps reconnecting; bytes lost in between
// are the decoders' to resynchronise over (they count what they skip).
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "watch/live_source.h"

namespace edgemem::watch {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kFirstBackoff{100}, kMaxBackoff{5000};

class TcpSource final : public LiveSource {
 public:
  TcpSource(std::string host, std::string port) : host_(std::move(host)), port_(std::move(port)) {}
  ~TcpSource() override { disconnect(); }

  SourceRead read(std::span<uint8_t> buffer, milliseconds timeout) override {
    SourceRead out;
    auto deadline = Clock::now() + timeout;
    while (fd_ < 0) {
      if (Clock::now() >= next_attempt_) connect(out);
      if (fd_ >= 0) break;
      auto wake = std::min(next_attempt_, deadline);
      if (wake > Clock::now()) std::this_thread::sleep_for(wake - Clock::now());
      if (Clock::now() >= deadline) return out;
    }
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) <= 0) return out;
    ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      received_ += static_cast<uint64_t>(n);
      out.bytes = static_cast<size_t>(n);
      return out;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return out;
    out.notes.push_back(fmt::format("{}: {} after {} bytes; reconnecting", name(),
                                    n == 0 ? "connection closed" : std::string("read failed: ") + std::strerror(errno),
                                    received_));
    disconnect();
    backoff_ = kFirstBackoff;
    next_attempt_ = Clock::now() + backoff_;
    return out;
  }

 private:
  std::string name() const { return fmt::format("tcp://{}:{}", host_, port_); }

  void connect(SourceRead& out) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = ::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found);
    std::string why = rc ? ::gai_strerror(rc) : "";
    for (addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        why = std::strerror(errno);
        ::close(fd);
      }
    }
    if (found) ::freeaddrinfo(found);
    if (fd_ >= 0) {
      out.notes.push_back(fmt::format("{}: connected", name()));
      failing_ = false;
      return;
    }
    // Said once per outage, not at every retry.
    if (!failing_) out.notes.push_back(fmt::format("{}: {}; retrying every {} s at most", name(), why,
                                                   kMaxBackoff.count() / 1000));
    failing_ = true;
    next_attempt_ = Clock::now() + backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  }

  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  std::string host_, port_;
  int fd_ = -1;
  bool failing_ = false;
  uint64_t received_ = 0;
  milliseconds backoff_ = kFirstBackoff;
  Clock::time_point next_attempt_{};
};

}  // namespace

std::unique_ptr<LiveSource> connect_tcp(const std::string& host, const std::string& port) {
  return std::make_unique<TcpSource>(host, port);
}

}  // namespace edgemem::watch
