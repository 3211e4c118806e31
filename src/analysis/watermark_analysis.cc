#include "watermark_analysis.h"

#include <algorithm>
#include <cmath>

namespace edgemem {

void WatermarkAnalysis::inference_begin(uint64_t time, uint64_t usage) {
  if (!began_) {
    first_begin_time_ = time;
    began_ = true;
  }
  last_begin_time_ = time;
  ++begins_;
  inference_peak_ = usage;
}

void WatermarkAnalysis::inference_end(uint64_t time, PoolTracker& tracker, uint64_t device) {
  if (!began_) {
    first_begin_time_ = time;
    began_ = true;
  }
  last_end_time_ = time;
  ++peaks_;
  peak_sum_ += static_cast<double>(inference_peak_);
  if (inference_peak_ > peak_max_) {
    peak_max_ = inference_peak_;
    peak_max_index_ = device;
  }
  peak_min_ = std::min(peak_min_, inference_peak_);
  inference_peak_ = tracker.total_usage();

  auto& pools = tracker.pools();
  while (pools_.size() < pools.size()) pools_.emplace_back().boot_began = boot_began_;
  for (size_t i = 0; i < pools.size(); ++i) {
    Fit& f = pools_[i];
    const uint64_t completed = tracker.completed() - f.boot_began;  // in this boot
    const double x = static_cast<double>(completed);
    uint64_t usage = pools[i].usage();
    if (f.n > 0) {
      Fit::Run& run = f.run;
      if (run.on) {
        ++run.steps;
        run.rises += usage > f.last;
        run.falls += usage < f.last;
        run.add(static_cast<double>(completed - run.x0), static_cast<double>(usage));
        run.on = run.steady();
      }
      if (!run.on && usage > f.last) {
        run = Fit::Run{true, f.x_last, device, f.n - 1, 1, 1, 0};
        run.add(0, static_cast<double>(f.last));
        run.add(static_cast<double>(completed - run.x0), static_cast<double>(usage));
      }
      if (usage > f.last) {
        ++f.rises;
        f.rise_bytes += usage - f.last;
        if (f.last_rise_at) {
          ++f.rise_gaps;
          f.rise_gap_sum += completed - f.last_rise_at;
          f.max_rise_gap = std::max(f.max_rise_gap, completed - f.last_rise_at);
        }
        f.last_rise_at = completed;
        f.last_rise_number = device;
        f.at_last_rise = usage;
      } else if (usage < f.last) {
        ++f.falls;
      }
    }
    const double y = static_cast<double>(usage);
    const uint64_t number = device;
    if (f.n == 0) {
      f.first = usage;
      f.x_first = completed;
      f.number_first = number;
    }
    f.x_last = completed;
    f.number_last = number;
    ++f.n;
    f.sx += x;
    f.sy += y;
    f.sxx += x * x;
    f.sxy += x * y;
    f.last = usage;
    f.last_peak = pools[i].inference_peak;
    f.series.add(number, usage);
    if (completed > warm_up_ && f.trend.add(usage)) f.trend_at = device;
  }
}

void WatermarkAnalysis::device_restarted(uint64_t completed) {
  boot_began_ = completed;
  for (Fit& f : pools_) {
    Fit fresh;
    fresh.series = std::move(f.series);
    fresh.boot_began = completed;
    f = std::move(fresh);
  }
}

void WatermarkAnalysis::finish(PoolTracker& tracker, const TraceContext& context, std::optional<double> clock_hz,
                               AnalysisResult& out) const {
  if (peaks_ > 0) {
    out.peak.max_inference_peak = peak_max_;
    out.peak.max_inference_index = peak_max_index_;
    out.peak.min_inference_peak = peak_min_;
    out.peak.mean_inference_peak = peak_sum_ / static_cast<double>(peaks_);
    // Cadence from start to start includes the idle time between inferences,
    // which is what a forecast in seconds needs.
    if (context.time_base == TimeBase::cycles && begins_ >= 2 && last_begin_time_ > first_begin_time_)
      out.cycles_per_inference =
          static_cast<double>(last_begin_time_ - first_begin_time_) / static_cast<double>(begins_ - 1);
    else if (context.time_base == TimeBase::cycles && last_end_time_ > first_begin_time_)
      out.cycles_per_inference = static_cast<double>(last_end_time_ - first_begin_time_);
  }
  // The leak rate is the leaking groups' own (LeakAnalysis finished first):
  // a pool's usage slope can be live blocks that get bigger and are freed,
  // and an irregular pool can leak. Summary records name no blocks, so
  // with summaries and no leaking group (when the text report says "pool
  // grows") the slope of a steadily growing pool is all there is.
  const bool summary_only = out.counts.summaries > 0 && out.leaks.empty();
  // A leak that stopped growing on its own adds nothing now. One without a
  // rate (made off the inference clock within one inference) leaves the sum
  // unknown: the others' alone read as the trace's (0 beside [LEAK]).
  for (const SiteLeak& l : out.leaks) {
    if (l.bytes_per_inference && !(l.growth && l.growth->stopped_on_its_own()))
      out.leak_rate_bytes_per_inference += *l.bytes_per_inference;
    if (!l.bytes_per_inference) out.leak_rate_measured = false;
  }
  // Each pool's growth per inference, for its forecast (and its partner's:
  // the two ends of a shared arena fill the one space together).
  std::vector<double> rates(pools_.size(), 0);
  for (size_t i = 0; i < pools_.size(); ++i) {
    if (context.pools.at(static_cast<PoolId>(i)).placement) continue;
    const Fit& f = pools_[i];
    PoolWatermark w;
    w.pool = context.pools.at(static_cast<PoolId>(i)).name;
    w.samples = f.n;
    const double n = static_cast<double>(f.n);
    const double denom = n * f.sxx - f.sx * f.sx;
    double intercept = 0;
    if (f.n >= 2 && denom != 0) {
      w.slope = (n * f.sxy - f.sx * f.sy) / denom;
      intercept = (f.sy - w.slope * f.sx) / n;
    }
    const uint64_t steps = f.n > 0 ? f.n - 1 : 0;
    const uint64_t quiet = f.x_last - f.last_rise_at;
    const bool stopped = f.rises >= 2 && quiet >= 20 && quiet >= 10 * f.max_rise_gap;
    // Growth that stopped and held is judged on the steps up to its last
    // rise: a summary-mode pool that rose 64 B at each of 74 inference ends
    // and then stayed flat for 25 read "irregular" over the run (no finding,
    // and a leak-rate gate passed it at 0 B per inference). One that gave
    // back more than half its rise after (a cache flushed, back at its
    // baseline) is judged over the run; a dip of a few bytes is not that.
    const bool held = f.last >= f.first && 2 * (f.last - f.first) >= f.at_last_rise - std::min(f.at_last_rise, f.first);
    const uint64_t rising = stopped && held ? f.last_rise_at - f.x_first : steps;
    // Growth that stopped in the first half is warm-up (caches, rings), not a trend.
    if (steps == 0 || f.rises == 0 || 2 * f.last_rise_at <= f.n) {
      w.shape = Shape::flat;
    } else if (f.rises * 10 >= rising * 8 && f.falls * 10 <= rising) {
      w.shape = Shape::linear;
    } else if (f.rises >= 2 && f.rises * 2 <= rising && f.falls * 10 <= f.rises) {  // steps only go up
      w.shape = Shape::stair;
    } else {
      w.shape = Shape::irregular;
    }
    w.stairs.steps = f.rises;
    if (f.rises) w.stairs.step_bytes = static_cast<double>(f.rise_bytes) / static_cast<double>(f.rises);
    if (f.rise_gaps) w.stairs.period_inferences = static_cast<double>(f.rise_gap_sum) / static_cast<double>(f.rise_gaps);
    w.series = f.series.points();
    if (stopped) w.grew_until_inference = f.last_rise_number;
    // A rise that began late and runs through the end is linear now, at its
    // own rate: over the boot, 20 flat inferences before 40 of 32 B read as
    // "irregular" (40 rises in 59 steps), and a long flat start as stairs.
    // Not late: one within two steps of the boot's start, or after steps
    // that rose as steadily (a linear pool whose run a fall cut short).
    const Fit::Run& run = f.run;
    const uint64_t before_rises = f.rises - run.rises, before_falls = f.falls - run.falls;
    const bool rose_before = before_rises * 10 >= run.before * 8 && before_falls * 10 <= run.before;
    // Only where summaries are all there is: in a full trace the groups of
    // blocks tell a leak, and a queue that backed up in its last 12
    // inferences read "[GROWTH] runs out in 99 more inferences".
    if (out.counts.summaries > 0 && run.on && run.steps >= kLateRiseSteps && run.before >= 2 && !rose_before) {
      const double rn = run.n, rdenom = rn * run.sxx - run.sx * run.sx;
      const double rate = rdenom != 0 ? (rn * run.sxy - run.sx * run.sy) / rdenom : 0;
      if (rate > 0 && w.slope > 0) {
        w.shape = Shape::linear;
        w.late_rise = LateRise{run.first_rise_number, rate};
      }
    }
    if (w.slope < 1e-9 && w.shape == Shape::flat) w.slope = 0;
    if (w.slope != 0)
      w.fit_line = FitLine{f.number_first, intercept + w.slope * static_cast<double>(f.x_first), f.number_last,
                           intercept + w.slope * static_cast<double>(f.x_last)};

    // Judged where the trace ends: a floor that rose for a while and then
    // stopped (a working set that wanders) is no trend now.
    if (auto e = f.trend.estimate(); e && e->confirmed)
      w.floor_trend = FloorTrend{e->bytes_per_inference, e->p_value, e->inferences, f.trend_at};

    // Forecast only for pools whose growth is systematic and whose size is
    // known: usage that rises steadily, or, where temporaries make usage
    // irregular, the pool's leaking groups at their own rates. A device in
    // summary mode names no groups: there, irregular usage whose floor
    // still rises beyond chance at the end (watch's leak alert) grows at
    // its slope over the run. The floor's slope over the last 80
    // inferences is mostly how the working set wandered in them: 333 B
    // per inference on the benchmark trace, whose leak is 0.644.
    //
    // The slope is over the whole boot: a leak that began late grows
    // faster now than the slope says (24 B per inference from inference
    // 1,301 of 1,500 was a slope of 1.2, a forecast 20 times too long).
    // The rate is now's: the leaking groups' own (each over the inferences
    // since it began), or without groups (summary mode) the floor's recent
    // trend where it is confirmed.
    bool growing = w.growing();
    double growth = growing ? w.growth_rate() : 0;
    if (summary_only && w.shape == Shape::irregular && w.floor_trend) {
      growing = true;
      growth = w.slope > 0 ? w.slope : w.floor_trend->bytes_per_inference;
    } else if (summary_only && growing && w.floor_trend) {
      growth = std::max(growth, w.floor_trend->bytes_per_inference);
    }
    if (growing && summary_only) out.leak_rate_bytes_per_inference += growth;
    double leaking = 0;
    for (const SiteLeak& l : out.leaks)
      if (l.pool == w.pool && l.bytes_per_inference && !(l.growth && l.growth->stopped_after_inference))
        leaking += *l.bytes_per_inference;
    double& rate = rates[i];
    rate = growing ? std::max(growth, leaking) : w.shape == Shape::irregular ? leaking : 0;
    out.watermarks.push_back(std::move(w));
  }
  for (size_t i = 0; i < pools_.size(); ++i) {
    const PoolInfo& info = context.pools.at(static_cast<PoolId>(i));
    if (info.placement) continue;
    double rate = rates[i];
    if (rate > 0 && info.size > 0) {
      // Space must hold the inference's own peak, not just what it leaves
      // behind, and what the other end of a shared arena holds at its peak;
      // and what was made after the last inference ended (or in one still
      // running) is in use too: it left 96 inferences of room where 46 were.
      auto in_use = [&](size_t pool) {
        const Fit& p = pools_[pool];
        uint64_t now = 0;
        if (pool < tracker.pools().size()) now = std::max(tracker.pools()[pool].usage(), tracker.pools()[pool].inference_peak);
        return std::max({p.last, p.last_peak, now});
      };
      uint64_t used = in_use(i);
      if (auto partner = context.pools.partner(static_cast<PoolId>(i)); partner && *partner < pools_.size()) {
        used += in_use(*partner);
        rate += rates[*partner];
      }
      uint64_t remaining = info.size > used ? info.size - used : 0;
      Forecast fc;
      fc.pool = info.name;
      fc.remaining_bytes = remaining;
      fc.bytes_per_inference = rate;
      fc.inferences = static_cast<uint64_t>(std::floor(static_cast<double>(remaining) / rate));
      if (clock_hz && out.cycles_per_inference)
        fc.seconds = static_cast<double>(fc.inferences) * *out.cycles_per_inference / *clock_hz;
      if (!out.exhaustion_forecast || fc.inferences < out.exhaustion_forecast->inferences)
        out.exhaustion_forecast = fc;
    }
  }
}

}  // namespace edgemem
