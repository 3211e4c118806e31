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

// Bytes of the UTF-8 white space at text[i] other than ASCII's (U+00A0,
// U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), or 0:
// flamegraph.pl splits a line at any white space, so "layer<NBSP>12 10"
// read as a two-count line.
size_t unicode_space(std::string_view t, size_t i) {
  auto b = [&](size_t k) { return i + k < t.size() ? static_cast<unsigned char>(t[i + k]) : 0u; };
  if (b(0) == 0xC2 && b(1) == 0xA0) return 2;
  if (b(0) == 0xE1 && b(1) == 0x9A && b(2) == 0x80) return 3;
  if (b(0) == 0xE2 && b(1) == 0x80 && (b(2) <= 0x8A || b(2) == 0xA8 || b(2) == 0xA9 || b(2) == 0xAF) && b(2) >= 0x80)
    return 3;
  if (b(0) == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;
  if (b(0) == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;
  return 0;
}

}  // namespace

std::string folded_frame(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    auto u = static_cast<unsigned char>(text[i]);
    if (u >= 0xC2) {
      if (size_t n = unicode_space(text, i); n > 0) {
        out += '_';
        i += n - 1;
        continue;
      }
    }
    out += u <= ' ' || u == 0x7f || text[i] == ';' ? '_' : text[i];
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
