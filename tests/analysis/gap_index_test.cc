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

// Where ranges fall in a random sequence: on a grid, so ranges often end
// exactly where a gap begins (touching gaps must merge), or near the
// bitmap's word and summary boundaries.
struct Traffic {
  uint64_t base = 0;        // added to every address: gaps off word alignment
  uint64_t span = 4096;     // addresses in [base, base + span)
  uint64_t grid = 16;
  uint64_t max_cells = 12;  // sizes up to this many grid cells
  bool near_boundaries = false;
  uint64_t first_low = 0, first_high = 0;  // the first extent, offsets from base
  int steps = 20000;
};

// Any sequence, not only a well-behaved allocator's: ranges that overlap
// live ones, double frees, frees past the extent, extents that grow on both
// sides, resets. Total and largest must match the model after every step.
void arbitrary_sequence(uint32_t seed, const Traffic& t) {
  std::mt19937_64 rng(seed);
  GapIndex g;
  ReferenceGaps ref;
  auto position = [&] {
    if (!t.near_boundaries) return t.base + rng() % (t.span / t.grid) * t.grid;
    const uint64_t shift = std::vector<uint64_t>{6, 12, 18}[rng() % 3];
    const uint64_t edge = (rng() % std::max<uint64_t>(1, t.span >> shift)) << shift;
    return t.base + std::max<uint64_t>(edge + rng() % 7, 3) - 3;
  };
  auto size = [&] {
    if (!t.near_boundaries) return rng() % t.max_cells * t.grid;
    return rng() % 2 ? rng() % 130 : (uint64_t{1} << (6 + rng() % 7)) + rng() % 3 - 1;
  };
  g.extend(t.base + t.first_low, t.base + t.first_high);
  ref.extend(t.base + t.first_low, t.base + t.first_high);
  for (int step = 0; step < t.steps; ++step) {
    const uint64_t op = rng() % 100, a = position(), s = size();
    if (op < 45) {
      g.occupy(a, s);
      ref.occupy(a, s);
    } else if (op < 90) {
      g.release(a, s);
      ref.release(a, s);
    } else if (op < 99) {
      const uint64_t low = position(), high = low + rng() % t.span;
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

// Few gaps, or thousands: the bitmap with several summary levels.
TEST(GapIndex, AgreesWithAnIntervalMapOnArbitraryOperationSequences) {
  for (uint32_t seed : {1u, 2u, 3u, 42u, 2026u}) {
    const bool many = seed % 2 == 0;
    Traffic t;
    t.span = many ? 1 << 16 : 4096;
    t.grid = many ? 4 : 16;
    t.max_cells = many ? 6 : 12;
    t.first_low = t.span / 4;
    t.first_high = t.span / 2;
    arbitrary_sequence(seed, t);
  }
}

// Gaps starting, ending and merging on both sides of 64-bit words and of
// summary words, at an unaligned base, in a pool whose extent is exactly a
// power of two (the room is full: a gap may end at its very last byte).
TEST(GapIndex, AgreesWithAnIntervalMapAtBitmapWordBoundaries) {
  for (uint32_t seed : {5u, 6u, 7u}) {
    Traffic t;
    t.base = 0x20000003;
    t.span = uint64_t{1} << (12 + 4 * (seed - 5));  // 4 KiB, 64 KiB, 1 MiB
    t.near_boundaries = true;
    t.first_high = t.span;
    arbitrary_sequence(seed, t);
  }
}

// A pool as wide as the bitmap goes, then wider: every gap moves to the
// sorted chunks mid-sequence, and the sequence goes on there.
TEST(GapIndex, AgreesWithAnIntervalMapWhenTheExtentOutgrowsTheBitmap) {
  for (uint32_t seed : {8u, 9u}) {
    Traffic t;
    t.span = 3 * GapBitmap::kMaxCapacity;
    t.grid = 4096;
    t.max_cells = 8;
    t.first_low = GapBitmap::kMaxCapacity;
    t.first_high = 2 * GapBitmap::kMaxCapacity;
    t.steps = 4000;
    arbitrary_sequence(seed, t);
  }
}

// Too wide from the start (a Linux process's address space): chunks only,
// with thousands of gaps across many chunks.
TEST(GapIndex, AgreesWithAnIntervalMapOnAnExtentTooWideForTheBitmap) {
  Traffic t;
  t.base = uint64_t{1} << 40;
  t.span = uint64_t{1} << 32;
  t.grid = uint64_t{1} << 16;
  t.max_cells = 6;
  t.first_high = t.span;
  t.steps = 30000;
  arbitrary_sequence(10, t);
}

// The extent exactly filling the bitmap's room, then one byte more.
TEST(GapIndex, MovesToChunksOneByteAfterTheBitmapIsFull) {
  GapIndex g;
  g.extend(0, GapBitmap::kMaxCapacity);
  g.occupy(0, 100);
  g.occupy(GapBitmap::kMaxCapacity - 1, 1);
  EXPECT_EQ(g.largest_free(), GapBitmap::kMaxCapacity - 101);
  g.extend(0, GapBitmap::kMaxCapacity + 1);  // merges with nothing: its last byte is taken
  EXPECT_EQ(g.total_free(), GapBitmap::kMaxCapacity - 100);
  EXPECT_EQ(g.largest_free(), GapBitmap::kMaxCapacity - 101);
  g.release(GapBitmap::kMaxCapacity - 1, 1);
  EXPECT_EQ(g.largest_free(), GapBitmap::kMaxCapacity + 1 - 100);
  g.reset();
  EXPECT_EQ(g.largest_free(), GapBitmap::kMaxCapacity + 1);
}

}  // namespace
}  // namespace edgemem
