#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

#include "analysis/live_map.h"

namespace edgemem {
namespace {

TEST(LiveMap, MatchesStdUnorderedMapUnderChurn) {
  std::mt19937_64 rng(3);
  LiveMap m;
  std::unordered_map<uint64_t, uint64_t> ref;
  for (int i = 0; i < 200000; ++i) {
    uint64_t addr = (rng() % 5000) * 16;
    if (rng() % 3) {
      Block b;
      b.address = addr;
      b.size = rng() % 1000;
      bool was = m.put(b, nullptr);
      ASSERT_EQ(was, ref.count(addr) == 1);
      ref[addr] = b.size;
    } else {
      Block out;
      bool had = m.erase(addr, &out);
      ASSERT_EQ(had, ref.count(addr) == 1);
      if (had) {
        ASSERT_EQ(out.size, ref[addr]);
      }
      ref.erase(addr);
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  for (auto [addr, size] : ref) {
    Block* b = m.find(addr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->size, size);
  }
}

// An arena's map (`stacking`) against a model that keeps every block at an
// offset in the order they came: a 0-byte block never replaces nor is
// replaced, a block with bytes replaces the one with bytes there, a free
// takes the latest made (or, `sized_only`, the one with bytes), and the
// table's block at an offset is the one with bytes if there is one.
TEST(LiveMap, StackedZeroByteBlocksMatchAModelOfArrivalOrder) {
  std::mt19937_64 rng(7);
  LiveMap m;
  std::map<uint64_t, std::vector<Block>> ref;  // offset -> blocks, oldest first
  uint64_t made = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t addr = (rng() % 40) * 8;
    std::vector<Block>& here = ref[addr];
    const auto sized = std::find_if(here.begin(), here.end(), [](const Block& b) { return b.size != 0; });
    const unsigned op = rng() % 8;
    if (op < 4) {
      Block b;
      b.address = addr;
      b.size = rng() % 3 ? 0 : 1 + rng() % 64;
      b.time = ++made;  // identifies it
      Block previous;
      const bool replaced = m.put(b, &previous, true);
      const bool expect_replaced = b.size != 0 && sized != here.end();
      ASSERT_EQ(replaced, expect_replaced) << i;
      if (expect_replaced) {
        ASSERT_EQ(previous.time, sized->time) << i;
        here.erase(sized);
      }
      here.push_back(b);
    } else {
      const bool sized_only = op == 7 && sized != here.end();  // as drop() asks: for a block it saw
      Block out;
      const bool had = m.erase(addr, &out, sized_only);
      const bool expect = sized_only ? sized != here.end() : !here.empty();
      ASSERT_EQ(had, expect) << i;
      if (expect) {
        auto gone = sized_only ? sized : here.end() - 1;
        ASSERT_EQ(out.time, gone->time) << i;
        here.erase(gone);
      }
    }
    if (here.empty()) {
      ref.erase(addr);
      ASSERT_EQ(m.find(addr), nullptr) << i;
    } else {
      const Block* top = m.find(addr);
      ASSERT_NE(top, nullptr) << i;
      const bool any_sized = std::any_of(here.begin(), here.end(), [](const Block& b) { return b.size != 0; });
      ASSERT_EQ(top->size != 0, any_sized) << i;
    }
    size_t count = 0;
    for (const auto& [a, blocks] : ref) count += blocks.size();
    ASSERT_EQ(m.size(), count) << i;
  }
  std::vector<uint64_t> seen, expected;
  m.for_each([&](const Block& b) { seen.push_back(b.time); });
  for (const auto& [a, blocks] : ref)
    for (const Block& b : blocks) expected.push_back(b.time);
  std::sort(seen.begin(), seen.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seen, expected);
}

}  // namespace
}  // namespace edgemem
