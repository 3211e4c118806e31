// The leak alert's statistics: a slope over per-window floors with a
// one-sided t-test, so temporaries that outlive an inference do not trip it.
#include <gtest/gtest.h>

#include <random>

#include "watch/leak_trend.h"

namespace edgemem::watch {
namespace {

TEST(StudentT, MatchesTheTablesAtTheirCriticalValues) {
  // Two-sided 5 % critical values from any t table: the upper tail is 2.5 %.
  EXPECT_NEAR(student_t_upper_tail(12.706, 1), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(4.303, 2), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(2.571, 5), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(2.306, 8), 0.025, 1e-4);
  EXPECT_NEAR(student_t_upper_tail(3.355, 8), 0.005, 1e-4);  // 1 % two-sided
  EXPECT_DOUBLE_EQ(student_t_upper_tail(0, 8), 0.5);
  EXPECT_NEAR(student_t_upper_tail(-2.306, 8), 0.975, 1e-4);
}

TEST(LeakTrend, NeedsTenWindowsBeforeItSaysAnything) {
  LeakTrend trend;
  for (uint64_t i = 0; i + 1 < LeakTrend::kWindow * LeakTrend::kWindows; ++i) trend.add(1000 + 644 * i);
  EXPECT_FALSE(trend.estimate());
  trend.add(1000 + 644 * 79);
  ASSERT_TRUE(trend.estimate());
  EXPECT_NEAR(trend.estimate()->bytes_per_inference, 644, 1e-9);
  EXPECT_TRUE(trend.estimate()->confirmed);
}

TEST(LeakTrend, TemporariesAboveAFlatFloorAreNotALeak) {
  // Every end marker sees a random amount of buffers above a fixed floor,
  // and some windows see a lot: a fit over raw samples wanders, the floors do not.
  LeakTrend trend;
  std::mt19937 random(7);
  for (int i = 0; i < 100000; ++i) {
    trend.add(24576 + (random() % 3) * (random() % 3200));
    if (auto e = trend.estimate()) {
      ASSERT_FALSE(e->confirmed) << "at inference " << i;
    }
  }
}

TEST(LeakTrend, AFloorThatStepsUpOnceIsNotConfirmed) {
  // A cache filled once (a persistent block made late) lifts the floor one
  // step: not a trend, and its p-value says so.
  LeakTrend trend;
  for (int i = 0; i < 200; ++i) trend.add(i < 120 ? 10000 : 14096);
  for (int i = 0; i < 40; ++i) {
    trend.add(14096);
    ASSERT_FALSE(trend.estimate()->confirmed);
  }
}

TEST(LeakTrend, AFallingFloorIsNotALeak) {
  LeakTrend trend;
  for (int i = 0; i < 200; ++i) trend.add(100000 - 100 * i);
  ASSERT_TRUE(trend.estimate());
  EXPECT_FALSE(trend.estimate()->confirmed);
  EXPECT_LT(trend.estimate()->bytes_per_inference, 0);
  EXPECT_GT(trend.estimate()->p_value, 0.5);
}

}  // namespace
}  // namespace edgemem::watch
