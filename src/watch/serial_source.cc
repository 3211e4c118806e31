// A UART seen through a USB serial adapter. Raw mode matters: the default
// line discipline would turn 0x0D into 0x0A, echo bytes back to the device
// and hold bytes until a newline, breaking binary traces.
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "watch/live_source.h"

namespace edgemem::watch {
namespace {

speed_t speed_of(unsigned baud) {
  switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 500000: return B500000;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 2000000: return B2000000;
    case 3000000: return B3000000;
    case 4000000: return B4000000;
    default: return B0;
  }
}

class SerialSource final : public LiveSource {
 public:
  SerialSource(const std::string& device, unsigned asked_baud) : device_(device) {
    const unsigned baud = asked_baud ? asked_baud : 115200;
    speed_t speed = speed_of(baud);
    if (speed == B0)
      throw std::runtime_error(fmt::format("--baud {}: not a standard rate (expected 9600, 19200, 38400, 57600, 115200, "
                                           "230400, 460800, 500000, 921600, 1000000, 2000000, 3000000 or 4000000)", baud));
    fd_ = ::open(device.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error(fmt::format("{}: cannot open ({})", device, std::strerror(errno)));
    termios t;
    if (::tcgetattr(fd_, &t) != 0) {
      std::string why = std::strerror(errno);
      ::close(fd_);
      throw std::runtime_error(
          asked_baud ? fmt::format("{}: not a serial device ({}); for a file being written, leave out --baud", device, why)
                     : fmt::format("{}: a device that is not a serial port ({}); expected a capture file, -, "
                                   "tcp://HOST:PORT or a serial device",
                                   device, why));
    }
    ::cfmakeraw(&t);
    t.c_cflag |= CLOCAL | CREAD;
    t.c_cflag &= ~(CSTOPB | PARENB | CRTSCTS);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    ::cfsetispeed(&t, speed);
    ::cfsetospeed(&t, speed);
    if (::tcsetattr(fd_, TCSANOW, &t) != 0) {
      std::string why = std::strerror(errno);
      ::close(fd_);
      throw std::runtime_error(fmt::format("{}: cannot set raw mode at {} baud: {}", device, baud, why));
    }
  }
  ~SerialSource() override { ::close(fd_); }

  SourceRead read(std::span<uint8_t> buffer, std::chrono::milliseconds timeout) override {
    SourceRead out;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return out;
    ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n > 0) {
      out.bytes = static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
      // The adapter was unplugged (EIO): nothing more will come from this descriptor.
      out.notes.push_back(fmt::format("{}: read failed: {}", device_, std::strerror(errno)));
      out.ended = true;
    } else if (p.revents & POLLHUP) {
      out.notes.push_back(fmt::format("{}: hung up", device_));
      out.ended = true;
    }
    return out;
  }

 private:
  std::string device_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<LiveSource> open_serial(const std::string& device, unsigned baud) {
  return std::make_unique<SerialSource>(device, baud);
}

}  // namespace edgemem::watch
