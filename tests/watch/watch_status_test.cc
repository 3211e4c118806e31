// The status line: the numbers a person glances at during a soak, and
// "unknown" said as such rather than as a zero.
#include <gtest/gtest.h>

#include "report/watch_status.h"

namespace edgemem {
namespace {

TEST(WatchStatus, OneLineWithPoolsTrendForecastBandFailuresAndDrops) {
  InputSummary input;
  input.stats.dropped_records = 3;
  AnalysisResult r;
  r.inferences = 1234;
  r.pools.push_back({"arena", PoolKind::arena, 81920, 43164, 40000, 12, std::nullopt});
  r.pools.push_back({"unused", PoolKind::heap, 0, 0, 0, 0, std::nullopt});
  Forecast fc;
  fc.pool = "arena";
  fc.inferences = 60;
  fc.seconds = 90;
  r.exhaustion_forecast = fc;
  r.fragmentation.band = Band::warning;
  r.fragmentation.alloc_failures = 2;
  std::string line = watch_status_line({&input, &r, {{"arena", 644, 3e-9, true}}, 2});
  EXPECT_EQ(line,
            "1,234 inferences | 2 alerts | leak arena +644 B/inf (p=3e-09, confirmed) | arena full in 60 inf (90 s) | "
            "frag worst warning | 2 failed | 3 dropped | arena 40,000 B of 81,920 B, peak 43,164 B");
}

TEST(WatchStatus, AForecastShorterThanAMillisecondIsInMicroseconds) {
  InputSummary input;
  AnalysisResult r;
  r.exhaustion_forecast = Forecast{"arena", 13, 463e-6, 8000, false};
  EXPECT_NE(watch_status_line({&input, &r, {}, 0}).find("arena full in 13 inf (463 us)"), std::string::npos);
}

TEST(WatchStatus, SaysWhatIsNotKnownYet) {
  InputSummary input;
  AnalysisResult r;
  r.pools.push_back({"heap", PoolKind::heap, 0, 100, 100, 1, std::nullopt});
  EXPECT_EQ(watch_status_line({&input, &r, {}, 0}),
            "0 inferences | leak: too few inferences | frag unjudged | 0 failed | 0 dropped | heap 100 B, peak 100 B");
  EXPECT_EQ(watch_status_line({&input, &r, {{"heap", -2, 0.9, false}}, 0}),
            "0 inferences | leak: none | frag unjudged | 0 failed | 0 dropped | heap 100 B, peak 100 B");
  r.inferences = 150;
  EXPECT_EQ(watch_status_line({&input, &r, {}, 0, 200}),
            "150 inferences | leak: warm-up to 200 | frag unjudged | 0 failed | 0 dropped | heap 100 B, peak 100 B");
  r.inferences = 201;
  EXPECT_EQ(watch_status_line({&input, &r, {}, 0, 200}),
            "201 inferences | leak: too few inferences | frag unjudged | 0 failed | 0 dropped | heap 100 B, peak 100 B");
}

}  // namespace
}  // namespace edgemem
