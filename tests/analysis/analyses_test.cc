#include <gtest/gtest.h>

#include "test_support.h"

namespace edgemem::test {
namespace {

TEST(Analyses, ARingOfTheLastThreeBuffersIsPersistentNotALeak) {
  std::string log;
  for (int i = 1; i <= 50; ++i) {
    log += "[MEM][0] INFER begin\n";
    log += "[MEM][0] ALLOC size=100 addr=" + std::to_string(1000 * i) + " site=ring.c:5\n";
    if (i > 3) log += "[MEM][0] FREE addr=" + std::to_string(1000 * (i - 3)) + "\n";
    log += "[MEM][0] INFER end\n";
  }
  auto run = analyse(Format::log, log);
  EXPECT_TRUE(run->result.leaks.empty());
  ASSERT_EQ(run->result.persistent.size(), 1u);
  EXPECT_EQ(run->result.persistent[0].count, 3u);
  EXPECT_EQ(run->result.watermarks[0].shape, Shape::flat);
}

TEST(Analyses, PeakHoldersAreTheBlocksLiveAtThePeak) {
  std::string log =
      "[MEM][1] ALLOC size=100 addr=0x100 site=a.c:1\n"
      "[MEM][2] ALLOC size=300 addr=0x200 site=b.c:2\n"
      "[MEM][3] FREE addr=0x200\n"
      "[MEM][4] ALLOC size=50 addr=0x300 site=c.c:3\n";
  auto run = analyse(Format::log, log);
  const PeakResult& p = run->result.peak;
  EXPECT_EQ(p.bytes, 400u);
  EXPECT_EQ(p.time, 2u);
  ASSERT_EQ(p.live_at_peak.size(), 2u);
  EXPECT_EQ(p.live_at_peak[0].site, "b.c:2");
  EXPECT_EQ(p.live_at_peak[1].site, "a.c:1");
}

// A block made over a live one (its free was lost) changes what the peak's
// holders were without any free: the peak keeps the blocks of its moment.
TEST(Analyses, PeakHoldersStayThoseOfThePeakWhenALaterBlockReplacesOne) {
  std::string log =
      "[MEM][1] ALLOC size=100 addr=0x100 site=a.c:1\n"
      "[MEM][2] ALLOC size=300 addr=0x200 site=b.c:2\n"
      "[MEM][3] ALLOC size=20 addr=0x200 site=c.c:3\n"
      "[MEM][4] ALLOC size=30 addr=0x300 site=c.c:3\n";
  auto run = analyse(Format::log, log);
  const PeakResult& p = run->result.peak;
  EXPECT_EQ(p.bytes, 400u);
  ASSERT_EQ(p.live_at_peak.size(), 2u);
  EXPECT_EQ(p.live_at_peak[0].site, "b.c:2");
  EXPECT_EQ(p.live_at_peak[0].bytes, 300u);
  EXPECT_EQ(p.live_at_peak[1].site, "a.c:1");
  // The layout's flame data at the peak is the same moment's.
  const auto& l = run->result.layout.live_at_peak;
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].site, "b.c:2");
  EXPECT_EQ(l[0].bytes, 300u);
  EXPECT_EQ(l[1].site, "a.c:1");
}

// A recording names tens of thousands of stacks: the lists of a result are
// bounded before naming (edgemem::listed), and what they leave out is
// summed so every total stays exact. 1,500 sites, site i holding i B; a
// 1 B-per-inference leak that would rank past the first thousand.
TEST(Analyses, ListsOfSitesAreBoundedAndWhatTheyLeaveOutIsSummed) {
  std::string log;
  for (int i = 1; i <= 1500; ++i)
    log += "[MEM][" + std::to_string(i) + "] ALLOC size=" + std::to_string(i) + " addr=" + std::to_string(i * 4096) +
           " site=s" + std::to_string(i) + ".c:1\n";
  for (int i = 1; i <= 10; ++i)
    log += "[MEM][2000] INFER begin\n[MEM][2000] ALLOC size=1 addr=" + std::to_string(9000000 + i * 16) +
           " site=leak.c:1\n[MEM][2000] INFER end\n";
  auto run = analyse(Format::log, log);
  const AnalysisResult& r = run->result;
  ASSERT_EQ(r.leaks.size(), 1u);
  ASSERT_EQ(r.sites.size(), listed::kSites + 1);
  EXPECT_EQ(r.sites[0].site, "s1500.c:1");
  EXPECT_EQ(r.sites[listed::kSites - 1].site, "s501.c:1");
  EXPECT_EQ(r.sites.back().site, "leak.c:1");  // leaking: listed whatever it holds
  ASSERT_TRUE(r.sites_omitted);
  EXPECT_EQ(r.sites_omitted->count, 500u);
  EXPECT_EQ(r.sites_omitted->live_bytes, 500u * 501 / 2);
  EXPECT_EQ(r.sites_omitted->allocs, 500u);

  const auto& holders = r.peak.live_at_peak;
  ASSERT_EQ(holders.size(), listed::kPeakHolders + 1);
  EXPECT_EQ(holders.back().site, "(501 other sites)");  // s1..s500 and leak.c:1
  uint64_t peak_sum = 0;
  for (const PeakHolder& h : holders) peak_sum += h.bytes;
  EXPECT_EQ(peak_sum, r.peak.bytes);

  // The flame data: stacks under 1/10,000 of the live bytes (s1..s112 and
  // the leak's, 113 B at most) become one row of the pool; the bytes stay.
  const auto& end = r.layout.live_at_end;
  uint64_t end_sum = 0;
  size_t thin = 0;
  for (const PoolSiteBytes& e : end) {
    end_sum += e.bytes;
    if (e.site.starts_with("(")) {
      ++thin;
      EXPECT_EQ(e.site, "(113 stacks under 1/10,000 of the bytes each)");
    }
  }
  EXPECT_EQ(thin, 1u);
  EXPECT_EQ(end.size(), 1500u - 112 + 1);
  EXPECT_EQ(end_sum, 1500u * 1501 / 2 + 10);
}

TEST(Analyses, AShortListIsWholeWithNothingSummed) {
  auto run = analyse(Format::log, "[MEM][1] ALLOC size=8 addr=0x10 site=a.c:1\n[MEM][2] ALLOC size=8 addr=0x20 site=b.c:1\n");
  EXPECT_EQ(run->result.sites.size(), 2u);
  EXPECT_FALSE(run->result.sites_omitted);
  EXPECT_EQ(run->result.peak.live_at_peak.size(), 2u);
}

TEST(Analyses, ArenaResetReleasesEverythingAndUnknownFreesAreCounted) {
  std::string log =
      "[MEM][1] ALLOC size=64 offset=0 site=t.cc:1\n"
      "[MEM][2] ALLOC size=64 offset=64 site=t.cc:1\n"
      "[MEM][3] RESET pool=arena\n"
      "[MEM][4] FREE offset=4000\n";
  auto run = analyse(Format::log, log);
  EXPECT_EQ(run->result.counts.resets, 1u);
  EXPECT_EQ(run->result.counts.unknown_frees, 1u);
  EXPECT_TRUE(run->result.leaks.empty());
  EXPECT_EQ(run->result.pools[0].final_bytes, 0u);
}

TEST(Analyses, SeriesStayBoundedOnLongTraces) {
  std::string bin;
  for (uint32_t i = 1; i <= 20000; ++i) {
    bin += '\xB1'; be32(bin, i);
    bin += '\xA2'; be32(bin, 16); be32(bin, 0x1000 + i * 16);
    bin += '\xB2'; be32(bin, i);
  }
  auto run = analyse(Format::seedbin, bin);
  EXPECT_LE(run->result.watermarks[0].series.size(), 256u);
  EXPECT_LE(run->result.fragmentation.pools[0].curve.size(), 512u);
  EXPECT_EQ(run->result.leaks[0].count, 20000u);
}

// The headline's worst and end rates are states the curve holds: a free
// after the last allocation fragments the pool (25 %), and the curve, which
// the exports and the HTML chart draw, must show it where it happened.
TEST(Analyses, TheFragmentationCurveHoldsTheHeadlinesWorstAndEndStates) {
  std::string log =
      "[MEM][0] POOL name=heap kind=heap size=1000 base=0x1000\n"
      "[MEM][20] ALLOC size=300 addr=0x1000\n"
      "[MEM][30] ALLOC size=300 addr=0x112C\n"
      "[MEM][40] ALLOC size=300 addr=0x1258\n"
      "[MEM][50] FREE addr=0x112C\n"         // free 300 + 100 in two pieces
      "[MEM][60] ALLOC_FAIL size=350\n";     // changes nothing
  auto run = analyse(Format::log, log);
  const FragmentationResult& f = run->result.fragmentation;
  ASSERT_EQ(f.pools.size(), 1u);
  using Curve = std::vector<std::pair<uint64_t, double>>;
  EXPECT_EQ(f.pools[0].curve, (Curve{{20, 0.0}, {30, 0.0}, {40, 0.0}, {50, 0.25}}));
  EXPECT_EQ(f.pools[0].max_rate, 0.25);
  EXPECT_EQ(f.pools[0].final_rate, 0.25);
  EXPECT_EQ(f.max_rate, 0.25);

  // A reset ends an arena's fragmentation: the curve ends at 0, at the reset.
  std::string arena =
      "[MEM][10] ALLOC size=100 offset=0 pool=arena\n"
      "[MEM][20] ALLOC size=100 offset=100 pool=arena\n"
      "[MEM][30] ALLOC size=100 offset=200 pool=arena\n"
      "[MEM][40] FREE offset=100 pool=arena\n"
      "[MEM][50] ALLOC size=10 offset=300 pool=arena\n"  // 100 + the rest free, apart
      "[MEM][60] RESET pool=arena\n";
  AnalyzerOptions options;
  options.default_pool_size = 1000;
  run = analyse(Format::log, arena, options);
  const PoolFragmentation& p = run->result.fragmentation.pools.at(0);
  ASSERT_GE(p.curve.size(), 2u);
  EXPECT_EQ(p.curve.back(), (std::pair<uint64_t, double>{60, 0.0}));
  EXPECT_EQ(p.final_rate, 0.0);
  EXPECT_GT(p.max_rate, 0.0);
  EXPECT_EQ(p.max_rate, p.curve[p.curve.size() - 2].second);
}

// Two pools spending one arena from both ends (TFLite Micro's head and
// tail): what the tail holds is not free in the head, nor the head's bytes
// in the tail. Counted as free, a 150 B request failing beside a 100 B hole
// was "900 B free, largest 800 B". Nor is the hole free at the failure: a
// linear allocator reuses none below its top (it read "200 B free, largest
// 100 B", a fragmentation failure); the curve still measures it.
TEST(Analyses, FreeSpaceOfASharedArenaLeavesOutWhatTheOtherEndHolds) {
  std::string log =
      "[MEM][0] POOL name=head kind=arena size=1000\n"
      "[MEM][0] POOL name=tail kind=arena size=1000 shares=head\n"
      "[MEM][1] ALLOC size=700 offset=0 pool=tail\n"    // the arena's top 700 B
      "[MEM][3] ALLOC size=100 offset=0 pool=head\n"
      "[MEM][4] ALLOC size=100 offset=100 pool=head\n"
      "[MEM][5] FREE offset=0 pool=head\n"              // a 100 B hole, 100 B above the head
      "[MEM][6] ALLOC_FAIL size=150 pool=head\n"
      "[MEM][7] ALLOC size=20 offset=200 pool=head\n"   // 100 + 80 B free, apart
      "[MEM][8] FREE offset=0 pool=tail\n";             // the tail gives its bytes back
  auto run = analyse(Format::log, log);
  const FragmentationResult& f = run->result.fragmentation;
  ASSERT_EQ(f.failures.size(), 1u);
  EXPECT_EQ(f.failures[0].total_free, 100u);  // above the head's 200 B top, below the tail's 700 B
  EXPECT_EQ(f.failures[0].largest_free, 100u);
  EXPECT_FALSE(f.failures[0].fragmentation);
  const PoolFragmentation* head = nullptr;
  const PoolFragmentation* tail = nullptr;
  for (const PoolFragmentation& p : f.pools) (p.pool == "head" ? head : tail) = &p;
  ASSERT_TRUE(head && tail);
  // The worst is the state the request failed in (200 B free, largest
  // 100 B, from the free at 5), not only states after allocations (1 - 100/180).
  EXPECT_DOUBLE_EQ(head->max_rate, 0.5);
  EXPECT_EQ(head->total_free, 880u);  // at the end the tail holds nothing
  EXPECT_EQ(head->largest_free, 780u);
  // The tail's free space at the end is what the head's 220 B top leaves.
  EXPECT_EQ(tail->total_free, 780u);
  EXPECT_EQ(tail->largest_free, 780u);

  // The demo's trace: the tail (arena.persistent) holds 32,296 B of the 40,960 B arena.
  auto demo = analyse(Format::emt, read_file(std::string(EDGEMEM_SOURCE_DIR) + "/examples/traces/kws_leak.emt"));
  bool arena = false;
  for (const PoolFragmentation& p : demo->result.fragmentation.pools)
    if (p.pool == "arena") {
      arena = true;
      EXPECT_EQ(p.largest_free, 40960u - 32296u);
    }
  EXPECT_TRUE(arena);
}

// The same arena when the sharing, or the head's size, is declared after
// the tail is in use; when the tail overflowed into the head's blocks and
// gives its bytes back; and a pool that names itself as its partner.
TEST(Analyses, SharedArenaFreeSpaceHoldsForLateDeclarationsAndOverflows) {
  const std::string head_use =
      "[MEM][3] ALLOC size=100 offset=0 pool=head\n"
      "[MEM][4] ALLOC size=100 offset=100 pool=head\n"
      "[MEM][5] FREE offset=0 pool=head\n"
      "[MEM][6] ALLOC_FAIL size=150 pool=head\n";
  for (const std::string& start : {std::string("[MEM][0] POOL name=head kind=arena size=1000\n"
                                               "[MEM][0] POOL name=tail kind=arena size=1000\n"
                                               "[MEM][1] ALLOC size=700 offset=0 pool=tail\n"
                                               "[MEM][2] POOL name=tail kind=arena size=1000 shares=head\n"),
                                   std::string("[MEM][0] POOL name=tail kind=arena size=1000 shares=head\n"
                                               "[MEM][1] ALLOC size=700 offset=0 pool=tail\n"
                                               "[MEM][2] POOL name=head kind=arena size=1000\n")}) {
    auto run = analyse(Format::log, start + head_use);
    const FragmentationResult& f = run->result.fragmentation;
    ASSERT_EQ(f.failures.size(), 1u) << start;
    EXPECT_EQ(f.failures[0].total_free, 100u) << start;
    EXPECT_EQ(f.failures[0].largest_free, 100u) << start;
    EXPECT_FALSE(f.failures[0].fragmentation) << start;
  }

  auto over = analyse(Format::log,
                      "[MEM][0] POOL name=head kind=arena size=1000\n"
                      "[MEM][0] POOL name=tail kind=arena size=1000 shares=head\n"
                      "[MEM][1] ALLOC size=600 offset=0 pool=head\n"
                      "[MEM][2] ALLOC size=600 offset=0 pool=tail\n"  // 200 B into the head's block
                      "[MEM][3] FREE offset=0 pool=tail\n"
                      "[MEM][4] ALLOC_FAIL size=500 pool=head\n");
  ASSERT_EQ(over->result.fragmentation.failures.size(), 1u);
  EXPECT_EQ(over->result.fragmentation.failures[0].total_free, 400u);
  EXPECT_EQ(over->result.fragmentation.failures[0].largest_free, 400u);

  auto self = analyse(Format::log,
                      "[MEM][0] POOL name=a kind=arena size=1000 shares=a\n"
                      "[MEM][1] ALLOC size=400 offset=0 pool=a\n"
                      "[MEM][2] ALLOC size=200 offset=400 pool=a\n"
                      "[MEM][3] ALLOC_FAIL size=300 pool=a\n");
  ASSERT_EQ(self->result.fragmentation.failures.size(), 1u);
  EXPECT_EQ(self->result.fragmentation.failures[0].total_free, 400u);
}

// A report made mid-trace (watch, an interrupted run) measures the end
// state on a copy: the curve of the whole trace does not keep it.
TEST(Analyses, AMidTraceReportLeavesTheFragmentationCurveAsItWas) {
  TraceContext context;
  Analyzer analyzer(context);
  auto decoder = make_decoder(Format::log, context, analyzer);
  auto feed = [&](const std::string& text) {
    decoder->feed({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  };
  feed("[MEM][0] POOL name=heap kind=heap size=1000 base=0x1000\n"
       "[MEM][20] ALLOC size=300 addr=0x1000\n"
       "[MEM][30] ALLOC size=300 addr=0x112C\n"
       "[MEM][40] FREE addr=0x1000\n");
  AnalysisResult mid = analyzer.finish();
  ASSERT_EQ(mid.fragmentation.pools.size(), 1u);
  EXPECT_EQ(mid.fragmentation.pools[0].curve.back().first, 40u);
  feed("[MEM][50] ALLOC size=300 addr=0x1000\n");
  decoder->finish();
  AnalysisResult end = analyzer.finish();
  using Curve = std::vector<std::pair<uint64_t, double>>;
  EXPECT_EQ(end.fragmentation.pools.at(0).curve, (Curve{{20, 0.0}, {30, 0.0}, {50, 0.0}}));
}

TEST(Analyses, AllocOverALiveAddressMeansALostFree) {
  std::string log =
      "[MEM][1] ALLOC size=64 addr=0x100\n"
      "[MEM][2] ALLOC size=32 addr=0x100\n";
  auto run = analyse(Format::log, log);
  EXPECT_EQ(run->result.counts.replaced_blocks, 1u);
  EXPECT_EQ(run->result.pools[0].final_bytes, 32u);
}

}  // namespace
}  // namespace edgemem::test

namespace edgemem::test {
namespace {

// A damaged log naming a new pool on every line must neither hang nor
// overflow the 16-bit pool ids.
TEST(Analyses, MillionsOfPoolNamesAreCappedNotQuadratic) {
  std::string log;
  for (int i = 0; i < 200000; ++i) {
    log += "[MEM][" + std::to_string(i) + "] ALLOC size=16 offset=0 pool=p" + std::to_string(i) + "\n";
    if (i % 100 == 0) log += "[MEM][" + std::to_string(i) + "] INFER end\n";
  }
  auto run = analyse(Format::log, log);
  EXPECT_EQ(run->context.pools.size(), PoolTable::kMaxPools + 1);
  EXPECT_EQ(run->result.counts.allocs, 200000u);
  EXPECT_EQ(run->context.pools.at(PoolTable::kMaxPools).name, "(other pools)");
}

}  // namespace
}  // namespace edgemem::test
