// The state every analysis shares: live blocks per pool, per-site counters,
// the inference clock and each pool's usage. Analyses read it; only the
// tracker changes it.
#pragma once

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "edgemem/decoder.h"
#include "live_map.h"

namespace edgemem {

struct SiteCounters {
  uint64_t allocs = 0, frees = 0, alloc_bytes = 0, live_bytes = 0, live_count = 0;
  uint64_t first_time = 0, last_time = 0;
  // Live bytes and count when snapshot number `snapshot` was taken, kept at
  // the site's first change after it (see PoolTracker::snapshot_sites).
  uint64_t snapshot = 0, snapshot_bytes = 0, snapshot_count = 0;
};

class PoolState {
 public:
  LiveMap live;
  PoolKind kind = PoolKind::heap;
  uint64_t live_bytes = 0;
  uint64_t peak_usage = 0;
  uint64_t inference_peak = 0;  // highest usage since the current inference began
  // A pool sharing its arena with a partner (TFLM's head and tail): the
  // highest usage of both ends at one moment, raised at its allocations.
  uint64_t shared_peak = 0;
  // Its highest usage under the sizes it was declared with before the
  // latest: peak_usage counts from that declaration on.
  uint64_t peak_of_earlier_sizes = 0;
  // The device sent this pool's numbers (summary mode), not its blocks:
  // usage() is what it last reported.
  bool summarized = false;
  uint64_t reported_usage = 0;

  // Heap: bytes in live blocks. Arena: the highest end of a live block, since
  // a linear allocator cannot reuse space below its top. Inline: asked
  // several times per event, and a heap's answer is one field.
  uint64_t usage() {
    if (summarized) return reported_usage;
    return kind == PoolKind::heap ? live_bytes : arena_top();
  }
  void added(const Block& b) {
    live_bytes += b.size;
    if (kind == PoolKind::arena) push_top(b);
  }
  void removed(const Block& b) { live_bytes -= b.size; }
  void surfaced(const Block& b) {
    if (kind == PoolKind::arena) push_top(b);
  }
  void cleared();

 private:
  uint64_t arena_top();
  void push_top(const Block& b);
  std::vector<std::pair<uint64_t, uint64_t>> tops_;  // max-heap of (end, address), lazily pruned
};

class PoolTracker {
 public:
  explicit PoolTracker(TraceContext& context) : context_(context) {}

  // Inline: every event asks for its pool and its site; only a first sight grows the tables.
  PoolState& pool(PoolId id) { return id < pool_count_ ? pools_[id] : add_pools(id); }
  std::vector<PoolState>& pools() { return pools_; }
  const std::vector<PoolState>& pools() const { return pools_; }
  SiteCounters& site(SiteId id) {
    if (sites_.size() <= id) sites_.resize(size_t{id} + 1);
    return sites_[id];
  }
  const std::vector<SiteCounters>& sites() const { return sites_; }
  // A copy-on-write snapshot of every site's live bytes and count: each
  // site keeps its counts as they were at its first change after it, so a
  // snapshot costs nothing per site. The peak takes one at every new high,
  // which on a growing heap is most allocations; copying the counts of a
  // recording's 90,000 stacks each time was a third of its analysis.
  void snapshot_sites() { ++snapshot_; }
  // A site's live {bytes, count} at the latest snapshot.
  std::pair<uint64_t, uint64_t> at_snapshot(const SiteCounters& s) const {
    return s.snapshot == snapshot_ ? std::pair(s.snapshot_bytes, s.snapshot_count) : std::pair(s.live_bytes, s.live_count);
  }

  // Each returns what changed so analyses need not look it up again.
  // alloc: `replaced` is set when the address was still live (its free was lost).
  // `group` and `thread_clock` are stored in the block for the leak analysis.
  // Inline, as usage() is: they run on every allocation and free.
  const Block& alloc(const Event& e, uint32_t group, float thread_clock, bool& replaced, Block& old) {
    PoolState& p = pool(e.pool);
    uint64_t before = p.usage();
    last_ = Block{e.address, e.size, e.time, e.site, e.align, inference_, group, e.thread, thread_clock};
    replaced = p.live.put(last_, &old, p.kind == PoolKind::arena);
    if (replaced) [[unlikely]] {
      p.removed(old);
      SiteCounters& s = changing_site(old.site);
      s.live_bytes -= old.size;
      --s.live_count;
    }
    p.added(last_);
    peaks_before_ = {p.peak_usage, p.inference_peak};
    SiteCounters& s = changing_site(e.site);
    if (s.allocs == 0) s.first_time = e.time;
    s.last_time = e.time;
    ++s.allocs;
    s.alloc_bytes += e.size;
    s.live_bytes += e.size;
    ++s.live_count;
    refresh_usage(p, before);
    return last_;
  }
  bool free(PoolId pool_id, uint64_t address, Block& freed) {
    SiteCounters* s = take(pool_id, address, freed);
    if (s) ++s->frees;
    return s != nullptr;
  }
  // A block whose free was lost: gone, but not counted as freed. The one
  // with bytes at `address`, not a 0-byte block made there after it.
  void drop(PoolId pool_id, uint64_t address) {
    Block old;
    take(pool_id, address, old, true);
  }
  // The free of a block drop() took: counted at its site.
  void freed_late(const Block& b) { ++site(b.site).frees; }
  // After drop()s of the blocks the latest allocation lay over: its pool's
  // peaks as if they had gone before it came.
  void settle_peaks(PoolId pool_id) {
    PoolState& p = pool(pool_id);
    p.peak_usage = std::max(peaks_before_.usage, p.usage());
    p.inference_peak = std::max(peaks_before_.inference, p.usage());
  }
  // The pool was declared with another size: its peaks count anew from
  // what it (and its other end, `other_end` bytes) holds now.
  void size_declared_again(PoolId pool_id, uint64_t other_end) {
    PoolState& p = pool(pool_id);
    p.peak_of_earlier_sizes = std::max(p.peak_of_earlier_sizes, p.peak_usage);
    p.peak_usage = p.usage();
    p.shared_peak = p.peak_usage + other_end;
  }
  // `freed`: false where a restart lost the blocks (not counted as frees).
  void reset(PoolId pool, bool freed = true);
  // A summary record: the pool holds `used` bytes now, at most `peak` since the last one.
  void summary(PoolId pool, uint64_t used, uint64_t peak);

  // `number`: the device's own inference number; a marker without one
  // carries 0. The first inference takes its number as given (a loop may
  // count from 0); after it a 0 continues from the previous number. A trace
  // whose markers are all 0 is unnumbered: see numbered(). A device counts
  // anew after a restart: the new boot's first number is taken as given too.
  // `by_its_end`: the firmware marks only inference ends, so this one begins
  // and ends at its end marker, and blocks made after it belong to the next.
  void begin_inference(uint64_t number, bool by_its_end = false) {
    // A device counts from its own start each boot, numbered or not: one that
    // crashed in its first inference showed only a 0 before.
    const bool anew = std::exchange(counts_anew_, false);
    const bool as_given = inference_ == 0 || number || anew;
    device_inference_ = as_given ? number : device_inference_ + 1;
    numbered_ |= number != 0;
    ++inference_;
    ++open_;
    ends_only_ = by_its_end;
    // Begun at its end marker, it ran since the previous end: its peak is
    // what the pools held since then (inference_peaks_restart() after it).
    if (!by_its_end) inference_peaks_restart();
  }
  void inference_peaks_restart() {
    for (PoolState& p : pools_) p.inference_peak = p.usage();
  }
  // Threads may run inferences at once: one ends, others may still run.
  void end_inference() {
    if (open_) --open_;
    ++completed_;
  }
  // The device went down inside its inferences: they never completed.
  void abandon_inference() { open_ = 0; }
  // One inference will not end (its thread began another without ending it).
  void abandon_one() {
    if (open_) --open_;
  }
  // The device booted again: its next inference marker starts its count anew.
  void device_restarted() {
    counts_anew_ = true;
    ++boot_;
  }
  // The device's boot now running: 1, and one more after each restart.
  uint64_t boot() const { return boot_; }
  uint32_t inference() const { return inference_; }  // inferences begun so far
  // Some marker carried a number. If none did, device_inference() counted
  // from 0 and reports shift it to count from 1.
  bool numbered() const { return numbered_; }
  // The device's number of the latest begun inference; unset before the first.
  std::optional<uint64_t> device_inference() const {
    return inference_ ? std::optional<uint64_t>(device_inference_) : std::nullopt;
  }
  // The inference an event now falls in: the one running (the latest begun,
  // when threads run several at once) or, with end markers only, the next
  // (one past the last end); unset between inferences and before the first.
  std::optional<uint64_t> current_inference() const {
    if (open_) return device_inference_;
    if (ends_only_ && inference_ && !counts_anew_) return device_inference_ + 1;  // not one of a boot before
    return std::nullopt;
  }
  // No inference began since the trace or the device's latest restart began.
  bool boot_began_no_inference() const { return inference_ == 0 || counts_anew_; }
  uint64_t completed() const { return completed_; }
  bool in_inference() const { return open_ > 0; }
  // Sum of pool usages, kept current on every change.
  uint64_t total_usage() const { return total_usage_; }
  void refresh_usage(PoolState& p, uint64_t before) {
    uint64_t after = p.usage();
    total_usage_ = total_usage_ - before + after;
    p.peak_usage = std::max(p.peak_usage, after);
    p.inference_peak = std::max(p.inference_peak, after);
  }

 private:
  PoolState& add_pools(PoolId id);
  // The live block at `address` gone from its pool and site: its site, or
  // null when none was live there.
  SiteCounters* take(PoolId pool_id, uint64_t address, Block& out, bool sized_only = false) {
    PoolState& p = pool(pool_id);
    uint64_t before = p.usage();
    if (!p.live.erase(address, &out, sized_only)) return nullptr;
    p.removed(out);
    // A block stacked at the offset took the table's place: its end counts for the top again.
    if (p.live.stacked()) [[unlikely]]
      if (const Block* up = p.live.find(address)) p.surfaced(*up);
    SiteCounters& s = changing_site(out.site);
    s.live_bytes -= out.size;
    --s.live_count;
    refresh_usage(p, before);
    return &s;
  }

  TraceContext& context_;
  std::vector<PoolState> pools_;
  size_t pool_count_ = 0;  // pools_.size(), kept: size() divides by the state's size
  struct {
    uint64_t usage = 0, inference = 0;
  } peaks_before_;  // of the latest allocation's pool, before it
  // The site whose live counts are about to change, its snapshot kept first.
  SiteCounters& changing_site(SiteId id) {
    SiteCounters& s = site(id);
    if (s.snapshot != snapshot_) [[unlikely]] {
      s.snapshot = snapshot_;
      s.snapshot_bytes = s.live_bytes;
      s.snapshot_count = s.live_count;
    }
    return s;
  }
  std::vector<SiteCounters> sites_;
  uint64_t snapshot_ = 0;
  uint32_t inference_ = 0;
  uint64_t device_inference_ = 0;
  bool numbered_ = false;
  bool counts_anew_ = false;
  uint64_t boot_ = 1;
  uint64_t completed_ = 0;
  uint32_t open_ = 0;  // inferences begun and not ended
  bool ends_only_ = false;
  uint64_t total_usage_ = 0;
  Block last_;
};

}  // namespace edgemem
