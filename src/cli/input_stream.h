// Reads a trace from a file or stdin ("-") in fixed chunks, so a trace of
// any length is decoded in constant memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "session/whole_input.h"

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

// A whole file (or stdin for "-") in one string (session/whole_input.h);
// nullopt after setting `error`: why it cannot be opened or read, or what
// `rules` found wrong with its first bytes.
std::optional<std::string> read_whole_file(const std::string& path, std::string& error, const WholeInputRules& rules);

// `rules` whose refusal goes on to say what the file is instead, when it is
// another kind edgemem reads (kind_hint): `reads_like` is the command whose
// kind was expected.
WholeInputRules hinted(WholeInputRules rules, const std::string& path, std::string_view reads_like);

// A linker map, hinted as `edgemem map`'s; an ELF in its place is refused
// with `elf_refusal`, or read when that is empty.
WholeInputRules linker_map_input(const std::string& path, const std::string& elf_refusal = {});

// Why a file could not be read: "cannot open (no such file)", "(a directory)", ...
std::string cannot_open(const std::string& path);

}  // namespace edgemem::cli
