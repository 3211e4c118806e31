// The live allocations a flame graph weighs, as stacks: a root (the pool)
// and the site's frames, outermost first (sites follow the folded
// convention: frames joined by ';'). Shared by the folded and speedscope
// exports so both show the same numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edgemem/analysis_result.h"
#include "edgemem/exports.h"

namespace edgemem {

struct LiveStack {
  std::string root;                 // the pool, or "all pools" at a peak of several
  std::vector<std::string> frames;  // outermost first; never empty, no frame empty ("?")
  uint64_t bytes = 0, blocks = 0;
};

// Identical stacks are merged; in root, then frame order.
std::vector<LiveStack> live_stacks(const AnalysisResult& result, LiveSet set);

// A frame or root for folded text: whitespace, control characters and ';'
// become '_', so every reader of folded stacks splits the line the same way.
std::string folded_frame(std::string_view text);

}  // namespace edgemem
