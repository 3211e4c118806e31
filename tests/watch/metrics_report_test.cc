// The metrics presenter: names, types and units per format, label escaping,
// a cumulative histogram with stable buckets, and no number where the
// analysis has none.
#include <gtest/gtest.h>

#include "report/metrics_report.h"
#include "report/otlp_report.h"

namespace edgemem {
namespace {

struct Fixture {
  InputSummary input;
  AnalysisResult result;
  Fixture() {
    result.inferences = 400;
    result.leak_rate_bytes_per_inference = 644;
    result.pools.push_back({"arena", PoolKind::arena, 81920, 43164, 40000, 12, std::nullopt});
    result.pools.push_back({"heap", PoolKind::heap, 0, 3200, 0, 0, std::nullopt});
    result.sizes.histogram.push_back({512, 1023, 400, 257600});
    result.sizes.histogram.push_back({2048, 4095, 400, 819200});
    result.fragmentation.pools.push_back({"arena", true, 0.3, 0.125, 40000, 35000, {}});
    result.fragmentation.pools.push_back({"heap", false, 0.9, 0.9, 0, 0, {}});
    input.stats.dropped_records = 3;
    input.stats.failed_checks = 2;
  }
  std::string render(MetricsFormat f, std::string device = "") {
    return metrics_report({&input, &result, std::move(device), {}}, f);
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MetricsReport, PrometheusTextNamesCountersWithTotalAndHasNoUnitLines) {
  std::string t = Fixture().render(MetricsFormat::prometheus);
  EXPECT_TRUE(has(t, "# TYPE edgemem_inferences_total counter\nedgemem_inferences_total 400\n"));
  EXPECT_TRUE(has(t, "edgemem_pool_used_bytes{pool=\"arena\"} 40000\n"));
  EXPECT_TRUE(has(t, "edgemem_pool_size_bytes{pool=\"arena\"} 81920\n"));
  EXPECT_FALSE(has(t, "edgemem_pool_size_bytes{pool=\"heap\"}")) << "an unknown size is not 0";
  EXPECT_TRUE(has(t, "edgemem_leak_rate_bytes_per_inference 644\n"));
  EXPECT_TRUE(has(t, "edgemem_events_dropped_total{reason=\"device_buffer_full\"} 3\n"));
  EXPECT_TRUE(has(t, "edgemem_damaged_records_total 2\n"));
  EXPECT_FALSE(has(t, "# UNIT"));
  EXPECT_FALSE(has(t, "# EOF"));
}

// analyze stopped by Ctrl-C wrote its metrics file with nothing to tell a
// scraper they were of part of the input: marked as the JSON marks it.
TEST(MetricsReport, AnInterruptedAnalyzeIsMarked) {
  Fixture f;
  EXPECT_TRUE(has(f.render(MetricsFormat::prometheus), "edgemem_input_interrupted 0\n"));
  f.input.interrupted = true;
  EXPECT_TRUE(has(f.render(MetricsFormat::prometheus), "# TYPE edgemem_input_interrupted gauge\nedgemem_input_interrupted 1\n"));
  const std::string watching = metrics_report({&f.input, &f.result, "", {}, true}, MetricsFormat::prometheus);
  EXPECT_FALSE(has(watching, "edgemem_input_interrupted")) << "Ctrl-C is how a watch ends";
}

TEST(MetricsReport, OpenMetricsNamesCounterFamiliesWithoutTotalGivesUnitsAndEnds) {
  std::string t = Fixture().render(MetricsFormat::openmetrics);
  EXPECT_TRUE(has(t, "# TYPE edgemem_inferences counter\nedgemem_inferences_total 400\n"));
  EXPECT_TRUE(has(t, "# UNIT edgemem_pool_used_bytes bytes\n"));
  EXPECT_TRUE(has(t, "# UNIT edgemem_fragmentation_ratio ratio\n"));
  EXPECT_TRUE(t.ends_with("# EOF\n"));
}

// watch: every pool has its leak_confirmed sample from the start, 0 until
// confirmed, so a `== 1` rule sees a pool that fills up before the trend's
// 80 inferences (confirmed without a trend: no trend sample for it), and
// one that reads 0 again after a restart.
TEST(MetricsReport, WatchGivesEveryPoolItsLeakConfirmedFromTheStart) {
  Fixture f;
  const std::string none = metrics_report({&f.input, &f.result, "", {}, true}, MetricsFormat::prometheus);
  EXPECT_TRUE(has(none, "edgemem_leak_confirmed{pool=\"arena\"} 0\n")) << none;
  EXPECT_TRUE(has(none, "edgemem_leak_confirmed{pool=\"heap\"} 0\n"));
  const std::vector<TrendView> filled = {{"arena", 0, 1, true, false}};
  const std::string t = metrics_report({&f.input, &f.result, "", filled, true}, MetricsFormat::prometheus);
  EXPECT_TRUE(has(t, "edgemem_leak_confirmed{pool=\"arena\"} 1\n")) << t;
  EXPECT_TRUE(has(t, "edgemem_leak_confirmed{pool=\"heap\"} 0\n"));
  EXPECT_FALSE(has(t, "edgemem_leak_trend_bytes_per_inference{pool=\"arena\"}"));
  EXPECT_FALSE(has(f.render(MetricsFormat::prometheus), "edgemem_leak_confirmed")) << "analyze has no live trend";
}

// OTLP carries the same gauge for every pool from the start: it was sent
// only beside a trend, so a pool that filled up before the trend's 80
// inferences never reached a collector as confirmed.
TEST(MetricsReport, OtlpGivesEveryPoolItsLeakConfirmedFromTheStart) {
  Fixture f;
  auto confirmed = [&](const std::vector<TrendView>& trends) {
    std::map<std::string, double> by_pool;
    const nlohmann::json request = otlp_metrics({&f.input, &f.result, "", trends, true}, 2000, 1000);
    for (const auto& m : request["resourceMetrics"][0]["scopeMetrics"][0]["metrics"])
      if (m["name"] == "edgemem.leak.confirmed")
        for (const auto& p : m["gauge"]["dataPoints"])
          by_pool[p["attributes"][0]["value"]["stringValue"]] = p.value("asDouble", -1.0);
    return by_pool;
  };
  EXPECT_EQ(confirmed({}), (std::map<std::string, double>{{"arena", 0}, {"heap", 0}}));
  EXPECT_EQ(confirmed({{"arena", 0, 1, true, false}}), (std::map<std::string, double>{{"arena", 1}, {"heap", 0}}));
}

TEST(MetricsReport, FragmentationOnlyForPoolsOfKnownExtent) {
  std::string t = Fixture().render(MetricsFormat::prometheus);
  EXPECT_TRUE(has(t, "edgemem_fragmentation_ratio{pool=\"arena\"} 0.125\n"));
  EXPECT_FALSE(has(t, "edgemem_fragmentation_ratio{pool=\"heap\"}"));
}

TEST(MetricsReport, RequestSizeHistogramIsCumulativeOverFixedPowerOfTwoBounds) {
  std::string t = Fixture().render(MetricsFormat::prometheus);
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_bucket{le=\"511\"} 0\n"));
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_bucket{le=\"1023\"} 400\n"));
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_bucket{le=\"2047\"} 400\n"));
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_bucket{le=\"4095\"} 800\n"));
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_bucket{le=\"16777215\"} 800\n"));
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_bucket{le=\"+Inf\"} 800\n"));
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_sum 1076800\n"));
  EXPECT_TRUE(has(t, "edgemem_request_size_bytes_count 800\n"));
}

TEST(MetricsReport, DeviceLabelIsOnEverySampleAndEscaped) {
  std::string t = Fixture().render(MetricsFormat::prometheus, "rig \"7\"\\a\nb");
  EXPECT_TRUE(has(t, "edgemem_inferences_total{device=\"rig \\\"7\\\"\\\\a\\nb\"} 400\n"));
  EXPECT_TRUE(has(t, "edgemem_pool_used_bytes{device=\"rig \\\"7\\\"\\\\a\\nb\",pool=\"arena\"} 40000\n"));
}

TEST(MetricsReport, NoLeakRateWithoutInferenceMarkers) {
  Fixture f;
  f.result.inferences = 0;
  f.result.leak_rate_bytes_per_inference = 0;
  EXPECT_FALSE(has(f.render(MetricsFormat::prometheus), "edgemem_leak_rate_bytes_per_inference 0"));
}

// A trace too short for the leak check, or with end markers only, read
// rate 0 ("no leak") beside a leak check not run and a pool growing 100 B
// per inference.
TEST(MetricsReport, NoLeakRateWhereTheLeakCheckDidNotRun) {
  Fixture f;
  f.result.leak_rate_bytes_per_inference = 0;
  f.result.leak_rate_measured = false;
  EXPECT_FALSE(has(f.render(MetricsFormat::prometheus), "edgemem_leak_rate_bytes_per_inference 0"));
  f.result.leak_rate_measured = true;
  EXPECT_TRUE(has(f.render(MetricsFormat::prometheus), "edgemem_leak_rate_bytes_per_inference 0\n"));
}

TEST(MetricsReport, AcceptHeaderChoosesTheFormat) {
  EXPECT_EQ(negotiate_metrics_format(""), MetricsFormat::prometheus);
  EXPECT_EQ(negotiate_metrics_format("text/plain;version=0.0.4;q=1,*/*;q=0.1"), MetricsFormat::prometheus);
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            MetricsFormat::openmetrics);
  // Found in review: q weights, case and the version were not read.
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text;q=0, text/plain;version=0.0.4"), MetricsFormat::prometheus);
  EXPECT_EQ(negotiate_metrics_format("text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.1"),
            MetricsFormat::prometheus);
  EXPECT_EQ(negotiate_metrics_format("APPLICATION/OPENMETRICS-TEXT; Version=1.0.0"), MetricsFormat::openmetrics);
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text; version=0.0.1"), MetricsFormat::prometheus);
  EXPECT_EQ(negotiate_metrics_format("*/*"), MetricsFormat::prometheus);
  // A quoted parameter value is the same value (RFC 9110).
  EXPECT_EQ(negotiate_metrics_format("application/openmetrics-text; version=\"1.0.0\""), MetricsFormat::openmetrics);
}

// A name that is not UTF-8 (a device's bytes) is U+FFFD in both formats:
// Prometheus refuses a whole scrape with invalid UTF-8 (found in review).
TEST(MetricsReport, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  Fixture f;
  f.result.pools[0].name = "h\xFFp";
  f.result.fragmentation.pools[0].pool = "h\xFFp";
  for (MetricsFormat format : {MetricsFormat::prometheus, MetricsFormat::openmetrics}) {
    std::string t = f.render(format, "board\xC3\xA9\xFF");
    EXPECT_TRUE(has(t, "pool=\"h\xEF\xBF\xBDp\"")) << t;
    EXPECT_TRUE(has(t, "device=\"board\xC3\xA9\xEF\xBF\xBD\"")) << t;  // a valid é is kept
    EXPECT_FALSE(has(t, "\xFF"));
  }
}

}  // namespace
}  // namespace edgemem
