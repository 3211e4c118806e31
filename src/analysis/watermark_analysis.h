// Pool usage sampled at every inference end: the least-squares slope in
// bytes per inference, whether it climbs every time (linear) or in rare
// steps (stair), and when the pool runs out at that rate.
#pragma once

#include <vector>

#include "bounded_series.h"
#include "edgemem/analysis_result.h"
#include "leak_trend.h"
#include "pool_tracker.h"

namespace edgemem {

class WatermarkAnalysis {
 public:
  // `warm_up`: inference ends the leak trend leaves out, from the first.
  explicit WatermarkAnalysis(uint64_t warm_up = 0) : warm_up_(warm_up) {}
  void inference_begin(uint64_t time, uint64_t usage);
  // A restart's reset lost a pool's blocks: the next inference's peak
  // counts from what the pools hold after it, not the boot before's.
  void lost_at_restart(uint64_t usage) { inference_peak_ = usage; }
  void usage_changed(uint64_t usage) {
    if (usage > inference_peak_) inference_peak_ = usage;
  }
  // `device`: the device's number of the inference that ended (with threads
  // running several at once, not always the latest begun).
  void inference_end(uint64_t time, PoolTracker& tracker, uint64_t device);
  // The device booted again (its pools were reset after `completed`
  // inference ends): shapes, slopes, trends and forecasts are judged within
  // the latest boot, as leaks are — fitted across boots, a leak's sawtooth
  // read as a quarter of its rate. The usage series the charts draw goes on.
  void device_restarted(uint64_t completed);
  // `tracker`: the pools as the trace leaves them, after the last inference end.
  void finish(PoolTracker& tracker, const TraceContext& context, std::optional<double> clock_hz,
              AnalysisResult& out) const;
  std::optional<TrendEstimate> trend(PoolId pool) const {
    return pool < pools_.size() ? pools_[pool].trend.estimate() : std::nullopt;
  }

 private:
  struct Fit {
    uint64_t n = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    uint64_t last = 0;
    uint64_t last_peak = 0;  // highest usage during the latest inference
    uint64_t rises = 0, falls = 0, rise_bytes = 0;
    uint64_t last_rise_at = 0, rise_gaps = 0, rise_gap_sum = 0, max_rise_gap = 0;
    uint64_t last_rise_number = 0;  // the device's number of the inference of the last rise
    uint64_t first = 0, at_last_rise = 0;  // usage at the first sample, and after the last rise
    BoundedSeries<uint64_t, uint64_t> series{256};
    LeakTrend trend;
    uint64_t trend_at = 0;  // the device's number of the inference the trend's latest fit ended at
    uint64_t boot_began = 0;  // inference ends completed before the latest boot: the fit counts from there
    // The fit's first and last samples: x as fitted, and the device's number.
    uint64_t x_first = 0, x_last = 0, number_first = 0, number_last = 0;
    // The latest run of inference ends that rose as a linear pool does (8
    // in 10 up, at most 1 in 10 down), from the sample before its first
    // rise; it ends at the first step after which it no longer does, and a
    // later rise begins another. Fitted with x from its own start.
    struct Run {
      bool on = false;
      uint64_t x0 = 0, first_rise_number = 0;
      uint64_t before = 0;  // the pool's steps before it
      uint64_t steps = 0, rises = 0, falls = 0;
      double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
      void add(double x, double y) {
        n += 1;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
      }
      bool steady() const { return rises * 10 >= steps * 8 && falls * 10 <= steps; }
    } run;
  };
  // Steps a run needs before it is a rise of its own: shorter ones are what a
  // working set's few slots can do.
  static constexpr uint64_t kLateRiseSteps = 10;
  std::vector<Fit> pools_;
  uint64_t warm_up_;
  uint64_t boot_began_ = 0;
  uint64_t inference_peak_ = 0;
  uint64_t peaks_ = 0, peak_max_ = 0, peak_max_index_ = 0, peak_min_ = UINT64_MAX;
  double peak_sum_ = 0;
  uint64_t first_begin_time_ = 0, last_begin_time_ = 0, last_end_time_ = 0;
  uint64_t begins_ = 0;
  bool began_ = false;
};

}  // namespace edgemem
