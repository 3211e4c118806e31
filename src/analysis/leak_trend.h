// Is a pool's usage at inference ends climbing for good? Raw samples are the
// wrong thing to fit: a buffer that happens to be live at one end marker and
// gone at the next (audio kept for smoothing, a cache entry) swings them by
// kilobytes. The lowest usage in each window of inferences is the floor that
// every one of them sat on; a leak lifts that floor, temporaries do not. The
// slope over the last few window floors is tested against zero (Student's t,
// one-sided), so a confirmation carries a probability that it is noise.
//
// Floors of a working set that wanders (each inference fills or frees a few
// of many slots) are a bounded random walk, not independent samples: a climb
// that happens to run for 80 inferences passes the t-test. So a confirmed
// slope must also be one a random walk of this pool's own steps would rarely
// make, and a slow leak that such a walk hides over 80 inferences is looked
// for again over spans twice as long, up to 5,120 inferences.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "edgemem/analysis_result.h"

namespace edgemem {

class LeakTrend {
 public:
  static constexpr uint64_t kWindow = 8;     // inferences per floor
  static constexpr size_t kWindows = 10;     // floors in the shortest fit: 80 inferences
  static constexpr size_t kLongestFit = 640;  // floors in the longest: 5,120 inferences
  // One false confirmation in a million fits of a flat floor; a soak of a
  // million inferences runs 125,000 fits.
  static constexpr double kConfirmP = 1e-6;
  // The rise over a fit, in spreads of what the floor's own past steps would
  // make as a random walk over that span: one-sided 1e-6 if they were normal.
  static constexpr double kWalkSpreads = 4.75;

  // The pool's usage at one inference end; true when it closed a window and a new fit was made.
  bool add(uint64_t used_bytes);
  // Over the last kWindows complete windows, or the shortest longer span that
  // confirmed a leak; unset until there are kWindows windows.
  std::optional<TrendEstimate> estimate() const { return estimate_; }

 private:
  TrendEstimate fit(size_t floors);
  // How far the slope of `floors` floors of a walk with this pool's steps spreads.
  double walk_spread(size_t floors);
  double step_variance();
  struct Line {
    double slope;     // bytes per window
    double slope_se;  // its standard error
  };
  Line line_of(size_t first, size_t floors) const;
  // The fit's own steps: their mean is above zero (Student's t, one-sided),
  // for a walk whose steps changed since (a leak that set in takes over the floor).
  bool drifts(size_t first, size_t floors) const;

  static constexpr size_t kStepsMeasured = 256;  // the latest steps, for the walk's spread
  static constexpr size_t kLags = 8;             // of their long-run variance
  static constexpr size_t kLongRun = 64;         // steps it needs besides the fit's; fewer: their plain variance
  static constexpr size_t kKept = std::max(kStepsMeasured + 1, kLongestFit);  // floors
  static_assert(kStepsMeasured >= kLongRun + kWindows - 1);
  uint64_t window_min_ = 0, in_window_ = 0;
  std::deque<uint64_t> floors_;
  // The newest floor is higher than every earlier floor of the run: a leak
  // keeps setting floors the run has never seen, a bounded walk does not.
  bool at_top_ = false;
  uint64_t highest_ = 0;  // of the floors before the newest
  std::optional<double> step_variance_;  // measured once a window, when a fit needs it
  static constexpr size_t kClipRefreshed = 8;
  std::optional<std::pair<double, double>> clip_;  // the steps' median, and how far from it a step is wild
  size_t clip_age_ = 0;  // measures of the variance since the range was
  std::vector<double> steps_, scratch_;
  std::optional<TrendEstimate> estimate_;
};

// P(T > t) for Student's t with `df` degrees of freedom (df >= 1), by the
// closed-form series for whole degrees of freedom.
double student_t_upper_tail(double t, unsigned df);

}  // namespace edgemem
