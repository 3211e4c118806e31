// Plain values produced by the analyses; presenters read only these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace edgemem {

struct SiteLeak {
  std::string site;
  std::string pool;
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::optional<double> bytes_per_inference;  // unset without inference markers
  std::string type_hint;                      // "float32[161]" when one block size divides cleanly
  uint64_t block_size = 0;                    // 0 = blocks of different sizes
  uint64_t first_time = 0, last_time = 0;
  uint64_t allocs = 0, frees = 0;             // the site's whole balance
};

struct PersistentBlock {
  std::string site;
  std::string pool;
  uint64_t bytes = 0;
  uint64_t count = 0;
};

struct SiteBalance {
  std::string site;
  uint64_t allocs = 0, frees = 0, alloc_bytes = 0, live_bytes = 0, live_count = 0;
};

struct Forecast {
  std::string pool;
  uint64_t inferences = 0;     // more inferences until the pool is full at the measured rate
  std::optional<double> seconds;
  uint64_t remaining_bytes = 0;
};

struct StairSteps {
  uint64_t steps = 0;          // inferences after which usage rose
  double step_bytes = 0;       // mean rise per step
  double period_inferences = 0;  // mean distance between steps
};

struct PoolWatermark {
  std::string pool;
  uint64_t samples = 0;        // inference_end events seen
  double slope = 0;            // bytes per inference, least squares
  std::string shape;           // flat | linear | stair | irregular
  StairSteps stairs;
  std::vector<std::pair<uint64_t, uint64_t>> series;  // (inference, usage), downsampled
};

struct AllocFailure {
  uint64_t time = 0, size = 0, total_free = 0, largest_free = 0, inference = 0;
  std::string pool, site;
  bool fragmentation = false;  // enough memory was free, just not in one piece
};

struct PoolFragmentation {
  std::string pool;
  double max_rate = 0, final_rate = 0;
  uint64_t total_free = 0, largest_free = 0;  // at the end
  std::vector<std::pair<uint64_t, double>> curve;  // (time, rate), downsampled
};

struct FragmentationResult {
  double max_rate = 0, final_rate = 0;
  std::string band = "healthy";
  uint64_t alloc_failures = 0;
  std::optional<double> failures_per_1000_inferences;
  std::optional<double> min_largest_to_request;  // at failures
  std::vector<AllocFailure> failures;  // first 100
  std::vector<PoolFragmentation> pools;
};

struct Overflow {
  uint64_t time = 0, offset = 0, size = 0, arena_size = 0;
  uint64_t over_by = 0, available = 0;
  std::string site, pool;
};

struct GuardFailure {
  uint64_t time = 0, inference = 0;
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

struct PeakResult {
  uint64_t bytes = 0, time = 0, inference = 0;
  std::vector<PeakHolder> live_at_peak;
  uint64_t max_inference_peak = 0, max_inference_index = 0;
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
  uint64_t padding_bytes_at_8 = 0;   // had the same requests been 8-byte aligned
  uint64_t max_align = 0;
};

struct PoolSummary {
  std::string name, kind;
  uint64_t size = 0;  // 0 = unknown
  uint64_t peak_bytes = 0, final_bytes = 0, live_count = 0;
  std::optional<double> peak_margin_pct;
};

struct EventCounts {
  uint64_t allocs = 0, frees = 0, reallocs = 0, failed = 0, marks = 0, counters = 0, resets = 0;
  uint64_t unknown_frees = 0;  // free of an address that is not live
  uint64_t replaced_blocks = 0;  // alloc over a live block: its free was lost
};

struct AnalysisResult {
  EventCounts counts;
  uint64_t inferences = 0;
  uint64_t peak_bytes = 0;
  std::vector<SiteLeak> leaks;
  std::vector<PersistentBlock> persistent;
  std::vector<SiteBalance> sites;
  double leak_rate_bytes_per_inference = 0;
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
  std::vector<PoolSummary> pools;
  std::optional<double> cycles_per_inference;
};

}  // namespace edgemem
