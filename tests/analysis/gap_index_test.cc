#include <gtest/gtest.h>

#include <algorithm>
#include <map>
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

// The simplest correct model of GapIndex: disjoint, non-touching free
// intervals in a std::map (start -> end), merged and split by brute force.
class ReferenceGaps {
 public:
  void extend(uint64_t low, uint64_t high) {
    if (high <= low) return;
    if (high_ <= low_) {
      low_ = low;
      high_ = high;
      add(low, high);
      return;
    }
    if (low < low_) add(low, low_), low_ = low;
    if (high > high_) add(high_, high), high_ = high;
  }
  void occupy(uint64_t address, uint64_t size) {
    if (size == 0) return;
    const uint64_t start = address, end = address + size;
    std::map<uint64_t, uint64_t> kept;
    for (auto [s, e] : gaps_) {
      if (e <= start || s >= end) {
        kept[s] = e;
        continue;
      }
      if (s < start) kept[s] = start;
      if (e > end) kept[end] = e;
    }
    gaps_.swap(kept);
  }
  void release(uint64_t address, uint64_t size) {
    uint64_t start = std::max(address, low_), end = std::min(address + size, high_);
    if (start < end) add(start, end);
  }
  void reset() {
    gaps_.clear();
    if (low_ < high_) add(low_, high_);
  }
  uint64_t total() const {
    uint64_t t = 0;
    for (auto [s, e] : gaps_) t += e - s;
    return t;
  }
  uint64_t largest() const {
    uint64_t l = 0;
    for (auto [s, e] : gaps_) l = std::max(l, e - s);
    return l;
  }

 private:
  void add(uint64_t start, uint64_t end) {
    for (auto it = gaps_.begin(); it != gaps_.end();) {
      if (it->second >= start && it->first <= end) {  // overlapping or touching: merge
        start = std::min(start, it->first);
        end = std::max(end, it->second);
        it = gaps_.erase(it);
      } else {
        ++it;
      }
    }
    gaps_[start] = end;
  }
  std::map<uint64_t, uint64_t> gaps_;
  uint64_t low_ = 0, high_ = 0;
};

// Any sequence, not only a well-behaved allocator's: ranges that overlap
// live ones, double frees, frees past the extent, extents that grow on both
// sides, resets. Total and largest must match the model after every step.
TEST(GapIndex, AgreesWithAnIntervalMapOnArbitraryOperationSequences) {
  for (uint32_t seed : {1u, 2u, 3u, 42u, 2026u}) {
    std::mt19937_64 rng(seed);
    GapIndex g;
    ReferenceGaps ref;
    // Few gaps, or thousands across many chunks. Positions on a grid, so
    // ranges often end exactly where a gap begins: touching gaps must merge.
    const bool many = seed % 2 == 0;
    const uint64_t span = many ? 1 << 16 : 4096, grid = many ? 4 : 16;
    g.extend(span / 4, span / 2);
    ref.extend(span / 4, span / 2);
    for (int step = 0; step < 20000; ++step) {
      const uint64_t op = rng() % 100, a = rng() % (span / grid) * grid, s = rng() % (many ? 6 : 12) * grid;
      if (op < 45) {
        g.occupy(a, s);
        ref.occupy(a, s);
      } else if (op < 90) {
        g.release(a, s);
        ref.release(a, s);
      } else if (op < 99) {
        const uint64_t low = rng() % span, high = low + rng() % span;
        g.extend(low, high);
        ref.extend(low, high);
      } else {
        g.reset();
        ref.reset();
      }
      ASSERT_EQ(g.total_free(), ref.total()) << "seed " << seed << " step " << step;
      ASSERT_EQ(g.largest_free(), ref.largest()) << "seed " << seed << " step " << step;
    }
  }
}

// A fragmented heap served from its top: thousands of small holes (over a
// hundred chunks, several groups of them) and the largest gap shrinking on
// almost every allocation, the case that once rescanned every chunk.
TEST(GapIndex, TheLargestGapShrinkingAmongThousandsOfHolesAgreesWithTheModel) {
  std::mt19937_64 rng(11);
  GapIndex g;
  ReferenceGaps ref;
  g.extend(0, 1 << 22);
  ref.extend(0, 1 << 22);
  for (uint64_t i = 0; i < 2500; ++i) {
    g.occupy(i * 32, 16);
    ref.occupy(i * 32, 16);
  }
  uint64_t top = 2500 * 32;
  std::vector<std::pair<uint64_t, uint64_t>> made;
  for (int step = 0; step < 3000; ++step) {
    const uint64_t op = rng() % 100;
    if (op < 55) {
      const uint64_t size = 1 + rng() % 64;
      g.occupy(top, size);
      ref.occupy(top, size);
      made.emplace_back(top, size);
      top += size + rng() % 3;  // now and then a hole of a byte or two
    } else if (op < 80 && !made.empty()) {
      const size_t k = rng() % made.size();
      g.release(made[k].first, made[k].second);
      ref.release(made[k].first, made[k].second);
      made.erase(made.begin() + static_cast<long>(k));
    } else {
      const uint64_t hole = rng() % 2500 * 32 + 16;
      if (rng() % 2) {
        g.occupy(hole, 16);
        ref.occupy(hole, 16);
      } else {
        g.release(hole, 16);
        ref.release(hole, 16);
      }
    }
    ASSERT_EQ(g.total_free(), ref.total()) << "step " << step;
    ASSERT_EQ(g.largest_free(), ref.largest()) << "step " << step;
  }
}

}  // namespace
}  // namespace edgemem
