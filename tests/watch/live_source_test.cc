// Live sources as the devices and tools behind them behave: a capture file
// that grows, is truncated and is rotated; a TCP server that is not up yet
// and drops the connection; a serial device (a pseudo-terminal here).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pty.h>
#include <sys/socket.h>
#include <termios.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "watch/live_source.h"

namespace edgemem::watch {
namespace {

using namespace std::chrono_literals;

// Reads until `want` bytes arrived or two seconds passed; notes are collected.
struct Drain {
  std::string bytes;
  std::vector<std::string> notes;
  bool restarted = false;  // some read said the stream starts over
};
Drain drain(LiveSource& source, size_t want) {
  Drain out;
  std::vector<uint8_t> buffer(4096);
  auto until = std::chrono::steady_clock::now() + 2s;
  while (out.bytes.size() < want && std::chrono::steady_clock::now() < until) {
    SourceRead r = source.read(buffer, 50ms);
    out.bytes.append(reinterpret_cast<const char*>(buffer.data()), r.bytes);
    out.notes.insert(out.notes.end(), r.notes.begin(), r.notes.end());
    out.restarted |= r.restarted;
  }
  return out;
}

bool any_note(const Drain& d, const std::string& part) {
  for (const auto& n : d.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("edgemem-watch-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

void append(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::app | std::ios::binary) << text;
}

TEST(FileFollower, WaitsForTheFileThenFollowsAppends) {
  TempDir dir;
  auto file = dir.path / "capture.log";
  auto source = follow_file(file.string());
  Drain none = drain(*source, 1);
  EXPECT_EQ(none.bytes, "");
  EXPECT_TRUE(any_note(none, "waiting for it"));
  append(file, "first\n");
  EXPECT_EQ(drain(*source, 6).bytes, "first\n");
  append(file, "second\n");
  EXPECT_EQ(drain(*source, 7).bytes, "second\n");
}

TEST(FileFollower, ATruncatedFileIsReadAgainFromItsStart) {
  TempDir dir;
  auto file = dir.path / "capture.log";
  append(file, "0123456789");
  auto source = follow_file(file.string());
  EXPECT_EQ(drain(*source, 10).bytes, "0123456789");
  std::filesystem::resize_file(file, 0);
  append(file, "new");
  Drain d = drain(*source, 3);
  EXPECT_EQ(d.bytes, "new");
  EXPECT_TRUE(any_note(d, "truncated to 3 bytes after 10 were read")) << (d.notes.empty() ? "" : d.notes[0]);
  // The same once it waited at the end (the rewrite check runs first then, and leaves a shrink to this message).
  append(file, std::string(100, 'a'));
  EXPECT_EQ(drain(*source, 100).bytes.size(), 100u);
  EXPECT_EQ(drain(*source, 1).bytes, "");
  std::filesystem::resize_file(file, 0);
  append(file, "again");
  d = drain(*source, 5);
  EXPECT_EQ(d.bytes, "again");
  EXPECT_TRUE(any_note(d, "truncated to 5 bytes after 103 were read")) << (d.notes.empty() ? "" : d.notes[0]);
  EXPECT_TRUE(d.restarted);  // the decoder cuts the record it was in
}

// Truncated and written again past where the reader was before it looked
// (`cp new.log capture.log`): found by the bytes before the offset, and read
// from the start; it once went on at the old offset, the new file's first
// bytes skipped and the rest read mid-record (found in review).
TEST(FileFollower, AFileWrittenAgainPastTheOffsetIsReadFromItsStart) {
  TempDir dir;
  auto file = dir.path / "capture.log";
  append(file, "0123456789");
  auto source = follow_file(file.string());
  EXPECT_EQ(drain(*source, 10).bytes, "0123456789");
  EXPECT_EQ(drain(*source, 1).bytes, "");  // at the end: the next read looks first
  std::ofstream(file, std::ios::trunc | std::ios::binary) << "abcdefghijklmnop";
  Drain d = drain(*source, 16);
  EXPECT_EQ(d.bytes, "abcdefghijklmnop");
  EXPECT_TRUE(any_note(d, "written again from its start")) << (d.notes.empty() ? "" : d.notes[0]);
  EXPECT_TRUE(d.restarted);
  // Appends after it are read on as before.
  append(file, "+more");
  EXPECT_EQ(drain(*source, 5).bytes, "+more");
}

// Zeros that change are not a rewrite: a writer that grows its file before
// filling it (preallocated, mapped), or copytruncate's hole before a writer
// that does not append. In review both were read again from the start.
TEST(FileFollower, ZerosFilledInLaterAreNotARewrite) {
  TempDir dir;
  auto file = dir.path / "capture.bin";
  append(file, std::string(100, '\0'));
  auto source = follow_file(file.string());
  EXPECT_EQ(drain(*source, 100).bytes.size(), 100u);
  EXPECT_EQ(drain(*source, 1).bytes, "");
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f << std::string(100, 'x');  // filled in place
  }
  append(file, "more");
  Drain d = drain(*source, 4);
  EXPECT_EQ(d.bytes, "more");
  EXPECT_FALSE(d.restarted);
  // copytruncate: cut to nothing, and the writer goes on at its offset (a hole of zeros before).
  std::filesystem::resize_file(file, 0);
  std::filesystem::resize_file(file, 104);
  append(file, "next");
  d = drain(*source, 4);
  EXPECT_EQ(d.bytes, "next");
  EXPECT_FALSE(d.restarted);
}

TEST(FileFollower, ARotatedFileIsReadToItsEndThenTheNewOneFromItsStart) {
  TempDir dir;
  auto file = dir.path / "capture.log";
  append(file, "old-");
  auto source = follow_file(file.string());
  EXPECT_EQ(drain(*source, 4).bytes, "old-");
  // The writer still had a last record for the old file when it was moved away.
  std::filesystem::rename(file, dir.path / "capture.log.1");
  append(dir.path / "capture.log.1", "tail-");
  append(file, "new");
  Drain d = drain(*source, 8);
  EXPECT_EQ(d.bytes, "tail-new");
  EXPECT_TRUE(any_note(d, "rotated"));
  EXPECT_TRUE(d.restarted);
}

TEST(FileFollower, AFifoIsReadAsItsWritersComeAndGo) {
  TempDir dir;
  auto fifo = dir.path / "capture.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto source = follow_file(fifo.string());
  EXPECT_EQ(drain(*source, 1).bytes, "") << "no writer yet: waits, does not hang";
  for (const char* text : {"first", "second"}) {
    int w = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(w, 0);
    ASSERT_EQ(::write(w, text, std::strlen(text)), static_cast<ssize_t>(std::strlen(text)));
    ::close(w);
    Drain d = drain(*source, std::strlen(text));
    EXPECT_EQ(d.bytes, text);
    EXPECT_FALSE(any_note(d, "truncated"));
  }
}

// A listening socket on a free port of 127.0.0.1.
struct Server {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  uint16_t port = 0;
  Server() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  void listen() { ::listen(fd, 4); }
  int accept() { return ::accept(fd, nullptr, nullptr); }
  ~Server() { ::close(fd); }
};

TEST(TcpSource, ConnectsOnceTheServerIsUpAndReconnectsAfterItHangsUp) {
  Server server;  // bound, not yet listening: connections are refused
  auto source = connect_tcp("127.0.0.1", std::to_string(server.port));
  Drain refused = drain(*source, 1);
  EXPECT_TRUE(any_note(refused, "retrying"));
  server.listen();
  std::thread first([&] {
    int c = server.accept();
    ASSERT_EQ(::write(c, "[MEM] one\n", 10), 10);
    ::close(c);
    c = server.accept();
    ASSERT_EQ(::write(c, "[MEM] two\n", 10), 10);
    ::close(c);
  });
  Drain one = drain(*source, 10);
  Drain two = drain(*source, 10);
  first.join();
  EXPECT_EQ(one.bytes + two.bytes, "[MEM] one\n[MEM] two\n");
  EXPECT_TRUE(any_note(two, "connection closed after 10 bytes; reconnecting"));
  // The new connection starts the stream over: a record the hang-up cut is
  // not joined to its first bytes (a server that does not buffer resumes
  // mid-record).
  EXPECT_FALSE(one.restarted);
  EXPECT_TRUE(two.restarted);
}

// A listener whose backlog is full drops new SYNs: a blocking connect hung
// for the kernel's two minutes of retries, and --for, the status line and
// the metrics stopped with it. Every read now returns within its wait.
TEST(TcpSource, AConnectNobodyAnswersNeverHoldsAReadPastItsWait) {
  Server server;
  ::listen(server.fd, 0);
  std::vector<int> queued;  // fill the accept queue (Linux takes backlog + 1)
  for (int i = 0; i < 3; ++i) {
    int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(server.port);
    ::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
    queued.push_back(c);
  }
  std::this_thread::sleep_for(100ms);
  auto source = connect_tcp("127.0.0.1", std::to_string(server.port));
  std::vector<uint8_t> buffer(64);
  std::chrono::milliseconds longest{0};
  for (int i = 0; i < 10; ++i) {
    auto start = std::chrono::steady_clock::now();
    source->read(buffer, 50ms);
    longest = std::max(longest, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start));
  }
  EXPECT_LT(longest, 1000ms);
  for (int c : queued) ::close(c);
}

TEST(OpenLiveSource, RefusesATcpAddressWithoutAPort) {
  EXPECT_THROW(open_live_source("tcp://127.0.0.1", 0), std::invalid_argument);
  EXPECT_THROW(open_live_source("tcp://:3443", 0), std::invalid_argument);
}

TEST(SerialSource, ReadsBinaryBytesUnchangedInRawMode) {
  int master = -1, slave = -1;
  char name[128];
  ASSERT_EQ(::openpty(&master, &slave, name, nullptr, nullptr), 0);
  ::close(slave);  // the source opens it by name, as it would /dev/ttyUSB0
  auto source = open_live_source(name, 921600);
  // CR, LF, ^C, ^D and a 0xA1 seed record: a cooked tty would rewrite or swallow these.
  const std::string bytes("\r\n\x03\x04\xA1\x00\x10\x20\x00\x00\x00", 11);
  ASSERT_EQ(::write(master, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  EXPECT_EQ(drain(*source, bytes.size()).bytes, bytes);
  ::close(master);
}

TEST(SerialSource, RefusesARateNoUartUses) {
  EXPECT_THROW(open_serial("/dev/null", 12345), std::runtime_error);
}

// A character device that is no serial port: the advice about --baud only
// when --baud was given (a helper was told to leave out what it never gave).
TEST(SerialSource, ADeviceThatIsNoSerialPortIsNamedSo) {
  auto said = [](unsigned baud) {
    try {
      open_live_source("/dev/null", baud);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(opened)");
  };
  EXPECT_EQ(said(0).find("--baud"), std::string::npos) << said(0);
  EXPECT_NE(said(0).find("not a serial port"), std::string::npos) << said(0);
  EXPECT_NE(said(115200).find("leave out --baud"), std::string::npos) << said(115200);
}

}  // namespace
}  // namespace edgemem::watch
