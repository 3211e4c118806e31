#include <gtest/gtest.h>

#include <random>
#include <set>

#include "analysis/gap_index.h"

namespace edgemem {
namespace {

TEST(GapIndex, SplitsAndMergesGaps) {
  GapIndex g;
  g.extend(0, 1000);
  g.occupy(0, 100);
  g.occupy(300, 100);
  EXPECT_EQ(g.total_free(), 800u);
  EXPECT_EQ(g.largest_free(), 600u);  // [400,1000)
  g.occupy(500, 100);
  EXPECT_EQ(g.largest_free(), 400u);  // [600,1000)
  g.release(300, 100);
  EXPECT_EQ(g.largest_free(), 400u);  // [100,500) merged
  g.release(500, 100);
  EXPECT_EQ(g.largest_free(), 900u);
  g.reset();
  EXPECT_EQ(g.total_free(), 1000u);
}

// Against a byte map: random occupy/release must agree on total and largest.
void random_traffic(uint64_t n, uint64_t max_block, int steps, int check_every) {
  std::mt19937 rng(7);
  std::vector<bool> used(n, false);
  GapIndex g;
  g.extend(0, n);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  for (int step = 0; step < steps; ++step) {
    if (live.empty() || rng() % 2) {
      uint64_t a = rng() % n, s = 1 + rng() % max_block;
      if (a + s > n) continue;
      bool clash = false;
      for (uint64_t i = a; i < a + s; ++i) clash |= used[i];
      if (clash) continue;
      for (uint64_t i = a; i < a + s; ++i) used[i] = true;
      g.occupy(a, s);
      live.emplace_back(a, s);
    } else {
      size_t k = rng() % live.size();
      auto [a, s] = live[k];
      for (uint64_t i = a; i < a + s; ++i) used[i] = false;
      g.release(a, s);
      live.erase(live.begin() + static_cast<long>(k));
    }
    if (step % check_every) continue;
    uint64_t total = 0, largest = 0, run = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (!used[i]) ++total, largest = std::max(largest, ++run);
      else run = 0;
    }
    ASSERT_EQ(g.total_free(), total) << step;
    ASSERT_EQ(g.largest_free(), largest) << step;
  }
}

TEST(GapIndex, AgreesWithAByteMapUnderRandomTraffic) { random_traffic(4096, 64, 5000, 1); }

// Thousands of gaps: chunks split, empty and merge across their borders.
TEST(GapIndex, AgreesWithAByteMapWithThousandsOfGaps) { random_traffic(1 << 16, 6, 60000, 97); }

}  // namespace
}  // namespace edgemem
