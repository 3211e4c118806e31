// A reduced series stays under its bound and keeps the extremes: a spike
// that lasts one sample in ten million is still there after reduction; and
// it ends at the last point added, the state the trace finished in.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

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

// Up to the bound nothing is reduced: 300 samples of alloc/free once kept
// 225, a quarter of the allocations gone from the charts and exports.
TEST(BoundedSeries, EverySeriesUpToTheBoundIsKeptWhole) {
  for (size_t limit : {4, 8, 32, 512}) {
    BoundedSeries<uint64_t, uint64_t> series(limit);
    for (uint64_t n = 0; n < limit; ++n) {
      series.add(n, n % 2 ? 0 : 400);
      auto points = series.points();
      ASSERT_EQ(points.size(), n + 1) << "limit " << limit;
      for (uint64_t i = 0; i <= n; ++i) ASSERT_EQ(points[i], std::make_pair(i, i % 2 ? uint64_t{0} : uint64_t{400}));
    }
  }
}

// The reduction rule written the plain way, every bucket in one vector, to
// hold the series' own bookkeeping (its open bucket kept apart) to it.
std::vector<std::pair<uint64_t, uint64_t>> reduced(const std::vector<uint64_t>& ys, size_t limit) {
  struct Bucket {
    size_t first, min, max, last;
    uint64_t count;
  };
  const size_t max_buckets = std::max<size_t>(1, limit / 4);
  uint64_t width = 1;
  std::vector<Bucket> buckets;
  auto join = [&](Bucket& b, size_t i) {
    ++b.count;
    b.last = i;
    if (ys[i] < ys[b.min]) b.min = i;
    if (ys[i] > ys[b.max]) b.max = i;
  };
  for (size_t i = 0; i < ys.size(); ++i) {
    if (!buckets.empty() && buckets.back().count < width) {
      join(buckets.back(), i);
      continue;
    }
    while (buckets.size() >= (width <= 2 ? 2 * max_buckets : max_buckets)) {
      std::vector<Bucket> merged;
      for (size_t k = 0; k < buckets.size(); k += 2) {
        Bucket b = buckets[k];
        if (k + 1 < buckets.size()) {
          const Bucket& next = buckets[k + 1];
          if (ys[next.min] < ys[b.min]) b.min = next.min;
          if (ys[next.max] > ys[b.max]) b.max = next.max;
          b.last = next.last;
          b.count += next.count;
        }
        merged.push_back(b);
      }
      buckets = merged;
      width *= 2;
    }
    if (buckets.empty() || buckets.back().count == width) buckets.push_back({i, i, i, i, 1});
    else join(buckets.back(), i);
  }
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const Bucket& b : buckets)
    for (size_t i : std::set<size_t>{b.first, b.min, b.max, b.last}) out.emplace_back(i, ys[i]);
  return out;
}

TEST(BoundedSeries, KeepsWhatThePlainRuleKeepsWithTiesAndAtEveryLength) {
  for (size_t limit : {4, 5, 9, 30, 512}) {
    BoundedSeries<uint64_t, uint64_t> series(limit);
    std::vector<uint64_t> ys;
    uint64_t state = limit;
    for (size_t n = 0; n < 20000; ++n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      ys.push_back((state >> 33) % 5);  // few values: many ties for the lowest and highest
      series.add(n, ys.back());
      if (n < 200 || n % 997 == 0) {
        ASSERT_EQ(series.points(), reduced(ys, limit)) << "limit " << limit << ", " << n + 1 << " points";
      }
    }
    EXPECT_EQ(series.added(), ys.size());
  }
}

// A bucket that closes on neither its first, lowest nor highest point still
// ends the series at its last point: the value the trace finished with (a
// pool's usage at the end, one block still live) is drawn, not the last
// extreme before it.
TEST(BoundedSeries, TheLastPointAddedIsAlwaysKept) {
  for (size_t limit : {4, 30, 512}) {
    BoundedSeries<uint64_t, uint64_t> series(limit);
    for (uint64_t n = 0; n < 5000; ++n) {
      series.add(n, n % 3 == 0 ? 100 : (n % 3 == 1 ? 0 : 200));  // alloc, free, a larger alloc...
      auto points = series.points();
      ASSERT_LE(points.size(), limit);
      ASSERT_EQ(points.back(), std::make_pair(n, n % 3 == 0 ? uint64_t{100} : (n % 3 == 1 ? 0u : 200u)))
          << "limit " << limit << ", " << n + 1 << " points";
    }
  }
}

TEST(BoundedSeries, SeriesSharingTheirBucketsKeepWhatEachKeepsAlone) {
  BoundedSeries<uint64_t, uint64_t, 2> shared(30);
  BoundedSeries<uint64_t, uint64_t> first(30), second(30);
  uint64_t state = 99;
  for (uint64_t n = 0; n < 50000; ++n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t a = (state >> 33) % 7, b = (state >> 40) % 3 + n / 1000;  // ties, and a slow climb
    shared.add(n, {a, b});
    first.add(n, a);
    second.add(n, b);
    if (n % 4999 == 0) {
      ASSERT_EQ(shared.points(0), first.points()) << n;
      ASSERT_EQ(shared.points(1), second.points()) << n;
    }
  }
  EXPECT_EQ(shared.added(), first.added());
}

}  // namespace
}  // namespace edgemem
