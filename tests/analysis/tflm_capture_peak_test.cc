// The peak of a TFLite Micro capture (tests/data/tflm_captures) is what its
// arena's two ends held together. The captures also record where TFLM put
// each tensor, in pool "tflm.tensors" (inside the head's bytes): that pool
// was once added on top, and a capture of an 18,000 B arena peaked at
// 29,232 B. Truth: a replay of the raw events that adds the ends' tops,
// and TFLM's own numbers (tests/data/tflm_arena_measured.json): the arena
// it ran in is its smallest, and what it said it used after
// AllocateTensors() is a moment the capture holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace edgemem::test {
namespace {

struct Replay {
  uint64_t peak = 0, placements = 0;
};

// Arena pools grow from one end: usage is the top of the highest live block.
Replay replay(const std::string& bytes) {
  Recorder events;
  TraceContext context;
  auto decoder = make_decoder(Format::emt, context, events);
  decoder->feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  decoder->finish();
  std::map<std::string, std::map<uint64_t, uint64_t>> live;  // pool -> offset -> size
  auto top = [&](const std::string& pool) {
    uint64_t t = 0;
    for (const auto& [offset, size] : live[pool]) t = std::max(t, offset + size);
    return t;
  };
  Replay r;
  for (const Event& e : events.events) {
    if (e.kind != EventKind::alloc && e.kind != EventKind::free && e.kind != EventKind::realloc) continue;
    const std::string pool = context.pools.at(e.pool).name;
    if (pool == "tflm.tensors") {
      ++r.placements;
      continue;
    }
    if (e.kind == EventKind::free) live[pool].erase(e.address);
    if (e.kind == EventKind::realloc) live[pool].erase(e.old_address);
    if (e.kind != EventKind::free) live[pool][e.address] = e.size;
    r.peak = std::max(r.peak, top("tflm") + top("tflm.persistent"));
  }
  return r;
}

TEST(TflmCapturePeak, IsTheArenasTwoEndsTogetherWithoutTheTensorPlacements) {
  const std::string data = EDGEMEM_TEST_DATA_DIR;
  const auto measured = nlohmann::json::parse(read_file(data + "/tflm_arena_measured.json"))["models"];
  size_t captures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data + "/tflm_captures")) {
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const std::string bytes = read_file(entry.path().string());
    const auto run = analyse(Format::emt, bytes);
    const AnalysisResult& r = run->result;
    const Replay truth = replay(bytes);
    const auto& tflm = measured.at(name + ".tflite");
    ++captures;

    EXPECT_EQ(r.peak_bytes, truth.peak);
    EXPECT_LE(r.peak_bytes, tflm.at("min_arena_bytes").get<uint64_t>());
    EXPECT_GE(r.peak_bytes, tflm.at("arena_used_bytes").get<uint64_t>());
    EXPECT_LE(r.peak.max_inference_peak, r.peak_bytes);
    EXPECT_EQ(r.counts.placements, truth.placements);
    EXPECT_GT(r.counts.placements, 0u);
    uint64_t held = 0;
    for (const PoolSummary& p : r.pools) {
      EXPECT_NE(p.name, "tflm.tensors");
      held += p.name == "tflm" || p.name == "tflm.persistent";
    }
    EXPECT_EQ(held, 2u);
    for (const PoolWatermark& w : r.watermarks) EXPECT_NE(w.pool, "tflm.tensors");
    for (const TemporarySite& t : r.temporaries.top) EXPECT_FALSE(t.site.starts_with("tensor:")) << t.site;
  }
  EXPECT_EQ(captures, 29u);
}

}  // namespace
}  // namespace edgemem::test
