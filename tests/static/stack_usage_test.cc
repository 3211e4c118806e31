// Worst-case stack on the corpus' own firmware, against the values worked
// out by hand in ../shared/corpus/map/own_ground_truth.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "static/stack_usage.h"
#include "test_support.h"

namespace edgemem {
namespace {

std::vector<std::string> build_files(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(test::corpus("su")))
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().string());
  return out;
}

const StackRoot* root(const StackReport& r, std::string_view name) {
  for (const auto& x : r.roots)
    if (x.function == name) return &x;
  return nullptr;
}

TEST(Stack, O2WorstCaseIs136BytesWithTheDynamicFrameFlagged) {
  auto truth = nlohmann::json::parse(test::read_file(test::corpus("map/own_ground_truth.json")))["worst_case_stack_by_hand"]["O2"];
  std::string error;
  auto report = analyze_stack(build_files("own_O2_"), error);
  ASSERT_TRUE(report) << error;
  const StackRoot* reset = root(*report, "Reset_Handler");
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->worst_case_bytes, truth["bytes"].get<uint64_t>());
  EXPECT_EQ(reset->path, truth["deepest_static_path"].get<std::vector<std::string>>());
  EXPECT_TRUE(reset->unbounded);  // normalize_dynamic has a VLA; memcpy/memset have no .su
  EXPECT_NE(std::find(reset->reasons.begin(), reset->reasons.end(), "dynamic frame: normalize_dynamic"), reset->reasons.end());
  // Frames as the .su files state them.
  auto su = nlohmann::json::parse(test::read_file(test::corpus("map/own_ground_truth.json")))["stack_usage_su"]["O2"];
  size_t checked = 0;
  for (const auto& f : report->functions) {
    if (su.contains(f.name)) {
      EXPECT_EQ(f.frame_bytes, su[f.name][0].get<uint64_t>()) << f.name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 8u);
}

TEST(Stack, O0RecursionAndIndirectCallAreUnboundedNotInvented) {
  auto truth = nlohmann::json::parse(test::read_file(test::corpus("map/own_ground_truth.json")))["worst_case_stack_by_hand"]["O0"];
  std::string error;
  auto report = analyze_stack(build_files("own_O0_"), error);
  ASSERT_TRUE(report) << error;
  const StackRoot* reset = root(*report, "Reset_Handler");
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->worst_case_bytes, truth["bytes"].get<uint64_t>());
  EXPECT_EQ(reset->path, truth["deepest_static_path_without_recursion"].get<std::vector<std::string>>());
  EXPECT_TRUE(reset->unbounded);
  auto has = [&](const std::string& why) {
    return std::find(reset->reasons.begin(), reset->reasons.end(), why) != reset->reasons.end();
  };
  EXPECT_TRUE(has("recursion: checksum_recursive"));
  EXPECT_TRUE(has("indirect call in run_post"));
}

TEST(Stack, ReadsARealProjectsSuFilesAndRejectsOtherText) {
  std::string error;
  auto report = analyze_stack({test::corpus("su/kennykang_nucleo_l432kc_release")}, error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->files, 28u);
  bool main_found = false;
  for (const auto& f : report->functions)
    if (f.name == "main") main_found = f.frame_bytes == 344;  // includes the 128 B X-CUBE-AI activations
  EXPECT_TRUE(main_found);
  EXPECT_TRUE(report->roots.empty());  // no .ci: no call graph to walk

  auto dir = std::filesystem::temp_directory_path() / "edgemem_bad_su";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "x.su") << "not a stack usage line\n";
  }
  EXPECT_FALSE(analyze_stack({dir.string()}, error));
  EXPECT_NE(error.find("x.su:1"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace edgemem
