// flamegraph.pl's input: `root;frame;...;frame count`, the count being bytes.
#include <fmt/format.h>

#include "edgemem/exports.h"
#include "live_stacks.h"

namespace edgemem {

std::string folded_stacks(const AnalysisResult& result, LiveSet set) {
  std::string out;
  for (const LiveStack& s : live_stacks(result, set)) {
    out += folded_frame(s.root);
    for (const std::string& f : s.frames) out += ';' + folded_frame(f);
    out += fmt::format(" {}\n", s.bytes);
  }
  return out;
}

}  // namespace edgemem
