#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "analysis/layout_analysis.h"
#include "analysis/occupancy_grid.h"
#include "edgemem/report.h"
#include "test_support.h"

namespace edgemem::test {
namespace {

// Events straight into the analyzer, so a million of them take a fraction of a second.
struct Feed {
  TraceContext context;
  Analyzer analyzer{context};
  uint64_t time = 0;
  PoolId pool = context.pools.intern("heap", PoolKind::heap);

  void alloc(uint64_t address, uint64_t size, std::string_view site) {
    Event e;
    e.kind = EventKind::alloc;
    e.time = ++time;
    e.pool = pool;
    e.address = address;
    e.size = size;
    e.site = context.sites.intern(site);
    analyzer.on_event(e);
  }
  void free(uint64_t address) {
    Event e;
    e.kind = EventKind::free;
    e.time = ++time;
    e.pool = pool;
    e.address = address;
    analyzer.on_event(e);
  }
  void marker(EventKind kind) {
    Event e;
    e.kind = kind;
    e.time = ++time;
    analyzer.on_event(e);
  }
};

uint64_t drawn(const LayoutResult& l) {
  uint64_t n = 0;
  for (const auto& p : l.pools) n += p.blocks.size();
  return n;
}

uint64_t rasterised(const LayoutResult& l) {
  uint64_t n = 0;
  for (const auto& p : l.pools) n += p.raster ? p.raster->blocks : 0;
  return n;
}

std::vector<const LayoutBlock*> blocks_of(const LayoutResult& l, std::string_view site) {
  std::vector<const LayoutBlock*> out;
  for (const auto& p : l.pools)
    for (const auto& b : p.blocks)
      if (l.sites.at(b.site) == site) out.push_back(&b);
  return out;
}

TEST(LayoutAnalysis, AMillionEventsKeepTheCapAndAggregateTheRestIntoABoundedRaster) {
  Feed f;
  // 600,000 short-lived temporaries over 256 slots: 1.2 M events.
  for (uint64_t i = 0; i < 600000; ++i) {
    uint64_t address = 0x20000000 + (i % 256) * 1024;
    f.alloc(address, 16 + i % 1000, "op.cc:1");
    f.free(address);
  }
  AnalysisResult r = f.analyzer.finish();
  const LayoutResult& l = r.layout;
  EXPECT_EQ(l.blocks_seen, 600000u);
  EXPECT_EQ(drawn(l), LayoutAnalysis::kDefaultBlockCap);
  EXPECT_EQ(drawn(l) + rasterised(l), 600000u);
  ASSERT_EQ(l.pools.size(), 1u);
  ASSERT_TRUE(l.pools[0].raster);
  const LayoutRaster& g = *l.pools[0].raster;
  EXPECT_LE(g.times, OccupancyGrid::kTimes);
  EXPECT_LE(g.offsets, OccupancyGrid::kAddresses);
  EXPECT_EQ(g.bytes.size(), size_t{g.times} * g.offsets);
  // The whole report stays small: what a page has to parse does not grow with the trace.
  EXPECT_LT(to_json({"t", "emt", {}, TimeBase::sequence}, r).dump().size(), 1'500'000u);
}

TEST(LayoutAnalysis, BlocksLiveAtTheEndAreKeptHoweverSmall) {
  Feed f;
  f.alloc(0x100, 8, "small_live.c:1");  // the smallest area on the chart, still live
  for (uint64_t i = 0; i < 30000; ++i) {
    f.alloc(0x10000, 4096, "big_temp.c:2");
    f.time += 1000;
    f.free(0x10000);
  }
  f.alloc(0x200, 8, "late_live.c:3");
  const LayoutResult& l = f.analyzer.finish().layout;
  for (const char* site : {"small_live.c:1", "late_live.c:3"}) {
    auto kept = blocks_of(l, site);
    ASSERT_EQ(kept.size(), 1u) << site;
    EXPECT_FALSE(kept[0]->free_time) << site << " is live at the end";
  }
  EXPECT_EQ(blocks_of(l, "small_live.c:1")[0]->offset, 0u);  // the heap is drawn from its lowest block
  EXPECT_EQ(blocks_of(l, "late_live.c:3")[0]->offset, 0x100u);
  EXPECT_EQ(blocks_of(l, "big_temp.c:2").size(), LayoutAnalysis::kDefaultBlockCap - 2);
}

TEST(LayoutAnalysis, ABigLongLivedBlockIsDrawnEvenAfterTheCapFilled) {
  Feed f;
  f.alloc(0x100000, 1 << 20, "arena_buffer.c:9");  // a 1 MiB buffer held across the whole run
  for (uint64_t i = 0; i < 30000; ++i) {
    f.alloc(0x100, 32, "small.c:1");
    f.free(0x100);
  }
  f.free(0x100000);  // closed after 30,000 other blocks have filled the cap
  const LayoutResult& l = f.analyzer.finish().layout;
  ASSERT_EQ(blocks_of(l, "arena_buffer.c:9").size(), 1u);
  EXPECT_TRUE(blocks_of(l, "arena_buffer.c:9")[0]->free_time);
}

TEST(LayoutAnalysis, BlocksAlikeAreDrawnAcrossTheWholeTraceNotJustItsStart) {
  Feed f;
  for (uint64_t i = 0; i < 100000; ++i) {
    f.alloc(0x100, 64, "temp.c:1");
    f.free(0x100);
  }
  const LayoutResult& l = f.analyzer.finish().layout;
  // Of 100,000 blocks alike, the 20,000 drawn fall into each fifth of the trace about equally.
  uint64_t fifths[5] = {};
  for (const LayoutBlock* b : blocks_of(l, "temp.c:1")) ++fifths[std::min<uint64_t>(4, b->alloc_time * 5 / f.time)];
  for (uint64_t n : fifths) EXPECT_NEAR(static_cast<double>(n), 4000.0, 400.0);
}

// A Linux process's heap: the brk heap, a thread's arena and an mmap chunk,
// terabytes apart. One grid over that span would put each in one cell.
TEST(LayoutAnalysis, AHeapFarApartIsLaidOutAsRegionsEachWithAGridOfItsOwn) {
  Feed f;
  const uint64_t brk = 0x5555'5555'0000, arena = 0x7fff'a000'0000, chunk = 0x7fff'f000'0000;
  for (uint64_t base : {brk, arena})  // the brk heap's blocks are all rasterised before the arena's first
    for (uint64_t i = 0; i < 30000; ++i) {
      const uint64_t address = base + (i % 64) * 1024;
      f.alloc(address, 1024, base == brk ? "main.c:1" : "worker.c:2");
      f.free(address);
    }
  f.alloc(chunk, 256 * 1024, "weights.c:3");
  const LayoutResult& l = f.analyzer.finish().layout;
  ASSERT_EQ(l.pools.size(), 1u);
  const PoolLayout& p = l.pools[0];
  EXPECT_EQ(p.origin, brk);
  ASSERT_EQ(p.regions.size(), 3u);
  const uint64_t starts[] = {0, arena - brk, chunk - brk}, ends[] = {64 * 1024, arena - brk + 64 * 1024, chunk - brk + 256 * 1024},
                 made[] = {30000, 30000, 1};
  uint64_t in_regions = 0;
  for (size_t i = 0; i < 3; ++i) {
    const LayoutRegion& g = p.regions[i];
    EXPECT_EQ(g.offset, starts[i]) << i;
    EXPECT_EQ(g.end, ends[i]) << i;
    EXPECT_EQ(g.blocks, made[i]) << i;
    // Each region's aggregated blocks: those it made less those drawn there.
    const uint64_t drawn_here = static_cast<uint64_t>(std::count_if(
        p.blocks.begin(), p.blocks.end(), [&](const LayoutBlock& b) { return b.offset >= g.offset && b.offset < g.end; }));
    const uint64_t aggregated = g.raster ? g.raster->blocks : 0;
    EXPECT_EQ(aggregated + drawn_here, made[i]) << i;
    in_regions += aggregated;
    if (!g.raster) continue;
    // A grid of its own: 64 KiB over at most 64 cells, not the pool's terabytes.
    EXPECT_LE(g.raster->offset_step, 1024u) << i;
    EXPECT_GE(g.raster->offset0, static_cast<int64_t>(g.offset) - static_cast<int64_t>(g.raster->offset_step)) << i;
    EXPECT_LE(g.raster->offset0 + static_cast<int64_t>(g.raster->offsets * g.raster->offset_step),
              static_cast<int64_t>(g.end + g.raster->offset_step)) << i;
  }
  ASSERT_TRUE(p.raster);
  EXPECT_EQ(in_regions, p.raster->blocks);  // the pool's own grid spans them all
  EXPECT_GT(p.raster->offset_step, uint64_t{1} << 30);

  const auto doc = to_json({"t", "emt", {}, TimeBase::sequence}, f.analyzer.finish());
  EXPECT_EQ(doc["layout"]["pools"][0]["regions"].size(), 3u);
  EXPECT_EQ(doc["layout"]["pools"][0]["regions"][1]["offset"], arena - brk);
}

TEST(LayoutAnalysis, AHeapThatGrowsThroughManyWindowsStaysOneRegion) {
  Feed f;
  for (uint64_t i = 0; i < 100; ++i) f.alloc(0x5555'0000'0000 + i * (1 << 20), 1 << 20, "grow.c:1");  // 100 MiB, contiguous
  const LayoutResult& l = f.analyzer.finish().layout;
  ASSERT_EQ(l.pools.size(), 1u);
  EXPECT_TRUE(l.pools[0].regions.empty());
  EXPECT_EQ(l.pools[0].blocks.size(), 100u);
}

// mmap'd tensors of 64 MiB side by side are one stretch of memory, and
// filling the region cap with them must not pull the brk heap into a
// region terabytes tall.
TEST(LayoutAnalysis, BlocksLargerThanAWindowSideBySideAreOneRegion) {
  Feed f;
  const uint64_t chunks = 0x7f00'0000'0000, brk = 0x5555'5555'0000;
  for (uint64_t i = 0; i < 40; ++i) f.alloc(chunks + i * (64 << 20), 64 << 20, "weights.c:1");
  for (uint64_t i = 0; i < 100; ++i) f.alloc(brk + i * 64, 64, "main.c:2");
  const LayoutResult& l = f.analyzer.finish().layout;
  ASSERT_EQ(l.pools.size(), 1u);
  const auto& regions = l.pools[0].regions;
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].offset, 0u);
  EXPECT_EQ(regions[0].end, 100u * 64);
  EXPECT_EQ(regions[1].offset, chunks - brk);
  EXPECT_EQ(regions[1].end - regions[1].offset, uint64_t{40} * (64 << 20));
  EXPECT_EQ(regions[1].blocks, 40u);
}

TEST(LayoutAnalysis, ABlockThatBridgesTwoRegionsMakesThemOneWithEveryAggregatedBlock) {
  Feed f;
  const uint64_t low = 0x7000'0000'0000, high = low + (uint64_t{256} << 20);  // 16 windows apart
  for (uint64_t base : {low, high})
    for (uint64_t i = 0; i < 15000; ++i) {
      f.alloc(base + (i % 64) * 1024, 1024, "temp.c:1");
      f.free(base + (i % 64) * 1024);
    }
  f.alloc(0x5555'0000'0000, 64, "main.c:2");  // a third region far below, so the pool stays split
  AnalysisResult before = f.analyzer.finish();
  ASSERT_EQ(before.layout.pools[0].regions.size(), 3u);
  f.alloc(low + (1 << 20), uint64_t{256} << 20, "bridge.c:3");  // from inside the low region into the high one
  // A 100 MiB block in the next window, freed, then a small one inside where it lay: the same region.
  f.alloc(high + (uint64_t{16} << 20), 100 << 20, "big.c:4");
  f.free(high + (uint64_t{16} << 20));
  f.alloc(high + (uint64_t{66} << 20), 4096, "inside.c:5");
  const LayoutResult& l = f.analyzer.finish().layout;
  const PoolLayout& p = l.pools[0];
  ASSERT_EQ(p.regions.size(), 2u);
  const LayoutRegion& g = p.regions[1];
  EXPECT_EQ(g.blocks, 30003u);
  EXPECT_EQ(g.offset, low - p.origin);
  ASSERT_TRUE(g.raster && p.raster);
  EXPECT_EQ(g.raster->blocks, p.raster->blocks);  // the two grids' blocks, all in the merged one
  // Merged, the grid still holds every byte-time: 30,000 blocks of 1 KiB for one time unit each.
  double byte_time = 0;
  for (uint64_t v : g.raster->bytes) byte_time += static_cast<double>(v) * static_cast<double>(g.raster->time_step);
  const uint64_t drawn_temps = static_cast<uint64_t>(std::count_if(p.blocks.begin(), p.blocks.end(), [&](const LayoutBlock& b) {
    return l.sites[b.site] == "temp.c:1";
  }));
  EXPECT_NEAR(byte_time, static_cast<double>(30000 - drawn_temps) * 1024, 0.01 * 30000 * 1024);
}

TEST(LayoutAnalysis, AnArenasOffsetsStayOnOneAxisHoweverFarApart) {
  Feed f;
  f.pool = f.context.pools.intern("arena", PoolKind::arena);
  f.alloc(0, 64, "op.cc:1");
  f.alloc(uint64_t{1} << 30, 64, "op.cc:2");
  const LayoutResult& l = f.analyzer.finish().layout;
  ASSERT_EQ(l.pools.size(), 1u);
  EXPECT_TRUE(l.pools[0].regions.empty());
}

TEST(LayoutAnalysis, PastTheRegionCapTheClosestRegionsJoinAndRegionsNeverOverlap) {
  Feed f;
  for (uint64_t i = 0; i < 40; ++i) f.alloc((i + 1) << 32, 4096, "far.c:1");  // 40 blocks 4 GiB apart
  f.alloc((uint64_t{20} << 32) + (uint64_t{1} << 31), 64, "between.c:2");   // between two far ones
  const LayoutResult& l = f.analyzer.finish().layout;
  ASSERT_EQ(l.pools.size(), 1u);
  const auto& regions = l.pools[0].regions;
  ASSERT_EQ(regions.size(), 32u);
  uint64_t blocks = 0;
  for (size_t i = 0; i < regions.size(); ++i) {
    blocks += regions[i].blocks;
    if (i) {
      EXPECT_LE(regions[i - 1].end, regions[i].offset) << i;
    }
  }
  EXPECT_EQ(blocks, 41u);
  EXPECT_EQ(regions.back().end, (uint64_t{40} << 32) + 4096 - (uint64_t{1} << 32));
}

TEST(LayoutAnalysis, The644ByteLeakAmongTemporariesIsDrawnBlockByBlock) {
  Feed f;
  uint64_t leak = 0x30000000;
  for (int inference = 1; inference <= 5000; ++inference) {
    f.marker(EventKind::inference_begin);
    for (uint64_t k = 0; k < 20; ++k) f.alloc(0x20000000 + k * 2048, 1500, "conv.cc:7");
    f.alloc(leak, 644, "model.c:58");
    leak += 648;
    for (uint64_t k = 0; k < 20; ++k) f.free(0x20000000 + k * 2048);
    f.marker(EventKind::inference_end);
  }
  const LayoutResult& l = f.analyzer.finish().layout;
  auto leaked = blocks_of(l, "model.c:58");
  ASSERT_EQ(leaked.size(), 5000u);
  for (const LayoutBlock* b : leaked) {
    EXPECT_EQ(b->size, 644u);
    EXPECT_FALSE(b->free_time);
  }
  // Stacking up: each later leaked block sits higher than the one before.
  for (size_t i = 1; i < leaked.size(); ++i) ASSERT_GT(leaked[i]->offset, leaked[i - 1]->offset);
  ASSERT_EQ(l.live_at_end.size(), 1u);
  EXPECT_EQ(l.live_at_end[0].site, "model.c:58");
  EXPECT_EQ(l.live_at_end[0].bytes, 5000u * 644);
}

TEST(LayoutAnalysis, LiveAtThePeakIsByPoolAndSiteAtThePeakMoment) {
  std::string log =
      "[MEM][0] POOL name=arena kind=arena size=4096\n"
      "[MEM][1] ALLOC size=100 addr=0x100 site=a.c:1 pool=heap\n"
      "[MEM][2] ALLOC size=300 offset=0 site=b.c:2 pool=arena\n"
      "[MEM][3] ALLOC size=200 offset=300 site=b.c:2 pool=arena\n"
      "[MEM][4] FREE offset=300 pool=arena\n"
      "[MEM][5] FREE offset=0 pool=arena\n"
      "[MEM][6] ALLOC size=50 addr=0x300 site=c.c:3 pool=heap\n";
  auto run = analyse(Format::log, log);
  const LayoutResult& l = run->result.layout;
  ASSERT_EQ(l.live_at_peak.size(), 2u);
  EXPECT_EQ(l.live_at_peak[0].pool, "arena");
  EXPECT_EQ(l.live_at_peak[0].site, "b.c:2");
  EXPECT_EQ(l.live_at_peak[0].bytes, 500u);
  EXPECT_EQ(l.live_at_peak[0].count, 2u);
  EXPECT_EQ(l.live_at_peak[1].pool, "heap");
  EXPECT_EQ(l.live_at_peak[1].bytes, 100u);
  ASSERT_EQ(l.live_at_end.size(), 2u);
  EXPECT_EQ(l.live_at_end[1].site, "c.c:3");
  EXPECT_EQ(l.start_time, 1u);  // the POOL line declares, it is not an event
  EXPECT_EQ(l.end_time, 6u);
  // Arena offsets are offsets already: the arena's origin is 0.
  for (const auto& p : l.pools) {
    if (p.pool == "arena") {
      EXPECT_EQ(p.origin, 0u);
    }
  }
}

double byte_time(const LayoutRaster& r) {
  return static_cast<double>(std::accumulate(r.bytes.begin(), r.bytes.end(), uint64_t{0})) *
         static_cast<double>(r.time_step);
}

TEST(OccupancyGrid, EveryByteTimeStaysCountedWhenTheGridSlidesAndWidens) {
  OccupancyGrid g;
  g.add(1000, 64, 0, 20000);
  g.add(1000 + 64 * 500, 64, 20000, 40000);  // far above: the cells widen
  g.add(100, 36, 50000, 90000);              // below the first block: the window slides down
  g.add(5000, 1, 100000, 100000);            // lived no time: counted as one unit
  LayoutRaster r = g.raster(100);
  EXPECT_LE(r.times, OccupancyGrid::kTimes);
  EXPECT_LE(r.offsets, OccupancyGrid::kAddresses);
  // Cells sit on multiples of their width: the lowest block's cell starts at or below the origin given.
  EXPECT_LE(r.offset0, 0);
  EXPECT_GT(r.offset0, -static_cast<int64_t>(r.offset_step));
  // Cells hold mean bytes rounded to whole bytes: within 1 %.
  const double total = 64 * 20000 + 64 * 20000 + 36 * 40000 + 1;
  EXPECT_NEAR(byte_time(r), total, 0.01 * total);
}

// add() takes a shortcut for blocks inside the window that touch one time
// cell and at most two address cells; place() is the general way. Both must
// leave every cell the same, for blocks that take the shortcut, blocks that
// just miss it (three cells, two time cells, outside the window) and the
// window sliding and widening between them.
TEST(OccupancyGrid, TheShortcutForBlocksInsideTheWindowAddsWhatTheGeneralWayAdds) {
  OccupancyGrid quick, general;
  auto same = [&](const char* when) {
    for (uint64_t origin : {uint64_t{0}, uint64_t{0x20000000}}) {
      const LayoutRaster a = quick.raster(origin), b = general.raster(origin);
      EXPECT_EQ(a.time0, b.time0) << when;
      EXPECT_EQ(a.time_step, b.time_step) << when;
      EXPECT_EQ(a.offset0, b.offset0) << when;
      EXPECT_EQ(a.offset_step, b.offset_step) << when;
      EXPECT_EQ(a.times, b.times) << when;
      EXPECT_EQ(a.offsets, b.offsets) << when;
      EXPECT_EQ(a.bytes, b.bytes) << when;
    }
  };
  uint64_t state = 12345, time = 0;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  auto add_blocks = [&](bool far_ones) {
    for (int i = 0; i < 100000; ++i) {
      time += next(50);
      // Blocks of up to 2 KiB in a 256 KiB heap (one or two address cells);
      // now and then an empty one, one spanning many cells or living across
      // time cells, and with far_ones one far above or below (the window
      // slides and widens).
      uint64_t address = 0x20000000 + next(1 << 18);
      if (far_ones && i % 5000 == 0) address = next(2) ? address << 4 : address >> 4;
      const uint64_t size = i % 700 == 0 ? next(1 << 20) : next(2048);
      const uint64_t from = time - std::min(time, next(i % 3 ? 3000 : 300000)), to = time + next(2);
      quick.add(address, size, from, to);
      general.place(address, size, from, to);
    }
  };
  // First a time step of one (times below the 128 cells), so each cell holds
  // exact byte-time and one unit added to the wrong cell shows.
  for (int i = 0; i < 20000; ++i) {
    const uint64_t address = 0x20000000 + next(1 << 18), size = next(8192), from = next(128), to = from + next(2);
    quick.add(address, size, from, to);
    general.place(address, size, from, to);
  }
  same("with a time step of one");
  add_blocks(false);
  same("in one heap");
  add_blocks(true);
  same("with far blocks");
  quick.add(UINT64_MAX - 15, 16, UINT64_MAX, UINT64_MAX);  // the last address and time
  general.place(UINT64_MAX - 15, 16, UINT64_MAX, UINT64_MAX);
  same("at the end of the address space");
}

TEST(OccupancyGrid, AddressesAcrossTheWholeSpaceStillFit) {
  OccupancyGrid g;
  g.add(0, 16, 0, 1);
  g.add(UINT64_MAX - 15, 16, 0, 1);
  LayoutRaster r = g.raster(0);
  EXPECT_LE(r.offsets, OccupancyGrid::kAddresses);
  EXPECT_GE(r.offset_step, uint64_t{1} << 57);
}

}  // namespace
}  // namespace edgemem::test
