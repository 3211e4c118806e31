// Is a pool's usage at inference ends climbing for good? Raw samples are the
// wrong thing to fit: a buffer that happens to be live at one end marker and
// gone at the next (audio kept for smoothing, a cache entry) swings them by
// kilobytes. The lowest usage in each window of inferences is the floor that
// every one of them sat on; a leak lifts that floor, temporaries do not. The
// slope over the last few window floors is tested against zero (Student's t,
// one-sided), so a confirmation carries a probability that it is noise.
//
// That test assumes the floors scatter independently about a line. A
// working set that wanders (each inference fills or frees a few of many
// slots) makes them a slow random walk instead, whose climbs over 80
// inferences pass it. The floors' own history tells the two apart: the
// variance of differences four windows apart is that of neighbouring ones
// when floors scatter, up to four times it when they walk. A walking floor
// is judged by its drift instead, the rise over 9 to 1,023 windows against
// the spread a walk of that length would have.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace edgemem {

struct TrendEstimate {
  double bytes_per_inference = 0;  // slope of the window floors, or a walking floor's drift
  double p_value = 1;              // chance of a rise this steep from a flat floor (or a walk without drift)
  uint64_t inferences = 0;         // inferences the estimate spans
  bool walking = false;            // the floors walk: judged by their drift
  // p_value is below kConfirmP; for a fit, the floor also rose at the last
  // window to its highest within the span.
  bool confirmed = false;
};

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
  static constexpr size_t kHistory = 1024;  // floors kept for the drift: 8,192 inferences
  static constexpr size_t kSpreadOf = 64;   // latest floors whose differences tell a walk
  void fit();
  bool walks() const;
  void judge_drift(TrendEstimate& e) const;
  uint64_t window_min_ = 0, in_window_ = 0;
  std::deque<uint64_t> floors_;   // the fit's span
  std::deque<uint64_t> history_;  // the latest kHistory floors
  std::optional<TrendEstimate> estimate_;
};

// P(T > t) for Student's t with `df` degrees of freedom (df >= 1), by the
// closed-form series for whole degrees of freedom.
double student_t_upper_tail(double t, unsigned df);

}  // namespace edgemem
