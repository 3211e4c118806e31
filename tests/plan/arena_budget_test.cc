// recommended_arena_bytes against what TFLite Micro measured: the head and
// tail of its memory_arena_threshold_test (x86-64, +/-3 %) as transcribed
// in tests/data/corpus/planner_cases.json.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "plan/arena_budget.h"
#include "test_support.h"
#include "tiny_tflite.h"

namespace edgemem::plan {
namespace {

using edgemem::test::corpus;
using edgemem::test::read_file;

uint64_t tail_item(const ArenaBudget& b, const std::string& prefix) {
  for (const auto& i : b.tail)
    if (i.what.rfind(prefix, 0) == 0) return i.bytes;
  return 0;
}

TEST(ArenaBudget, HeadAndTailMatchTflmMeasurementsOnX86_64) {
  auto all = nlohmann::json::parse(read_file(corpus("planner_cases.json")));
  const auto models = all["memory_arena_threshold"]["models"];
  ASSERT_EQ(models.size(), 2u);
  for (const auto& m : models) {
    std::string file = m["model_file"].get<std::string>().substr(std::string("corpus/").size());
    SCOPED_TRACE(file);
    TfliteModel model = test::tflite_model(corpus(file));
    ASSERT_EQ(model.all_tensor_count, m["tensor_count"].get<size_t>());
    ASSERT_EQ(model.all_op_count, m["node_and_registration_count"].get<size_t>());
    ArenaBudget b = arena_budget(model, Target::x86_64);
    double head = m["head_bytes"], tail = m["tail_bytes_excl_recorder"]["default"];
    EXPECT_NEAR(static_cast<double>(b.head_bytes), head, 0.03 * head);
    EXPECT_NEAR(static_cast<double>(b.tail_bytes), tail, 0.03 * tail);
    // The parts TFLite Micro records separately.
    EXPECT_EQ(tail_item(b, "TfLiteEvalTensor"), 24 * model.all_tensor_count);
    if (m.contains("variable_buffer_data_bytes")) {
      EXPECT_EQ(tail_item(b, "variable tensors"), m["variable_buffer_data_bytes"].get<uint64_t>());
    }
    uint64_t io = m["persistent_tflite_tensor_data_bytes"]["default"].get<uint64_t>() +
                  m["persistent_quantization_data_bytes"].get<uint64_t>() + 2 * 16;  // + input/output pointer arrays
    EXPECT_EQ(tail_item(b, "input/output TfLiteTensor"), io);
    EXPECT_TRUE(b.complete);
    // The recommendation covers the final arena; planning and Prepare peak
    // earlier, before the I/O tensors exist, so they are not added to all of it.
    EXPECT_GE(b.recommended_bytes, b.tail_bytes + b.allocator_bytes + b.head_bytes);
    EXPECT_GE(b.recommended_bytes, b.allocator_bytes + b.planning_bytes);
    EXPECT_LE(b.recommended_bytes, m["arena_provided_bytes"].get<uint64_t>());
  }
}

TEST(ArenaBudget, KeywordScratchIsTheSvdfAccumulators) {
  ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/tflm_keyword_scrambled.tflite")), Target::cortex_m);
  EXPECT_EQ(b.tensor_bytes, 288u);
  EXPECT_EQ(b.head_bytes, 672u);  // 288 B of tensors + 2 x 256 B int32 scratch beside op 1's 160 B
  ASSERT_EQ(b.scratch.size(), 7u);
  EXPECT_EQ(b.scratch[0].bytes, 512u);
}

TEST(ArenaBudget, ThirtyTwoBitTargetNeedsLessTailThanX86_64) {
  TfliteModel m = test::tflite_model(corpus("tflite/tflm_test_conv_model.tflite"));
  ArenaBudget arm = arena_budget(m, Target::cortex_m), x86 = arena_budget(m, Target::x86_64);
  EXPECT_EQ(arm.head_bytes, x86.head_bytes);  // tensors do not depend on pointer size
  EXPECT_LT(arm.tail_bytes, x86.tail_bytes);
  EXPECT_LT(arm.recommended_bytes, x86.recommended_bytes);
}

TEST(ArenaBudget, OperatorsWithoutACostModelAreSaidSo) {
  ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/tflm_person_detect_vela.tflite")), Target::cortex_m);
  EXPECT_FALSE(b.complete);
  ASSERT_EQ(b.unmodelled.size(), 1u);
  EXPECT_EQ(b.unmodelled[0], "ethos-u");
}

TEST(ArenaBudget, DeclaredArenasOfPublicExamplesHoldTheRecommendation) {
  auto all = nlohmann::json::parse(read_file(corpus("planner_cases.json")));
  size_t checked = 0;
  for (const auto& e : all["declared_arena_sizes"]["entries"]) {
    std::string file = e["model_file"];
    if (file.find(' ') != std::string::npos || file.find('*') != std::string::npos) continue;  // several models
    if (file == "tflm_simple_add_model.tflite") continue;  // its example never allocates this model's tensors
    SCOPED_TRACE(file);
    ArenaBudget b = arena_budget(test::tflite_model(corpus("tflite/" + std::string(file))), Target::cortex_m);
    EXPECT_LE(b.recommended_bytes, e["bytes"].get<uint64_t>());
    ++checked;
  }
  EXPECT_GE(checked, 8u);
}

TfliteModel tiny(const std::vector<test::TinyTensor>& tensors) {
  constexpr int32_t kRelu = 19;
  std::string bytes = test::tiny_tflite(tensors, {{kRelu, {0}, {1}}}), error;
  auto model = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  EXPECT_TRUE(model) << error;
  return model.value_or(TfliteModel{});
}

// TFLite Micro sizes each tensor once, from `shape`: a -1 there (a batch
// left open) has no size to plan, so no arena is recommended.
TEST(ArenaBudget, AShapeKnownOnlyAtRunTimeStopsTflm) {
  ArenaBudget open = arena_budget(tiny({{{-1, 10}, 9, "in"}, {{-1, 10}, 9, "out"}}), Target::cortex_m);
  ASSERT_EQ(open.blockers.size(), 1u);
  EXPECT_EQ(open.blockers[0].rfind("2 tensors with a dimension known only at run time (tensor 0 'in' [-1, 10], "
                                   "tensor 1 'out' [-1, 10]: ", 0), 0u)
      << open.blockers[0];
  EXPECT_EQ(open.recommended_bytes, 0u);
  ArenaBudget fixed = arena_budget(tiny({{{1, 10}, 9, "in"}, {{1, 10}, 9, "out"}}), Target::cortex_m);
  EXPECT_TRUE(fixed.blockers.empty());
  EXPECT_GT(fixed.recommended_bytes, 32u);
}

// A 32-bit size_t cannot say 4 GiB: on cortex-m such a model has no arena;
// on x86-64 it has one. Three 1.5 GiB variable tensors (the arena's tail,
// not the planner's head) read by one operator.
TEST(ArenaBudget, AnArenaPast4GiBStopsA32BitTarget) {
  constexpr int32_t kAdd = 0;
  const std::vector<int32_t> big{1, 1024, 1024, 1536}, small{1, 16};
  std::string bytes = test::tiny_tflite({{small, 9, "in"}, {big, 9, "s1", true}, {big, 9, "s2", true},
                                         {big, 9, "s3", true}, {small, 9, "out"}},
                                        {{kAdd, {0, 1, 2, 3}, {4}}}),
              error;
  auto m = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  ASSERT_TRUE(m) << error;
  ArenaBudget m32 = arena_budget(*m, Target::cortex_m), m64 = arena_budget(*m, Target::x86_64);
  ASSERT_EQ(m32.blockers.size(), 1u);
  EXPECT_NE(m32.blockers[0].find("more than a 32-bit address space holds"), std::string::npos) << m32.blockers[0];
  EXPECT_EQ(m32.recommended_bytes, 0u);
  EXPECT_TRUE(m64.blockers.empty()) << m64.blockers[0];
  EXPECT_GT(m64.recommended_bytes, uint64_t{4} << 30);
}

// GreedyMemoryPlanner keeps offsets and the plan's extent in an int: three
// 1.5 GiB tensors live at once, each small enough, overflow it on every
// target (a reviewer ran TFLite Micro's planner: offsets 1258291200 and 0).
TEST(ArenaBudget, AHeadOf2GiBStopsEveryTarget) {
  constexpr int32_t kRelu = 19, kAdd = 0;
  const std::vector<int32_t> shape{1, 1024, 1024, 1536};
  std::string bytes = test::tiny_tflite({{shape, 9, "in"}, {shape, 9, "mid"}, {shape, 9, "out"}},
                                        {{kRelu, {0}, {1}}, {kAdd, {0, 1}, {2}}}),
              error;
  auto m = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  ASSERT_TRUE(m) << error;
  for (Target target : {Target::cortex_m, Target::x86_64}) {
    ArenaBudget b = arena_budget(*m, target);
    ASSERT_EQ(b.blockers.size(), 1u);
    EXPECT_NE(b.blockers[0].find("live together (TFLite Micro's planner holds offsets"), std::string::npos)
        << b.blockers[0];
    EXPECT_EQ(b.recommended_bytes, 0u);
  }
}

// GreedyMemoryPlanner::AddBuffer takes each size as an int: a tensor of
// 2 GiB stops both targets, though its arena is below 4 GiB.
TEST(ArenaBudget, ATensorOf2GiBStopsEveryTarget) {
  TfliteModel m = tiny({{{1, 1024, 1024, 2048}, 9, "in"}, {{1, 16}, 9, "out"}});
  for (Target target : {Target::cortex_m, Target::x86_64}) {
    ArenaBudget b = arena_budget(m, target);
    ASSERT_EQ(b.blockers.size(), 1u);
    EXPECT_EQ(b.blockers[0].rfind("1 tensor of 2 GiB or more (tensor 0 'in', 2,147,483,648 B", 0), 0u) << b.blockers[0];
    EXPECT_EQ(b.recommended_bytes, 0u);
  }
  TfliteModel below = tiny({{{1, 1024, 1024, 2047}, 9, "in"}, {{1, 16}, 9, "out"}});
  EXPECT_TRUE(arena_budget(below, Target::x86_64).blockers.empty());
}

}  // namespace
}  // namespace edgemem::plan
