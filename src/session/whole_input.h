// Inputs parsed whole (linker maps, models, budgets, stack files): read
// into one string, but refused on their first bytes before the rest is
// read, so a device (/dev/zero) or an endless pipe does not fill memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace edgemem {

struct WholeInputRules {
  // Sees the first kSniffBytes (all of a shorter input) before the rest is
  // read: a non-empty answer, why these bytes cannot begin the file, stops
  // the read there.
  std::function<std::string(std::string_view head)> check;
  // The most a pipe, FIFO or device may supply (a regular file is read to
  // its size), and what the input was expected to be, for the refusal.
  uint64_t stream_limit = uint64_t{1} << 30;
  std::string what = "the file";
};

struct WholeInput {
  std::string bytes;    // all of it, or what was read when `refused` is set
  std::string refused;  // why the read stopped before the end: `check`'s answer, or the stream limit
};

// nullopt when `path` ("-" for stdin) cannot be opened or read.
std::optional<WholeInput> read_whole_input(const std::string& path, const WholeInputRules& rules);

// Rules for a text file (a NUL byte in the first bytes: not text), named
// `what` ("a linker map") in the refusal.
WholeInputRules text_input(const std::string& what);

}  // namespace edgemem
