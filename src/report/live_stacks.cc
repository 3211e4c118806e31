#include "live_stacks.h"

#include <map>

namespace edgemem {

namespace {

std::vector<std::string> frames_of(std::string_view site) {
  std::vector<std::string> frames;
  while (true) {
    size_t end = site.find(';');
    std::string_view frame = site.substr(0, end);
    frames.emplace_back(frame.empty() ? "?" : frame);
    if (end == std::string_view::npos) return frames;
    site.remove_prefix(end + 1);
  }
}

// The peak is of all pools together and its holders are counted per site,
// not per pool: only a trace that used one pool can name it.
std::string peak_root(const AnalysisResult& result) {
  const PoolSummary* only = nullptr;
  for (const PoolSummary& p : result.pools) {
    if (p.peak_bytes == 0) continue;
    if (only) return "all pools";
    only = &p;
  }
  return only ? only->name : "all pools";
}

}  // namespace

std::string folded_frame(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    out += u <= ' ' || u == 0x7f || c == ';' ? '_' : c;
  }
  return out.empty() ? "?" : out;
}

std::vector<LiveStack> live_stacks(const AnalysisResult& result, LiveSet set) {
  std::map<std::pair<std::string, std::vector<std::string>>, LiveStack> merged;
  auto add = [&](const std::string& root, const std::string& site, uint64_t bytes, uint64_t blocks) {
    if (bytes == 0 && blocks == 0) return;
    std::vector<std::string> frames = frames_of(site);
    LiveStack& s = merged[{root, frames}];
    if (s.frames.empty()) {
      s.root = root;
      s.frames = std::move(frames);
    }
    s.bytes += bytes;
    s.blocks += blocks;
  };
  if (set == LiveSet::at_end) {
    for (const SiteLeak& l : result.leaks) add(l.pool, l.site, l.bytes, l.count);
    for (const PersistentBlock& p : result.persistent) add(p.pool, p.site, p.bytes, p.count);
  } else {
    std::string root = peak_root(result);
    for (const PeakHolder& h : result.peak.live_at_peak) add(root, h.site, h.bytes, h.count);
  }
  std::vector<LiveStack> out;
  out.reserve(merged.size());
  for (auto& [key, stack] : merged) out.push_back(std::move(stack));
  return out;
}

}  // namespace edgemem
