#include "leak_trend.h"

#include <algorithm>
#include <array>
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

namespace {

double median(std::vector<double>& v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

bool LeakTrend::add(uint64_t used_bytes) {
  window_min_ = in_window_ == 0 ? used_bytes : std::min(window_min_, used_bytes);
  if (++in_window_ < kWindow) return false;
  in_window_ = 0;
  if (!floors_.empty()) highest_ = std::max(highest_, floors_.back());
  at_top_ = !floors_.empty() && window_min_ > highest_;
  floors_.push_back(window_min_);
  if (floors_.size() > kKept) floors_.pop_front();
  if (floors_.size() < kWindows) return false;
  step_variance_.reset();
  estimate_ = fit(kWindows);
  // A leak too slow to stand out of the walk in 80 inferences, over longer spans.
  for (size_t n = 2 * kWindows; at_top_ && !estimate_->confirmed && n <= std::min(kLongestFit, floors_.size()); n *= 2) {
    TrendEstimate e = fit(n);
    // One step up (a large block kept from then on) is no trend: both halves must climb.
    const double quarter = e.bytes_per_inference * kWindow / 4;
    const size_t first = floors_.size() - n;
    if (e.confirmed && line_of(first, n / 2).slope >= quarter && line_of(first + n / 2, n / 2).slope >= quarter)
      estimate_ = e;
  }
  return true;
}

LeakTrend::Line LeakTrend::line_of(size_t first, size_t n) const {
  // Least squares of floor against window index, centred to keep precision
  // with floors of megabytes.
  const double count = static_cast<double>(n), mean_x = (count - 1) / 2;
  const double base = static_cast<double>(floors_[first]);
  auto y = [&](size_t i) { return static_cast<double>(floors_[first + i]) - base; };
  double mean_y = 0, sxx = 0, sxy = 0, sse = 0;
  for (size_t i = 0; i < n; ++i) mean_y += y(i) / count;
  for (size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(i) - mean_x;
    sxx += dx * dx;
    sxy += dx * (y(i) - mean_y);
  }
  const double slope = sxy / sxx;
  for (size_t i = 0; i < n; ++i) {
    const double r = y(i) - mean_y - slope * (static_cast<double>(i) - mean_x);
    sse += r * r;
  }
  return {slope, std::sqrt(sse / (count - 2) / sxx)};
}

double LeakTrend::step_variance() {
  if (step_variance_) return *step_variance_;
  // Early in a run, the steps before the shortest fit's own: among a few
  // dozen steps, a leak's own, read as the walk's, would widen the walk it is
  // tested against. Among kStepsMeasured they weigh little, and leaving them
  // out there let a walk's own burst of steps pass for a leak.
  const size_t all = std::min(floors_.size(), kStepsMeasured + 1) - 1;
  const bool long_run = all >= kLongRun + (kWindows - 1);
  const size_t count = long_run && all < kStepsMeasured ? all - (kWindows - 1) : all;
  steps_.clear();
  auto floor = floors_.end() - static_cast<std::ptrdiff_t>(all + 1);
  for (double previous = static_cast<double>(*floor); steps_.size() < count;) {
    steps_.push_back(static_cast<double>(*++floor) - previous);
    previous = static_cast<double>(*floor);
  }
  // One or two wild steps count as none (the steps' median): a floor that
  // steps up once (a large block kept from then on), or dips and comes back,
  // is no walk. More are the walk's own (blocks of heavy-tailed sizes that
  // come and go) and are kept. Wild is beyond 5 standard deviations from the
  // median, were the steps normal: from their median deviation, or their
  // mean one when most steps are the same. The range is measured anew every
  // kClipRefreshed measures (two selections of up to 256 values; a leak's
  // every window needs the variance).
  if (!clip_ || ++clip_age_ >= kClipRefreshed) {
    scratch_.assign(steps_.begin(), steps_.end());
    const double mid = median(scratch_);
    for (size_t i = 0; i < steps_.size(); ++i) scratch_[i] = std::abs(steps_[i] - mid);
    double usual = 1.4826 * median(scratch_);
    if (usual == 0) {
      for (double d : scratch_) usual += 1.2533 * d / static_cast<double>(scratch_.size());
    }
    clip_ = {mid, 5 * usual};
    clip_age_ = 0;
  }
  const double mid = clip_->first, reach = clip_->second;
  auto wild = [&](double s) { return reach > 0 && std::abs(s - mid) > reach; };
  const bool tame = std::count_if(steps_.begin(), steps_.end(), wild) <= 2;
  double mean = 0;
  for (double& s : steps_) {
    if (tame && wild(s)) s = mid;
    mean += s / static_cast<double>(count);
  }
  for (double& s : steps_) s -= mean;
  std::array<double, kLags + 1> covariance{};
  for (size_t i = 0; i < count; ++i)
    for (size_t k = 0; k <= std::min(i, kLags); ++k) covariance[k] += steps_[i] * steps_[i - k];
  // Few steps: their plain variance. Bartlett weights over 8 lags read from a
  // few dozen steps make a walk look narrow (early false alerts).
  if (!long_run) {
    step_variance_ = covariance[0] / static_cast<double>(count - 1);
    return *step_variance_;
  }
  // Their long-run variance (Bartlett weights over kLags lags): what a sum of
  // many of them spreads by, per step. A walk's independent steps keep their
  // variance; the steps of floors that only wobble about a level (one window
  // up, the next down) cancel, so temporaries are left to the t-test and a
  // slow leak above them is still confirmed.
  double variance = 0;
  for (size_t k = 0; k <= kLags; ++k)
    variance += (k == 0 ? 1 : 2 * (1 - static_cast<double>(k) / (kLags + 1))) * covariance[k] / static_cast<double>(count);
  step_variance_ = std::max(variance, 0.0);
  return *step_variance_;
}

double LeakTrend::walk_spread(size_t n) {
  // The slope is sum_i w_i floor_i; floor_i is the first floor plus steps
  // 1..i, so step j weighs the sum of w_i for i >= j.
  const double count = static_cast<double>(n), mean_x = (count - 1) / 2;
  double sxx = 0;
  for (size_t i = 0; i < n; ++i) sxx += (static_cast<double>(i) - mean_x) * (static_cast<double>(i) - mean_x);
  double weights = 0, weight = 0;
  for (size_t j = n - 1; j >= 1; --j) {
    weight += (static_cast<double>(j) - mean_x) / sxx;
    weights += weight * weight;
  }
  return std::sqrt(step_variance() * weights);
}

bool LeakTrend::drifts(size_t first, size_t n) const {
  double mean = 0, variance = 0;
  auto step = [&](size_t i) { return static_cast<double>(floors_[i]) - static_cast<double>(floors_[i - 1]); };
  for (size_t i = first + 1; i < first + n; ++i) mean += step(i) / static_cast<double>(n - 1);
  for (size_t i = first + 1; i < first + n; ++i) variance += (step(i) - mean) * (step(i) - mean) / static_cast<double>(n - 2);
  const double se = std::sqrt(variance / static_cast<double>(n - 1));
  const double t = se > 0 ? mean / se : mean > 0 ? INFINITY : 0;
  return mean > 0 && student_t_upper_tail(t, static_cast<unsigned>(n - 2)) < kConfirmP;
}

TrendEstimate LeakTrend::fit(size_t n) {
  const size_t first = floors_.size() - n;
  const auto [slope, se] = line_of(first, n);
  const double t = se > 0 ? slope / se : slope > 0 ? INFINITY : slope < 0 ? -INFINITY : 0;
  TrendEstimate e;
  e.bytes_per_inference = slope / kWindow;
  e.p_value = slope == 0 ? 1 : student_t_upper_tail(t, static_cast<unsigned>(n - 2));
  e.inferences = kWindow * n;
  // The walk is judged last, its spread after the cheaper drift test: only a
  // slope that passed the rest needs them.
  e.confirmed = slope > 0 && at_top_ && e.p_value < kConfirmP &&
                (drifts(first, n) || slope > kWalkSpreads * walk_spread(n));
  return e;
}

}  // namespace edgemem
