#include <gtest/gtest.h>

#include <filesystem>

#include "plan/lifetimes.h"
#include "plan/planners.h"
#include "plan/reorder.h"
#include "test_support.h"

namespace edgemem::plan {
namespace {

// Two branches that each blow the input up to 160 B and shrink it back.
// Listed branch-first-halves first, both 160 B tensors are live at once;
// finishing one branch before starting the other keeps only one.
TfliteModel two_branches() {
  TfliteModel m;
  for (uint64_t bytes : {16, 160, 160, 16, 16, 16}) m.tensors.push_back({"", {}, 0, false, false, bytes});
  auto op = [&](std::vector<int32_t> in, std::vector<int32_t> out) {
    TfliteOp o;
    o.inputs = std::move(in);
    o.outputs = std::move(out);
    m.ops.push_back(o);
  };
  op({0}, {1});     // branch 1 widens
  op({0}, {2});     // branch 2 widens
  op({1}, {3});     // branch 1 narrows
  op({2}, {4});     // branch 2 narrows
  op({3, 4}, {5});  // join
  m.inputs = {0};
  m.outputs = {5};
  return m;
}

TEST(Reorder, FinishingABranchFirstSaves144Bytes) {
  TfliteModel m = two_branches();
  ReorderResult r = best_operator_order(m);
  EXPECT_TRUE(r.exhaustive);
  EXPECT_EQ(r.original_peak_bytes, 16u + 160 + 160);
  EXPECT_EQ(r.peak_bytes, 16u + 160 + 16);
  // The order is a topological order and the planners reach its bound.
  TfliteModel re = with_operator_order(m, r.order);
  ASSERT_EQ(r.order.size(), 5u);
  EXPECT_EQ(r.order.back(), 4);
  auto buffers = planner_input(planned_buffers(re));
  EXPECT_EQ(lower_bound(buffers), r.peak_bytes);
  EXPECT_EQ(best_plan(buffers).arena_bytes, r.peak_bytes);
  // And the original order's bound is the lifetime bound of the model as given.
  EXPECT_EQ(lower_bound(planner_input(planned_buffers(m))), r.original_peak_bytes);
}

TEST(Reorder, NeverWorseOnTheCorpus) {
  size_t models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::corpus("tflite"))) {
    if (entry.path().extension() != ".tflite") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::string bytes = test::read_file(entry.path().string());
    std::string error;
    auto model = read_tflite({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, error);
    ASSERT_TRUE(model) << error;
    ReorderResult r = best_operator_order(*model);
    EXPECT_LE(r.peak_bytes, r.original_peak_bytes);
    EXPECT_EQ(r.order.size(), model->ops.size());
    ++models;
  }
  EXPECT_EQ(models, 31u);
}

}  // namespace
}  // namespace edgemem::plan
