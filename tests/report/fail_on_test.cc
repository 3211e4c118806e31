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
  r.checks.leaks.status = CheckStatus::found;
  r.overflow_count = 2;
  EXPECT_EQ(broken_rules(parse_fail_on("leak,overflow"), r).size(), 2u);
  // Groups listed while the leak check could not judge them (a recording
  // cut off: growing up to the cut) break nothing; the rule is unjudged.
  r.checks.leaks = {CheckStatus::not_checked, "the recording's file is cut off"};
  EXPECT_EQ(broken_rules(parse_fail_on("leak,overflow"), r).size(), 1u);
  EXPECT_EQ(unjudged_rules(parse_fail_on("leak"), r).size(), 1u);
}

// A rule whose check did not run neither holds nor breaks: it is named
// (once it passed in silence), and a gate none of whose rules could be
// judged is refused (exit 2; tests/cli/exit_codes_test.sh).
TEST(FailOn, ARuleWhoseCheckDidNotRunIsUnjudged) {
  AnalysisResult r;
  r.checks.leaks.status = CheckStatus::clean;
  r.checks.overflow = {CheckStatus::not_checked, "size of 'arena' unknown"};
  EXPECT_TRUE(unjudged_rules(parse_fail_on("leak,alloc-failure"), r).empty());
  auto unjudged = unjudged_rules(parse_fail_on("leak,overflow,guard"), r);
  ASSERT_EQ(unjudged.size(), 2u);
  EXPECT_EQ(unjudged[0], "overflow: not checked, so it neither holds nor breaks (size of 'arena' unknown)");
  EXPECT_EQ(unjudged[1].rfind("guard: not checked", 0), 0u) << unjudged[1];
  EXPECT_EQ(rule_count(parse_fail_on("leak,overflow,guard")), 3u);  // 2 unjudged of 3: the leak rule decides
}

// The band is read with the one band table: "fragmentation=healthy" would
// fail every run and is refused; a band that was not measured breaks nothing.
TEST(FailOn, FragmentationUsesTheBandTable) {
  EXPECT_EQ(parse_fail_on("fragmentation=warning").fragmentation, Band::warning);
  EXPECT_EQ(parse_fail_on("fragmentation").fragmentation, Band::warning);
  EXPECT_THROW(parse_fail_on("fragmentation=healthy"), std::invalid_argument);
  EXPECT_THROW(parse_fail_on("fragmentation=bad"), std::invalid_argument);
  AnalysisResult r;
  EXPECT_TRUE(broken_rules(parse_fail_on("fragmentation=warning"), r).empty());
  r.fragmentation.band = Band::danger;
  r.fragmentation.max_rate = 0.42;
  r.fragmentation.final_rate = 0.0;
  auto broken = broken_rules(parse_fail_on("fragmentation=danger"), r);
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_NE(broken[0].find("band danger (max 42%"), std::string::npos) << broken[0];
}

}  // namespace
}  // namespace edgemem
