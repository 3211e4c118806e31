// A time series that keeps at most `limit` points however long the trace:
// when full it drops every other point and samples half as often.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace edgemem {

template <typename X, typename Y>
class BoundedSeries {
 public:
  explicit BoundedSeries(std::size_t limit = 512) : limit_(limit) {}
  void add(X x, Y y) {
    if (seen_++ % stride_ != 0) return;
    points_.emplace_back(x, y);
    if (points_.size() >= limit_) {
      size_t kept = 0;
      for (size_t i = 0; i < points_.size(); i += 2) points_[kept++] = points_[i];
      points_.resize(kept);
      stride_ *= 2;
    }
  }
  const std::vector<std::pair<X, Y>>& points() const { return points_; }

 private:
  size_t limit_;
  uint64_t seen_ = 0, stride_ = 1;
  std::vector<std::pair<X, Y>> points_;
};

}  // namespace edgemem
