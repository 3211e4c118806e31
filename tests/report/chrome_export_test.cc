// The Chrome Trace Event export parses back into the analysis' numbers:
// counters per pool, the leak's instants and every kept inference.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "edgemem/exports.h"
#include "report/exports_test_support.h"

namespace edgemem::test {
namespace {

using nlohmann::json;

TEST(ChromeTraceExport, TheDemoTraceParsesBackIntoItsCountersInstantsAndInferences) {
  const TraceRun& run = demo_run();
  const AnalysisResult& r = run.result;
  json doc = json::parse(chrome_trace_json(run.input, r));
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::map<int, std::string> process;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"].get<int>()] = e["args"]["name"];

  ASSERT_TRUE(r.clock_hz);
  for (const PoolTimeline& t : r.timelines) {
    std::vector<std::pair<double, uint64_t>> used;
    for (const json& e : doc["traceEvents"])
      if (e["ph"] == "C" && e["name"] == "used bytes" && process[e["pid"].get<int>()] == "pool " + t.pool)
        used.emplace_back(e["ts"].get<double>(), e["args"]["bytes"].get<uint64_t>());
    ASSERT_EQ(used.size(), t.used_bytes.size()) << t.pool;
    for (size_t i = 0; i < used.size(); ++i) {
      EXPECT_EQ(used[i].second, t.used_bytes[i].second);
      EXPECT_NEAR(used[i].first, static_cast<double>(t.used_bytes[i].first) / *r.clock_hz * 1e6, 1e-3);  // µs
    }
  }
  size_t slices = 0, leak_instants = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_EQ(process[e["pid"].get<int>()], "inferences");
    }
    if (e["ph"] == "i" && e["name"].get<std::string>().rfind("leak", 0) == 0) {
      ++leak_instants;
      EXPECT_EQ(e["s"], "p");
      EXPECT_TRUE(e["args"].contains("site"));
    }
  }
  size_t complete = std::count_if(r.inference_marks.spans.begin(), r.inference_marks.spans.end(),
                                  [](const InferenceSpan& s) { return s.begin_time && s.end_time; });
  ASSERT_GT(complete, 0u);
  EXPECT_EQ(slices, complete);
  EXPECT_EQ(leak_instants, 2 * r.leaks.size());
}

TEST(ChromeTraceExport, AnInferenceStillRunningIsABeginAndAnEndOnlyIsAnInstant) {
  AnalysisResult r;
  r.inference_marks.spans = {{1, std::nullopt, 50}, {2, 60, std::nullopt, true}};
  json doc = json::parse(chrome_trace_json({"t.log", "log", {}, TimeBase::sequence}, r));
  std::vector<std::string> phases;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] != "M") phases.push_back(e["ph"]);
  EXPECT_EQ(phases, (std::vector<std::string>{"i", "B"}));
  EXPECT_NE(doc["otherData"]["time"].get<std::string>().find("sequence number"), std::string::npos);

  // A begin whose end never came (its thread began another): a 'B' there
  // held the rest of the trace. One still running stays open, last or not.
  r.inference_marks.spans = {{1, 10, std::nullopt}, {2, 60, 70}};
  doc = json::parse(chrome_trace_json({"t.log", "log", {}, TimeBase::sequence}, r));
  phases.clear();
  std::string said;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] != "M") {
      phases.push_back(e["ph"]);
      if (e["ph"] == "i") said = e["name"];
    }
  EXPECT_EQ(phases, (std::vector<std::string>{"i", "X"}));
  EXPECT_EQ(said, "inference 1 begins (no end marker)");
  r.inference_marks.spans = {{1, 10, std::nullopt, true}, {2, 60, 70}};
  doc = json::parse(chrome_trace_json({"t.log", "log", {}, TimeBase::sequence}, r));
  std::vector<std::pair<std::string, int>> rows;  // phase, tid
  for (const json& e : doc["traceEvents"])
    if (e["ph"] != "M") rows.emplace_back(e["ph"], e["tid"]);
  EXPECT_EQ(rows, (std::vector<std::pair<std::string, int>>{{"B", 0}, {"X", 1}}));
}

// Overlapping inferences (several threads): complete events of one thread
// row must nest, so each overlapping one is on a row of its own.
TEST(ChromeTraceExport, OverlappingInferencesAreOnRowsOfTheirOwn) {
  AnalysisResult r;
  r.inference_marks.spans = {{1, 1, 6}, {2, 2, 8}, {3, 7, 9}};
  json doc = json::parse(chrome_trace_json({"t.log", "log", {}, TimeBase::sequence}, r));
  std::map<std::string, int> row;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "X") row[e["name"]] = e["tid"];
  EXPECT_EQ(row, (std::map<std::string, int>{{"inference 1", 0}, {"inference 2", 1}, {"inference 3", 0}}));
}

// The result keeps the first 100 failures and a bounded set of inferences: the file says what it leaves out.
TEST(ChromeTraceExport, SaysWhatTheBoundedResultLeftOut) {
  AnalysisResult r;
  PoolSummary heap;
  heap.name = "heap";
  r.pools.push_back(heap);
  for (uint64_t i = 0; i < 100; ++i) {
    AllocFailure f;
    f.pool = "heap";
    f.time = i;
    f.size = 64;
    r.fragmentation.failures.push_back(f);
  }
  r.fragmentation.alloc_failures = 150;
  r.inference_marks.spans = {{1, 0, 5}, {3, 10, 15}};
  r.inference_marks.total = 4;
  r.inference_marks.dropped = 2;
  r.inferences = 4;
  json doc = json::parse(chrome_trace_json({"t.log", "log", {}, TimeBase::cycles}, r));
  EXPECT_EQ(doc["otherData"]["events"], "shows 100 of 150 failed allocations (of each kind the first 100, then each other "
                                        "pool's first; counts of all pools)");
  EXPECT_EQ(doc["otherData"]["inferences"], "2 of 4 inferences shown, evenly spread (about one in 2)");
  // An interrupted capture: the summary counts 3 completed, the marks 4 begun.
  r.inferences = 3;
  doc = json::parse(chrome_trace_json({"t.log", "log", {}, TimeBase::cycles}, r));
  EXPECT_EQ(doc["otherData"]["inferences"],
            "2 of 4 inferences shown, evenly spread (about one in 2); 1 begun and never ended");
  size_t failures = 0;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "i" && e["name"] == "alloc failed: 64 B") ++failures;
  EXPECT_EQ(failures, 100u);
}

}  // namespace
}  // namespace edgemem::test
