// edgemem diff: two builds of the corpus' own firmware (-O2 -> -O0) and two
// synthetic runs.
#include <gtest/gtest.h>

#include "report/diff.h"
#include "test_support.h"

namespace edgemem {
namespace {

const DiffRow* row(const std::vector<DiffGroup>& groups, const std::string& group, const std::string& name) {
  for (const auto& g : groups)
    if (g.title == group)
      for (const auto& r : g.rows)
        if (r.name == name) return &r;
  return nullptr;
}

TEST(Diff, TwoBuildsOfTheSameFirmware) {
  std::string error;
  auto o2 = parse_linker_map(test::read_file(test::corpus("map/own_cm4_O2.map")), error);
  auto o0 = parse_linker_map(test::read_file(test::corpus("map/own_cm4_O0.map")), error);
  ASSERT_TRUE(o2 && o0) << error;
  auto groups = diff_maps(*o2, *o0);
  ASSERT_NE(row(groups, "regions", "FLASH"), nullptr);
  EXPECT_EQ(row(groups, "regions", "FLASH")->delta(), 3528 - 3292);  // ld's FLASH use of both builds
  EXPECT_EQ(row(groups, "sections", ".text")->delta(), 3456 - 3220);
  EXPECT_TRUE(row(groups, "symbols", "dot_s8")->added);  // inlined at -O2
  EXPECT_TRUE(row(groups, "symbols", "memset")->removed);
  // Biggest change first within each group.
  for (const auto& g : groups)
    for (size_t i = 1; i < g.rows.size(); ++i) EXPECT_GE(std::abs(g.rows[i - 1].delta()), std::abs(g.rows[i].delta()));
  // A map against itself changes nothing.
  for (const auto& g : diff_maps(*o2, *o2))
    for (const auto& r : g.rows) EXPECT_EQ(r.delta(), 0) << g.title << " " << r.name;
}

TEST(Diff, TwoRuns) {
  AnalysisResult a, b;
  a.peak_bytes = 1000;
  b.peak_bytes = 1500;
  b.leak_rate_bytes_per_inference = 644;
  b.sites.push_back({"model.c:58", 10, 0, 6440, 6440, 10});
  auto groups = diff_traces(a, b);
  EXPECT_EQ(row(groups, "run", "peak bytes")->delta(), 500);
  EXPECT_EQ(row(groups, "run", "leak rate (B/inference)")->after, 644);
  EXPECT_TRUE(row(groups, "live bytes at the end, per site", "model.c:58")->added);
}

}  // namespace
}  // namespace edgemem
