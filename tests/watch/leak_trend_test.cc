// The leak alert's statistics: a slope over per-window floors with a
// one-sided t-test, so temporaries that outlive an inference do not trip it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "analysis/leak_trend.h"

namespace edgemem {
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

// One inference of a working set that wanders: `moves` random slots filled
// (with size(random) bytes) or freed.
template <class Size>
void wander(std::vector<uint64_t>& slot, std::mt19937& random, int moves, Size size, uint64_t& used) {
  for (int k = 0; k < moves; ++k) {
    uint64_t& s = slot[random() % slot.size()];
    if (s) {
      used -= s;
      s = 0;
    } else {
      used += s = size(random);
    }
  }
}
auto between(uint64_t low, uint64_t count) {
  return [=](std::mt19937& random) { return low + random() % count; };
}

// tests/watch/soak_trace.h's heap (0-4 buffers of 800-3,200 B held across
// inference ends) with `leak` B more kept every inference from `leak_from`
// on: the first inference (up to `until`) at which a leak is confirmed, or 0.
int confirmed_above_temporaries(uint32_t seed, int leak_from, uint64_t leak, int until) {
  LeakTrend trend;
  std::mt19937 random(seed);
  uint64_t held[4] = {}, leaked = 0;
  for (int i = 1; i <= until; ++i) {
    uint64_t& b = held[random() % 4];
    if (b) b = 0;
    else if (random() % 2) b = 800 + random() % 2401;
    if (i >= leak_from) leaked += leak;
    trend.add(24576 + held[0] + held[1] + held[2] + held[3] + leaked);
    if (auto e = trend.estimate(); e && e->confirmed) return i;
  }
  return 0;
}

// A working set that wanders: each inference frees or fills 9 random
// slots of 256 (bench/trace_writer.cc's device), so usage is a slow,
// bounded random walk and neighbouring floors are not independent. A run
// of 80 inferences in which it happens to climb passed the t-test: watch
// said "leaks 333 B per inference" at inference 27,088 of the benchmark
// trace, whose only leak is 644 B every 1,000th. Rising past every floor
// of the run before the fit is what a leak does and a bounded walk rarely.
TEST(LeakTrend, AWanderingWorkingSetIsNotALeak) {
  LeakTrend trend;
  std::mt19937 random(11);
  std::vector<uint64_t> slot(256, 0);
  uint64_t used = 0;
  for (int i = 0; i < 300000; ++i) {
    wander(slot, random, 9, between(16, 1008), used);
    trend.add(used);
    if (auto e = trend.estimate()) {
      ASSERT_FALSE(e->confirmed) << "at inference " << i << ": " << e->bytes_per_inference << " B, p " << e->p_value;
    }
  }
}

// A slower walk: one 1 KiB slot of 256 filled or freed per inference, from
// half full. The old rule (t-test and a floor above every earlier one) said
// "leak" on it at inference 27,039 of this run; a climb of that size is what
// the walk's own steps make over 80 inferences now and then.
TEST(LeakTrend, ASlowWanderingWorkingSetIsNotALeak) {
  LeakTrend trend;
  std::mt19937 random(10);
  std::vector<bool> filled(256);
  uint64_t used = 0;
  for (size_t i = 0; i < filled.size(); i += 2) filled[i] = true, used += 1024;
  for (int i = 0; i < 100000; ++i) {
    const size_t s = random() % filled.size();
    used = filled[s] ? used - 1024 : used + 1024;
    filled[s] = !filled[s];
    trend.add(used);
    if (auto e = trend.estimate()) {
      ASSERT_FALSE(e->confirmed) << "at inference " << i << ": " << e->bytes_per_inference << " B over "
                                 << e->inferences << ", p " << e->p_value;
    }
  }
}

// The walk above hides a 644 B per inference leak over 80 inferences in
// some runs: it is found over a longer span instead of never.
TEST(LeakTrend, ALeakInAWanderingWorkingSetIsFoundOverALongerSpan) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    LeakTrend trend;
    std::mt19937 random(seed);
    std::vector<uint64_t> slot(256, 0);
    uint64_t used = 0, leaked = 0;
    for (auto& s : slot)
      if (random() % 2) used += s = 16 + random() % 1009;
    std::optional<TrendEstimate> found;
    int at = 0;
    for (int i = 1; i <= 21000 && !found; ++i) {
      wander(slot, random, 9, between(16, 1009), used);
      if (i > 20000) leaked += 644;
      trend.add(used + leaked);
      if (auto e = trend.estimate(); e && e->confirmed) found = e, at = i;
    }
    ASSERT_TRUE(found) << "seed " << seed;
    EXPECT_GT(at, 20000) << "seed " << seed << ": before the leak began";
    EXPECT_LE(at - 20000, 400) << "seed " << seed;
    EXPECT_NEAR(found->bytes_per_inference, 644, 644 * 0.5) << "seed " << seed;
  }
}

// Over 160 inferences one step up passes the t-test (a step fits a line
// well enough on 20 points); a leak climbs in both halves of the span.
TEST(LeakTrend, OneStepUpIsNotATrendOverALongerSpanEither) {
  LeakTrend trend;
  std::mt19937 random(5);
  for (int i = 0; i < 4000; ++i) {
    trend.add((i < 3200 ? 10000 : 110000) + random() % 101);
    if (auto e = trend.estimate()) {
      ASSERT_FALSE(e->confirmed) << "at inference " << i << " over " << e->inferences;
    }
  }
}

// soak_trace.h's temporaries (0-4 buffers of 800-3,200 B held across
// inference ends) above a 64 B per inference leak from inference 2,001. The
// floors wobble about a level; as steps of a walk they looked wide enough to
// hide the leak for good (a review: 4 of 8 runs at 32 B never confirmed in
// 40,000 inferences). Their long-run variance is near zero: found.
TEST(LeakTrend, ASlowLeakUnderTemporariesIsFound) {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const int at = confirmed_above_temporaries(seed, 2001, 64, 12000);
    EXPECT_GT(at, 2000) << "seed " << seed;
    EXPECT_LE(at - 2000, 2000) << "seed " << seed;
  }
}

// The newest floor must top every earlier one, the one just before it too:
// a floor lifted for one window, then back on the leak's line, is not a new
// height (the check once compared with the floors before the previous one).
TEST(LeakTrend, AFloorBelowThePreviousOneIsNoNewHeight) {
  LeakTrend trend;
  for (uint64_t i = 1; i <= 104; ++i) trend.add(100000 + 644 * i + (i > 88 && i <= 96 ? 6000 : 0));
  ASSERT_TRUE(trend.estimate());
  EXPECT_FALSE(trend.estimate()->confirmed);
  for (uint64_t i = 105; i <= 112; ++i) trend.add(100000 + 644 * i);
  EXPECT_TRUE(trend.estimate()->confirmed);  // the next window tops it
}

// Most steps of an exactly flat floor are 0, so their median deviation is 0;
// a 1 MB block kept from some inference on must still be clipped as one wild
// step, or it widens the walk and hides the leak that follows.
TEST(LeakTrend, AWildStepOnAFlatFloorDoesNotHideALeak) {
  LeakTrend trend;
  int at = 0;
  for (int i = 1; i <= 21000 && !at; ++i) {
    uint64_t used = 1 << 20;
    if (i > 19000) used += 1 << 20;
    if (i > 20000) used += 644 * static_cast<uint64_t>(i - 20000) + (i / 8 % 3) * 1000;
    trend.add(used);
    if (auto e = trend.estimate(); e && e->confirmed) at = i;
  }
  EXPECT_GT(at, 20000);
  EXPECT_LE(at - 20000, 100);
}

// 256 slots, 3 filled or freed per inference with Pareto sizes (alpha 1.1,
// 128 B to 4 MiB): a few huge blocks come and stay a while, and those steps
// are the walk. Clipping every such step as wild made it narrow, and this
// run said "leak" at inference 20,576. (Other seeds still raise one in the
// first 100 inferences, climbing from empty: docs/watch.md.)
TEST(LeakTrend, AWalkOfHeavyTailedBlockSizesIsNotALeak) {
  LeakTrend trend;
  std::mt19937 random(15);
  std::vector<uint64_t> slot(256);
  uint64_t used = 0;
  for (int i = 1; i <= 100000; ++i) {
    wander(slot, random, 3, [](std::mt19937& r) {
      const double u = r() / 4294967296.0;
      return 64 + static_cast<uint64_t>(std::min(64 / std::pow(1 - u, 1 / 1.1), 4194304.0));
    }, used);
    trend.add(used);
    if (auto e = trend.estimate()) {
      ASSERT_FALSE(e->confirmed) << "at inference " << i << " over " << e->inferences;
    }
  }
}

// Early in a watch the walk is measured on a few dozen steps: the steps of
// the fit itself are left out (a leak's own, read as the walk's, widened
// it: 644 B from inference 401 took up to 159 inferences), and with fewer
// than 64 steps their plain variance stands in for the long-run one, which
// a few dozen steps make too narrow.
TEST(LeakTrend, EarlyInAWatchALeakIsFoundAndAWalkIsNot) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const int at = confirmed_above_temporaries(seed, 401, 644, 2000);
    EXPECT_GE(at, 401) << "seed " << seed;
    EXPECT_LE(at - 401, 100) << "seed " << seed;
  }
  // 1,024 slots, 3 of 16-512 B filled or freed per inference, from half full:
  // in the first 1,000 inferences the t-test and a new height alone said
  // "leak" in 36 of these 200 runs. A walk measured on a few dozen steps
  // still looks narrow now and then: 2.
  int alerts = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    LeakTrend trend;
    std::mt19937 random(seed);
    std::vector<uint64_t> slot(1024);
    uint64_t used = 0;
    for (auto& s : slot)
      if (random() % 2) used += s = 16 + random() % 497;
    for (int i = 1; i <= 1000; ++i) {
      wander(slot, random, 3, between(16, 497), used);
      trend.add(used);
      if (auto e = trend.estimate(); e && e->confirmed) {
        ++alerts;
        break;
      }
    }
  }
  EXPECT_LE(alerts, 2);
}

// Floors that wobble (0, 1,000, 2,000 B above a level) have a long-run
// variance near zero; a 1 MB block kept from inference 19,000 on, clipped
// to five standard deviations, still dwarfed it for 2,048 inferences and a
// 100 B per inference leak took 319. One wild step counts as none.
TEST(LeakTrend, OneLargeBlockKeptDoesNotHideALeakAboveAWobble) {
  LeakTrend trend;
  int at = 0;
  for (int i = 1; i <= 22000 && !at; ++i) {
    uint64_t used = 100000 + static_cast<uint64_t>(i / 8 % 3) * 1000;
    if (i > 19000) used += 1 << 20;
    if (i > 20000) used += 100 * static_cast<uint64_t>(i - 20000);
    trend.add(used);
    if (auto e = trend.estimate(); e && e->confirmed) at = i;
  }
  EXPECT_GT(at, 20000);
  EXPECT_LE(at - 20000, 100);
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
}  // namespace edgemem
