#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
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

// A second model for large tests: the same gaps in a std::map, changed in
// O(log n), and their sizes in a multiset for the largest.
class MapGaps {
 public:
  explicit MapGaps(uint64_t high) { add(0, high); }
  void occupy(uint64_t start, uint64_t size) {
    const uint64_t end = start + size;
    auto it = gaps_.upper_bound(start);
    if (it != gaps_.begin()) --it;
    while (it != gaps_.end() && it->first < end) {
      const auto [s, e] = *it;
      if (e <= start) {
        ++it;
        continue;
      }
      it = remove(it);
      if (s < start) add(s, start);
      if (e > end) add(end, e);
    }
  }
  void release(uint64_t start, uint64_t size) {
    uint64_t end = start + size;
    auto it = gaps_.upper_bound(start);
    if (it != gaps_.begin() && std::prev(it)->second >= start) --it;
    while (it != gaps_.end() && it->first <= end) {
      start = std::min(start, it->first);
      end = std::max(end, it->second);
      it = remove(it);
    }
    add(start, end);
  }
  uint64_t largest() const { return sizes_.empty() ? 0 : *sizes_.rbegin(); }
  uint64_t total() const { return total_; }
  // The first gap starting at or after x, else the first one; {0, 0} if none.
  std::pair<uint64_t, uint64_t> gap_from(uint64_t x) const {
    if (gaps_.empty()) return {0, 0};
    auto it = gaps_.lower_bound(x);
    return *(it == gaps_.end() ? gaps_.begin() : it);
  }

 private:
  void add(uint64_t start, uint64_t end) {
    gaps_[start] = end;
    sizes_.insert(end - start);
    total_ += end - start;
  }
  std::map<uint64_t, uint64_t>::iterator remove(std::map<uint64_t, uint64_t>::iterator it) {
    sizes_.erase(sizes_.find(it->second - it->first));
    total_ -= it->second - it->first;
    return gaps_.erase(it);
  }
  std::map<uint64_t, uint64_t> gaps_;
  std::multiset<uint64_t> sizes_;
  uint64_t total_ = 0;
};

// Every operation on two models at once.
template <typename A, typename B>
struct Both {
  A& a;
  B& b;
  void occupy(uint64_t x, uint64_t n) { a.occupy(x, n), b.occupy(x, n); }
  void release(uint64_t x, uint64_t n) { a.release(x, n), b.release(x, n); }
};

// `holes` small holes, then a top that shrinks on most allocations.
template <typename Gaps>
void fragmented_top(Gaps& g, uint64_t holes, int steps, uint64_t seed, const std::function<void(int)>& check) {
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < holes; ++i) g.occupy(i * 32, 16);
  uint64_t top = holes * 32;
  std::vector<std::pair<uint64_t, uint64_t>> made;
  for (int step = 0; step < steps; ++step) {
    const uint64_t op = rng() % 100;
    if (op < 55) {
      const uint64_t size = 1 + rng() % 64;
      g.occupy(top, size);
      made.emplace_back(top, size);
      top += size + rng() % 3;  // now and then a hole of a byte or two
    } else if (op < 80 && !made.empty()) {
      const size_t k = rng() % made.size();
      g.release(made[k].first, made[k].second);
      made.erase(made.begin() + static_cast<long>(k));
    } else {
      const uint64_t hole = rng() % holes * 32 + 16;
      if (rng() % 2) g.occupy(hole, 16);
      else g.release(hole, 16);
    }
    check(step);
  }
}

// The case that once rescanned every chunk per allocation, against the
// interval model; and there both models agree, so the map model can check
// larger runs.
TEST(GapIndex, TheLargestGapShrinkingAmongThousandsOfHolesAgreesWithTheModel) {
  GapIndex g;
  ReferenceGaps ref;
  g.extend(0, 1 << 22);
  ref.extend(0, 1 << 22);
  Both<GapIndex, ReferenceGaps> both{g, ref};
  fragmented_top(both, 2500, 3000, 11, [&](int step) {
    ASSERT_EQ(g.total_free(), ref.total()) << step;
    ASSERT_EQ(g.largest_free(), ref.largest()) << step;
  });
}

TEST(GapIndex, TheMapModelAgreesWithTheIntervalModel) {
  ReferenceGaps ref;
  ref.extend(0, 1 << 22);
  MapGaps map(1 << 22);
  Both<ReferenceGaps, MapGaps> both{ref, map};
  fragmented_top(both, 300, 2000, 5, [&](int step) {
    ASSERT_EQ(map.total(), ref.total()) << step;
    ASSERT_EQ(map.largest(), ref.largest()) << step;
  });
}

// 40,000 holes: over a thousand chunks, so the largest is kept on two
// levels of groups; the largest gap shrinks on most allocations.
TEST(GapIndex, TheLargestGapAmongFortyThousandHolesAgreesWithTheMapModel) {
  GapIndex g;
  g.extend(0, 1 << 22);
  MapGaps map(1 << 22);
  Both<GapIndex, MapGaps> both{g, map};
  fragmented_top(both, 40000, 20000, 13, [&](int step) {
    ASSERT_EQ(g.total_free(), map.total()) << step;
    ASSERT_EQ(g.largest_free(), map.largest()) << step;
  });
}

// Phases of tiny holes, large frees and occupations (chunks empty and
// their ids come back), whole gaps taken, combs, and a heap served from its
// top, against the map model after every step. Thousands of chunks, two levels of groups.
TEST(GapIndex, PhasesOfHolesLargeFreesAndTopAllocationsAgreeWithTheMapModel) {
  for (uint64_t seed : {2u, 7u}) {
    std::mt19937_64 rng(seed);
    const uint64_t span = 1 << 22;
    GapIndex g;
    g.extend(0, span);
    MapGaps map(span);
    Both<GapIndex, MapGaps> both{g, map};
    uint64_t top = 0, phase = 0;
    for (int step = 0; step < 120000; ++step) {
      if (step % 20000 == 0) phase = rng() % 5;
      const uint64_t r = rng(), a = rng() % span;
      if (phase == 0) {  // tiny holes
        if (r % 4) both.occupy(a, 1 + rng() % 16);
        else both.release(a, 1 + rng() % 64);
      } else if (phase == 1) {  // large frees and occupations
        const uint64_t size = 1 + rng() % (span / 8);
        if (r % 2) both.occupy(a, std::min(size, span - a));
        else both.release(a, std::min(size, span - a));
      } else if (phase == 3) {  // a whole gap taken, or its first half
        const auto [start, end] = map.gap_from(a);
        if (end > start) both.occupy(start, r % 2 ? end - start : (end - start) / 2 + 1);
      } else if (phase == 4) {  // a comb of 1-byte blocks, now and then freed with its teeth
        const uint64_t at = std::min(a, span - 4096);
        for (uint64_t k = 0; k < 8; ++k) both.occupy(at + 3 * k, 1);
        if (r % 7 == 0) both.release(at, rng() % 4096);
      } else {  // served from a top that moves up, freeing now and then behind it
        const uint64_t size = 1 + rng() % 32;
        if (top + size > span) top = 0;
        if (r % 5) {
          both.occupy(top, size);
          top += size + (r % 3 == 0 ? 1 + rng() % 4 : 0);
        } else {
          both.release(a, std::min<uint64_t>(1 + rng() % 8, span - a));
        }
      }
      ASSERT_EQ(g.total_free(), map.total()) << "seed " << seed << " step " << step;
      ASSERT_EQ(g.largest_free(), map.largest()) << "seed " << seed << " step " << step;
    }
  }
}

// The largest asked only now and then, as an analysis may: what changed
// in between (chunks left stale, the largest gap shrunk, grown, split or
// taken whole) is settled at once. Few chunks, one level of groups and two.
TEST(GapIndex, TheLargestAskedNowAndThenAgreesWithTheMapModel) {
  for (uint64_t holes : {40u, 3000u, 40000u}) {
    std::mt19937_64 rng(holes);
    const uint64_t span = 1 << 22;
    GapIndex g;
    g.extend(0, span);
    MapGaps map(span);
    Both<GapIndex, MapGaps> both{g, map};
    for (uint64_t i = 0; i < holes; ++i) both.occupy(i * 64, 40);
    uint64_t top = holes * 64, ask_every = 1;
    std::vector<std::pair<uint64_t, uint64_t>> made;
    for (int step = 0; step < 30000; ++step) {
      if (step % 3000 == 0) ask_every = 1 + rng() % 40;
      const uint64_t op = rng() % 100;
      if (op < 40) {  // from the top, now and then leaving a hole
        const uint64_t size = 1 + rng() % 48;
        if (top + size > span) top = holes * 64;
        both.occupy(top, size);
        made.emplace_back(top, size);
        top += size + (rng() % 4 == 0 ? rng() % 24 : 0);
      } else if (op < 70 && !made.empty()) {
        const size_t k = rng() % made.size();
        both.release(made[k].first, made[k].second);
        made[k] = made.back();
        made.pop_back();
      } else if (op < 85) {  // a gap taken whole, from its start, or from inside
        const auto [start, end] = map.gap_from(rng() % span);
        if (end <= start) continue;
        const uint64_t at = op % 3 == 0 ? start : start + rng() % (end - start);
        both.occupy(at, op % 3 == 1 ? end - at : 1 + rng() % (end - at));
      } else if (op < 95) {  // a hole filled or opened
        const uint64_t hole = rng() % holes * 64 + 40;
        if (rng() % 2) both.occupy(hole, 24);
        else both.release(hole - rng() % 40, 24 + rng() % 80);
      } else {  // a wide range freed or taken
        const uint64_t a = rng() % span, size = std::min<uint64_t>(1 + rng() % 20000, span - a);
        if (rng() % 2) both.occupy(a, size);
        else both.release(a, size);
      }
      ASSERT_EQ(g.total_free(), map.total()) << "holes " << holes << " step " << step;
      if (rng() % ask_every) continue;
      ASSERT_EQ(g.largest_free(), map.largest()) << "holes " << holes << " step " << step;
    }
  }
}

// Found in review: a group invalidated under a parent whose maximum came
// from another child left the parent valid; a gap that then grew in that
// group stopped at it, and the next search took the parent's stale 103.
TEST(GapIndex, AGapGrowingUnderAGroupAlreadyInvalidIsFoundAtTheTop) {
  GapIndex g;
  g.extend(0, 160000);
  for (uint64_t i = 0; i < 40000; ++i) g.occupy(4 * i + 3, 1);  // 40,000 gaps of 3 bytes: two levels of groups
  EXPECT_EQ(g.largest_free(), 3u);
  g.release(0, 100);
  g.release(3000, 50);
  EXPECT_EQ(g.largest_free(), 103u);
  g.occupy(3010, 1);     // 51 -> 40: its group is no longer known, the parent's 103 is another child's
  g.release(3000, 300);  // 303, under that group
  g.occupy(3000, 1);     // 302: the largest shrank, searched again
  EXPECT_EQ(g.largest_free(), 302u);
}

}  // namespace
}  // namespace edgemem
