// Models from LiteRT's own test data (tests/data/realworld/tflite, listed in
// SOURCES.md): operator names as schema.fbs spells them, and models TFLite
// Micro cannot run refused instead of given an arena size.
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/arena_budget.h"
#include "plan/lifetimes.h"
#include "plan/tflite_model.h"
#include "plan/tflite_operators.h"
#include "test_support.h"

namespace edgemem::plan {
namespace {

std::vector<std::string> names(const TfliteModel& m) {
  std::vector<std::string> out;
  for (const TfliteOp& op : m.ops) out.push_back(operator_name(op));
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(RealworldTflite, EveryBuiltinOperatorHasItsSchemaName) {
  // Codes 36, 69, 77, 83, 126 and 11 were printed BUILTIN_<n>.
  auto ops = names(test::tflite_model(test::realworld("tflite/litert_dynamic_shapes.tflite")));
  for (const char* name : {"GATHER", "TILE", "SHAPE", "PACK", "BATCH_MATMUL", "L2_NORMALIZATION", "STRIDED_SLICE"})
    EXPECT_TRUE(has(ops, name)) << name;
  for (const auto& op : ops) EXPECT_FALSE(op.starts_with("BUILTIN_")) << op;
  EXPECT_TRUE(has(names(test::tflite_model(test::realworld("tflite/litert_multi_subgraphs_while.tflite"))), "WHILE"));
  EXPECT_EQ(builtin_operator_name(123), "SELECT_V2");
  EXPECT_EQ(builtin_operator_name(209), "STABLEHLO_CASE");  // the last code schema.fbs names
  EXPECT_EQ(builtin_operator_name(210), "");
}

TEST(RealworldTflite, AFlexModelIsRefusedWithNoArenaSize) {
  ArenaBudget b = arena_budget(test::tflite_model(test::realworld("tflite/litert_multi_add_flex.tflite")), Target::cortex_m);
  EXPECT_FALSE(b.runnable());
  ASSERT_EQ(b.blockers.size(), 1u);
  EXPECT_TRUE(b.blockers[0].starts_with("FlexAddV2 ")) << b.blockers[0];
  EXPECT_EQ(b.recommended_bytes, 0u);
}

TEST(RealworldTflite, ABuiltinWithoutATfliteMicroKernelIsRefused) {
  ArenaBudget b = arena_budget(test::tflite_model(test::realworld("tflite/litert_dynamic_shapes.tflite")), Target::cortex_m);
  ASSERT_EQ(b.blockers.size(), 1u);  // GATHER, SHAPE, BATCH_MATMUL... have kernels; TILE has none
  EXPECT_TRUE(b.blockers[0].starts_with("TILE ")) << b.blockers[0];
  EXPECT_EQ(b.recommended_bytes, 0u);
}

TEST(RealworldTflite, ControlFlowTfliteMicroRunsIsNotRefused) {
  ArenaBudget b = arena_budget(test::tflite_model(test::realworld("tflite/litert_multi_subgraphs_while.tflite")), Target::cortex_m);
  EXPECT_TRUE(b.runnable());
  EXPECT_GT(b.recommended_bytes, 0u);
  EXPECT_FALSE(b.complete);  // the WHILE bodies are not costed, and it says so
}

// MLPerf Tiny's str_ww model: three depthwise tensors share buffer 13
// (512 B). Counted per tensor the constants read 49,420 B; the model holds
// 48,396 B of distinct buffers (a helper's reader of the flatbuffer).
TEST(RealworldTflite, ABufferSharedByTensorsIsCountedOnce) {
  TfliteModel m = test::tflite_model(test::corpus("tflite/mlperftiny_str_ww_ref_model.tflite"));
  EXPECT_EQ(m.constant_bytes, 48396u);
}

TEST(RealworldTflite, TensorBytesAreElementSizeTimesDimsNotTheAlignedSize) {
  TfliteModel m = test::tflite_model(test::realworld("tflite/litert_multi_subgraphs_while.tflite"));
  bool unaligned = false;
  for (const PlanBuffer& b : planned_buffers(m)) {
    const TfliteTensor& t = m.tensors[static_cast<size_t>(b.tensor)];
    uint64_t elements = 1;
    for (int32_t d : t.shape) elements *= d > 0 ? static_cast<uint64_t>(d) : 1;
    EXPECT_EQ(t.bytes, elements * element_size(t.type)) << t.name;
    EXPECT_EQ(b.bytes, align_up(t.bytes, kBufferAlignment)) << t.name;
    unaligned |= t.bytes % kBufferAlignment != 0;
  }
  EXPECT_TRUE(unaligned);  // the model has a 4-byte scalar: the two sizes differ
}

}  // namespace
}  // namespace edgemem::plan
