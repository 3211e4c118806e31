#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ingest/seedbin_decoder.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

TEST(SeedBin, DecodesSeedRecordsBigEndian) {
  // Seed 000: 0xA1 size(u16 BE) address(u32 BE); 0xF1 address(u32 BE).
  const std::string bin("\xA1\x5C\x00\x20\x00\x10\x00\xF1\x20\x00\x10\x00", 12);
  TraceContext ctx;
  Recorder sink;
  SeedBinDecoder d(ctx, sink);
  d.feed({reinterpret_cast<const uint8_t*>(bin.data()), bin.size()});
  d.finish();
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.events[0].kind, EventKind::alloc);
  EXPECT_EQ(sink.events[0].size, 0x5C00u);
  EXPECT_EQ(sink.events[0].address, 0x20001000u);
  EXPECT_EQ(sink.events[1].kind, EventKind::free);
  EXPECT_EQ(sink.events[1].address, 0x20001000u);
}

TEST(SeedBin, ResynchronisesOverGarbageAndCountsIt) {
  std::string bin("\x00\x13\x37", 3);
  bin += std::string("\xA1\x00\x40\x20\x00\x00\x00", 7);
  bin += std::string("\xFF\xFE", 2);
  bin += std::string("\xF1\x20\x00\x00\x00", 5);
  auto run = analyse(Format::seedbin, bin);
  EXPECT_EQ(run->stats.corrupt_bytes, 5u);
  EXPECT_EQ(run->stats.events, 2u);
  ASSERT_TRUE(run->stats.first_problem);
  EXPECT_EQ(run->stats.first_problem->offset, 0u);
  EXPECT_EQ(run->result.counts.allocs, 1u);
  EXPECT_EQ(run->result.counts.frees, 1u);
}

TEST(SeedBin, RecordSplitAcrossChunksAndTruncatedTail) {
  std::string bin;
  for (uint32_t i = 0; i < 50; ++i) {
    bin += '\xA2';
    be32(bin, 100 + i);
    be32(bin, 0x1000 * (i + 1));
  }
  bin += std::string("\xF1\x00\x00", 3);  // cut off mid-record
  for (size_t chunk : {1u, 2u, 5u, 8u, 1000u}) {
    auto run = analyse(Format::seedbin, bin, {}, chunk);
    EXPECT_EQ(run->stats.events, 50u) << chunk;
    EXPECT_EQ(run->stats.truncated_bytes, 3u);
    EXPECT_EQ(run->result.counts.allocs, 50u);
  }
}

TEST(SeedBin, ExtendedRecordsCarrySitesMarkersAndGuards) {
  std::string bin;
  bin += '\xB1'; be32(bin, 1);
  bin += '\xA3'; be32(bin, 64); be32(bin, 0x20000000); be32(bin, 0x08001234);
  bin += '\xC1'; be32(bin, 0x20000000); be32(bin, 0x20000100); be32(bin, 128);
  bin += '\xE1'; be32(bin, 4096);
  bin += std::string("\xD1\x01", 2);
  bin += '\xB2'; be32(bin, 1);
  auto run = analyse(Format::seedbin, bin);
  const AnalysisResult& r = run->result;
  EXPECT_EQ(run->stats.corrupt_bytes, 0u);
  EXPECT_EQ(r.inferences, 1u);
  EXPECT_EQ(r.counts.reallocs, 1u);
  EXPECT_EQ(r.fragmentation.alloc_failures, 1u);
  EXPECT_EQ(r.guard_failure_count, 1u);
  ASSERT_EQ(r.sites.size(), 1u);
  EXPECT_EQ(r.sites[0].site, "0x08001234");  // the realloc kept its call site
  EXPECT_EQ(r.sites[0].live_bytes, 128u);
}

// The decoder remembers call sites by return address; more addresses than it
// remembers, revisited, must still name each event's own site, and once the
// site table is full every new address is counted as dropped.
TEST(SeedBin, CallSiteAddressesKeepTheirNamesPastTheDecodersCache) {
  std::string bin;
  std::vector<uint32_t> sites;
  uint32_t x = 1;
  for (int i = 0; i < 20000; ++i) {
    x = x * 1103515245u + 12345u;
    uint32_t site = 0x08000000u + (x >> 8) % 3000 * 4;
    sites.push_back(site);
    bin += '\xA3'; be32(bin, 16); be32(bin, 0x20000000u + 16 * i); be32(bin, site);
  }
  TraceContext ctx;
  Recorder sink;
  SeedBinDecoder d(ctx, sink);
  d.feed({reinterpret_cast<const uint8_t*>(bin.data()), bin.size()});
  d.finish();
  ASSERT_EQ(sink.events.size(), sites.size());
  for (size_t i = 0; i < sites.size(); ++i)
    ASSERT_EQ(ctx.sites.name(sink.events[i].site), fmt::format("0x{:08x}", sites[i])) << i;

  // Every odd record names a new address, every even one 0x7 again: the
  // table (kMaxSites - 1 names besides "?") fills, and the 101 names past it
  // are each counted once, while 0x7 keeps its own name to the end.
  std::string past_cap;
  for (uint32_t i = 0; i < 2 * (SiteTable::kMaxSites + 100); ++i) {
    past_cap += '\xA3'; be32(past_cap, 16); be32(past_cap, 0x20000000u); be32(past_cap, i % 2 ? i : 7);
  }
  TraceContext full;
  Recorder full_sink;
  SeedBinDecoder capped(full, full_sink);
  capped.feed({reinterpret_cast<const uint8_t*>(past_cap.data()), past_cap.size()});
  capped.finish();
  EXPECT_EQ(full.sites.dropped(), 101u);
  EXPECT_EQ(full.sites.name(full_sink.events.back().site), SiteTable::kOverflowName);
  EXPECT_EQ(full.sites.name(full_sink.events[full_sink.events.size() - 2].site), "0x00000007");
}

}  // namespace
}  // namespace edgemem::test
