// The heap/arena layout over time: where each block sat and from when to
// when, for an offset x time chart, bounded for any trace length. Blocks
// still live at the end are always kept (up to the cap, largest size x
// lifetime first); the closed ones fill the rest of the cap as a sample
// weighted by size x lifetime, so large long-lived blocks are kept and the
// rest spread over the trace; every other block is added to a per-pool occupancy raster, so the
// picture stays true where it is not drawn block by block, and to a raster
// of its address region when the pool's blocks lie far apart. Also keeps live
// bytes per (pool, site) now and at the peak, for the flame graphs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "edgemem/analysis_result.h"
#include "occupancy_grid.h"
#include "pool_tracker.h"

namespace edgemem {

class LayoutAnalysis {
 public:
  static constexpr size_t kDefaultBlockCap = 20000;

  explicit LayoutAnalysis(size_t block_cap = kDefaultBlockCap) : cap_(block_cap) {}

  // Every event, so the chart spans the whole trace: inline, and a compare
  // per bound rather than two stores on every event (a trace's clock rarely
  // goes below its first time or stays at its last, so both branches predict).
  void seen(uint64_t time) {
    if (time < start_) [[unlikely]] start_ = time;
    if (time > end_) end_ = time;
  }
  void opened(PoolId pool, const Block& block) {
    ++blocks_seen_;
    PoolState& s = pool_state(pool);
    // Most blocks land in the region the pool's last block did, inside its
    // lowest start and highest end so far.
    Region* r = s.regions.empty() ? nullptr : &s.regions[s.last_opened];
    const uint64_t end = block_end(block);
    if (!r || !r->holds(block.address) || !r->holds(end - (block.size > 0))) [[unlikely]]
      r = &region_for(s, block);
    if (block.address < r->low) [[unlikely]] r->low = block.address;
    if (end > r->high) [[unlikely]] r->high = end;
    ++r->blocks;
    Live& l = changing(pair_of(pool, block));
    l.bytes += block.size;
    ++l.count;
  }
  // Freed, resized away, reset, or replaced by an alloc at its address.
  // Once the sample is full most closed blocks cannot enter it: those only
  // update their pair's bytes and go to the raster, inline here; the
  // sample's own work (the key's logarithm, the heap) is out of line. Not
  // inline into the analyzer: there it pushes other calls out of line.
  void closed(PoolId pool, const Block& block, uint64_t time);
  // The same moments PeakAnalysis sees, so live_at_peak is its peak: a
  // copy-on-write snapshot, as the pool tracker's of the sites.
  void usage_changed(uint64_t total_usage) {
    if (total_usage > peak_) {
      peak_ = total_usage;
      ++snapshot_;
    }
  }
  // Leaves the analysis as it was, so it can be called mid-trace.
  void finish(PoolTracker& tracker, const TraceContext& context, AnalysisResult& out) const;

 private:
  struct Kept {
    double score = 0;  // closed: the weighted sample's key; live: size x lifetime
    uint64_t end = 0;  // free time; for a live block, the end of the trace
    bool live = false;
    PoolId pool = 0;
    Block block;
  };
  struct Live {
    uint64_t bytes = 0, count = 0;
    // At snapshot number `snapshot` (the latest peak), kept at the first change after it.
    uint64_t snapshot = 0, snapshot_bytes = 0, snapshot_count = 0;
  };
  Live& changing(uint32_t pair) {
    Live& l = live_[pair];
    if (l.snapshot != snapshot_) [[unlikely]] {
      l.snapshot = snapshot_;
      l.snapshot_bytes = l.bytes;
      l.snapshot_count = l.count;
    }
    return l;
  }
  // The sample's heap holds scores and slots only: sifting 16-byte entries
  // through 20,000 stays in cache where 80-byte blocks did not. Its
  // comparisons read the score alone, so it orders (and evicts) exactly as a
  // heap of the blocks themselves would.
  struct Ranked {
    double score;
    uint32_t slot;  // in kept_
  };
  // A functor, not a function pointer, so the heap's comparisons inline.
  struct Smaller {
    bool operator()(const Ranked& a, const Ranked& b) const { return a.score > b.score; }  // heap front = smallest
  };
  static uint64_t key(PoolId pool, SiteId site) { return uint64_t{pool} << 32 | site; }
  // A closed block that may enter the sample: out of line, so closed()
  // saves no registers for it.
  [[gnu::noinline]] void sample(PoolId pool, const Block& block, uint64_t end, double u, double weight);
  // The (pool, site) pair of a block, an index into live_. A block's leak
  // group names its pool and site (Block::group), so the pair is looked up
  // in a hash map once per group and by array index after that.
  uint32_t pair_of(PoolId pool, const Block& block) {
    if (block.group < pair_of_group_.size()) [[likely]]
      if (const uint32_t pair = pair_of_group_[block.group]; pair != kNoPair) return pair;
    return new_pair(pool, block);
  }
  uint32_t new_pair(PoolId pool, const Block& block);
  // Closed blocks pushed out of the sample.
  struct Raster {
    std::optional<OccupancyGrid> grid;
    uint64_t blocks = 0, live_blocks = 0;
    [[gnu::always_inline]] void add(const Block& block, uint64_t end, bool live) {
      if (!grid) [[unlikely]] grid.emplace();
      grid->add(block.address, block.size, block.time, end);
      ++blocks;
      live_blocks += live;
    }
    void merge(const Raster& other) {
      if (other.grid) {
        if (grid) grid->merge(*other.grid);
        else grid = other.grid;
      }
      blocks += other.blocks;
      live_blocks += other.live_blocks;
    }
  };
  // Where a pool's blocks lie, in address windows of 2^kWindowShift bytes:
  // a Linux process's heap is the brk heap, thread arenas and mmap chunks
  // terabytes apart, and one grid over that span would put each in one
  // cell. A region holds every window its blocks cover and grows by the
  // windows of a block that meets or touches it (merging the regions a block
  // bridges), so a heap that grows stays one region and regions never
  // overlap; past kMaxRegions the two closest become one.
  static constexpr unsigned kWindowShift = 24;  // 16 MiB
  static constexpr size_t kMaxRegions = 32;
  struct Region {
    uint64_t first_window = 0, last_window = 0;  // address >> kWindowShift, inclusive
    uint64_t low = UINT64_MAX, high = 0;          // lowest block start, highest block end
    uint64_t blocks = 0;                          // blocks made here
    Raster raster;  // kept while the pool has more than one region
    bool holds(uint64_t address) const {
      const uint64_t w = address >> kWindowShift;
      return w >= first_window && w <= last_window;
    }
    void absorb(const Region& other);
  };
  struct PoolState {
    Raster all;  // every aggregated block of the pool, over its whole span
    std::vector<Region> regions;  // by address
    uint32_t last_opened = 0, last_closed = 0;  // indices into regions
  };
  static uint64_t block_end(const Block& b) {
    return b.address + b.size >= b.address ? b.address + b.size : UINT64_MAX;
  }
  static Region& region_for(PoolState& s, const Block& block);
  // Pool `pool`'s state, made on first sight; its count kept apart, as a
  // vector's size divides by the state's.
  PoolState& pool_state(PoolId pool) {
    if (pool >= pool_count_) [[unlikely]] {
      pools_.resize(size_t{pool} + 1);
      pool_count_ = pools_.size();
    }
    return pools_[pool];
  }
  // Inlined into closed(): most frees of a long trace end here, and a call
  // would cost a third of the work.
  [[gnu::always_inline]] static void rasterise(PoolState& s, const Block& block, uint64_t end, bool live) {
    s.all.add(block, end, live);
    if (s.regions.size() > 1) [[unlikely]] {
      if (s.last_closed >= s.regions.size() || !s.regions[s.last_closed].holds(block.address))
        s.last_closed = region_index(s, block.address);
      s.regions[s.last_closed].raster.add(block, end, live);
    }
  }
  // The region that holds `address` (every block's address is in one: the
  // block was opened before it closed, and regions only grow).
  static uint32_t region_index(const PoolState& s, uint64_t address);
  std::vector<PoolSiteBytes> named(const std::vector<Live>& live, const TraceContext& context) const;

  size_t cap_;
  uint64_t start_ = UINT64_MAX, end_ = 0;  // start_ > end_: no event yet
  uint64_t blocks_seen_ = 0;
  std::vector<Ranked> closed_;  // min-heap on score, at most cap_
  // The lowest key in the sample once it is full, -inf before (every block
  // may enter), +inf with no sample: what a closed block's key must beat.
  double floor_ = cap_ == 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  std::vector<Kept> kept_;       // the closed blocks closed_ ranks
  std::vector<PoolState> pools_;  // per PoolId
  size_t pool_count_ = 0;         // pools_.size()
  std::vector<Live> live_;          // per (pool, site) pair; count 0 = none live
  std::vector<uint64_t> pair_key_;  // key(pool, site) of each pair
  std::unordered_map<uint64_t, uint32_t> pair_index_;  // key(pool, site) -> pair
  static constexpr uint32_t kNoPair = UINT32_MAX;
  std::vector<uint32_t> pair_of_group_;  // Block::group -> pair
  uint64_t peak_ = 0;
  uint64_t snapshot_ = 0;
};

}  // namespace edgemem
