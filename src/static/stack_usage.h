// Worst-case stack from GCC's -fstack-usage (.su) and -fcallgraph-info=su
// (.ci) files. Recursion, indirect calls, dynamic frames and calls into code
// without stack information make a root "unbounded": edgemem reports the
// known part and says why, rather than inventing a number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace edgemem {

struct StackFunction {
  std::string name;       // as GCC names it (clones keep their suffix)
  std::string file;       // file:line:column
  uint64_t frame_bytes = 0;
  std::string qualifier;  // static | dynamic | dynamic,bounded
};

struct StackRoot {
  std::string function;
  uint64_t worst_case_bytes = 0;   // along `path`, known frames only
  std::vector<std::string> path;   // root first
  bool unbounded = false;
  std::vector<std::string> reasons;  // "recursion: f", "indirect call in g", "no stack info: memcpy", "dynamic frame: h"
};

struct StackReport {
  std::vector<StackFunction> functions;  // heaviest frame first
  std::vector<StackRoot> roots;          // worst first
  size_t files = 0;
};

// Reads every .su and .ci file among `paths` (files or directories, searched
// recursively). Returns nullopt with a reason when nothing usable is found
// or a file cannot be read.
std::optional<StackReport> analyze_stack(const std::vector<std::string>& paths, std::string& error);

}  // namespace edgemem
