#include "leak_trend.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace edgemem {

double student_t_upper_tail(double t, unsigned df) {
  if (std::isinf(t)) return t > 0 ? 0 : 1;
  // A(t|df) = P(|T| < t) as a finite sum in cos(theta), theta = atan(t / sqrt(df)).
  double theta = std::atan(std::abs(t) / std::sqrt(static_cast<double>(df)));
  double s = std::sin(theta), c2 = std::cos(theta) * std::cos(theta);
  double a;
  if (df % 2 == 0) {
    double term = 1, sum = 1;
    for (unsigned k = 1; k <= (df - 2) / 2; ++k) sum += term *= c2 * (2.0 * k - 1) / (2.0 * k);
    a = s * sum;
  } else {
    double sum = 0;
    if (df > 1) {
      double term = std::cos(theta);
      sum = term;
      for (unsigned k = 1; k <= (df - 3) / 2; ++k) sum += term *= c2 * (2.0 * k) / (2.0 * k + 1);
    }
    a = 2 / std::numbers::pi * (theta + s * sum);
  }
  double upper = (1 - a) / 2;
  return t >= 0 ? std::max(upper, 0.0) : 1 - upper;
}

bool LeakTrend::add(uint64_t used_bytes) {
  window_min_ = in_window_ == 0 ? used_bytes : std::min(window_min_, used_bytes);
  if (++in_window_ < kWindow) return false;
  in_window_ = 0;
  floors_.push_back(window_min_);
  if (floors_.size() > kWindows) floors_.pop_front();
  history_.push_back(window_min_);
  if (history_.size() > kHistory) history_.pop_front();
  if (floors_.size() < kWindows) return false;
  fit();
  return true;
}

void LeakTrend::fit() {
  // Least squares of floor against window index, centred to keep precision
  // with floors of megabytes.
  const double n = static_cast<double>(floors_.size());
  const double base = static_cast<double>(floors_.front());
  double mean_x = (n - 1) / 2, mean_y = 0;
  for (uint64_t f : floors_) mean_y += (static_cast<double>(f) - base) / n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < floors_.size(); ++i) {
    double dx = static_cast<double>(i) - mean_x;
    sxx += dx * dx;
    sxy += dx * (static_cast<double>(floors_[i]) - base - mean_y);
  }
  double slope = sxy / sxx;
  double sse = 0;
  for (size_t i = 0; i < floors_.size(); ++i) {
    double r = static_cast<double>(floors_[i]) - base - mean_y - slope * (static_cast<double>(i) - mean_x);
    sse += r * r;
  }
  double se = std::sqrt(sse / (n - 2) / sxx);
  double t = se > 0 ? slope / se : slope > 0 ? INFINITY : slope < 0 ? -INFINITY : 0;
  TrendEstimate e;
  e.bytes_per_inference = slope / kWindow;
  e.p_value = slope == 0 ? 1 : student_t_upper_tail(t, static_cast<unsigned>(floors_.size() - 2));
  e.inferences = kWindow * kWindows;
  bool at_top = floors_.back() > *std::max_element(floors_.begin(), floors_.end() - 1);
  e.confirmed = slope > 0 && at_top && e.p_value < kConfirmP;
  if (walks()) judge_drift(e);
  estimate_ = e;
}

namespace {

// Median absolute deviation of the differences of `floors` `lag` apart,
// scaled to a standard deviation: one step of a level (a block kept far up
// an arena, the leak's own start) moves no median. `zeros`: differences
// that were 0.
double spread(const std::deque<uint64_t>& floors, size_t from, size_t lag, size_t* zeros = nullptr) {
  std::vector<double> d;
  for (size_t i = from + lag; i < floors.size(); ++i)
    d.push_back(static_cast<double>(floors[i]) - static_cast<double>(floors[i - lag]));
  if (zeros) *zeros = static_cast<size_t>(std::count(d.begin(), d.end(), 0.0));
  if (d.size() < 2) return 0;
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double centre = median(d);
  for (double& x : d) x = std::abs(x - centre);
  return 1.4826 * median(d);
}

}  // namespace

// The variance ratio of floor differences 4 and 1 windows apart, over the
// latest kSpreadOf floors: 1 when floors scatter about their trend, towards
// 4 when they walk. 1.2 parts them: 40 walks of 300,000 inferences read
// 1.3-2 where their climbs passed the t-test; floors that scatter, with or
// without a leak (whose steady rise differences out), read about 1. A floor
// that most windows leave where it was (temporaries over a fixed base) does
// not walk.
bool LeakTrend::walks() const {
  if (history_.size() < 24) return false;
  const size_t from = history_.size() > kSpreadOf ? history_.size() - kSpreadOf : 0;
  size_t unmoved = 0;
  const double one = spread(history_, from, 1, &unmoved), four = spread(history_, from, 4);
  if (4 * unmoved > history_.size() - from || one <= 0) return false;
  return (four / one) * (four / one) > 1.2;
}

// A walk's rise over h steps spreads as sqrt(h) steps; a leak's grows as h.
// Each horizon is a one-sided normal test, four of them (Bonferroni).
void LeakTrend::judge_drift(TrendEstimate& e) const {
  const size_t from = history_.size() > kSpreadOf ? history_.size() - kSpreadOf : 0;
  const double step = spread(history_, from, 1);
  e.walking = true;
  e.confirmed = false;
  e.p_value = 1;
  for (size_t h : {size_t{9}, size_t{63}, size_t{255}, size_t{1023}}) {
    if (history_.size() <= h) break;
    const double rise = static_cast<double>(history_.back()) - static_cast<double>(history_[history_.size() - 1 - h]);
    const double z = rise / (step * std::sqrt(static_cast<double>(h)));
    const double p = std::min(1.0, 4 * 0.5 * std::erfc(z / std::numbers::sqrt2));
    if (p < e.p_value || h == 9) {
      e.p_value = p;
      e.bytes_per_inference = rise / static_cast<double>(h * kWindow);
      e.inferences = h * kWindow;
    }
    if (p < kConfirmP) break;
  }
  e.confirmed = e.p_value < kConfirmP && e.bytes_per_inference > 0;
}

}  // namespace edgemem
