// Alerts from a live trace: a leak that starts mid-run among temporaries is
// confirmed within 100 inferences, a clean soak of 100,000 inferences raises
// nothing, and every other cause is raised once however often it is seen.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "edgemem/decoder.h"
#include "watch/alert_engine.h"
#include "watch/soak_trace.h"

namespace edgemem::watch {
namespace {

struct Seen {
  std::vector<Alert> alerts;
  uint64_t inferences = 0;
  std::vector<PoolTrend> trends;  // at the end
};

// Feeds the log in 4 KiB pieces, as a live stream arrives, taking the alerts after each.
Seen watch_log(const std::string& log, uint64_t warm_up = 0) {
  TraceContext context;
  AnalyzerOptions options;
  options.default_pool_size = 16 << 20;
  options.warm_up_inferences = warm_up;
  Analyzer analyzer(context, options);
  AlertEngine engine;
  analyzer.add_observer(engine);
  auto decoder = make_decoder(Format::log, context, analyzer);
  Seen seen;
  for (size_t i = 0; i < log.size(); i += 4096) {
    decoder->feed({reinterpret_cast<const uint8_t*>(log.data()) + i, std::min<size_t>(4096, log.size() - i)});
    for (Alert& a : engine.take()) seen.alerts.push_back(std::move(a));
  }
  decoder->finish();
  seen.inferences = engine.inferences();
  seen.trends = engine.trends();
  return seen;
}

std::optional<TrendEstimate> heap_trend(const Seen& seen) {
  for (const PoolTrend& t : seen.trends)
    if (t.pool == "heap") return t.estimate;
  return std::nullopt;
}

TEST(AlertEngine, A644BytePerInferenceLeakStartingMidRunIsConfirmedWithin100Inferences) {
  // Starts at every position within a window of 8, each with its own noise.
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    uint64_t start = 5000 + seed;
    Seen seen = watch_log(test::soak_log(6000, start, seed));
    ASSERT_EQ(seen.alerts.size(), 1u) << "seed " << seed;
    const Alert& a = seen.alerts[0];
    EXPECT_EQ(a.kind, AlertKind::leak);
    EXPECT_EQ(a.pool, "heap");
    EXPECT_GE(a.inference, start) << "seed " << seed << ": raised before the leak began";
    EXPECT_LE(a.inference - start, 100u) << "seed " << seed;
    EXPECT_NEAR(a.value, 644, 644 * 0.25) << "seed " << seed;
  }
}

TEST(AlertEngine, ACleanSoakOf100000InferencesWithNoisyTemporariesRaisesNothing) {
  Seen seen = watch_log(test::soak_log(100000, std::nullopt, 11));
  EXPECT_EQ(seen.inferences, 100000u);
  for (const Alert& a : seen.alerts) ADD_FAILURE() << a.message;
}

// A cache that fills over its first 200 inferences climbs as a leak does:
// left out with --warm-up, it raises nothing, and a leak after it is still
// confirmed as soon as without a warm-up.
TEST(AlertEngine, AWarmUpLeftOutRaisesNothingAndALeakAfterItIsStillConfirmed) {
  Seen climbing = watch_log(test::soak_log(3000, std::nullopt, 5, 200));
  ASSERT_EQ(climbing.alerts.size(), 1u) << "the warm-up, watched from the start";
  EXPECT_EQ(climbing.alerts[0].kind, AlertKind::leak);
  EXPECT_LE(climbing.alerts[0].inference, 200u);

  Seen warmed = watch_log(test::soak_log(3000, std::nullopt, 5, 200), 200);
  EXPECT_EQ(warmed.inferences, 3000u);
  for (const Alert& a : warmed.alerts) ADD_FAILURE() << a.message;

  Seen leaking = watch_log(test::soak_log(3000, 1001, 5, 200), 200);
  ASSERT_EQ(leaking.alerts.size(), 1u);
  EXPECT_EQ(leaking.alerts[0].kind, AlertKind::leak);
  EXPECT_GE(leaking.alerts[0].inference, 1001u);
  EXPECT_LE(leaking.alerts[0].inference, 1100u);
}

TraceRun run_with(const std::function<void(AnalysisResult&, DecodeStats&)>& fill) {
  TraceRun run;
  fill(run.result, run.input.stats);
  return run;
}

// Inference ends with the heap fragmented by `rate`; `known`: the records
// say the heap's extent is known (otherwise only a snapshot tells).
void heap_fragmented(AlertEngine& engine, double rate, int inferences, bool known = false) {
  for (int i = 0; i < inferences; ++i) {
    InferenceRecord r;
    r.pools.push_back({"heap", 4096, 4096, 3, rate, known, std::nullopt});
    engine.on_inference(r);
  }
}

// A status tick with nothing to tell: the fragmentation alerts held for it
// (it says whether records were lost) come out.
std::vector<Alert> at_tick(AlertEngine& engine) {
  engine.on_snapshot(run_with([](AnalysisResult&, DecodeStats&) {}));
  return engine.take();
}

// A file already written, or a bulk pipe, gives many inferences before the
// first status tick: each band is still raised for the inference end that
// shows it, with that window's floor (both bands came at the first tick,
// the warning with the danger band's value). It is told at the next tick,
// once that says no records were lost.
TEST(AlertEngine, FragmentationIsJudgedAtTheInferenceThatShowsItBeforeAnyStatusTick) {
  AlertEngine engine;
  heap_fragmented(engine, 0.05, 16, true);
  heap_fragmented(engine, 0.12, 8, true);
  EXPECT_TRUE(engine.take().empty());
  std::vector<Alert> warning = at_tick(engine);
  ASSERT_EQ(warning.size(), 1u);
  EXPECT_EQ(warning[0].inference, 24u);
  EXPECT_DOUBLE_EQ(warning[0].value, 0.12);
  heap_fragmented(engine, 0.29, 16, true);
  std::vector<Alert> danger = at_tick(engine);
  ASSERT_EQ(danger.size(), 1u);
  EXPECT_EQ(danger[0].inference, 32u);
  EXPECT_NE(danger[0].message.find("danger band"), std::string::npos);
}

// Any 8 inference ends in a row, not fixed windows of 8: 14 fragmented ends
// from the second to the fifteenth straddled two windows and raised nothing.
TEST(AlertEngine, FragmentationAtAnyEightEndsInARowIsRaised) {
  AlertEngine engine;
  heap_fragmented(engine, 0.05, 1, true);
  heap_fragmented(engine, 0.44, 14, true);
  heap_fragmented(engine, 0.05, 5, true);
  std::vector<Alert> alerts = at_tick(engine);
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].inference, 9u);
  EXPECT_DOUBLE_EQ(alerts[1].value, 0.44);
  EXPECT_NE(alerts[1].message.find("danger band"), std::string::npos) << alerts[1].message;
  // Seven in a row are not eight.
  AlertEngine short_run;
  heap_fragmented(short_run, 0.05, 1, true);
  heap_fragmented(short_run, 0.44, 7, true);
  heap_fragmented(short_run, 0.05, 20, true);
  EXPECT_TRUE(at_tick(short_run).empty());
}

// A record cut where the followed file was rotated is the data-loss
// alert's count too: its value read 1 beside 15 bytes cut.
TEST(AlertEngine, ADataLossAlertCountsTheBytesOfARecordCutMidStream) {
  AlertEngine engine;
  engine.on_snapshot(run_with([](AnalysisResult&, DecodeStats& s) { s.stream_cut_bytes = 15; }));
  std::vector<Alert> alerts = engine.take();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, AlertKind::data_loss);
  EXPECT_DOUBLE_EQ(alerts[0].value, 15.0);
}

TEST(AlertEngine, EachCauseIsRaisedOnceHoweverManySnapshotsShowIt) {
  AlertEngine engine;
  heap_fragmented(engine, 0.3, 16);
  TraceRun run = run_with([](AnalysisResult& r, DecodeStats& s) {
    r.overflow_count = 1;
    r.overflows.push_back({100, 224, 4096, 3392, 1024, 3072, "model.c:88", "arena"});
    r.guard_failure_count = 3;
    r.guard_failures.push_back({200, 8, 1, "arena", ""});
    r.fragmentation.alloc_failures = 2;
    r.fragmentation.failures.push_back({300, 2840, 7348, 2820, 4, 1, "heap", "main.c:58", true});
    r.fragmentation.pools.push_back({"heap", true, 0.6, 0.5, 7348, 2820, {}});
    s.dropped_records = 5;
  });
  engine.on_snapshot(run);
  engine.on_snapshot(run);
  std::vector<Alert> alerts = engine.take();
  std::vector<std::string> kinds;
  for (const Alert& a : alerts) kinds.push_back(std::string(to_string(a.kind)) + "/" + a.pool);
  EXPECT_EQ(kinds, (std::vector<std::string>{"overflow/arena", "guard/arena", "alloc-failure/heap", "data-loss/",
                                             "fragmentation/heap", "fragmentation/heap"}));
  EXPECT_NE(alerts[4].message.find("warning band"), std::string::npos) << alerts[4].message;
  EXPECT_NE(alerts[5].message.find("danger band"), std::string::npos);
  EXPECT_NE(alerts[3].message.find("5 records lost before they were written"), std::string::npos) << alerts[3].message;
  EXPECT_DOUBLE_EQ(alerts[3].value, 5.0);  // the count, as EDGEMEM_VALUE gives it
  engine.on_snapshot(run);
  EXPECT_TRUE(engine.take().empty());
  EXPECT_TRUE(engine.fired());
}

// A cause is a kind and a pool: a second pool's overflow, guard failure or
// refused request is alerted too, each with its own pool's count (only the
// first pool's was, with both pools' count).
TEST(AlertEngine, EachPoolsOverflowGuardAndFailureIsItsOwnAlert) {
  AlertEngine engine;
  TraceRun run = run_with([](AnalysisResult& r, DecodeStats&) {
    r.overflow_count = 3;
    r.overflows.push_back({100, 0, 2000, 1000, 1000, 1000, "a.c:1", "a"});
    r.overflows.push_back({110, 0, 3000, 1000, 2000, 1000, "b.c:2", "b"});
    r.overflows.push_back({120, 0, 2500, 1000, 1500, 1000, "a.c:1", "a"});
    r.guard_failure_count = 2;
    r.guard_failures.push_back({200, 1, 1, "a", ""});
    r.guard_failures.push_back({210, 1, 1, "b", ""});
    r.fragmentation.alloc_failures = 2;
    r.fragmentation.failures.push_back({300, 5000, 0, 0, 1, 1, "a", "", false});
    r.fragmentation.failures.push_back({310, 6000, 0, 0, 1, 1, "b", "", false});
  });
  engine.on_snapshot(run);
  std::vector<std::string> got;
  for (const Alert& a : engine.take()) got.push_back(fmt::format("{}/{}={}", to_string(a.kind), a.pool, a.value));
  EXPECT_EQ(got, (std::vector<std::string>{"overflow/a=2", "overflow/b=1", "guard/a=1", "guard/b=1", "alloc-failure/a=1",
                                           "alloc-failure/b=1"}));
}

// Once records were lost mid-trace a lost allocation reads as a hole the
// heap does not have: analyze leaves fragmentation unjudged, and watch
// raised the band's alert beside a status line saying "frag unjudged".
// The inference ends before the first tick (a backlog) are held for it:
// it tells the loss, and they raise nothing either.
TEST(AlertEngine, NoFragmentationAlertOnceRecordsWereLostMidTrace) {
  const TraceRun lost = run_with([](AnalysisResult& r, DecodeStats&) { r.lost_mid_trace = "3 frees of blocks never seen"; });
  AlertEngine engine;
  engine.on_snapshot(lost);
  heap_fragmented(engine, 0.5, 32, true);
  EXPECT_TRUE(at_tick(engine).empty());
  AlertEngine backlog;
  heap_fragmented(backlog, 0.5, 32, true);
  backlog.on_snapshot(lost);
  EXPECT_TRUE(backlog.take().empty());
  EXPECT_FALSE(backlog.fired());
  AlertEngine whole;
  heap_fragmented(whole, 0.5, 32, true);
  EXPECT_EQ(at_tick(whole).size(), 2u);
}

TEST(AlertEngine, FragmentationOnlyWhenItLastsAcrossAWindowOfInferenceEnds) {
  AlertEngine engine;
  TraceRun run = run_with([](AnalysisResult& r, DecodeStats&) {
    r.fragmentation.pools.push_back({"heap", true, 0.6, 0.0, 4096, 4096, {}});
  });
  engine.on_snapshot(run);
  // Cut up at seven ends of eight, whole at one: the floor is 0.
  for (int w = 0; w < 10; ++w) {
    heap_fragmented(engine, 0.5, 7);
    heap_fragmented(engine, 0.0, 1);
  }
  EXPECT_TRUE(at_tick(engine).empty());
  heap_fragmented(engine, 0.15, 8);
  auto alerts = at_tick(engine);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, AlertKind::fragmentation);
  EXPECT_NE(alerts[0].message.find("warning band: at least 15%"), std::string::npos) << alerts[0].message;
}

TEST(AlertEngine, FragmentationOfAPoolOfUnknownExtentIsNotJudged) {
  AlertEngine engine;
  heap_fragmented(engine, 0.9, 64);
  TraceRun run = run_with([](AnalysisResult& r, DecodeStats&) {
    r.fragmentation.pools.push_back({"heap", false, 0.9, 0.9, 0, 0, {}});
  });
  engine.on_snapshot(run);
  EXPECT_TRUE(engine.take().empty());
}

// A device in summary mode says how many requests a pool refused, with no
// sizes: still a failed allocation, raised for that pool.
TEST(AlertEngine, ARequestRefusedInASummaryRecordIsAFailedAllocation) {
  AlertEngine engine;
  TraceRun run = run_with([](AnalysisResult& r, DecodeStats&) {
    r.fragmentation.alloc_failures = 1;
    PoolSummary heap;
    heap.name = "heap";
    heap.refused_in_summaries = 1;
    r.pools.push_back(heap);
  });
  engine.on_snapshot(run);
  std::vector<Alert> alerts = engine.take();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, AlertKind::alloc_failure);
  EXPECT_EQ(alerts[0].pool, "heap");
  EXPECT_EQ(alerts[0].value, 1.0);
  engine.on_snapshot(run);
  EXPECT_TRUE(engine.take().empty());
}

// A device restart starts the trends anew, as the analysis does: the boot
// before's confirmed leak read on through a clean new boot ("+64 B/inf,
// confirmed" beside a heap of 0 B), and a leak of the new boot was never
// raised, alerts being once per pool.
TEST(AlertEngine, ARestartStartsTheLeakTrendAnewAndALeakOfTheNewBootIsRaised) {
  const std::string leaking = test::soak_log(600, 100, 3), clean = test::soak_log(300, std::nullopt, 4);
  Seen seen = watch_log(leaking + "[MEM][1] BOOT\n" + clean);
  ASSERT_EQ(seen.alerts.size(), 1u);
  EXPECT_LE(seen.alerts[0].inference, 200u);
  auto trend = heap_trend(seen);
  EXPECT_TRUE(!trend || !trend->confirmed) << "the first boot's leak still confirmed";

  seen = watch_log(leaking + "[MEM][1] BOOT\n" + leaking);
  ASSERT_EQ(seen.alerts.size(), 2u);
  EXPECT_GT(seen.alerts[1].inference, 700u);
  EXPECT_NE(seen.alerts[1].message.find(" of boot 2"), std::string::npos) << seen.alerts[1].message;
}

// A leak that fills its heap stops raising the floor: the trend's fit goes
// flat while its requests fail. The gauge of a confirmed leak stays 1 (it
// fell to 0, and an alert rule on it cleared as the device began failing).
TEST(AlertEngine, ALeakStaysConfirmedWhenItsPoolIsFull) {
  std::string log = "[MEM][0] POOL name=heap kind=heap base=0x20000000 size=12800\n";
  uint64_t t = 1;
  for (int i = 1; i <= 400; ++i, t += 3) {
    log += fmt::format("[MEM][{}] INFER begin {}\n", t, i);
    log += i <= 200 ? fmt::format("[MEM][{}] ALLOC size=64 addr=0x{:x} pool=heap site=model.c:58\n", t + 1, 0x20000000 + 64 * (i - 1))
                    : fmt::format("[MEM][{}] ALLOC_FAIL size=64 pool=heap site=model.c:58\n", t + 1);
    log += fmt::format("[MEM][{}] INFER end {}\n", t + 2, i);
  }
  Seen seen = watch_log(log);
  ASSERT_FALSE(seen.alerts.empty());
  EXPECT_EQ(seen.alerts[0].kind, AlertKind::leak);
  auto trend = heap_trend(seen);
  ASSERT_TRUE(trend);
  EXPECT_TRUE(trend->confirmed);
}

// A leak that fills a small pool before the trend can confirm it (the QEMU
// leak firmware's 40 KiB arena is full at inference 63; the trend needs 80):
// only "alloc-failure" was raised, and the status said "leak: none".
TEST(AlertEngine, ALeakTheAnalysisSeesStoppedByFailuresIsALeakAlert) {
  AlertEngine engine;
  TraceRun run = run_with([](AnalysisResult& r, DecodeStats&) {
    SiteLeak l;
    l.site = "model.c:58";
    l.pool = "arena.persistent";
    l.bytes_per_inference = 644.0;
    l.growth = LeakGrowth{};
    l.growth->stopped_after_inference = 63;
    l.growth->failed_requests = 17;
    r.leaks.push_back(l);
  });
  engine.on_snapshot(run);
  engine.on_snapshot(run);
  auto alerts = engine.take();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, AlertKind::leak);
  EXPECT_EQ(alerts[0].message, "pool arena.persistent leaks: 644 B per inference at model.c:58 until it was full at "
                               "inference 63; its 17 requests since failed");
}

TEST(AlertEngine, ACleanSnapshotRaisesNothing) {
  AlertEngine engine;
  TraceRun run = run_with([](AnalysisResult& r, DecodeStats&) { r.fragmentation.band = Band::healthy; });
  engine.on_snapshot(run);
  EXPECT_TRUE(engine.take().empty());
  EXPECT_FALSE(engine.fired());
}

}  // namespace
}  // namespace edgemem::watch
