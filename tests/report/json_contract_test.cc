// The JSON of `edgemem analyze --json` is a contract (docs/json-schema.md):
// these keys and types may be extended, never renamed.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "analysis/tflm_capture.h"
#include "edgemem/report.h"
#include "plan/plan_vs_capture.h"
#include "report/plan_vs_capture_report.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

TEST(JsonContract, HasEveryDesignKeyWithItsType) {
  std::string log = "[MEM][0] POOL name=arena0 kind=arena size=81920\n"
                    "[MEM][1] ALLOC size=12288 offset=0 site=micro_allocator.cc:310 pool=arena0\n";
  for (int i = 1; i <= 4; ++i) {
    log += "[MEM][" + std::to_string(10 * i) + "] INFER begin\n";
    log += "[MEM][" + std::to_string(10 * i + 1) + "] ALLOC size=644 offset=" + std::to_string(12288 + 644 * i) +
           " site=lstm.cc:88 pool=arena0\n";
    log += "[MEM][" + std::to_string(10 * i + 2) + "] INFER end\n";
  }
  auto run = analyse(Format::log, log);
  InputSummary in{"t.log", "log", run->stats, run->context.time_base};
  auto j = to_json(in, run->result);
  EXPECT_EQ(j["schema"], "edgemem.analyze/1");
  for (const char* k : {"path", "format"}) EXPECT_TRUE(j["input"][k].is_string()) << k;
  for (const char* k : {"events", "bytes", "skipped_lines", "corrupt_bytes"})
    EXPECT_TRUE(j["input"][k].is_number_unsigned()) << k;
  EXPECT_EQ(j["inferences"], 4);
  EXPECT_TRUE(j["peak_bytes"].is_number_unsigned());
  ASSERT_EQ(j["leaks"].size(), 1u);
  const auto& leak = j["leaks"][0];
  EXPECT_EQ(leak["site"], "lstm.cc:88");
  EXPECT_EQ(leak["bytes"], 2576);
  EXPECT_EQ(leak["count"], 4);
  EXPECT_EQ(leak["bytes_per_inference"], 644.0);
  EXPECT_EQ(leak["type_hint"], "float32[161]");
  ASSERT_EQ(j["persistent"].size(), 1u);
  EXPECT_EQ(j["persistent"][0]["site"], "micro_allocator.cc:310");
  EXPECT_EQ(j["persistent"][0]["bytes"], 12288);
  EXPECT_EQ(j["persistent"][0]["count"], 1);
  EXPECT_TRUE(j["leak_rate_bytes_per_inference"].is_number());
  EXPECT_TRUE(j["exhaustion_forecast"]["inferences"].is_number_unsigned());
  EXPECT_TRUE(j["exhaustion_forecast"].contains("seconds"));
  for (const char* k : {"max_rate", "final_rate"}) EXPECT_TRUE(j["fragmentation"][k].is_number()) << k;
  EXPECT_TRUE(j["fragmentation"]["band"].is_string());
  EXPECT_TRUE(j["fragmentation"]["alloc_failures"].is_number_unsigned());
  EXPECT_TRUE(j["overflows"].is_array());
  EXPECT_TRUE(j["guard_failures"].is_number_unsigned());
  ASSERT_EQ(j["pools"].size(), 1u);
  EXPECT_EQ(j["pools"][0]["name"], "arena0");
  EXPECT_EQ(j["pools"][0]["size"], 81920);
  EXPECT_EQ(j["pools"][0]["peak_bytes"], 12288 + 4 * 644 + 644);
  // Added in issue 9: stable identifiers, fractions, a status per check.
  EXPECT_EQ(leak["pattern"]["kind"], "every_inference");
  EXPECT_EQ(leak["pattern"]["growth_bytes"], 644);
  EXPECT_TRUE(leak["pattern"]["period_inferences"].is_null());
  EXPECT_EQ(j["persistent"][0]["reason"], "before_first_inference");
  EXPECT_EQ(j["watermark"][0]["shape"], "linear");
  EXPECT_EQ(j["exhaustion_forecast"]["already_exhausted"], false);
  EXPECT_DOUBLE_EQ(j["pools"][0]["peak_margin"].get<double>(), j["pools"][0]["peak_margin_pct"].get<double>() / 100);
  EXPECT_EQ(j["fragmentation"]["pools"][0]["extent"], "known");
  EXPECT_EQ(j["peak"]["inference"], 4);
  for (const char* check : {"leaks", "overflow", "guards", "fragmentation", "lifo", "data_loss"}) {
    ASSERT_TRUE(j["checks"].contains(check)) << check;
    EXPECT_TRUE(j["checks"][check]["status"] == "found" || j["checks"][check]["status"] == "clean" ||
                j["checks"][check]["status"] == "not_checked") << check;
    EXPECT_TRUE(j["checks"][check].contains("reason")) << check;
  }
  EXPECT_EQ(j["checks"]["leaks"]["status"], "found");
  EXPECT_EQ(j["checks"]["overflow"]["status"], "clean");
  EXPECT_EQ(j["checks"]["guards"]["status"], "not_checked");
  EXPECT_TRUE(j["checks"]["guards"]["reason"].is_string());
  EXPECT_EQ(j["checks"]["data_loss"]["status"], "clean");
  EXPECT_TRUE(j["checks"]["data_loss"]["reason"].is_null());
  EXPECT_TRUE(j["input"]["first_problem"].is_null());
}

// What a trace cannot tell is null, never 0 or "": no inference markers, no
// pool size.
TEST(JsonContract, UnknownsAreNull) {
  std::string log;
  for (int i = 0; i < 10; ++i)
    log += "[MEM][" + std::to_string(i) + "] ALLOC size=16 addr=" + std::to_string(4096 * (i + 1)) + "\n";
  log += "[MEM][20] FREE addr=8192\n";
  auto run = analyse(Format::log, log);
  InputSummary in{"t.log", "log", run->stats, run->context.time_base};
  auto j = to_json(in, run->result);
  EXPECT_EQ(j["inferences"], 0);
  EXPECT_TRUE(j["leak_rate_bytes_per_inference"].is_null());
  EXPECT_TRUE(j["peak"]["inference"].is_null());
  EXPECT_TRUE(j["peak"]["per_inference"].is_null());
  EXPECT_TRUE(j["pools"][0]["size"].is_null());
  // Marked, but too short for the leak check: its rate is not known either
  // (it read 0.0 beside `not_checked`).
  auto short_run = analyse(Format::log, "[MEM][1] INFER begin 0\n[MEM][2] ALLOC size=1000 addr=0x1000\n"
                                        "[MEM][3] INFER end 0\n");
  ASSERT_EQ(short_run->result.checks.leaks.status, CheckStatus::not_checked);
  EXPECT_TRUE(to_json(in, short_run->result)["leak_rate_bytes_per_inference"].is_null());
  EXPECT_TRUE(j["pools"][0]["peak_margin"].is_null());
  EXPECT_TRUE(j["fragmentation"]["band"].is_null());
  EXPECT_TRUE(j["fragmentation"]["max_rate"].is_null());
  EXPECT_TRUE(j["fragmentation"]["final_rate"].is_null());
  EXPECT_EQ(j["fragmentation"]["pools"][0]["extent"], "observed");
  EXPECT_EQ(j["checks"]["overflow"]["status"], "not_checked");
  EXPECT_EQ(j["checks"]["fragmentation"]["status"], "not_checked");
  EXPECT_TRUE(j["checks"]["fragmentation"]["reason"].is_string());
  EXPECT_EQ(j["checks"]["lifo"]["status"], "not_checked");
}

// docs/schemas/analyze.schema.json lists every key as required and no other
// (additionalProperties false): walk a full document and compare key sets,
// so the schema cannot drift from what to_json writes.
void same_keys(const nlohmann::json& doc, const nlohmann::json& schema, const nlohmann::json& root,
               const std::string& where) {
  const nlohmann::json& s = schema.contains("$ref") ? root["$defs"][schema["$ref"].get<std::string>().substr(8)] : schema;
  if (doc.is_object() && s.contains("properties")) {
    std::set<std::string> have, want;
    for (const auto& [k, v] : doc.items()) have.insert(k);
    for (const auto& [k, v] : s["properties"].items()) want.insert(k);
    EXPECT_EQ(have, want) << where;
    if (s.value("additionalProperties", true) == false)
      for (const auto& [k, v] : doc.items())
        if (want.count(k)) same_keys(v, s["properties"][k], root, where + "." + k);
  } else if (doc.is_array() && s.contains("items") && s["items"].is_object()) {
    for (const auto& item : doc) same_keys(item, s["items"], root, where + "[]");
  }
}

TEST(JsonContract, TheSchemaFileNamesExactlyTheKeysWritten) {
  std::ifstream file(std::string(EDGEMEM_SOURCE_DIR) + "/docs/schemas/analyze.schema.json");
  ASSERT_TRUE(file) << "docs/schemas/analyze.schema.json";
  std::stringstream text;
  text << file.rdbuf();
  auto schema = nlohmann::json::parse(text.str());
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  // Every finding, so that every nested object is written at least once.
  std::string log = "[MEM][0] POOL name=arena kind=arena size=4096\n[MEM][0] POOL name=heap kind=heap base=0x1000 size=256\n";
  for (int i = 1; i <= 6; ++i) {
    log += fmt::format("[MEM][{}] INFER begin {}\n", 10 * i, i);
    log += fmt::format("[MEM][{}] ALLOC size=512 offset=0 site=a.cc:1 pool=arena\n", 10 * i + 1);
    log += fmt::format("[MEM][{}] ALLOC size=256 offset=512 site=b.cc:2 pool=arena\n", 10 * i + 1);
    log += fmt::format("[MEM][{}] FREE offset=0 pool=arena\n", 10 * i + 2);
    log += fmt::format("[MEM][{}] FREE offset=512 pool=arena\n", 10 * i + 2);
    log += fmt::format("[MEM][{}] ALLOC size=16 offset={} site=leak.cc:3 pool=arena\n", 10 * i + 3, 1024 + 16 * i);
    log += fmt::format("[MEM][{}] ALLOC size=16 addr=0x{:x} site=h.c:4 pool=heap\n", 10 * i + 3, 0x1000 + 32 * i);
    if (i == 3) log += "[MEM][34] ALLOC size=4000 offset=1200 site=big.cc:4 pool=arena\n";
    if (i == 4) log += "[MEM][44] ALLOC_FAIL size=300 pool=heap site=h.c:5\n";
    log += fmt::format("[MEM][{}] GUARD {} pool=arena\n", 10 * i + 5, i == 5 ? "corrupt" : "ok");
    log += fmt::format("[MEM][{}] INFER end {}\n", 10 * i + 6, i);
  }
  log += "[MEM][x] ALLOC\n";
  auto run = analyse(Format::log, log);
  auto j = to_json({"t.log", "log", run->stats, run->context.time_base}, run->result);
  // analyze --model: an x86-64 capture beside the Cortex-M plan, whose tail differs.
  const std::string model = "mlperftiny_kws_ref_model";
  const std::string capture = read_file(std::string(EDGEMEM_TEST_DATA_DIR) + "/tflm_captures/" + model + ".emt");
  const std::string tflite = read_file(corpus("tflite/" + model + ".tflite"));
  std::string error;
  auto c = read_tflm_capture({reinterpret_cast<const uint8_t*>(capture.data()), capture.size()}, model, error);
  auto m = plan::read_tflite({reinterpret_cast<const uint8_t*>(tflite.data()), tflite.size()}, error);
  ASSERT_TRUE(c && m) << error;
  const plan::PlanVsCapture compared = plan::compare_plan_with_capture(*m, plan::Target::cortex_m, *c);
  ASSERT_FALSE(compared.differences.empty());
  j["plan_vs_capture"] = plan_vs_capture_json(compared, model);
  for (const char* nonempty : {"leaks", "persistent", "overflows", "guard_failure_events", "watermark", "pools", "sites",
                              "timelines"})
    ASSERT_FALSE(j[nonempty].empty()) << nonempty;
  ASSERT_FALSE(j["inference_marks"]["spans"].empty());
  ASSERT_FALSE(j["fragmentation"]["failures"].empty());
  ASSERT_FALSE(j["lifo"]["sites"].empty());
  ASSERT_FALSE(j["input"]["first_problem"].is_null());
  ASSERT_FALSE(j["exhaustion_forecast"].is_null());
  same_keys(j, schema, schema, "");
}

}  // namespace
}  // namespace edgemem::test
