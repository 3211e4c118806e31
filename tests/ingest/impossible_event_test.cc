// Events no pool could hold are corrupt input: counted in DecodeStats and
// kept away from the analyses, which would otherwise report them as a
// multi-gigabyte peak or leak. Events that are merely wrong (a block that
// starts inside the arena and runs past it) still reach the overflow check.
#include <gtest/gtest.h>

#include "edgemem/report.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

TEST(ImpossibleEvents, BlocksLargerThanOrOutsideTheirDeclaredArenaAreCorrupt) {
  auto run = analyse(Format::log,
                     "[MEM][0] POOL name=arena0 kind=arena size=16384\n"
                     "[MEM][1] ALLOC size=5536847396 offset=0 pool=arena0\n"  // bigger than the arena
                     "[MEM][2] ALLOC size=64 offset=900000 pool=arena0\n"     // starts outside it
                     "[MEM][3] ALLOC size=128 offset=16320 pool=arena0\n"     // runs past the end: an overflow
                     "[MEM][4] ALLOC_FAIL size=20000 align=16 pool=arena0\n");  // too big, so it failed: real
  EXPECT_EQ(run->stats.impossible_events, 2u);
  EXPECT_EQ(run->stats.events, 2u);  // the overflowing ALLOC and the ALLOC_FAIL
  EXPECT_NE(run->stats.first_impossible.find("5536847396 B in pool 'arena0' of 16384 B"), std::string::npos)
      << run->stats.first_impossible;
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->result.peak_bytes, 16320u + 128u);  // an arena's peak is the highest offset reached
  EXPECT_EQ(run->result.overflow_count, 1u);
  EXPECT_EQ(run->result.fragmentation.alloc_failures, 1u);
  nlohmann::json j = to_json(InputSummary{"t.log", "log", run->stats, TimeBase::cycles}, run->result);
  EXPECT_EQ(j["input"]["impossible_events"], 2);
  EXPECT_EQ(j["input"]["first_impossible"], run->stats.first_impossible);
}

TEST(ImpossibleEvents, UndeclaredPoolSizesProveNothing) {
  // --arena-size is an assumption; a block beyond it is an overflow finding.
  AnalyzerOptions options;
  options.default_pool_size = 1024;
  auto run = analyse(Format::log, "[MEM][1] ALLOC size=4096 offset=2048\n", options);
  EXPECT_EQ(run->stats.impossible_events, 0u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
}

TEST(ImpossibleEvents, HeapBlocksOutsideTheDeclaredHeapAreCorrupt) {
  auto run = analyse(Format::log,
                     "[MEM][0] POOL name=heap kind=heap base=0x20000000 size=65536\n"
                     "[MEM][1] ALLOC size=32 addr=0x20000100 pool=heap\n"
                     "[MEM][2] ALLOC size=32 addr=0x30000000 pool=heap\n");
  EXPECT_EQ(run->stats.impossible_events, 1u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
}

TEST(ImpossibleEvents, BlocksPastTheAddressSpaceAreCorrupt) {
  // Seed records come from 32-bit devices: 256 B at 0xFFFFFF80 wraps.
  std::string seed;
  seed += '\xA2'; be32(seed, 256); be32(seed, 0xFFFFFF80);
  seed += '\xA2'; be32(seed, 128); be32(seed, 0xFFFFFF80);  // ends exactly at 4 GiB: possible
  auto run = analyse(Format::seedbin, seed);
  EXPECT_EQ(run->stats.impossible_events, 1u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  // Nor a 2 GiB block on a Cortex-M, whose largest RAM region is 1 GiB.
  std::string big;
  big += '\xA2'; be32(big, 0x80000000); be32(big, 0x20000000);
  EXPECT_EQ(analyse(Format::seedbin, big)->stats.impossible_events, 1u);
  // No allocator hands out a terabyte, declared pool or not.
  auto huge = analyse(Format::log, "[MEM][1] ALLOC size=2199023255552 addr=0x1000\n");
  EXPECT_EQ(huge->stats.impossible_events, 1u);
  EXPECT_EQ(huge->result.peak_bytes, 0u);
}

}  // namespace
}  // namespace edgemem::test
