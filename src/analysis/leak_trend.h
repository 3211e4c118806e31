// Is a pool's usage at inference ends climbing for good? Raw samples are the
// wrong thing to fit: a buffer that happens to be live at one end marker and
// gone at the next (audio kept for smoothing, a cache entry) swings them by
// kilobytes. The lowest usage in each window of inferences is the floor that
// every one of them sat on; a leak lifts that floor, temporaries do not. The
// slope over the last few window floors is tested against zero (Student's t,
// one-sided), so a confirmation carries a probability that it is noise.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "edgemem/analysis_result.h"

namespace edgemem {

class LeakTrend {
 public:
  static constexpr uint64_t kWindow = 8;     // inferences per floor
  static constexpr size_t kWindows = 10;     // floors in one fit: 80 inferences
  // One false confirmation in a million fits of a flat floor; a soak of a
  // million inferences runs 125,000 fits.
  static constexpr double kConfirmP = 1e-6;

  // The pool's usage at one inference end; true when it closed a window and a new fit was made.
  bool add(uint64_t used_bytes);
  // Over the last kWindows complete windows; unset until there are that many.
  std::optional<TrendEstimate> estimate() const { return estimate_; }

 private:
  void fit();
  uint64_t window_min_ = 0, in_window_ = 0;
  std::deque<uint64_t> floors_;
  // The highest floor of the run before the fit's span. Neighbouring floors
  // of a working set that wanders are not independent, so the t-test alone
  // can pass on a stretch where it happens to climb; a leak, unlike a
  // bounded walk, keeps setting floors the run has never seen.
  uint64_t highest_before_ = 0;
  std::optional<TrendEstimate> estimate_;
};

// P(T > t) for Student's t with `df` degrees of freedom (df >= 1), by the
// closed-form series for whole degrees of freedom.
double student_t_upper_tail(double t, unsigned df);

}  // namespace edgemem
