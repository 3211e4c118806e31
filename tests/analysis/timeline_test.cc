// Each pool's usage over trace time and the inference boundaries: a spike of
// one event survives any trace length, and a million events keep the result
// as small as a hundred.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "test_support.h"

namespace edgemem::test {
namespace {

struct Feeder {
  TraceContext context;
  Analyzer analyzer{context};
  PoolId pool = context.pools.intern("arena", PoolKind::arena);
  uint64_t time = 0;
  void event(EventKind kind, uint64_t address = 0, uint64_t size = 0) {
    Event e;
    e.kind = kind;
    e.time = time += 10;
    e.address = address;
    e.size = size;
    e.pool = pool;
    analyzer.on_event(e);
  }
};

const PoolTimeline& arena_timeline(const AnalysisResult& r) {
  auto it = std::find_if(r.timelines.begin(), r.timelines.end(), [](const PoolTimeline& t) { return t.pool == "arena"; });
  if (it == r.timelines.end()) throw std::runtime_error("no timeline for the arena");
  return *it;
}

TEST(Timeline, EveryEventOfAShortTraceIsSampledAtItsTime) {
  std::string log =
      "[MEM][100] ALLOC size=64 offset=0 pool=arena\n"
      "[MEM][200] ALLOC size=32 offset=64 pool=arena\n"
      "[MEM][300] ALLOC_FAIL size=4096 pool=arena\n"
      "[MEM][400] FREE offset=64 pool=arena\n"
      "[MEM][500] ALLOC size=8 addr=0x2000 pool=heap\n";
  auto run = analyse(Format::log, log);
  const PoolTimeline& t = arena_timeline(run->result);
  EXPECT_EQ(t.samples, 4u);
  using P = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(t.used_bytes, (P{{100, 64}, {200, 96}, {300, 96}, {400, 64}}));
  EXPECT_EQ(t.live_blocks, (P{{100, 1}, {200, 2}, {300, 2}, {400, 1}}));
  ASSERT_EQ(run->result.timelines.size(), 2u);
  EXPECT_EQ(run->result.timelines[1].pool, "heap");
  EXPECT_EQ(run->result.timelines[1].used_bytes, (P{{500, 8}}));
}

TEST(Timeline, AOneEventSpikeInAMillionSurvivesReduction) {
  Feeder f;
  uint64_t spike_time = 0;
  for (int i = 0; i < 500'000; ++i) {
    bool spike = i == 333'333;
    f.event(EventKind::alloc, 0, spike ? 1'000'000 : 100);
    if (spike) spike_time = f.time;
    f.event(EventKind::free, 0);
  }
  AnalysisResult r = f.analyzer.finish();
  const PoolTimeline& t = arena_timeline(r);
  EXPECT_EQ(t.samples, 1'000'000u);
  EXPECT_LE(t.used_bytes.size(), 512u);
  EXPECT_LE(t.live_blocks.size(), 512u);
  EXPECT_NE(std::find(t.used_bytes.begin(), t.used_bytes.end(), std::make_pair(spike_time, uint64_t{1'000'000})),
            t.used_bytes.end());
  EXPECT_TRUE(std::is_sorted(t.used_bytes.begin(), t.used_bytes.end()));
}

// A trace longer than the bound whose last event is neither the first, the
// lowest nor the highest of its bucket: the lines still end at what the pool
// holds at the end, as its summary says.
TEST(Timeline, TheLinesEndAtThePoolsFinalState) {
  Feeder f;
  for (int i = 0; i < 300; ++i) {
    f.event(EventKind::alloc, 0, 100);
    f.event(EventKind::free, 0);
  }
  f.event(EventKind::alloc, 0, 200);
  f.event(EventKind::free, 0);
  f.event(EventKind::alloc, 0, 100);
  AnalysisResult r = f.analyzer.finish();
  const PoolTimeline& t = arena_timeline(r);
  EXPECT_EQ(t.samples, 603u);
  EXPECT_LE(t.used_bytes.size(), 512u);
  ASSERT_EQ(r.pools.size(), 1u);
  EXPECT_EQ(r.pools[0].final_bytes, 100u);
  EXPECT_EQ(t.used_bytes.back(), std::make_pair(f.time, uint64_t{100}));
  EXPECT_EQ(t.live_blocks.back(), std::make_pair(f.time, uint64_t{1}));
}

TEST(Timeline, AMillionEventsAndInferencesStayUnderTheirBounds) {
  Feeder f;
  for (uint64_t i = 1; i <= 250'000; ++i) {
    f.event(EventKind::inference_begin, 0, i);
    f.event(EventKind::alloc, 16 * i, 16);  // a leak: live blocks keep rising
    f.event(EventKind::inference_end, 0, i);
    f.event(EventKind::arena_reset);
  }
  AnalysisResult r = f.analyzer.finish();
  const InferenceMarks& m = r.inference_marks;
  EXPECT_EQ(m.total, 250'000u);
  EXPECT_LE(m.spans.size(), 4096u);
  EXPECT_GE(m.spans.size(), 2048u);  // halved at most once past the cap
  EXPECT_EQ(m.dropped, m.total - m.spans.size());
  // Evenly spread: the same stride between every kept inference, all complete.
  ASSERT_GE(m.spans.size(), 2u);
  uint64_t stride = m.spans[1].number - m.spans[0].number;
  EXPECT_EQ(m.spans[0].number, 1u);
  for (size_t i = 1; i < m.spans.size(); ++i) {
    EXPECT_EQ(m.spans[i].number - m.spans[i - 1].number, stride) << i;
    ASSERT_TRUE(m.spans[i].begin_time && m.spans[i].end_time);
    EXPECT_EQ(*m.spans[i].end_time - *m.spans[i].begin_time, 20u);
  }
  const PoolTimeline& t = arena_timeline(r);
  EXPECT_EQ(t.samples, 500'000u);
  EXPECT_LE(t.used_bytes.size(), 512u);

  // One more begun and never ended: past the cap it is still drawn, the
  // last span, open (the exports once drew no open inference on long traces).
  f.event(EventKind::inference_begin, 0, 250'001);
  AnalysisResult open = f.analyzer.finish();
  const InferenceMarks& o = open.inference_marks;
  ASSERT_FALSE(o.spans.empty());
  EXPECT_EQ(o.spans.back().number, 250'001u);
  EXPECT_TRUE(o.spans.back().begin_time);
  EXPECT_FALSE(o.spans.back().end_time);
  EXPECT_EQ(o.dropped, o.total - o.spans.size());
}

TEST(Timeline, InferenceSpansCarryTheDevicesNumbersAndMissingEnds) {
  std::string numbered =
      "[MEM][10] INFER begin 100\n[MEM][20] INFER end 100\n"
      "[MEM][30] INFER end 101\n"      // an end without its begin
      "[MEM][40] INFER begin 102\n";  // still running when the trace stops
  auto run = analyse(Format::log, numbered);
  const auto& spans = run->result.inference_marks.spans;
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].number, 100u);
  EXPECT_EQ(spans[0].begin_time, 10u);
  EXPECT_EQ(spans[0].end_time, 20u);
  EXPECT_EQ(spans[1].number, 101u);
  EXPECT_FALSE(spans[1].begin_time);
  EXPECT_EQ(spans[1].end_time, 30u);
  EXPECT_EQ(spans[2].begin_time, 40u);
  EXPECT_FALSE(spans[2].end_time);
  EXPECT_TRUE(spans[2].running);
  EXPECT_FALSE(spans[0].running);
  EXPECT_EQ(run->result.inference_marks.dropped, 0u);

  // Still running is not only the last: thread 1's inference 2 ran on while
  // thread 2 ran 3 and 4. Thread 2's inference 5 never ended (it began 6).
  auto threads = analyse(Format::log,
                         "[MEM][5] INFER begin 1 thread=2\n[MEM][6] INFER end 1 thread=2\n"
                         "[MEM][10] INFER begin 2 thread=1\n"
                         "[MEM][20] INFER begin 3 thread=2\n[MEM][30] INFER end 3 thread=2\n"
                         "[MEM][40] INFER begin 4 thread=2\n[MEM][50] INFER end 4 thread=2\n"
                         "[MEM][60] INFER begin 5 thread=2\n[MEM][70] INFER begin 6 thread=2\n"
                         "[MEM][80] INFER end 6 thread=2\n");
  std::vector<std::pair<uint64_t, bool>> running;
  for (const InferenceSpan& s : threads->result.inference_marks.spans) running.emplace_back(s.number, s.running);
  EXPECT_EQ(running, (std::vector<std::pair<uint64_t, bool>>{
                         {1, false}, {2, true}, {3, false}, {4, false}, {5, false}, {6, false}}));

  // Unnumbered markers count from 1, as everywhere else.
  auto unnumbered = analyse(Format::log, "[MEM][10] INFER begin\n[MEM][20] INFER end\n[MEM][30] INFER begin\n[MEM][40] INFER end\n");
  ASSERT_EQ(unnumbered->result.inference_marks.spans.size(), 2u);
  EXPECT_EQ(unnumbered->result.inference_marks.spans[0].number, 1u);
  EXPECT_EQ(unnumbered->result.inference_marks.spans[1].number, 2u);
}

// Timelines are drawn in time: a clock is named only where timestamps are its cycles.
TEST(Timeline, TheClockIsNamedOnlyForCycleTimestamps) {
  AnalyzerOptions at_80mhz;
  at_80mhz.clock_hz = 80e6;
  std::string log = "[MEM][100] ALLOC size=8 offset=0\n";
  EXPECT_EQ(analyse(Format::log, log, at_80mhz)->result.clock_hz, 80e6);
  EXPECT_FALSE(analyse(Format::log, log)->result.clock_hz);
  std::string seed = "\xa1";
  seed += std::string("\x00\x08", 2);
  be32(seed, 0x20000000);
  auto sequence = analyse(Format::seedbin, seed, at_80mhz);  // seed records carry no time: numbers, not cycles
  ASSERT_EQ(sequence->result.counts.allocs, 1u);
  EXPECT_FALSE(sequence->result.clock_hz);
}

}  // namespace
}  // namespace edgemem::test
