// A trace file that another process is still writing (a probe's capture
// file, a log that logrotate replaces). Polled: inotify would wake sooner,
// but a 50 ms poll is well within a status interval and works on NFS too.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "watch/live_source.h"

namespace edgemem::watch {
namespace {

constexpr std::chrono::milliseconds kPoll{50};
constexpr size_t kTail = 64;  // bytes kept to tell a rewritten file from one appended to

class FileFollower final : public LiveSource {
 public:
  explicit FileFollower(std::string path) : path_(std::move(path)) {}
  ~FileFollower() override { close(); }

  SourceRead read(std::span<uint8_t> buffer, std::chrono::milliseconds timeout) override {
    SourceRead out;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (fd_ < 0 && std::chrono::steady_clock::now() >= reopen_after_) open(out);
      if (fd_ >= 0) {
        if (idle_) check_rewritten(out);
        ssize_t n = ::read(fd_, buffer.data(), buffer.size());
        if (n > 0) {
          failing_.clear();
          offset_ += static_cast<uint64_t>(n);
          out.bytes = static_cast<size_t>(n);
          remember_tail({buffer.data(), out.bytes});
          return out;
        }
        if (n < 0 && errno != EINTR && errno != EAGAIN) {
          // Said once until a read succeeds again; reopened at the poll's pace.
          std::string why = std::strerror(errno);
          if (why != failing_) out.notes.push_back(fmt::format("{}: read failed: {}; reopening", path_, why));
          failing_ = why;
          close();
          reopen_after_ = std::chrono::steady_clock::now() + kPoll;
        } else if (n == 0 && replaced_) {
          close();  // the old file was read to its end after the rename was seen
          offset_ = 0;
          tail_.clear();
          out.restarted = true;
          continue;
        } else if (n == 0) {
          idle_ = regular_;
          check_replaced(out);
          if (replaced_) continue;
        }
      }
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline || !out.notes.empty()) return out;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(kPoll, deadline - now));
    }
  }

 private:
  void open(SourceRead& out) {
    // Non-blocking: opening a FIFO with no writer yet must not hang the watch.
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      if (!waiting_noted_) out.notes.push_back(fmt::format("{}: {}; waiting for it", path_, std::strerror(errno)));
      waiting_noted_ = true;
      return;
    }
    struct stat st;
    ::fstat(fd_, &st);
    // Reopened after a failed read: the same file goes on from where it was
    // (read from its start again, every event would count twice); a new or
    // shorter one is read from its start.
    const bool same = offset_ > 0 && st.st_ino == inode_ && st.st_dev == device_ && S_ISREG(st.st_mode) &&
                      static_cast<uint64_t>(st.st_size) >= offset_;
    if (!same || ::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) < 0) {
      if (offset_ > 0) out.restarted = true;  // another file, or a shorter one, where it was being read
      offset_ = 0;
      tail_.clear();
    }
    inode_ = st.st_ino;
    device_ = st.st_dev;
    regular_ = S_ISREG(st.st_mode);
    if (waiting_noted_) out.notes.push_back(fmt::format("{}: opened", path_));
    waiting_noted_ = false;
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    replaced_ = false;
    idle_ = false;
  }

  void remember_tail(std::span<const uint8_t> bytes) {
    if (bytes.size() >= kTail) tail_.assign(bytes.end() - kTail, bytes.end());
    else {
      tail_.insert(tail_.end(), bytes.begin(), bytes.end());
      if (tail_.size() > kTail) tail_.erase(tail_.begin(), tail_.end() - kTail);
    }
  }

  // Before reading on after the end: a file truncated and written again
  // past where we were between two polls (`cp new.log capture.log`, a
  // capture restarted with `>`) has other bytes before our offset. Read on,
  // its first bytes would be skipped and the rest read mid-record.
  // Zeros are not evidence: a writer that grows its file before filling it
  // (a preallocating or mapped one) changes them, and copytruncate leaves
  // a hole of them where a writer that does not append goes on writing.
  // A file now shorter than the offset is a truncation, said at the end.
  void check_rewritten(SourceRead& out) {
    idle_ = false;
    auto zeros = [](const std::vector<uint8_t>& v) { return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; }); };
    if (tail_.empty() || offset_ < tail_.size() || zeros(tail_)) return;
    std::vector<uint8_t> now(tail_.size());
    const ssize_t n = ::pread(fd_, now.data(), now.size(), static_cast<off_t>(offset_ - tail_.size()));
    if (n != static_cast<ssize_t>(now.size()) || now == tail_ || zeros(now)) return;
    out.notes.push_back(fmt::format("{}: written again from its start (truncated, then grown past the {} bytes read); "
                                    "reading it again from the start", path_, offset_));
    ::lseek(fd_, 0, SEEK_SET);
    offset_ = 0;
    tail_.clear();
    out.restarted = true;
  }

  // At the end of what is written: has the file shrunk or been replaced?
  // (A FIFO has no size and is not rotated: its writer just comes back.)
  void check_replaced(SourceRead& out) {
    if (!regular_) return;
    struct stat now;
    if (::fstat(fd_, &now) == 0 && static_cast<uint64_t>(now.st_size) < offset_) {
      out.notes.push_back(fmt::format("{}: truncated to {} bytes after {} were read; reading it again from the start",
                                      path_, now.st_size, offset_));
      ::lseek(fd_, 0, SEEK_SET);
      offset_ = 0;
      tail_.clear();
      out.restarted = true;
      return;
    }
    struct stat named;
    if (::stat(path_.c_str(), &named) != 0) return;  // moved away, new one not there yet: keep the old
    if (named.st_ino == inode_ && named.st_dev == device_) return;
    out.notes.push_back(fmt::format("{}: replaced by a new file (rotated) after {} bytes; following the new one", path_,
                                    offset_));
    replaced_ = true;  // one more read catches what was written between the last read and the rename
  }

  std::string path_;
  int fd_ = -1;
  ino_t inode_ = 0;
  dev_t device_ = 0;
  uint64_t offset_ = 0;
  bool waiting_noted_ = false;
  bool replaced_ = false;
  bool regular_ = true;
  bool idle_ = false;           // the last read found the end: check the tail before reading on
  std::vector<uint8_t> tail_;   // the last bytes read, ending at offset_
  std::string failing_;  // the read error last told
  std::chrono::steady_clock::time_point reopen_after_{};
};

}  // namespace

std::unique_ptr<LiveSource> follow_file(const std::string& path) { return std::make_unique<FileFollower>(path); }

}  // namespace edgemem::watch
