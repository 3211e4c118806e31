// Folded stacks and speedscope weigh the same live bytes as the analysis:
// at the end every live block once, at the peak its holders.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "edgemem/exports.h"
#include "report/exports_test_support.h"

namespace edgemem::test {
namespace {

uint64_t folded_total(const std::string& folded, size_t& lines) {
  static const std::regex line(R"(^[^ ;\t]+(;[^ ;\t]+)+ ([0-9]+)$)");
  std::istringstream in(folded);
  std::string text;
  uint64_t total = 0;
  lines = 0;
  while (std::getline(in, text)) {
    std::smatch m;
    EXPECT_TRUE(std::regex_match(text, m, line)) << text;
    if (!m.empty()) total += std::stoull(m[2].str());
    ++lines;
  }
  return total;
}

TEST(FoldedExport, TheDemoTraceWeighsEveryLiveByteAtTheEndAndAtThePeak) {
  const AnalysisResult& r = demo_run().result;
  // Live at the end, counted by the per-site balance (another path than leaks + persistent).
  uint64_t live = 0;
  for (const SiteBalance& s : r.sites) live += s.live_bytes;
  ASSERT_GT(live, 0u);
  size_t lines = 0;
  EXPECT_EQ(folded_total(folded_stacks(r, LiveSet::at_end), lines), live);
  EXPECT_GT(lines, 0u);
  uint64_t at_peak = 0;
  for (const PeakHolder& h : r.peak.live_at_peak) at_peak += h.bytes;
  ASSERT_GT(at_peak, 0u);
  EXPECT_EQ(folded_total(folded_stacks(r, LiveSet::at_peak), lines), at_peak);
  // Every line of the leak starts at its pool.
  std::string folded = folded_stacks(r, LiveSet::at_end);
  EXPECT_NE(folded.find(r.leaks.front().pool + ";"), std::string::npos);
}

SiteLeak leak(std::string site, std::string pool, uint64_t bytes, uint64_t count) {
  SiteLeak l;
  l.site = std::move(site);
  l.pool = std::move(pool);
  l.bytes = bytes;
  l.count = count;
  return l;
}

PersistentBlock persistent(std::string site, std::string pool, uint64_t bytes) {
  PersistentBlock p;
  p.site = std::move(site);
  p.pool = std::move(pool);
  p.bytes = bytes;
  p.count = 1;
  return p;
}

PoolSummary pool(std::string name, uint64_t peak) {
  PoolSummary p;
  p.name = std::move(name);
  p.peak_bytes = peak;
  return p;
}

TEST(FoldedExport, StacksAreSplitAtSemicolonsAndFramesLoseWhitespace) {
  AnalysisResult r;
  r.leaks.push_back(leak("main;run model;lstm\n88", "arena 0", 644, 1));
  r.leaks.push_back(leak("main;run model;lstm\n88", "arena 0", 100, 2));
  r.persistent.push_back(persistent(";init;", "heap", 12));
  EXPECT_EQ(folded_stacks(r, LiveSet::at_end), "arena_0;main;run_model;lstm_88 744\nheap;?;init;? 12\n");
  // Unicode white space too: flamegraph.pl read "layer<NBSP>12 10" as a line of two counts.
  AnalysisResult u;
  u.leaks.push_back(leak("main;layer\xC2\xA0" "12;x\xE2\x80\x83y\xE3\x80\x80z;caf\xC3\xA9", "heap", 10, 1));
  EXPECT_EQ(folded_stacks(u, LiveSet::at_end), "heap;main;layer_12;x_y_z;caf\xC3\xA9 10\n");
  // The peak is of all pools together: one root unless a single pool was used.
  r.peak.live_at_peak.push_back({"a.cc:1", 10, 1});
  r.pools.push_back(pool("heap", 10));
  r.pools.push_back(pool("arena", 0));
  EXPECT_EQ(folded_stacks(r, LiveSet::at_peak), "heap;a.cc:1 10\n");
  r.pools[1].peak_bytes = 5;
  EXPECT_EQ(folded_stacks(r, LiveSet::at_peak), "all_pools;a.cc:1 10\n");
}

TEST(SpeedscopeExport, OneSampledProfilePerPoolWeighedInBytesWithSharedFrames) {
  AnalysisResult r;
  r.leaks.push_back(leak("main;kws_invoke (main.c:42);lstm_eval (lstm.cc:88)", "arena", 644, 1));
  r.persistent.push_back(persistent("main;init", "heap", 12));
  r.peak.live_at_peak.push_back({"main;init", 12, 1});
  r.pools.push_back(pool("heap", 12));
  auto doc = nlohmann::json::parse(speedscope_json({"t.emt", "emt", {}, TimeBase::cycles}, r));
  EXPECT_EQ(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
  const auto& frames = doc["shared"]["frames"];
  ASSERT_EQ(frames.size(), 4u);  // main shared by both stacks
  EXPECT_EQ(frames[1]["name"], "kws_invoke");
  EXPECT_EQ(frames[1]["file"], "main.c");
  EXPECT_EQ(frames[1]["line"], 42);
  const auto& profiles = doc["profiles"];
  ASSERT_EQ(profiles.size(), 3u);
  EXPECT_EQ(profiles[0]["name"], "live at end: arena");
  EXPECT_EQ(profiles[0]["unit"], "bytes");
  EXPECT_EQ(profiles[0]["type"], "sampled");
  EXPECT_EQ(profiles[0]["samples"], nlohmann::json::parse("[[0,1,2]]"));
  EXPECT_EQ(profiles[0]["weights"], nlohmann::json::parse("[644]"));
  EXPECT_EQ(profiles[0]["endValue"], 644);
  EXPECT_EQ(profiles[1]["name"], "live at end: heap");
  EXPECT_EQ(profiles[1]["samples"], nlohmann::json::parse("[[0,3]]"));
  EXPECT_EQ(profiles[2]["name"], "live at peak: heap");
}

TEST(SpeedscopeExport, TheDemoTraceWeighsWhatFoldedWeighs) {
  const TraceRun& run = demo_run();
  auto doc = nlohmann::json::parse(speedscope_json(run.input, run.result));
  uint64_t end = 0;
  for (const auto& p : doc["profiles"])
    if (p["name"].get<std::string>().rfind("live at end", 0) == 0)
      for (const auto& w : p["weights"]) end += w.get<uint64_t>();
  size_t lines = 0;
  EXPECT_EQ(end, folded_total(folded_stacks(run.result, LiveSet::at_end), lines));
}

}  // namespace
}  // namespace edgemem::test
