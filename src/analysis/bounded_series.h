// A time series that keeps at most `limit` points however long the trace.
// Points fall into buckets of equal count; each bucket keeps its first and
// last points and the points of its lowest and highest value, so a one-sample
// spike (a fragmentation burst, a peak inference) survives any amount of
// reduction, and the line is true where buckets meet and at the very end (the
// state the trace finished in).
// When the buckets fill, neighbours merge pairwise and the width doubles.
// Buckets of one or two points keep all of them, so twice as many of those
// are allowed: up to `limit` points every one is kept (a series of 300
// samples once lost a quarter of them, an allocation each), and past it the
// buckets are the ones four points each would have given.
// With N > 1, N series sampled at the same moments share their buckets: each
// keeps the points it would keep alone, for the bookkeeping of one.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace edgemem {

template <typename X, typename Y, std::size_t N = 1>
class BoundedSeries {
 public:
  // Four points per bucket: `limit` should be at least 4.
  explicit BoundedSeries(std::size_t limit = 512) : max_buckets_(std::max<std::size_t>(1, limit / 4)) {}

  void add(X x, Y y) requires(N == 1) { add(x, std::array<Y, 1>{y}); }

  // Called on every event by several analyses: the common case, a point
  // joining the open bucket, is a few compares and stores on members (the
  // open bucket lives outside the vector, so no pointer is loaded); opening a
  // bucket is apart.
  void add(X x, const std::array<Y, N>& ys) {
    const uint64_t index = seen_++;
    if (open_.count == width_) [[unlikely]] {
      open_bucket(index, x, ys);
      return;
    }
    join(open_, index, x, ys);
  }

  uint64_t added() const { return seen_; }

  // The kept points of series `k` in the order they were added.
  std::vector<std::pair<X, Y>> points(std::size_t k = 0) const {
    std::vector<std::pair<X, Y>> out;
    if (seen_ == 0) return out;
    out.reserve(4 * (buckets_.size() + 1));
    for (size_t bucket = 0; bucket <= buckets_.size(); ++bucket) {
      const Bucket& b = bucket < buckets_.size() ? buckets_[bucket] : open_;
      Sample kept[4] = {{b.first_index, b.first_x, b.first_y[k]}, b.min[k], b.max[k],
                        {b.first_index + b.count - 1, b.last_x, b.last_y[k]}};
      std::sort(std::begin(kept), std::end(kept), [](const Sample& l, const Sample& r) { return l.index < r.index; });
      for (size_t i = 0; i < 4; ++i)
        if (i == 0 || kept[i].index != kept[i - 1].index) out.emplace_back(kept[i].x, kept[i].y);
    }
    return out;
  }

 private:
  struct Sample {
    uint64_t index;
    X x;
    Y y;
  };
  struct Bucket {
    uint64_t first_index;
    X first_x, last_x;  // the last point's index is first_index + count - 1
    std::array<Y, N> first_y, last_y;
    std::array<Sample, N> min, max;
    uint64_t count;
  };

  static void join(Bucket& b, uint64_t index, X x, const std::array<Y, N>& ys) {
    ++b.count;
    b.last_x = x;
    b.last_y = ys;
    for (std::size_t k = 0; k < N; ++k) {
      if (ys[k] < b.min[k].y) b.min[k] = {index, x, ys[k]};
      if (ys[k] > b.max[k].y) b.max[k] = {index, x, ys[k]};
    }
  }

  // The open bucket is full (or there is none yet): it joins the vector,
  // which merges if that makes too many, and the point opens the next bucket
  // or joins the last one if merging left it room. Out of line, so add()
  // inlined into a caller needs few registers.
  [[gnu::noinline]] void open_bucket(uint64_t index, X x, const std::array<Y, N>& ys) {
    if (index > 0) buckets_.push_back(open_);
    while (buckets_.size() >= (width_ <= 2 ? 2 * max_buckets_ : max_buckets_)) merge_pairs();
    if (buckets_.empty() || buckets_.back().count == width_) {
      open_.first_index = index;
      open_.first_x = open_.last_x = x;
      open_.first_y = open_.last_y = ys;
      for (std::size_t k = 0; k < N; ++k) open_.min[k] = open_.max[k] = {index, x, ys[k]};
      open_.count = 1;
      return;
    }
    open_ = buckets_.back();
    buckets_.pop_back();
    join(open_, index, x, ys);
  }

  void merge_pairs() {
    size_t kept = 0;
    for (size_t i = 0; i < buckets_.size(); i += 2) {
      Bucket b = buckets_[i];
      if (i + 1 < buckets_.size()) {
        const Bucket& next = buckets_[i + 1];
        for (std::size_t k = 0; k < N; ++k) {
          if (next.min[k].y < b.min[k].y) b.min[k] = next.min[k];
          if (next.max[k].y > b.max[k].y) b.max[k] = next.max[k];
        }
        b.last_x = next.last_x;
        b.last_y = next.last_y;
        b.count += next.count;
      }
      buckets_[kept++] = b;
    }
    buckets_.resize(kept);
    width_ *= 2;
  }

  std::size_t max_buckets_;
  uint64_t seen_ = 0, width_ = 1;
  // The last bucket; none before the first point (count == width_ opens one).
  Bucket open_{0, {}, {}, {}, {}, {}, {}, 1};
  std::vector<Bucket> buckets_;  // the ones before it
};

}  // namespace edgemem
