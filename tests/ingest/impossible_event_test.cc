// Events that cannot have happened are corrupt input: counted in
// DecodeStats and kept away from the analyses, which would otherwise report
// them as a multi-gigabyte peak or leak. Events that are merely wrong (a
// block bigger than its arena, from an allocator that does not check) still
// reach the overflow analysis.
#include <gtest/gtest.h>

#include "edgemem/report.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

// Bytes written to ITM port 0 one at a time: a printf over ITM from a
// 32-bit Cortex-M.
std::string itm_port0(const std::string& text) {
  std::string out;
  for (char c : text) out += std::string{'\x01', c};
  return out;
}

TEST(ImpossibleEvents, BlocksOutsideTheDeclaredHeapAreCorrupt) {
  auto run = analyse(Format::log,
                     "[MEM][0] POOL name=heap kind=heap base=0x20000000 size=65536\n"
                     "[MEM][1] ALLOC size=32 addr=0x20000100 pool=heap\n"
                     "[MEM][2] ALLOC size=32 addr=0x30000000 pool=heap\n"       // outside the heap
                     "[MEM][3] ALLOC size=131072 addr=0x20000200 pool=heap\n"   // bigger than the heap
                     "[MEM][4] ALLOC_FAIL size=200000 pool=heap\n");            // too big, so it failed: real
  EXPECT_EQ(run->stats.impossible_events, 2u);
  EXPECT_EQ(run->stats.events, 2u);  // the first ALLOC and the ALLOC_FAIL
  EXPECT_NE(run->stats.first_impossible.find("at 0x30000000, outside heap 'heap' (0x20000000, 65536 B)"),
            std::string::npos)
      << run->stats.first_impossible;
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->result.peak_bytes, 32u);
  EXPECT_EQ(run->result.fragmentation.alloc_failures, 1u);
  nlohmann::json j = to_json(InputSummary{"t.log", "log", run->stats, TimeBase::cycles}, run->result);
  EXPECT_EQ(j["input"]["impossible_events"], 2);
  EXPECT_EQ(j["input"]["first_impossible"], run->stats.first_impossible);
}

TEST(ImpossibleEvents, ABlockTooBigForItsArenaIsAnOverflowNotCorruption) {
  // tests/firmware's overflow variant: an unchecked bump allocator hands
  // out 4096 B at offset 224 of a 3392 B arena, then keeps going past it.
  auto run = analyse(Format::log,
                     "[MEM][0] POOL name=arena0 kind=arena size=3392\n"
                     "[MEM][1] ALLOC size=4096 offset=224 pool=arena0\n"
                     "[MEM][2] ALLOC size=64 offset=4320 pool=arena0\n");
  EXPECT_EQ(run->stats.impossible_events, 0u);
  EXPECT_EQ(run->result.counts.allocs, 2u);
  EXPECT_EQ(run->result.overflow_count, 2u);
}

TEST(ImpossibleEvents, BlocksPastTheAddressSpaceAreCorrupt) {
  // Seed records come from 32-bit devices: 256 B at 0xFFFFFF80 wraps.
  std::string seed;
  seed += '\xA2'; be32(seed, 256); be32(seed, 0xFFFFFF80);
  seed += '\xA2'; be32(seed, 128); be32(seed, 0xFFFFFF80);  // ends exactly at 4 GiB: possible
  auto run = analyse(Format::seedbin, seed);
  EXPECT_EQ(run->stats.impossible_events, 1u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  // An arena offset counts from the arena's base: 0xF0000000 + 0x10000000 is past 4 GiB.
  auto arena = analyse(Format::itm, itm_port0("[MEM][0] POOL name=a kind=arena base=0xF0000000 size=4096\n"
                                              "[MEM][1] ALLOC size=256 offset=0x10000000 pool=a\n"
                                              "[MEM][2] ALLOC size=256 offset=0 pool=a\n"));
  EXPECT_EQ(arena->stats.impossible_events, 1u);
  EXPECT_EQ(arena->result.counts.allocs, 1u);
}

TEST(ImpossibleEvents, AbsurdSizesAreCorrupt) {
  // What a firmware ELF decoded as ITM produced: a 2.3 GB block on a Cortex-M,
  // whose largest RAM region is 1 GiB.
  std::string big;
  big += '\xA2'; be32(big, 0x8A0B0C00); be32(big, 0x20000000);
  EXPECT_EQ(analyse(Format::seedbin, big)->stats.impossible_events, 1u);
  // No allocator hands out a terabyte, declared pool or not.
  auto huge = analyse(Format::log, "[MEM][1] ALLOC size=2199023255552 addr=0x1000\n");
  EXPECT_EQ(huge->stats.impossible_events, 1u);
  EXPECT_EQ(huge->result.peak_bytes, 0u);
}

TEST(ImpossibleEvents, AFailedRequestOfAnySizeIsAFindingAndAnImpossibleReallocStillFrees) {
  // malloc((size_t)-1) failing is a real bug on any device: reported, not dropped.
  auto failed = analyse(Format::log, "[MEM][1] ALLOC_FAIL size=4294967295 addr=0\n");
  EXPECT_EQ(failed->stats.impossible_events, 0u);
  EXPECT_EQ(failed->result.fragmentation.alloc_failures, 1u);
  // A realloc to an absurd size is dropped, but it released the old block:
  // keeping that block live would report a leak that never happened.
  auto grown = analyse(Format::log,
                       "[MEM][1] ALLOC size=64 addr=0x20000100\n"
                       "[MEM][2] REALLOC old=0x20000100 size=2199023255552 addr=0x20000200\n");
  EXPECT_EQ(grown->stats.impossible_events, 1u);
  EXPECT_TRUE(grown->result.leaks.empty());
  EXPECT_EQ(grown->result.counts.frees, 1u);
}

TEST(ImpossibleEvents, UndeclaredPoolSizesProveNothing) {
  // --arena-size is an assumption; a heap block outside it is not corrupt.
  AnalyzerOptions options;
  options.default_pool_size = 1024;
  auto run = analyse(Format::log, "[MEM][1] ALLOC size=4096 addr=0x20002000\n", options);
  EXPECT_EQ(run->stats.impossible_events, 0u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
}

}  // namespace
}  // namespace edgemem::test
