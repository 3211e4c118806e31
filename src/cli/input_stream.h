// Reads a trace from a file or stdin ("-") in fixed chunks, so a trace of
// any length is decoded in constant memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace edgemem::cli {

// Calls `chunk` for each block read; returns an error text, empty on success.
std::string read_stream(const std::string& path, const std::function<void(std::span<const uint8_t>)>& chunk);

// Up to `limit` bytes from the start of a file; nullopt if it cannot be opened.
std::optional<std::string> read_head(const std::string& path, size_t limit);

// A whole file (or stdin for "-") in one string, read in large blocks;
// nullopt if it cannot be opened or read.
std::optional<std::string> read_whole_file(const std::string& path);

}  // namespace edgemem::cli
