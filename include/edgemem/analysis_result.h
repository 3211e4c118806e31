// Plain values produced by the analyses; presenters read only these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgemem/pool_table.h"
#include "edgemem/thread_result.h"

namespace edgemem {

// The seed's fragmentation bands (seed 001 §4.2), ordered so that a worse
// band compares greater. One table for analyze, check, diff and --fail-on.
enum class Band : uint8_t { healthy, warning, danger };
Band fragmentation_band(double rate);  // healthy < 10 %, warning 10-25 %, danger > 25 %
// 1 - largest free / total free, 0 when nothing is free; exactly 10 % or 25 % is
// the same double as the band limits, so the band is right at its boundaries.
double fragmentation_rate(uint64_t total_free, uint64_t largest_free);
std::string_view to_string(Band band);  // stable JSON identifiers: "healthy", "warning", "danger"
std::optional<Band> parse_band(std::string_view name);

// How a pool's usage at inference ends moves.
enum class Shape : uint8_t { flat, linear, stair, irregular };
std::string_view to_string(Shape shape);

// Whether a check found something, ran and found nothing, or could not run.
enum class CheckStatus : uint8_t { found, clean, not_checked };
std::string_view to_string(CheckStatus status);

struct Check {
  CheckStatus status = CheckStatus::not_checked;
  std::string reason;  // why not checked, or what limits the answer; empty when nothing to add
};

struct Checks {
  Check leaks, overflow, guards, fragmentation, lifo;
};

// When a leaking group grew: every inference, every Nth, or neither.
enum class LeakPattern : uint8_t { every_inference, every_nth, irregular };
std::string_view to_string(LeakPattern pattern);

struct LeakGrowth {
  LeakPattern pattern = LeakPattern::irregular;
  uint64_t period = 0;               // every_nth: N
  uint64_t growth_inferences = 0;    // inferences after which the group held more blocks or bytes than ever before
                                     // (grown in bytes only: after its first, docs/analyze.md)
  uint64_t first_inference = 0;      // the device's number of the first of them
  bool late_start = false;           // it began well after the first inference ("from inference K on")
  uint64_t bytes_per_growth = 0;     // mean bytes added by one of those inferences
  // It stopped growing, because its own requests failed (it filled its
  // pool: failed_requests > 0) or on its own (nothing refused, no growth
  // for ten of its longest gaps): the device's number of its last growth, the
  // failed requests and the completed inferences since. Its rate is over
  // the inferences it grew in, up to that one.
  std::optional<uint64_t> stopped_after_inference;
  uint64_t failed_requests = 0;
  uint64_t inferences_since_stop = 0;
  bool stopped_by_failures() const { return stopped_after_inference && failed_requests > 0; }
  bool stopped_on_its_own() const { return stopped_after_inference && failed_requests == 0; }
};

struct SiteLeak {
  std::string site;
  std::string pool;
  uint64_t bytes = 0;
  uint64_t count = 0;
  // Over the inferences since the leak began (not over the whole run);
  // unset without inference markers.
  std::optional<double> bytes_per_inference;
  std::string type_hint;                      // "float32[161]" when one block size divides cleanly
  uint64_t block_size = 0;                    // 0 = blocks of different sizes
  uint64_t first_time = 0, last_time = 0;
  uint64_t allocs = 0, frees = 0;             // of this group (site, or size when the site is unknown), whole trace
  std::optional<LeakGrowth> growth;           // unset without inference markers
  // Made by threads that mark no inferences while another thread does: the
  // inference clock says nothing about them, so the group is judged over
  // its threads' own activity and has no rate per inference.
  bool off_inference_thread = false;
  std::vector<ThreadShare> threads;  // which threads made its live blocks, most bytes first
};

// Why live blocks at the end are not a leak.
// kept_by_c_runtime: allocated inside libc or the dynamic loader for its own
// bookkeeping (thread stacks and TLS, stdio buffers, dlopen), whatever its
// live count does: the program cannot free it.
enum class LiveReason : uint8_t { before_first_inference, not_growing, kept_by_c_runtime };
std::string_view to_string(LiveReason reason);

struct PersistentBlock {
  std::string site;
  std::string pool;
  uint64_t bytes = 0;
  uint64_t count = 0;
  LiveReason reason = LiveReason::not_growing;
};

struct SiteBalance {
  std::string site;
  uint64_t allocs = 0, frees = 0, alloc_bytes = 0, live_bytes = 0, live_count = 0;
};

// Lists of call stacks in a result are bounded: a recording of node running
// ONNX Runtime has 90,000 distinct stacks of ~2.5 KB names, and naming them
// all took 1 GB and made a 459 MB --json. What a list leaves out is summed
// (a row or a field says so), so every total stays exact.
namespace listed {
inline constexpr size_t kSites = 1000;             // `sites`, besides every leaking site
inline constexpr size_t kPeakHolders = 1000;       // `peak.live_at_peak`, then one summed row
inline constexpr size_t kLayoutStacks = 1000;      // `layout.live_at_*` longer than this are thinned:
inline constexpr unsigned kFlameFraction = 10000;  // stacks under 1/10,000 of the bytes, one row per pool
}  // namespace listed

// The sites `sites` leaves out: how many, and their sums.
struct SitesOmitted {
  uint64_t count = 0, allocs = 0, frees = 0, alloc_bytes = 0, live_bytes = 0, live_count = 0;
};

struct Forecast {
  std::string pool;
  uint64_t inferences = 0;     // more inferences until the pool is full at the measured rate
  std::optional<double> seconds;
  uint64_t remaining_bytes = 0;
  // The pool's own growth: its usage slope, or where temporaries make its
  // usage irregular, the sum of its leaking groups' rates; for one end of a
  // shared arena, both ends' growth (they fill the one space together).
  double bytes_per_inference = 0;
  // The pool already overflowed or refused a request: no forecast, it is
  // exhausted now (inferences = 0).
  bool already_exhausted = false;
};

struct StairSteps {
  uint64_t steps = 0;          // inferences after which usage rose
  double step_bytes = 0;       // mean rise per step
  double period_inferences = 0;  // mean distance between steps
};

// The pool's lowest usage in each window of inferences, rising beyond
// chance (the test `watch` raises its leak alert on) in the trace's last fit.
struct FloorTrend {
  double bytes_per_inference = 0;  // slope of the window floors
  double p_value = 1;              // chance of a slope this steep from a flat floor
  uint64_t inferences = 0;         // inferences the fit spans
  uint64_t at_inference = 0;       // the device's number of the inference the fit ended at
};

// A pool's floor trend as the latest fit left it (analysis/leak_trend.h).
struct TrendEstimate {
  double bytes_per_inference = 0;  // slope of the window floors
  double p_value = 1;              // chance of a slope this steep from a flat floor
  uint64_t inferences = 0;         // inferences the estimate spans
  // The floor rose, at the last window, above every earlier floor of the
  // run, and p_value is below kConfirmP.
  bool confirmed = false;
};

// The least-squares line of a pool's usage at inference ends, at its first
// and last samples (the device's numbers): what a chart draws as the fit.
struct FitLine {
  uint64_t from_inference = 0;
  double from_bytes = 0;
  uint64_t to_inference = 0;
  double to_bytes = 0;
};

// A pool that was flat (or wandered) and then rose at nearly every
// inference end through the last: its rate since the rise began, as a
// leak's is counted from its first growth.
struct LateRise {
  uint64_t from_inference = 0;  // the device's number of the inference of the first rise
  double bytes_per_inference = 0;  // least squares over the rise, from the inference before it
};

struct PoolWatermark {
  std::string pool;
  uint64_t samples = 0;        // inference_end events seen
  double slope = 0;            // bytes per inference, least squares
  std::optional<FitLine> fit_line;  // unset when the slope is 0
  Shape shape = Shape::flat;
  StairSteps stairs;
  std::optional<FloorTrend> floor_trend;  // unset unless the last fit confirmed one
  std::vector<std::pair<uint64_t, uint64_t>> series;  // (inference, usage), downsampled
  // Its rises stopped: no rise at an inference end for ten of its longest
  // gaps between rises, and for 20 inferences. The device's number of the
  // last; such a pool grew, it does not grow now (no forecast).
  std::optional<uint64_t> grew_until_inference;
  // Set when the rise that reaches the end began late in the boot: `shape`
  // is then that rise's (linear) and the pool grows at its rate, not the
  // slope over the boot (flat for 20 inferences, then 32 B each for 40,
  // is a slope of 24).
  std::optional<LateRise> late_rise;
  // Whether the pool's usage grows now: linear or in steps, up, and not
  // stopped; or grew so and stopped.
  bool growing() const { return rose() && !grew_until_inference; }
  bool stopped_growing() const { return rose() && grew_until_inference; }
  bool rose() const { return slope > 0 && (shape == Shape::linear || shape == Shape::stair); }
  // Its growth per inference now: since a late rise began, else the slope.
  double growth_rate() const { return late_rise ? late_rise->bytes_per_inference : slope; }
  // A device in summary mode names no groups: the pool's own growth is its
  // leak finding (growing, grown and stopped, or an irregular floor that
  // still rises beyond chance at the end).
  bool summary_leak() const { return growing() || stopped_growing() || (shape == Shape::irregular && floor_trend); }
};

struct AllocFailure {
  uint64_t time = 0, size = 0;
  // The pool's free space then; unset in a pool of unknown extent, where
  // free space beyond what its blocks touched is not seen.
  std::optional<uint64_t> total_free, largest_free;
  std::optional<uint64_t> inference;  // the device's number; unset outside inferences
  uint64_t boot = 1;                  // the boot it fell in (inference numbers start anew in each)
  std::string pool, site;
  bool fragmentation = false;  // enough memory was free, just not in one piece
  // Blocks live in the pool then: a heap allocator's headers, one per block,
  // are among the free bytes the trace counts (it sees requests, not chunks).
  uint64_t live_blocks = 0;
};

struct PoolFragmentation {
  std::string pool;
  // The pool's extent is known (arena size, heap base and size): rates are
  // judged. Otherwise they are measured over the span its blocks touched
  // and are not judged, since free memory beyond that span is unknown.
  bool known_extent = false;
  double max_rate = 0, final_rate = 0;
  uint64_t total_free = 0, largest_free = 0;  // at the end
  std::vector<std::pair<uint64_t, double>> curve;  // (time, rate), downsampled
  uint64_t samples = 0;                            // states measured, of which `curve` keeps some
};

struct FragmentationResult {
  // Over pools of known extent; unset when there is none.
  std::optional<double> max_rate, final_rate;
  // Worst of: the band of the highest rate, a failure that enough free
  // memory could have served, and the failure rate. Unset when not checked.
  std::optional<Band> band;
  uint64_t alloc_failures = 0;
  std::optional<double> failures_per_1000_inferences;
  std::optional<double> min_largest_to_request;  // at failures
  std::vector<AllocFailure> failures;  // first 100
  std::vector<PoolFragmentation> pools;
  // Summarised pools whose fragmentation is not known (no largest free
  // block): `band` is of the others only, and bounds nothing below it.
  bool unmeasured_pools = false;
};

struct Overflow {
  uint64_t time = 0, offset = 0, size = 0, arena_size = 0;
  uint64_t over_by = 0, available = 0;
  std::string site, pool;
};
// The site of an overflow summary records showed: the pool's use ran past
// its end (`size` is that use, from offset 0); no request is named.
inline constexpr std::string_view kSummaryOverflowSite = "(summary records: the pool's use)";
// The site of an overflow found by a heap's live bytes past its size (its
// base unknown, its blocks cannot be placed).
inline constexpr std::string_view kUsageOverflowSite = "(the pool's live bytes)";

struct GuardFailure {
  uint64_t time = 0;
  std::optional<uint64_t> inference;
  uint64_t boot = 1;  // the boot it fell in (inference numbers start anew in each)
  std::string pool, site;
};

struct LifoSite {
  std::string site;
  uint64_t violations = 0;
  uint64_t bytes = 0;  // bytes freed out of order
};

struct LifoResult {
  uint64_t violations = 0;
  uint64_t max_stranded_bytes = 0;
  uint64_t final_stranded_bytes = 0;
  std::vector<LifoSite> sites;
};

struct PeakHolder {
  std::string site;
  uint64_t bytes = 0, count = 0;
};
// The row of `peak.live_at_peak` for an arena's bytes below its top that
// no live block covers (freed out of order, alignment padding, a lost
// allocation): used until the arena resets.
inline constexpr std::string_view kBelowArenaTop = "(below an arena's top, in no block: freed out of order, padding or lost)";

struct PeakResult {
  uint64_t bytes = 0, time = 0;
  // Summary records give each pool's own peak, not when it was: the sum of
  // all pools at one instant is then not known. `bytes` is what is proven
  // (all pools' usage at one summary, or one pool's own peak), `at_most`
  // the pools' own peaks added; per-inference figures are lower bounds too.
  bool exact = true;
  std::optional<uint64_t> at_most;  // set when not exact
  std::optional<uint64_t> inference;  // the device's number; unset before the first inference or without markers
  uint64_t boot = 1;  // the device's boot it fell in: 1 + the restarts before it (a device numbers each boot's inferences anew)
  std::vector<PeakHolder> live_at_peak;
  // Per inference: 0 without inference markers (presenters say "unknown").
  uint64_t max_inference_peak = 0, max_inference_index = 0;  // index: the device's number
  uint64_t min_inference_peak = 0;
  double mean_inference_peak = 0;
};

struct SizeBucket {
  uint64_t min = 0, max = 0, count = 0, bytes = 0;
};

struct SizesResult {
  std::vector<SizeBucket> histogram;
  uint64_t aligned_requests = 0;
  uint64_t padding_bytes = 0;        // at the requested alignment
  uint64_t padding_bytes_at_8 = 0;   // had no request been aligned to more than 8 bytes
  uint64_t max_align = 0;
};

// One block as the layout chart draws it: where it sat in its pool and
// when it lived.
struct LayoutBlock {
  uint64_t offset = 0;  // from PoolLayout::origin
  uint64_t size = 0;
  uint64_t alloc_time = 0;
  std::optional<uint64_t> free_time;  // unset: still live at the end
  uint32_t site = 0;                  // index into LayoutResult::sites
};

// The blocks a chart could not draw one by one, as mean bytes occupied per
// cell of a time x offset grid: bytes[t * offsets + o] covers times
// [time0 + t * time_step, +time_step) and offsets [offset0 + o * offset_step, +offset_step).
struct LayoutRaster {
  uint64_t time0 = 0, time_step = 1;
  int64_t offset0 = 0;  // may lie below the pool origin when the grid grew downwards
  uint64_t offset_step = 1;
  uint32_t times = 0, offsets = 0;
  std::vector<uint64_t> bytes;
  uint64_t blocks = 0;  // blocks rasterised here instead of drawn
  uint64_t live_blocks = 0;  // of them, still live at the end
};

// A stretch of addresses where a pool's blocks lie, far from its others
// (a Linux process's brk heap, a thread's arena, mmap chunks).
struct LayoutRegion {
  uint64_t offset = 0, end = 0;  // from PoolLayout::origin: lowest block start, highest block end
  uint64_t blocks = 0;           // blocks made here
  std::optional<LayoutRaster> raster;  // its aggregated blocks, on a grid of its own
};

struct PoolLayout {
  std::string pool;
  PoolKind kind = PoolKind::heap;
  // The address offset 0 stands for: arena offsets are already offsets (0);
  // heap addresses are shown from the declared base or the lowest address seen.
  uint64_t origin = 0;
  uint64_t size = 0;  // the pool's size, 0 = unknown
  std::vector<LayoutBlock> blocks;  // by alloc time
  std::optional<LayoutRaster> raster;  // set when some blocks were aggregated
  std::vector<LayoutRegion> regions;   // by offset; empty when the blocks lie in one region
};

// Live bytes of one site in one pool at one moment (flame graphs: pool -> site frames).
struct PoolSiteBytes {
  std::string pool, site;
  uint64_t bytes = 0, count = 0;
};

// The heap/arena layout over time, bounded for any trace length: every block
// still live at the end, then closed blocks sampled with weight size x
// lifetime, up to `block_cap` in all; the others as a raster per pool.
struct LayoutResult {
  uint64_t start_time = 0, end_time = 0;
  uint64_t block_cap = 0;
  uint64_t blocks_seen = 0;  // every block the trace made (closed or live)
  std::vector<std::string> sites;
  std::vector<PoolLayout> pools;
  std::vector<PoolSiteBytes> live_at_end;   // by pool, then bytes
  std::vector<PoolSiteBytes> live_at_peak;  // at the moment of PeakResult::time
};

struct PoolSummary {
  std::string name;
  PoolKind kind = PoolKind::heap;
  uint64_t size = 0;  // 0 = unknown
  uint64_t peak_bytes = 0, final_bytes = 0;
  std::optional<uint64_t> live_count;  // unset for a pool told only by summary records (no blocks)
  std::optional<double> peak_margin_pct;
  // The size peak_margin_pct is of: `size`, or for a pool declared again
  // with another size the one its least margin was found under.
  uint64_t margin_size = 0;
  bool sized_again = false;  // declared with more than one size: peak_bytes may be of another size
  // Requests the device's summary records say were refused (they give no
  // sizes: these are not in FragmentationResult::failures).
  uint64_t refused_in_summaries = 0;
};

// One pool over trace time, sampled after every alloc, free, realloc, reset
// and refused request in it. Both series are reduced as `curve` is (min and
// max of each bucket kept), so a one-event spike survives any trace length.
struct PoolTimeline {
  std::string pool;
  uint64_t samples = 0;  // events sampled, before reduction
  std::vector<std::pair<uint64_t, uint64_t>> used_bytes;   // (time, usage: heap live bytes, arena top)
  std::vector<std::pair<uint64_t, uint64_t>> live_blocks;  // (time, live block count)
};

// One inference between its markers. A trace that marks only ends has no
// begin; an inference still running when the trace stops has no end.
struct InferenceSpan {
  uint64_t number = 0;  // the device's number; unnumbered markers count from 1
  std::optional<uint64_t> begin_time, end_time;
  // Begun, and neither ended nor given up when the trace ended (an end_time
  // unset otherwise: its thread began another, or the device restarted).
  bool running = false;
};

// Inference boundaries over trace time, bounded: past the cap every other
// kept span is dropped and the stride doubles, so the kept ones stay evenly
// spread over the run.
struct InferenceMarks {
  std::vector<InferenceSpan> spans;  // in trace order
  uint64_t total = 0;                // inferences begun (or ended without a begin)
  uint64_t dropped = 0;              // total - spans.size()
};

// A device that booted again inside one capture (emt: a second HEADER):
// what it was doing and holding when it went down, the first clue to why.
struct Restart {
  uint64_t time = 0;
  // The inference running when it went down, which never ended; unset when
  // it went down between inferences (or the firmware marks only begins,
  // whose last inference may have finished: `after_inference` says which).
  std::optional<uint64_t> during_inference;
  std::optional<uint64_t> after_inference;  // the last inference that ended (or began, marked by begins only)
  uint64_t bytes_in_use = 0;  // every pool's usage summed, just before the reset
  // The boot that ended here, judged for leaks as it went down: each boot
  // leaks again from empty, and the one before a restart is the one that
  // may have run out (judging only the latest once read "[OK] no leak" for
  // a device that leaked 644 B per inference until it rebooted).
  uint64_t boot = 0;        // 1 for the first
  uint64_t inferences = 0;  // inferences that ended in it
  Check leak_check;         // found, clean, or not_checked with the reason
  std::vector<SiteLeak> leaks;  // most bytes first, at most kLeaksKept
  uint64_t leaking_groups = 0;  // all of them, listed or not
  uint64_t leaked_bytes = 0;    // their live bytes as it went down
  // What they added per inference while they grew, each at its own rate
  // (a leak that stopped on its own too: the boot leaked at that rate).
  double leak_bytes_per_inference = 0;
  // False when one of them has no rate (on a thread that marks no
  // inferences): the boot's rate is unknown, not the others' sum.
  bool leak_rate_known = true;
  static constexpr size_t kLeaksKept = 16;
};

struct Restarts {
  static constexpr size_t kKept = 256;  // the first ones; a board rebooting every 6 h keeps two months
  std::vector<Restart> kept;
  uint64_t total = 0;
  // Over every restart, kept or not: boots before the latest whose leak
  // check found a leak, and those it could not judge (the first of them,
  // with why, in first_unjudged; in a trace that marks inferences, a boot
  // that ended none hides no leak per inference and is not counted).
  uint64_t leaking_boots = 0, unjudged_boots = 0;
  uint64_t leaked_bytes = 0;  // what their leaks held as each went down, added
  // The boots that leaked the most bytes, and at the highest rate: what a
  // budget is held to, kept whatever their place (past the first kKept too).
  std::optional<Restart> most_leaked, fastest_leak;
  // The first boot before the latest whose leaks include one with no rate.
  std::optional<uint64_t> first_unrated_leak_boot;
  std::optional<Restart> first_unjudged;  // without its leaks
  // The latest boot's own leak check, before what the boots before it found
  // joined checks.leaks: a gate cannot pass a latest boot it did not judge.
  Check latest_boot;
  // The first kept boot that leaked; null when every leaking boot is past the kept ones.
  const Restart* first_leaking_kept() const {
    for (const Restart& boot : kept)
      if (boot.leak_check.status == CheckStatus::found) return &boot;
    return nullptr;
  }
};

struct EventCounts {
  uint64_t allocs = 0, frees = 0, reallocs = 0, failed = 0, marks = 0, counters = 0, resets = 0;
  uint64_t unknown_frees = 0;  // free of an address that is not live
  uint64_t replaced_blocks = 0;  // alloc over a live block: its free was lost
  uint64_t summaries = 0;  // pool summary records (device summary mode: numbers, no blocks)
  uint64_t placements = 0;  // events in a placement pool (PoolInfo::placement): read, not analysed
};

struct AnalysisResult {
  EventCounts counts;
  uint64_t inferences = 0;
  // Of them, those completed before the device last started again: leaks
  // are judged over the rest, the latest boot's (0 without a restart).
  uint64_t inferences_before_latest_boot = 0;
  // Begins from one thread while another thread's inference was open: the
  // inferences overlap, and the per-inference numbers take them as one
  // sequence (0 without end markers, where a begin ends the one before).
  uint64_t overlapping_inferences = 0;
  uint64_t peak_bytes = 0;
  std::vector<SiteLeak> leaks;
  std::vector<PersistentBlock> persistent;
  std::vector<SiteBalance> sites;  // most live bytes first (then bytes allocated), bounded
  std::optional<SitesOmitted> sites_omitted;
  // What the leaking groups add per inference (the [LEAK] findings' rates,
  // summed); a device in summary mode names no blocks, so there it is the
  // growth of pools whose usage rises linearly or in steps. 0 without
  // inference markers (presenters say "unknown").
  double leak_rate_bytes_per_inference = 0;
  // False where the latest boot ended too few inferences to measure growth
  // over (the leak check says so), or a leak found has no rate per
  // inference: the rate is not the sum above but unknown.
  bool leak_rate_measured = true;
  // The rate as presenters give it: unset without inference markers or a
  // measurement, since a partial sum or 0 would read as the trace's rate
  // (a JSON consumer, a Prometheus gauge).
  std::optional<double> known_leak_rate() const {
    if (!inferences || !leak_rate_measured) return std::nullopt;
    return leak_rate_bytes_per_inference;
  }
  std::optional<Forecast> exhaustion_forecast;
  std::vector<PoolWatermark> watermarks;
  FragmentationResult fragmentation;
  std::vector<Overflow> overflows;
  uint64_t overflow_count = 0;
  std::vector<GuardFailure> guard_failures;
  uint64_t guard_failure_count = 0;
  uint64_t guard_checks = 0;
  LifoResult lifo;
  PeakResult peak;
  SizesResult sizes;
  LayoutResult layout;
  std::vector<PoolSummary> pools;
  std::optional<double> cycles_per_inference;
  // Cycles per second of the trace's timestamps (--clock-hz, or the trace's
  // own); unset when times are cycles of an unknown clock or sequence numbers.
  std::optional<double> clock_hz;
  Checks checks;
  // What was lost in the middle of the trace, where the live set after it
  // is not the device's (overflow packets, dropped or damaged records,
  // frees of blocks never seen); empty when nothing, or only its end, was
  // lost. Set by judge_after_data_loss: a gate does not pass on it.
  std::string lost_mid_trace;
  std::vector<PoolTimeline> timelines;  // in PoolTable order, pools that saw an event
  InferenceMarks inference_marks;
  Restarts restarts;
  ThreadsResult threads;
  TemporaryResult temporaries;
};

// The pools whose growth is a [LEAK] finding of a summary-mode trace (no
// leaking group; PoolWatermark::summary_leak).
inline std::vector<const PoolWatermark*> summary_mode_leaks(const AnalysisResult& r) {
  std::vector<const PoolWatermark*> out;
  if (r.leaks.empty() && r.counts.summaries > 0)
    for (const PoolWatermark& w : r.watermarks)
      if (w.summary_leak()) out.push_back(&w);
  return out;
}

}  // namespace edgemem
