// The JSON of `edgemem analyze --json` is a contract (docs/json-schema.md):
// these keys and types may be extended, never renamed.
#include <gtest/gtest.h>

#include "edgemem/report.h"
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
}

}  // namespace
}  // namespace edgemem::test
