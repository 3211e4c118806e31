#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

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

}  // namespace
}  // namespace edgemem
