// Observers see every inference as it ends, and snapshot() answers mid-trace
// without disturbing the analysis: what a live view sits on.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "edgemem/report.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

// Seed 001 §4.1: the LSTM op keeps 644 B of state cache every inference.
std::string lstm_log(int inferences) {
  std::string log;
  uint64_t t = 0, top = 40588;
  auto line = [&](const std::string& s) { log += fmt::format("[MEM][{}] {}\n", t += 100, s); };
  line("ALLOC size=40588 align=16 offset=0 site=micro_allocator.cc:310");
  for (int i = 1; i <= inferences; ++i) {
    line(fmt::format("INFER begin {}", i));
    line(fmt::format("ALLOC size=644 align=4 offset={} site=lstm.cc:88", top));
    top += 644;
    line(fmt::format("ALLOC size=2048 align=16 offset={} site=conv.cc:140", top));
    line(fmt::format("FREE offset={}", top));
    if (i == 7) line("ALLOC_FAIL size=900000 align=4 site=big.cc:1");
    line(fmt::format("INFER end {}", i));
  }
  return log;
}

struct Records : InferenceObserver {
  std::vector<InferenceRecord> seen;
  std::vector<std::string> pool_names;
  void on_inference(const InferenceRecord& r) override {
    seen.push_back(r);
    for (const auto& p : r.pools) pool_names.emplace_back(p.pool);
  }
};

TEST(InferenceObserver, SeesTheLstmArenaRiseByExactly644BytesEveryInference) {
  TraceContext context;
  AnalyzerOptions options;
  options.default_pool_size = 512 * 1024;
  Analyzer analyzer(context, options);
  Records records;
  analyzer.add_observer(records);
  auto decoder = make_decoder(Format::log, context, analyzer);
  std::string log = lstm_log(50);
  decoder->feed({reinterpret_cast<const uint8_t*>(log.data()), log.size()});
  decoder->finish();

  ASSERT_EQ(records.seen.size(), 50u);
  for (size_t i = 0; i < records.seen.size(); ++i) {
    const InferenceRecord& r = records.seen[i];
    EXPECT_EQ(r.number, i + 1);
    ASSERT_EQ(r.pools.size(), 1u);
    EXPECT_EQ(records.pool_names[i], "arena");
    EXPECT_EQ(r.pools[0].used_bytes, 40588u + 644u * (i + 1));
    EXPECT_EQ(r.pools[0].peak_bytes, 40588u + 644u * (i + 1) + 2048u);  // the conv scratch, freed before the end
    EXPECT_EQ(r.pools[0].live_blocks, i + 2);
    ASSERT_TRUE(r.pools[0].fragmentation_rate);
    EXPECT_EQ(r.failed_allocations, i + 1 == 7 ? 1u : 0u);
    if (i > 0) {
      EXPECT_EQ(r.pools[0].used_bytes - records.seen[i - 1].pools[0].used_bytes, 644u);
      EXPECT_GT(r.time, records.seen[i - 1].time);
    }
  }
}

// Firmware that marks only the end of each inference: a request refused
// between two end markers belongs to the inference the second one ends.
TEST(InferenceObserver, CountsFailuresOfInferencesMarkedOnlyAtTheirEnd) {
  std::string log;
  uint64_t t = 0;
  auto line = [&](const std::string& s) { log += fmt::format("[MEM][{}] {}\n", t += 100, s); };
  for (int i = 1; i <= 5; ++i) {
    line(fmt::format("ALLOC size=64 align=4 offset=0 site=op.cc:{}", i));
    line("FREE offset=0");
    if (i == 3) line("ALLOC_FAIL size=900000 align=4 site=big.cc:1");
    line(fmt::format("INFER end {}", i));
  }
  TraceContext context;
  AnalyzerOptions options;
  options.default_pool_size = 4096;
  Analyzer analyzer(context, options);
  Records records;
  analyzer.add_observer(records);
  auto decoder = make_decoder(Format::log, context, analyzer);
  decoder->feed({reinterpret_cast<const uint8_t*>(log.data()), log.size()});
  decoder->finish();
  ASSERT_EQ(records.seen.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(records.seen[i].failed_allocations, i == 2 ? 1u : 0u) << "inference " << i + 1;
}

// Feeds `log` line by line, taking a snapshot after `at` lines when asked.
struct Split {
  AnalysisResult mid, end;
};
Split run_with_snapshot(const std::string& log, size_t at, bool take) {
  TraceContext context;
  AnalyzerOptions options;
  options.default_pool_size = 512 * 1024;
  Analyzer analyzer(context, options);
  auto decoder = make_decoder(Format::log, context, analyzer);
  Split out;
  size_t line = 0, pos = 0;
  while (pos < log.size()) {
    size_t next = log.find('\n', pos) + 1;
    decoder->feed({reinterpret_cast<const uint8_t*>(log.data()) + pos, next - pos});
    pos = next;
    if (++line == at && take) out.mid = analyzer.snapshot();
  }
  decoder->finish();
  out.end = analyzer.finish();
  return out;
}

std::string as_json(const AnalysisResult& r) {
  InputSummary input{"t.log", "log", {}, TimeBase::cycles};
  return json_report(input, r);
}

TEST(AnalyzerSnapshot, MidTraceEqualsFinishOnTheSamePrefixAndLeavesTheRunUntouched) {
  std::string log = lstm_log(40);
  // Stop mid-inference, just after the conv scratch made a new peak that no free has yet followed.
  size_t lines = 1 + 5 * 20 + 1 + 3;  // inference 7 has one more line, the refused request
  size_t cut = 0;
  for (size_t i = 0; i < lines; ++i) cut = log.find('\n', cut) + 1;
  std::string prefix = log.substr(0, cut);

  Split with = run_with_snapshot(log, lines, true);
  Split prefix_only = run_with_snapshot(prefix, 0, false);
  Split without = run_with_snapshot(log, 0, false);

  EXPECT_EQ(as_json(with.mid), as_json(prefix_only.end));
  EXPECT_EQ(with.mid.inferences, 20u);
  EXPECT_EQ(with.mid.peak_bytes, 40588u + 21u * 644u + 2048u);
  EXPECT_EQ(as_json(with.end), as_json(without.end));
  EXPECT_EQ(with.end.inferences, 40u);
  ASSERT_EQ(with.end.leaks.size(), 1u);
  EXPECT_EQ(with.end.leaks[0].count, 40u);
}

}  // namespace
}  // namespace edgemem::test
