// A reduced series stays under its bound and keeps the extremes: a spike
// that lasts one sample in ten million is still there after reduction.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/bounded_series.h"

namespace edgemem {
namespace {

TEST(BoundedSeries, OneSpikeInTenMillionPointsSurvivesReductionUnderTheBound) {
  BoundedSeries<uint64_t, uint64_t> series(256);
  const uint64_t n = 10'000'000, spike_at = 7'654'321;
  uint64_t max_size = 0;
  for (uint64_t i = 0; i < n; ++i) {
    series.add(i, i == spike_at ? 99'999 : 1000 + i % 7);
    if (i % 100'000 == 0) max_size = std::max<uint64_t>(max_size, series.points().size());
  }
  auto points = series.points();
  EXPECT_LE(points.size(), 256u);
  EXPECT_LE(max_size, 256u);
  auto spike = std::find_if(points.begin(), points.end(), [](const auto& p) { return p.second == 99'999; });
  ASSERT_NE(spike, points.end());
  EXPECT_EQ(spike->first, spike_at);
  EXPECT_EQ(points.front().first, 0u);  // the first x of the first bucket
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end()));
}

TEST(BoundedSeries, ADipIsKeptAsWellAsASpike) {
  BoundedSeries<uint64_t, double> series(30);
  for (uint64_t i = 0; i < 100'000; ++i) series.add(i, i == 31'337 ? 0.0 : (i == 77'777 ? 1.0 : 0.5));
  auto points = series.points();
  EXPECT_LE(points.size(), 30u);
  EXPECT_NE(std::find(points.begin(), points.end(), std::pair<uint64_t, double>{31'337, 0.0}), points.end());
  EXPECT_NE(std::find(points.begin(), points.end(), std::pair<uint64_t, double>{77'777, 1.0}), points.end());
}

TEST(BoundedSeries, ShortSeriesAreKeptWhole) {
  BoundedSeries<uint64_t, uint64_t> series(512);
  for (uint64_t i = 0; i < 100; ++i) series.add(i, i * i % 13);
  auto points = series.points();
  ASSERT_EQ(points.size(), 100u);
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(points[i], std::make_pair(i, i * i % 13));
}

}  // namespace
}  // namespace edgemem
