// Fragmentation after every allocation, at every failed request and at the
// end of the trace: rate =
// 1 - largest_free / total_free (seed 001 §4.2), per pool, with the seed's
// bands, and every failed request judged: was enough memory free, only not
// in one piece? The curve holds every state measured; the headline's worst
// and end values are its highest and last points.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "bounded_series.h"
#include "edgemem/analysis_result.h"
#include "gap_index.h"
#include "kept_per_pool.h"
#include "pool_tracker.h"

namespace edgemem {

class FragmentationAnalysis {
 public:
  // False when the block lies over bytes another live block holds, inside a
  // pool of known extent: that block's free was lost (a record dropped).
  // Then the state is measured only once overlapped() has been told.
  bool allocated(PoolId pool, const PoolInfo& info, const Block& block);
  // The live blocks `block` lies over, whose frees were lost: their bytes
  // are free but for the new block's.
  void overlapped(PoolId pool, const PoolInfo& info, const std::vector<Block>& lost, const Block& block);
  void released(PoolId pool, const PoolInfo& info, const Block& block, uint64_t time);
  void reset(PoolId pool, uint64_t time);
  // The other end of a two-ended arena now uses `used` bytes, measured back
  // from this pool's top: they are not free here either. `own_top`: this
  // pool's usage, whose blocks stay occupied if the other end overlapped
  // them (an overflow) and now gives its bytes back.
  void partner_used(PoolId pool, const PoolInfo& info, uint64_t used, uint64_t own_top, uint64_t time);
  // `align` 0 is the default. A request no memory could serve (larger than
  // the pool, than any address space, or with an alignment that is not a
  // power of two: refused as invalid) is a failed allocation but says
  // nothing of fragmentation: it does not raise the band.
  // `live_blocks`: the pool's blocks live then. `top`: an arena's usage then:
  // a linear allocator reuses no hole below its top until it resets (those
  // bytes are stranded, LIFO's finding), so only what lies above is free.
  void failed(PoolId pool, const PoolInfo& info, uint64_t size, uint64_t align, uint64_t time, SiteId site,
              std::optional<uint64_t> inference, uint64_t live_blocks, uint64_t top);
  // A summary record of a pool whose free bytes are known (its size less
  // what both ends of it use) and whose allocator told its largest free block.
  void summarized(PoolId pool, uint64_t time, uint64_t total_free, uint64_t largest_free);
  // Requests a summary record says were refused: counted, with no size or
  // site; judged only where the record tells the pool's largest free block
  // (`judged`): without it, whether memory could have served them is not known.
  void failed_in_summary(uint64_t count, bool judged) {
    failure_count_ += count;
    if (judged) judged_failures_ += count;
  }
  // With end markers only, the first inference of a boot began where the
  // boot did: failures before its end marker are that inference's.
  void device_restarted() {
    boot_failures_from_ = failures_.size();
    ++boot_;
  }
  void first_inference_by_its_end(uint64_t number) {
    for (size_t i = boot_failures_from_; i < failures_.size(); ++i)
      if (!failures_[i].f.inference) failures_[i].f.inference = number;
  }
  // Before each event aimed at a pool: a size or base declared again since
  // the last one is taken in, from the pool's live blocks (in `tracker`).
  // Returns the size the pool had before when this one differs, else 0.
  uint64_t sized(PoolId pool, const PoolInfo& info, PoolTracker& tracker, uint64_t time) {
    if (pool < seen_.size() && seen_[pool].size != kNotFixed &&
        (seen_[pool].size != info.size || seen_[pool].base != info.base)) [[unlikely]] {
      const uint64_t before = seen_[pool].size;
      redeclared(pool, info, tracker.pool(pool), time);
      return before != info.size ? before : 0;
    }
    return 0;
  }
  // Rate of the pool as it stands; unset until an allocation measured it.
  std::optional<double> rate_now(PoolId pool);
  // The pool's extent is known: its rates are judged (FragmentationResult's known_extent).
  bool known_extent(PoolId pool) const { return pool < pools_.size() && pools_[pool].fixed; }
  // Leaves the analysis as it was, so it can be called mid-trace.
  void finish(const TraceContext& context, uint64_t inferences, AnalysisResult& out);

 private:
  struct PoolGaps {
    GapIndex gaps;
    bool fixed = false;  // extent comes from a known size, not from observed blocks
    bool measured = false;
    // Known extent: the end of its declared size. What lies past it (blocks
    // seen there, or a larger size declared before) is not the pool's: held
    // occupied, never freed.
    uint64_t held_from = 0;  // 0: not declared (an unknown extent, or a device's summaries)
    void hold_past_end() {
      if (held_from && gaps.high() > held_from) gaps.occupy(held_from, gaps.high() - held_from);
    }
    uint64_t partner = 0;  // bytes at the top of the extent the other end of the arena holds
    // Two-ended: the holes between blocks that overflowed into the other
    // end stay held when it gives its bytes back, so a block over them is
    // no lost free.
    bool shared = false;
    // Where the pool ends: its declared size, or the extent its blocks touched.
    uint64_t top() const { return held_from ? held_from : gaps.high(); }
    uint64_t free_end() const { return top() - partner; }
    BoundedSeries<uint64_t, double> curve{512};
    // When the gaps last changed (a free, a reset, an extent learnt) after
    // the latest point of the curve: the end state, not yet measured.
    std::optional<uint64_t> changed_at;
    // Unknown extent: the blocks' address stretches, blocks less than
    // kFarApart apart joined (order does not matter), each pair more than
    // that apart. The space between them is not the pool's: held occupied.
    std::map<uint64_t, uint64_t> regions;  // start -> end
    std::map<uint64_t, uint64_t>::iterator region;  // the last one a block fell in
    // Summary mode: the device's numbers stand in for the gaps.
    bool summary = false;
    uint64_t summary_total_free = 0, summary_largest_free = 0;
    uint64_t total_free() { return summary ? summary_total_free : gaps.total_free(); }
    uint64_t largest_free() { return summary ? summary_largest_free : gaps.largest_free(); }
    double rate() { return fragmentation_rate(total_free(), largest_free()); }
    void measure(uint64_t time) {
      measured = true;
      changed_at.reset();
      curve.add(time, rate());
    }
  };
  PoolGaps& at(PoolId pool, const PoolInfo& info);
  void redeclared(PoolId pool, const PoolInfo& info, const PoolState& state, uint64_t time);
  // A pool of unknown extent grows to cover each block; a stretch wider
  // than this between blocks is taken for not the pool's (the layout's
  // regions use the same 16 MiB). Past kMaxRegions, a block far from all
  // joins the nearest, the stretch between counted free (a bounded table).
  static constexpr uint64_t kFarApart = uint64_t{16} << 20;
  static constexpr size_t kMaxRegions = 4096;
  void cover(PoolGaps& g, const PoolInfo& info, uint64_t address, uint64_t size);
  // Calls fn(from, to) for each stretch of the extent between regions.
  template <typename Fn>
  static void for_each_hole(const PoolGaps& g, Fn fn);

  struct Failure {
    AllocFailure f;
    PoolId pool;
    SiteId site;
  };
  std::vector<PoolGaps> pools_;
  // By pool, apart from pools_ so the check before every event reads one
  // cache line: the size and base last taken in, for a pool of known extent.
  static constexpr uint64_t kNotFixed = UINT64_MAX;
  struct Seen {
    uint64_t size = kNotFixed, base = 0;
  };
  std::vector<Seen> seen_;
  void seen(PoolId pool, const PoolInfo& info) {
    if (seen_.size() <= pool) seen_.resize(pool + 1);
    seen_[pool] = {info.size, info.base};
  }
  std::vector<Failure> failures_;
  KeptPerPool failures_kept_;
  size_t boot_failures_from_ = 0;  // the first of failures_ in the latest boot
  uint64_t boot_ = 1;
  uint64_t failure_count_ = 0;
  // Of them, valid requests in pools of known extent: the ones the band
  // follows. Whether memory could have served one in a pool of unknown
  // extent is not known, so it does not raise the band (it still counts).
  uint64_t judged_failures_ = 0;
  std::optional<double> min_ratio_;
  bool fragmentation_failure_ = false;  // in a pool of known extent
};

}  // namespace edgemem
