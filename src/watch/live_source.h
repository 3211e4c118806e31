// Where `edgemem watch` reads a live capture: a file that is still being
// written, stdin, a TCP stream (orbuculum, OpenOCD, J-Link RTT, a QEMU socket
// chardev) or a serial device. Every source is polled with a timeout so the
// caller can refresh its status line and notice Ctrl-C between reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace edgemem::watch {

struct SourceRead {
  size_t bytes = 0;         // placed at the start of the caller's buffer
  bool ended = false;       // no more bytes will come (stdin closed)
  bool restarted = false;   // these bytes start the stream over: a new file, or the same one truncated
  std::vector<std::string> notes;  // what happened to the source: reopened, reconnected, ...
};

class LiveSource {
 public:
  virtual ~LiveSource() = default;
  // Waits at most `timeout` for bytes.
  virtual SourceRead read(std::span<uint8_t> buffer, std::chrono::milliseconds timeout) = 0;
};

// A growing file, followed as `tail -F` does: appends are read as they land;
// a file that shrinks (truncated), or whose bytes before the point read to
// changed (truncated and written again past it), is read again from its start; a file that
// is replaced (rotated: the path names another inode) is read to its end,
// then the new file from its start. A path that does not exist yet is waited for.
std::unique_ptr<LiveSource> follow_file(const std::string& path);
// stdin until it closes.
std::unique_ptr<LiveSource> read_stdin();
// "tcp://HOST:PORT": connects, and reconnects with a backoff (0.1 s doubling
// to 5 s) whenever the server is not there or closes the connection.
std::unique_ptr<LiveSource> connect_tcp(const std::string& host, const std::string& port);
// A serial device in raw mode (no echo, no line editing, 8N1) at `baud`
// (0: 115200, not asked for).
// Throws std::runtime_error naming the device when it cannot be opened or set up.
std::unique_ptr<LiveSource> open_serial(const std::string& device, unsigned baud);

// Picks the source for SPEC: "-", "tcp://HOST:PORT", a character device
// (serial; `baud` 0 means 115200) or else a file to follow. Throws
// std::invalid_argument with a one-line reason for a malformed SPEC or a directory.
std::unique_ptr<LiveSource> open_live_source(const std::string& spec, unsigned baud);

}  // namespace edgemem::watch
