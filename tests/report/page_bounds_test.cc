// The analyze page bounds its site lists (src/report/page_bounds.h): what it
// leaves out is summed, leaking sites stay, pool totals stay exact, and the
// layout's names come back whole from the frame table.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
  return a;
}

TEST(PageBounds, TheSitesTableKeepsTheFirstThousandAndEveryLeakAndSumsTheRest) {
  json a = document(1500);
  page_bounds::bound_analysis(a);
  ASSERT_EQ(a["sites"].size(), page_bounds::kSiteRows + 1);
  EXPECT_EQ(a["sites"][0]["site"], "main;run;op0");
  EXPECT_EQ(a["sites"].back()["site"], "main;run;op1499");  // leaking, past the first thousand
  EXPECT_EQ(a["sites_omitted"]["count"], 499);
  EXPECT_EQ(a["sites_omitted"]["live_bytes"], 499 * 20);
  EXPECT_EQ(a["sites_omitted"]["allocs"], 499 * 3);
  EXPECT_EQ(a["persistent"].size(), page_bounds::kSiteRows + 1);
  EXPECT_EQ(a["peak"]["live_at_peak"].size(), page_bounds::kPeakHolders);
  EXPECT_EQ(a["peak"]["live_at_peak"][0]["bytes"], 150);
}

TEST(PageBounds, ASmallDocumentKeepsEverySite) {
  json a = document(10);
  page_bounds::bound_analysis(a);
  EXPECT_EQ(a["sites"].size(), 10u);
  EXPECT_FALSE(a.contains("sites_omitted"));
}

TEST(PageBounds, StacksTooNarrowToDrawBecomeOneEntryPerPoolAndPoolsKeepTheirBytes) {
  json a = document(1);
  json& end = a["layout"]["live_at_end"];
  end.push_back({{"pool", "malloc"}, {"site", "big"}, {"bytes", 1000000}, {"count", 1}});
  for (int i = 0; i < 5; ++i) end.push_back({{"pool", "malloc"}, {"site", fmt::format("tiny{}", i)}, {"bytes", 10}, {"count", 2}});
  end.push_back({{"pool", "arena"}, {"site", "lone"}, {"bytes", 7}, {"count", 1}});
  page_bounds::bound_analysis(a);
  ASSERT_EQ(end.size(), 3u);
  EXPECT_EQ(end[0]["site"], "big");
  EXPECT_EQ(end[1]["pool"], "arena");  // one narrow stack alone stays as it is
  EXPECT_EQ(end[1]["site"], "lone");
  EXPECT_EQ(end[2]["pool"], "malloc");
  EXPECT_EQ(end[2]["site"], "(5 stacks under 1/10000 of the bytes each)");
  EXPECT_EQ(end[2]["bytes"], 50);
  EXPECT_EQ(end[2]["count"], 10);
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

}  // namespace
}  // namespace edgemem::test
