// The analyze page trims the analysis's bounded lists further
// (src/report/page_bounds.h), and the layout's names come back whole from
// the frame table.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgemem/analysis_result.h"
#include "report/page_bounds.h"

namespace edgemem::test {
namespace {

using nlohmann::json;

json document(size_t sites) {
  json a;
  a["sites"] = json::array();
  a["persistent"] = json::array();
  for (size_t i = 0; i < sites; ++i) {
    std::string site = fmt::format("main;run;op{}", i);
    a["sites"].push_back({{"site", site}, {"allocs", 3}, {"frees", 1}, {"alloc_bytes", 30}, {"live_bytes", 20}, {"live_count", 2}});
    a["persistent"].push_back({{"site", site}, {"pool", "malloc"}, {"bytes", 20}, {"count", 2}, {"reason", "not_growing"}});
  }
  a["leaks"] = json::array({{{"site", fmt::format("main;run;op{}", sites - 1)}}});
  a["peak"]["live_at_peak"] = json::array();
  for (size_t i = 0; i < 150; ++i) a["peak"]["live_at_peak"].push_back({{"site", "s"}, {"bytes", 150 - i}, {"count", 1}});
  a["layout"]["sites"] = json::array({"main;run;op1", "main;run;op2", "main", "a;;b"});
  a["layout"]["live_at_end"] = json::array();
  a["layout"]["live_at_peak"] = json::array();
  a["sites_omitted"] = nullptr;
  return a;
}

TEST(PageBounds, PastTheAnalysissBoundThePageSendsThePersistentGroupsOfTheSitesItListsAndFewerPeakHolders) {
  json a = document(1500);
  a["sites"].erase(a["sites"].begin() + 1000, a["sites"].end() - 1);  // as the analysis lists them
  a["sites_omitted"] = {{"count", 499}};
  page_bounds::bound_analysis(a);
  EXPECT_EQ(a["persistent"].size(), 1001u);
  EXPECT_EQ(a["persistent"].back()["site"], "main;run;op1499");
  EXPECT_EQ(a["peak"]["live_at_peak"].size(), page_bounds::kPeakHolders + 1);
  EXPECT_EQ(a["peak"]["live_at_peak"][0]["bytes"], 150);
  // 150 rows of 150..1 bytes: the 50 smallest are one row of 50+49+..+1.
  EXPECT_EQ(a["peak"]["live_at_peak"].back(), json({{"site", "(50 other sites)"}, {"bytes", 1275}, {"count", 50}}));
}

// The analysis's own summed row (past listed::kPeakHolders) is summed in
// with the sites it stands for.
TEST(PageBounds, TheAnalysissSummedPeakRowCountsItsSites) {
  json a = document(1);
  json& holders = a["peak"]["live_at_peak"];
  holders = json::array();
  for (size_t i = 0; i < listed::kPeakHolders; ++i) holders.push_back({{"site", fmt::format("s{}", i)}, {"bytes", 2000 - i}, {"count", 1}});
  holders.push_back({{"site", "(700 other sites)"}, {"bytes", 7000}, {"count", 900}});
  page_bounds::bound_analysis(a);
  ASSERT_EQ(holders.size(), page_bounds::kPeakHolders + 1);
  uint64_t rest = 0;
  for (size_t i = page_bounds::kPeakHolders; i < listed::kPeakHolders; ++i) rest += 2000 - i;
  EXPECT_EQ(holders.back(), json({{"site", "(1600 other sites)"}, {"bytes", rest + 7000}, {"count", 900 + 900}}));
}

// The bytes below an arena's top in no block are no site: never summed into
// "(N other sites)", where the page's flame graph of the peak could not
// find them (it came out 100 B narrower than the peak) and they were
// counted as one more site.
TEST(PageBounds, TheBytesBelowAnArenasTopStayARowOfTheirOwn) {
  json a = document(1);
  json& holders = a["peak"]["live_at_peak"];
  const json row = {{"site", std::string(kBelowArenaTop)}, {"bytes", 10}, {"count", 0}};
  holders.insert(holders.begin() + 140, row);
  uint64_t total = 0;
  for (const json& h : holders) total += h["bytes"].get<uint64_t>();
  page_bounds::bound_analysis(a);
  ASSERT_EQ(holders.size(), page_bounds::kPeakHolders + 1);
  uint64_t kept = 0;
  for (const json& h : holders) kept += h["bytes"].get<uint64_t>();
  EXPECT_EQ(kept, total);
  // 150 sites of 150..1 bytes and the 10 B row: 99 sites are named, 51 summed.
  EXPECT_EQ(holders.back(), json({{"site", "(51 other sites)"}, {"bytes", 51 * 52 / 2}, {"count", 51}}));
  auto below = std::find_if(holders.begin(), holders.end(), [](const json& h) { return h["site"] == kBelowArenaTop; });
  ASSERT_NE(below, holders.end());
  EXPECT_EQ((*below)["bytes"], 10);
  EXPECT_EQ(below - holders.begin(), 99);  // after the 99 named sites of 150..52 B, before the summed row
}

TEST(PageBounds, AFewPeakHoldersAreSentAsTheyAre) {
  json a = document(1);
  a["peak"]["live_at_peak"].erase(a["peak"]["live_at_peak"].begin() + 3, a["peak"]["live_at_peak"].end());
  const json before = a["peak"]["live_at_peak"];
  page_bounds::bound_analysis(a);
  EXPECT_EQ(a["peak"]["live_at_peak"], before);
}

TEST(PageBounds, AWholeListKeepsEveryPersistentGroup) {
  json a = document(10);
  page_bounds::bound_analysis(a);
  EXPECT_EQ(a["persistent"].size(), 10u);
}

TEST(PageBounds, LayoutSiteNamesComeBackWholeFromTheFrameTable) {
  json a = document(1);
  const json names = a["layout"]["sites"];
  page_bounds::bound_analysis(a);
  EXPECT_FALSE(a["layout"].contains("sites"));
  const json& frames = a["layout"]["site_frames"];
  EXPECT_EQ(frames.size(), 7u);  // main, run, op1, op2, a, "", b: "main" and "run" shared
  ASSERT_EQ(a["layout"]["site_stacks"].size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const json& ids = a["layout"]["site_stacks"][i];
    std::string joined;
    for (size_t k = 0; k < ids.size(); ++k) {
      if (k) joined += ';';
      joined += frames[ids[k].get<size_t>()].get<std::string>();
    }
    EXPECT_EQ(joined, names[i]);
  }
}

// The chart's legend reads as the text report does: the innermost frame, led
// by the program's own when the innermost is the C++ runtime's.
TEST(PageBounds, EachLayoutSiteHasTheLegendsShortLabel) {
  json a = document(1);
  a["layout"]["sites"] = {"main.c:40;run_inference;lstm_eval;model.c:58",
                          "main (vec.cc:20);load_weights (vec.cc:5);std::vector<float, std::allocator<float> >::vector("
                          "unsigned long) (stl_vector.h:512);std::__new_allocator<float>::allocate(unsigned long, void "
                          "const*) (new_allocator.h:137)"};
  page_bounds::bound_analysis(a);
  EXPECT_EQ(a["layout"]["site_labels"],
            json({"model.c:58", "load_weights (vec.cc:5);...;std::__new_allocator::allocate (new_allocator.h:137)"}));
}

}  // namespace
}  // namespace edgemem::test
