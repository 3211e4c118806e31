// A TCP stream from a debug probe's trace server or an emulator's socket
// chardev. The probe may not be up yet and may drop the connection when the
// target resets, so the client keeps reconnecting; a record cut by the
// hang-up is dropped and counted, and bytes lost in between are the
// decoders' to resynchronise over (they count what they skip).
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "watch/live_source.h"

namespace edgemem::watch {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kFirstBackoff{100}, kMaxBackoff{5000};

// A connect the peer never answers (a host that drops SYNs, a full
// backlog) is given up after this, so --for, status lines and metrics go on.
constexpr milliseconds kConnectTimeout{5000};

class TcpSource final : public LiveSource {
 public:
  TcpSource(std::string host, std::string port) : host_(std::move(host)), port_(std::move(port)) {}
  ~TcpSource() override {
    disconnect();
    abandon_attempt();
  }

  SourceRead read(std::span<uint8_t> buffer, milliseconds timeout) override {
    SourceRead out;
    auto deadline = Clock::now() + timeout;
    // Connecting never blocks longer than the caller's wait: a pending
    // connect is polled across reads.
    while (fd_ < 0) {
      if (pending_ < 0 && Clock::now() >= next_attempt_) start_attempt(out);
      if (pending_ >= 0) finish_attempt(out, deadline);
      if (fd_ >= 0) break;
      if (pending_ < 0) {
        auto wake = std::min(next_attempt_, deadline);
        if (wake > Clock::now()) std::this_thread::sleep_for(wake - Clock::now());
      }
      if (Clock::now() >= deadline) return out;
    }
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) <= 0) return out;
    ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      received_ += static_cast<uint64_t>(n);
      out.bytes = static_cast<size_t>(n);
      // A record the hang-up cut is not joined to what the new connection
      // sends first: a server that does not buffer resumes mid-record, and
      // "size=1" + "24 addr=..." would read as a 124 B block.
      out.restarted = std::exchange(hung_up_, false);
      return out;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return out;
    out.notes.push_back(fmt::format("{}: {} after {} bytes; reconnecting", name(),
                                    n == 0 ? "connection closed" : std::string("read failed: ") + std::strerror(errno),
                                    received_));
    disconnect();
    hung_up_ = received_ > 0;
    backoff_ = kFirstBackoff;
    next_attempt_ = Clock::now() + backoff_;
    return out;
  }

 private:
  std::string name() const { return fmt::format("tcp://{}:{}", host_, port_); }

  // Resolves the host and starts a non-blocking connect to its first address.
  void start_attempt(SourceRead& out) {
    addresses_.clear();
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found); rc != 0) return failed(out, ::gai_strerror(rc));
    for (addrinfo* a = found; a; a = a->ai_next) {
      Address addr;
      addr.family = a->ai_family;
      addr.protocol = a->ai_protocol;
      std::memcpy(&addr.storage, a->ai_addr, a->ai_addrlen);
      addr.length = a->ai_addrlen;
      addresses_.push_back(addr);
    }
    ::freeaddrinfo(found);
    next_address_ = 0;
    try_next_address(out, "no address");
  }

  // Starts a connect to the next address, or gives the attempt up with `why`.
  void try_next_address(SourceRead& out, const std::string& why) {
    while (next_address_ < addresses_.size()) {
      const Address& a = addresses_[next_address_++];
      int fd = ::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, a.protocol);
      if (fd < 0) continue;
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&a.storage), a.length) == 0) {
        connected(out, fd);
        return;
      }
      if (errno == EINPROGRESS) {
        pending_ = fd;
        pending_since_ = Clock::now();
        return;
      }
      last_error_ = std::strerror(errno);
      ::close(fd);
    }
    failed(out, last_error_.empty() ? why : last_error_);
  }

  // Waits (until `deadline` at most) for the pending connect to be answered.
  void finish_attempt(SourceRead& out, Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(std::min(deadline, pending_since_ + kConnectTimeout) -
                                                         Clock::now());
    pollfd p{pending_, POLLOUT, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (ready == 0) {
      if (Clock::now() < pending_since_ + kConnectTimeout) return;  // still waiting: asked again at the next read
      abandon_attempt();
      last_error_ = fmt::format("no answer within {} s", kConnectTimeout.count() / 1000);
      return try_next_address(out, last_error_);
    }
    if (ready < 0) return;  // a signal: the caller decides whether to stop
    int error = 0;
    socklen_t size = sizeof error;
    if (::getsockopt(pending_, SOL_SOCKET, SO_ERROR, &error, &size) < 0) error = errno;
    const int fd = std::exchange(pending_, -1);
    if (error == 0) return connected(out, fd);
    ::close(fd);
    last_error_ = std::strerror(error);
    try_next_address(out, last_error_);
  }

  void connected(SourceRead& out, int fd) {
    fd_ = fd;
    last_error_.clear();
    out.notes.push_back(fmt::format("{}: connected", name()));
    failing_ = false;
  }

  void failed(SourceRead& out, const std::string& why) {
    // Said once per outage, not at every retry.
    if (!failing_)
      out.notes.push_back(fmt::format("{}: {}; retrying every {} s at most", name(), why, kMaxBackoff.count() / 1000));
    failing_ = true;
    last_error_.clear();
    next_attempt_ = Clock::now() + backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  }

  void abandon_attempt() {
    if (pending_ >= 0) ::close(pending_);
    pending_ = -1;
  }

  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  struct Address {
    int family = 0, protocol = 0;
    sockaddr_storage storage{};
    socklen_t length = 0;
  };
  std::string host_, port_;
  int fd_ = -1;
  int pending_ = -1;  // a connect under way
  Clock::time_point pending_since_{};
  std::vector<Address> addresses_;
  size_t next_address_ = 0;
  std::string last_error_;
  bool failing_ = false;
  uint64_t received_ = 0;
  bool hung_up_ = false;  // after bytes: the next bytes start the stream over
  milliseconds backoff_ = kFirstBackoff;
  Clock::time_point next_attempt_{};
};

}  // namespace

std::unique_ptr<LiveSource> connect_tcp(const std::string& host, const std::string& port) {
  return std::make_unique<TcpSource>(host, port);
}

}  // namespace edgemem::watch
