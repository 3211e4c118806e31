#include <gtest/gtest.h>

#include "edgemem/report.h"

namespace edgemem {
namespace {

TEST(FailOn, ParsesAndRejects) {
  FailOn f = parse_fail_on("leak,overflow,fragmentation=danger");
  EXPECT_TRUE(f.leak);
  EXPECT_TRUE(f.overflow);
  EXPECT_EQ(f.fragmentation, Band::danger);
  EXPECT_THROW(parse_fail_on("leaks"), std::invalid_argument);
}

TEST(FailOn, BreaksOnlyTheRulesThatHold) {
  AnalysisResult r;
  r.fragmentation.band = Band::warning;
  EXPECT_TRUE(broken_rules(parse_fail_on("leak,fragmentation=danger"), r).empty());
  EXPECT_EQ(broken_rules(parse_fail_on("fragmentation=warning"), r).size(), 1u);
  r.leaks.push_back({});
  r.overflow_count = 2;
  EXPECT_EQ(broken_rules(parse_fail_on("leak,overflow"), r).size(), 2u);
}

}  // namespace
}  // namespace edgemem
