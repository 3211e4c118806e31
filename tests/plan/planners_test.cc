// Planners against TFLite Micro's own test data (tests/data/corpus/
// planner_cases.json) and every corpus model.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "plan/lifetimes.h"
#include "plan/planners.h"
#include "test_support.h"

namespace edgemem::plan {
namespace {

using edgemem::test::corpus;
using edgemem::test::read_file;

nlohmann::json cases() { return nlohmann::json::parse(read_file(corpus("planner_cases.json"))); }

std::vector<Buffer> buffers_of(const nlohmann::json& list) {
  std::vector<Buffer> out;
  for (const auto& b : list) out.push_back({b["size"].get<uint64_t>(), b["first_used"].get<int32_t>(), b["last_used"].get<int32_t>(), -1});
  return out;
}

TEST(TflmGreedy, ReproducesEveryGreedyPlannerCase) {
  auto all = cases();
  ASSERT_FALSE(all.is_null());
  size_t checked = 0;
  for (const auto& c : all["greedy_memory_planner"]["cases"]) {
    if (!c.contains("buffers") || c.contains("expected_add_status")) continue;  // bookkeeping-only case
    SCOPED_TRACE(c["name"].get<std::string>());
    auto buffers = buffers_of(c["buffers"]);
    Plan p = tflm_greedy_plan(buffers);
    const auto& want = c.contains("expected_offsets") ? c["expected_offsets"] : c["derived_offsets"];
    EXPECT_EQ(p.offsets, want.get<std::vector<uint64_t>>());
    const auto& max = c.contains("expected_max_memory") ? c["expected_max_memory"] : c["derived_max_memory"];
    EXPECT_EQ(p.arena_bytes, max.get<uint64_t>());
    EXPECT_TRUE(plan_is_valid(buffers, p));
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}

TEST(TflmGreedy, MatchesTheDerivedGreedyPlansOfTheLinearCases) {
  auto all = cases();  // keep the document alive while iterating into it
  size_t checked = 0;
  for (const auto& c : all["linear_memory_planner"]["cases"]) {
    if (!c.contains("derived_greedy_offsets")) continue;
    auto p = tflm_greedy_plan(buffers_of(c["buffers"]));
    EXPECT_EQ(p.offsets, c["derived_greedy_offsets"].get<std::vector<uint64_t>>());
    EXPECT_EQ(p.arena_bytes, c["derived_greedy_max_memory"].get<uint64_t>());
    ++checked;
  }
  EXPECT_EQ(checked, 1u);
}

// micro_allocator_test's tiny graphs: lifetimes from the graph, offline
// offsets honoured, the rest planned online.
TEST(TflmGreedy, BranchAndOfflinePlansOfTheMicroAllocatorTests) {
  auto all = cases();
  size_t checked = 0;
  for (const auto& c : all["micro_allocator_offline_and_branch_plans"]["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    TfliteModel m;
    for (auto bytes : c["tensor_bytes"]) m.tensors.push_back({"", {}, 0, false, false, bytes.get<uint64_t>()});
    for (const auto& n : c["nodes"]) {
      TfliteOp op;
      op.inputs = n["inputs"].get<std::vector<int32_t>>();
      op.outputs = n["outputs"].get<std::vector<int32_t>>();
      m.ops.push_back(op);
    }
    m.inputs = {0};
    m.outputs = {static_cast<int32_t>(m.tensors.size()) - 1};
    m.offline_offsets = c["offline_offsets"].get<std::vector<int32_t>>();
    if (c["name"] == "OfflinePlannerOfflineOnline") m.outputs = {3, 4};
    auto planned = planned_buffers(m);
    std::vector<Buffer> buffers = planner_input(planned);
    Plan p = tflm_greedy_plan(buffers);
    std::vector<uint64_t> offsets(m.tensors.size(), 0);
    for (size_t i = 0; i < planned.size(); ++i) offsets[static_cast<size_t>(planned[i].tensor)] = p.offsets[i];
    EXPECT_EQ(offsets, c["expected_offsets"].get<std::vector<uint64_t>>());
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}

// memory_arena_threshold_test measured the head (non-persistent section).
// It holds the planned tensors plus kernel scratch requested at Prepare:
// none for the conv model (head = tensors, 7744 B); 384 B for the keyword
// model's SVDF/softmax kernels (672 B head, 288 B of tensors).
TEST(TflmGreedy, HeadBytesOfTheMeasuredModels) {
  auto all = cases();
  size_t checked = 0;
  for (const auto& m : all["memory_arena_threshold"]["models"]) {
    std::string file = m["model_file"].get<std::string>().substr(std::string("corpus/").size());
    SCOPED_TRACE(file);
    std::string error;
    std::string bytes = read_file(corpus(file));
    auto model = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
    ASSERT_TRUE(model) << error;
    EXPECT_EQ(model->tensors.size(), m["tensor_count"].get<size_t>());
    std::vector<Buffer> buffers = planner_input(planned_buffers(*model));
    uint64_t tensors = tflm_greedy_plan(buffers).arena_bytes;
    if (file == "tflite/tflm_keyword_scrambled.tflite") {
      EXPECT_EQ(tensors, 288u);
      EXPECT_EQ(m["head_bytes"].get<uint64_t>() - tensors, 384u);
    } else {
      EXPECT_EQ(tensors, m["head_bytes"].get<uint64_t>());
    }
    ++checked;
  }
  EXPECT_EQ(checked, 2u);
}

// Every corpus model: a valid plan, never larger than TFLite Micro's, never
// below the bound; and where TFLite Micro's greedy is known to waste space
// (MLPerf Tiny VWW 1.33x, audio preprocessors 1.45x) edgemem reaches the bound.
TEST(BestPlan, EveryCorpusModel) {
  size_t models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus("tflite"))) {
    if (entry.path().extension() != ".tflite") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::string bytes = read_file(entry.path().string());
    std::string error;
    auto model = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
    ASSERT_TRUE(model) << error;
    std::vector<Buffer> buffers = planner_input(planned_buffers(*model));
    Plan tflm = tflm_greedy_plan(buffers), ours = best_plan(buffers);
    uint64_t bound = lower_bound(buffers);
    EXPECT_TRUE(plan_is_valid(buffers, ours));
    EXPECT_TRUE(plan_is_valid(buffers, tflm));
    EXPECT_LE(ours.arena_bytes, tflm.arena_bytes);
    EXPECT_GE(ours.arena_bytes, bound);
    std::string name = entry.path().filename().string();
    if (name.find("vww") != std::string::npos || name.find("audio_preprocessor") != std::string::npos) {
      EXPECT_GT(tflm.arena_bytes, bound);
      EXPECT_EQ(ours.arena_bytes, bound);
    }
    ++models;
  }
  EXPECT_EQ(models, 31u);
}

TEST(TfliteReader, RejectsDamagedModelsWithAReason) {
  std::string bytes = read_file(corpus("tflite/tflm_hello_world_int8.tflite"));
  std::string error;
  EXPECT_FALSE(read_tflite({reinterpret_cast<const uint8_t*>("hello"), 5}, error));
  EXPECT_NE(error.find("TFL3"), std::string::npos);
  for (size_t cut : {size_t{16}, bytes.size() / 2, bytes.size() - 8}) {
    error.clear();
    auto m = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), cut}, error);
    EXPECT_FALSE(m) << cut;
    EXPECT_FALSE(error.empty());
  }
}

// Found by fuzzing: a shape whose product overflows must be refused, not
// planned (it overflowed the bound's running sum).
TEST(TfliteReader, RejectsAShapeLargerThanAnyDevice) {
  std::string bytes = read_file(corpus("tflite/tflm_hello_world_int8.tflite"));
  std::string error;
  auto model = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
  ASSERT_TRUE(model);
  std::string crash = read_file(EDGEMEM_SOURCE_DIR "/tests/plan/data/huge_shape.tflite");
  ASSERT_FALSE(crash.empty());
  EXPECT_FALSE(read_tflite({reinterpret_cast<const uint8_t*>(crash.data()), crash.size()}, error));
  EXPECT_NE(error.find("larger than 1 TiB"), std::string::npos) << error;
}

}  // namespace
}  // namespace edgemem::plan
