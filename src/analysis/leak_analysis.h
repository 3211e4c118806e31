// Leaks by group at the end of the trace. A group is a pool and a call site,
// or, for blocks without a site, a pool and a block size (an anonymous
// 256 KiB session leak is not mixed with 54 KiB tensors). "Live is not
// leaked": a group leaks only while its live count keeps growing.
//  * With inference markers: blocks made before the first inference are
//    persistent; a group leaks if its live count still sets records in the
//    second half of the run (a cache or a ring of the last N buffers stops
//    early). Its rate is measured over the inferences since it began, with
//    its pattern: every inference, every Nth, or irregular.
//    A group whose live count stays flat while its live bytes rise (a
//    buffer grown by realloc and never freed) leaks too when its bytes grew
//    at the end of at least a quarter of the inferences and still set
//    records in the second half (a vector doubling grows a few times).
//  * Markers from one thread, blocks from another (a pipeline's worker
//    threads, when only the main loop marks): the inference clock says
//    nothing about them. A group made only by threads that mark no
//    inference is judged over its threads' lives: it leaks when its live
//    blocks were made over more than half of them and into their last
//    quarter (a thread's set-up buffers are made early, a ring of the last N
//    late). Lives are measured two ways, and either may show the growth: on
//    each thread's own clock, its count of memory events (a worker may idle
//    for half the run before its loop starts), and in event time over the
//    span of all its threads (a thread per request leaves one block each).
//  * Without markers: the group's live count is sampled in windows of event
//    time; a leak is a group whose per-window minimum keeps rising, while a
//    working set's minima stay flat however busy it is. A floor that reached
//    its new heights in one window, or two neighbouring ones, is not a
//    trend: one burst of blocks kept to the end (a locale loaded, a user
//    name looked up) is memory kept until exit as often as a lost one, and
//    the trace cannot tell which.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "edgemem/analysis_result.h"
#include "dense_index.h"
#include "group_index.h"
#include "pool_tracker.h"

namespace edgemem {

class LeakAnalysis {
 public:
  // The group a new block joins, looked up once per allocation: the block
  // keeps it (Block::group), so a free costs no lookup. Inline when the
  // group exists; a new one is made out of line.
  uint32_t group_of(PoolId pool, SiteId site, uint64_t size) {
    if (site != kUnknownSite) size = 0;
    uint32_t id = index_.find(pool, site, size);
    return id != GroupIndex::kNone ? id : add_group(pool, site, size);
  }
  // Inline, as the rest of the per-event bookkeeping: every event comes here.
  void added(const Block& b, uint32_t inference) {
    Group& g = touch(b.group);
    ++g.allocs;
    if (++g.live > g.max_live) {
      g.max_live = g.live;
      g.last_high_inference = inference;
      g.freed_before_high = false;
    }
    if ((g.live_bytes += b.size) > g.max_live_bytes) {
      g.max_live_bytes = g.live_bytes;
      g.last_bytes_high_inference = inference;
    }
  }
  // `freed`: false for a block lost when the device restarted.
  void removed(const Block& b, bool freed = true) {
    // A block made before its boot's first inference: what the inferences
    // added does not lose it (once markers began; without them every block is).
    if (b.inference <= boot_began_at_ && inferences_began_ && !began_at_start_) [[unlikely]]
      pre_live_bytes_[b.group] -= b.size;
    Group& g = touch(b.group);
    // What it held at its highest, given back: it churns, not only grows.
    if (b.inference < g.last_high_inference) g.freed_before_high = true;
    g.frees += freed;
    --g.live;
    g.live_bytes -= b.size;
    g.window_min = std::min(g.window_min, g.live);
  }
  // A request that failed, counted against the group it would have joined
  // (if it exists): a leak that fills its pool stops growing because its own
  // requests fail, and is still the leak that filled it.
  void failed(PoolId pool, SiteId site, uint64_t size) {
    uint32_t id = index_.find(pool, site, site != kUnknownSite ? 0 : size);
    // A failure logged without a site (an allocator's hook that does not
    // know its caller): the pool's one growing group whose blocks all have
    // the size refused (a 648 B leak that filled a 16 KiB pool read as "no
    // leak" beside 37 site-less refusals of 648 B).
    if (id == GroupIndex::kNone && site == kUnknownSite) id = sole_growing_group(pool, size);
    if (id == GroupIndex::kNone) return;
    Group& g = groups_[id];
    if (g.growths > 0 && g.failed_since_growth++ == 0) g.first_failure_end = completed_;
    g.allocs_at_failure = g.allocs;
  }
  // One memory event (alloc, free, realloc, reset) has been applied.
  void tick() {
    ++events_;
    if (++in_window_ < window_length_) [[likely]]
      return;
    close_window();
  }
  // A memory event of `thread` at `time`: its number on the thread's own clock (Block::thread_clock).
  float thread_active(uint32_t thread, uint64_t time) {
    ThreadClock& t = clock_of(thread);
    if (t.events++ == 0) t.first = time;
    t.last = time;
    return static_cast<float>(t.events);
  }
  void marks_inferences(uint32_t thread);
  // `at_trace_start`: the firmware marks only ends, and the first inference
  // began where the trace does (docs/formats/textlog.md): nothing was made
  // before it, though growth is still measured from its end.
  void first_inference_begins(bool at_trace_start);
  // `completed`: inferences completed so far; `device`: the device's number for this one.
  void inference_end(uint64_t completed, uint64_t device);
  // The device booted again (its pools were reset): a leak is judged within
  // each boot, as each boot leaks again from empty, and what a boot makes
  // before its first inference is its setup, as in the first boot
  // (first_inference_begins is called again at its first inference). What
  // the groups allocated and freed over the whole capture stays counted.
  // `begun`: the inferences begun before the new boot.
  void device_restarted(uint32_t begun);
  // `at_restart`: the boot going down at a restart is judged as it ends (its reasons say so).
  void finish(PoolTracker& tracker, const TraceContext& context, AnalysisResult& out, bool at_restart = false) const;

 private:
  static void list_sites(const PoolTracker& tracker, const TraceContext& context,
                         const std::unordered_set<SiteId>& leaking, AnalysisResult& out);
  using Key = std::tuple<PoolId, SiteId, uint64_t>;
  // The counters every allocation and free touches share one cache line;
  // the rest is read at inference ends, window ends and the finish.
  struct alignas(64) Group {
    uint64_t live = 0, allocs = 0, frees = 0;
    uint64_t max_live = 0;
    // A realloc chain holds one block whose size climbs: its bytes, not its count, grow.
    uint64_t live_bytes = 0, max_live_bytes = 0;
    uint64_t window_min = 0;  // lowest live count of the open window of event time
    uint32_t last_high_inference = 0;  // inference in which `live` last set a record
    uint32_t last_bytes_high_inference = 0;
    Key key;
    uint64_t best_end_bytes = 0;
    // Event time: the lowest live count of each closed window.
    std::vector<uint64_t> minima;
    // Inference time: growth is a live count at an inference end above every earlier one.
    uint64_t best_end_live = 0;
    // The bytes of its blocks made in inferences, at the last inference end
    // and at the end before its first growth: what the growths added is the
    // difference, counted at inference ends only (a block made after the
    // last end, or in an inference cut short, has grown nothing yet).
    uint64_t end_bytes = 0, grown_from = 0;
    // At the end of its first growth. A group whose live count at most
    // inference ends after it is the count it had then grew in bytes only
    // (blocks that realloc grows, a scratch block now and then beside
    // them), and its first growth may carry the size a chain had before the
    // inferences (made anew by the first realloc), so its rate counts from
    // there. A count that moved for good (a burst at the first end gone
    // after it; a second chain for half the run) keeps the rate over all
    // its growths. Counted lazily: an end that does not touch the group
    // keeps the count of its last touched one (`end_live`, `last_end`).
    uint64_t first_end_bytes = 0, first_end_live = 0, end_live = 0, last_end = 0;
    uint64_t ends_after_first = 0, same_count_ends = 0;
    uint64_t growths = 0, first_growth = 0, first_growth_device = 0, last_growth = 0, last_growth_device = 0;
    uint64_t first_growth_window = 0;  // the window of event time open at its first growth (halved as windows merge)
    uint64_t frees_at_first_growth = 0;
    // Its own requests that failed after its last growth (a growth resets
    // it): what stopped it, when it filled its pool — unless it freed a
    // block made before the inference of its highest live count since then
    // (`freed_before_high`): a working set that churns is not stopped by a
    // failure, it only missed one (a fragmented heap).
    uint64_t failed_since_growth = 0;
    uint64_t first_failure_end = 0;  // inference ends completed at the first of them
    uint64_t allocs_at_failure = 0;  // its allocations at its latest failure: none since, it is still refused
    bool freed_before_high = false;
    uint64_t min_gap = UINT64_MAX, max_gap = 0;
  };
  // A thread's own clock: its memory events counted. Threads past
  // kMaxThreads share one (a process that starts a thread per request
  // keeps the analysis flat): their blocks are judged on the shared count,
  // and one of them marking inferences marks them all.
  static constexpr uint32_t kMaxThreads = 4096;
  struct ThreadClock {
    uint32_t thread = 0;
    bool marks = false;
    uint64_t events = 0;
    uint64_t first = 0, last = 0;  // event time of its first and last memory events
  };
  ThreadClock& clock_of(uint32_t thread) {
    uint32_t i = thread_index_.of(thread);
    if (i == clocks_.size() && i != thread_index_.overflow()) [[unlikely]]
      clocks_.emplace_back().thread = thread;
    return i < clocks_.size() ? clocks_[i] : other_threads_;
  }
  uint32_t add_group(PoolId pool, SiteId site, uint64_t size);
  // The group of `pool` that has grown and whose blocks are the closest to
  // `size` at or above it, within an allocator's granule (16 B); kNone when
  // none is, or two are as close (looked for among at most
  // kMaxGroupsSearched groups).
  uint32_t sole_growing_group(PoolId pool, uint64_t size) const;
  static constexpr size_t kMaxGroupsSearched = 4096;
  static constexpr uint64_t kGranule = 16;
  void close_window();
  const ThreadClock* find_clock(uint32_t thread) const;
  bool marks(uint32_t thread) const;
  bool unnamed_marks_ = false;  // a marker named no thread (thread 0)
  Group& touch(uint32_t id) {
    if (!touched_flag_[id]) {
      touched_flag_[id] = 1;
      touched_.push_back(id);
    }
    return groups_[id];
  }
  bool rising_minima(const Group& g) const;
  bool floor_rose(const Group& g) const;
  LeakGrowth growth(const Group& g) const;
  // Whether its growths after the first were in bytes only (first_end_bytes).
  bool bytes_only(const Group& g) const {
    if (g.growths < 2) return false;
    const uint64_t untouched = completed_ - g.last_end;
    const uint64_t same = g.same_count_ends + (g.end_live == g.first_end_live ? untouched : 0);
    return 2 * same > g.ends_after_first + untouched;
  }
  // What its growths added (after the first, when bytes_only), and how many.
  uint64_t grown(const Group& g) const {
    const uint64_t from = bytes_only(g) ? g.first_end_bytes : g.grown_from;
    return g.end_bytes > from ? g.end_bytes - from : 0;
  }
  uint64_t growths_counted(const Group& g) const { return bytes_only(g) ? g.growths - 1 : g.growths; }
  // Its requests began to fail where its growth would have gone on: within
  // its longest gap between growths of its last one (a group that stopped
  // growing long before another filled the pool is not stopped by that).
  bool stopped_by_failures(const Group& g) const {
    return g.growths >= 2 && g.failed_since_growth > 0 && !g.freed_before_high && grown(g) > 0 &&
           g.first_failure_end < g.last_growth + std::max<uint64_t>(g.max_gap, 1) && g.allocs == g.allocs_at_failure;
  }
  // It stopped growing with nothing refused: no growth in ten of its
  // longest gaps between growths, and in at least 20 inferences. Its rate
  // is over the inferences it grew in, and it forecasts nothing: 64 B per
  // inference up to inference 3,000 of 5,100 read "38 B per inference, runs
  // out in 1,849 more inferences". The longest gap, not the mean: a cache
  // filled in 100 inferences beside a leak every 100th, or a leak in
  // bursts, has a mean gap far below the leak's own.
  bool stopped_on_its_own(const Group& g) const {
    if (g.growths < 2 || stopped_by_failures(g)) return false;
    const uint64_t quiet = completed_ - g.last_growth;
    return quiet >= 20 && quiet >= 10 * g.max_gap;
  }

  static constexpr size_t kMaxSizeGroups = 4096;
  size_t unknown_size_groups_ = 0;
  GroupIndex index_;
  std::vector<Group> groups_;
  // Per group: live bytes of blocks made before the first inference.
  std::vector<uint64_t> pre_live_bytes_;
  bool inferences_began_ = false;
  bool began_at_start_ = false;  // first_inference_begins' at_trace_start (of the latest boot)
  uint64_t completed_ = 0;  // inference ends so far
  uint64_t boot_began_after_ = 0;  // completed_ when the latest boot began
  uint32_t boot_began_at_ = 0;     // inferences begun then
  bool restarted_ = false;         // a boot after the first is running
  std::vector<uint8_t> touched_flag_;  // per group: listed in touched_ since the last inference end
  std::vector<uint32_t> touched_;
  DenseIndex thread_index_{kMaxThreads};
  std::vector<ThreadClock> clocks_;
  ThreadClock other_threads_;
  uint64_t window_length_ = 1, in_window_ = 0, windows_ = 0, events_ = 0;
};

std::string type_hint(uint64_t block_size);

}  // namespace edgemem
