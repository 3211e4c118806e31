#include "leak_trend.h"

#include <algorithm>
#include <cmath>
#include <numbers>

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
  if (floors_.size() > kWindows) {
    highest_before_ = std::max(highest_before_, floors_.front());
    floors_.pop_front();
  }
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
  bool at_top = floors_.back() > std::max(highest_before_, *std::max_element(floors_.begin(), floors_.end() - 1));
  e.confirmed = slope > 0 && at_top && e.p_value < kConfirmP;
  estimate_ = e;
}

}  // namespace edgemem
