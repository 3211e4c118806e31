#include <gtest/gtest.h>

#include "ingest/emt_decoder.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

// The summary-mode example of docs/formats/emt.md.
const std::string kSummaryExample(
    "\x7E" "emt!" "\x00"                                   // SYNC, time 0
    "\x01\x01\xC0\xF0\xF5\x0B"                             // HEADER v1, 25 MHz
    "\x02\x00\x01\x00\x80\x80\x01\x00\x05" "arena" "\x00"  // POOL 0 arena, 16384 B
    "\x02\x01\x00\x00\x80\x40\x08\x04" "heap" "\x00"       // POOL 1 heap, 8192 B
    "\x14\x0A\x01"                                         // INFER begin 1, dt 10
    "\x1A\xE8\x07\x00\x84\x05\x80\x10\xFD\x7A\x00"         // SUMMARY arena: 644 used, peak +2048, largest 15740
    "\x1A\x00\x01\xA0\x01\xC0\x02\x00\x01"                 // SUMMARY heap: 160 used, peak +320, largest unknown, 1 failure
    "\x15\x02\x01",                                        // INFER end 1, dt 2
    66);

TEST(EmtSummary, DocumentedBytesDecodeToPoolSummaryEvents) {
  TraceContext ctx;
  Recorder sink;
  EmtDecoder decoder(ctx, sink);
  decoder.feed({reinterpret_cast<const uint8_t*>(kSummaryExample.data()), kSummaryExample.size()});
  decoder.finish();
  EXPECT_EQ(decoder.stats().corrupt_bytes, 0u);
  EXPECT_EQ(decoder.stats().truncated_bytes, 0u);
  ASSERT_EQ(sink.events.size(), 4u);
  const Event& arena = sink.events[1];
  EXPECT_EQ(arena.kind, EventKind::pool_summary);
  EXPECT_EQ(arena.time, 1010u);
  EXPECT_EQ(ctx.pools.at(arena.pool).name, "arena");
  EXPECT_EQ(arena.size, 644u);           // used
  EXPECT_EQ(arena.address, 2692u);       // peak: 644 + 2048
  EXPECT_EQ(arena.old_address, 15740u);  // largest free block
  EXPECT_EQ(arena.align, 0u);            // failures
  EXPECT_EQ(arena.site, kUnknownSite);
  const Event& heap = sink.events[2];
  EXPECT_EQ(heap.kind, EventKind::pool_summary);
  EXPECT_EQ(heap.time, 1010u);
  EXPECT_EQ(ctx.pools.at(heap.pool).name, "heap");
  EXPECT_EQ(heap.size, 160u);
  EXPECT_EQ(heap.address, 480u);
  EXPECT_EQ(heap.old_address, kUnknownLargestFree);
  EXPECT_EQ(heap.align, 1u);
  EXPECT_EQ(sink.events[3].kind, EventKind::inference_end);
  EXPECT_EQ(sink.events[3].time, 1012u);
}

TEST(EmtSummary, AnalysedAsFarAsTheNumbersGo) {
  for (size_t chunk : {0u, 1u, 3u}) {
    auto run = analyse(Format::emt, kSummaryExample, {}, chunk);
    const AnalysisResult& r = run->result;
    EXPECT_EQ(r.counts.summaries, 2u) << chunk;
    EXPECT_EQ(r.counts.failed, 1u);
    EXPECT_EQ(r.inferences, 1u);
    ASSERT_EQ(r.pools.size(), 2u);
    EXPECT_EQ(r.pools[0].final_bytes, 644u);
    EXPECT_EQ(r.pools[0].peak_bytes, 2692u);
    EXPECT_EQ(r.pools[1].final_bytes, 160u);
    EXPECT_EQ(r.pools[1].peak_bytes, 480u);
    // Summary records count no blocks: not known, not 0 (a helper's firmware held 34).
    EXPECT_FALSE(r.pools[0].live_count);
    EXPECT_FALSE(r.pools[1].live_count);
    // Only the arena told its largest free block: 15740 of 15740 free, one piece.
    ASSERT_EQ(r.fragmentation.pools.size(), 1u);
    EXPECT_EQ(r.fragmentation.pools[0].pool, "arena");
    EXPECT_EQ(r.fragmentation.pools[0].total_free, 15740u);
    EXPECT_EQ(r.fragmentation.pools[0].largest_free, 15740u);
    EXPECT_EQ(r.fragmentation.alloc_failures, 1u);
    EXPECT_EQ(r.checks.leaks.status, CheckStatus::not_checked);
    EXPECT_NE(r.checks.leaks.reason.find("summary records carry no sites or blocks"), std::string::npos);
    EXPECT_EQ(r.checks.lifo.status, CheckStatus::not_checked);
  }
}

// A summary whose "peak above used" would wrap 64 bits is not emt.
TEST(EmtSummary, PeakPastSixtyFourBitsIsRejected) {
  std::string s = std::string("\x7E" "emt!" "\x00", 6) +
                  std::string("\x1A\x00\x00\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01\x00\x00", 25);
  auto run = analyse(Format::emt, s);
  EXPECT_EQ(run->result.counts.summaries, 0u);
  EXPECT_GT(run->stats.corrupt_bytes, 0u);
}

}  // namespace
}  // namespace edgemem::test
