// Reads a trace from a file or stdin ("-") in fixed chunks, so a trace of
// any length is decoded in constant memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace edgemem::cli {

// "reading PATH: N MiB" on stderr, once a read has taken a second, and only
// when stderr is a terminal (a log file would fill with carriage returns).
class ReadProgress {
 public:
  explicit ReadProgress(const std::string& path);
  ~ReadProgress();
  void update(uint64_t bytes_read);

 private:
  std::string path_;
  bool show_, shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

// Stops at Ctrl-C (see interrupt.h) and shows ReadProgress.

// Calls `chunk` for each block read; returns an error text, empty on success.
std::string read_stream(const std::string& path, const std::function<void(std::span<const uint8_t>)>& chunk);

// Up to `limit` bytes from the start of a file; nullopt if it cannot be opened.
std::optional<std::string> read_head(const std::string& path, size_t limit);

// A whole file (or stdin for "-") in one string, read in large blocks;
// nullopt if it cannot be opened or read.
std::optional<std::string> read_whole_file(const std::string& path);

// Why a file could not be read: "cannot open (no such file)", "(a directory)", ...
std::string cannot_open(const std::string& path);

}  // namespace edgemem::cli
