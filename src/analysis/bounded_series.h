// A time series that keeps at most `limit` points however long the trace.
// Points fall into buckets of equal count; each bucket keeps its first point
// and the points of its lowest and highest value, so a one-sample spike (a
// fragmentation burst, a peak inference) survives any amount of reduction.
// When the buckets fill, neighbours merge pairwise and the width doubles.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace edgemem {

template <typename X, typename Y>
class BoundedSeries {
 public:
  // Three points per bucket: `limit` should be at least 3.
  explicit BoundedSeries(std::size_t limit = 512) : max_buckets_(std::max<std::size_t>(1, limit / 3)) {}

  // Called on every event by several analyses: the common case, a point
  // joining the open bucket, is a few compares; opening a bucket is apart.
  void add(X x, Y y) {
    Sample s{seen_++, x, y};
    if (buckets_.empty() || buckets_.back().count == width_) [[unlikely]] {
      open_bucket(s);
      return;
    }
    Bucket& b = buckets_.back();
    ++b.count;
    if (y < b.min.y) b.min = s;
    if (y > b.max.y) b.max = s;
  }

  // The kept points in the order they were added.
  std::vector<std::pair<X, Y>> points() const {
    std::vector<std::pair<X, Y>> out;
    out.reserve(3 * buckets_.size());
    for (const Bucket& b : buckets_) {
      Sample kept[3] = {b.first, b.min, b.max};
      std::sort(std::begin(kept), std::end(kept), [](const Sample& l, const Sample& r) { return l.index < r.index; });
      for (size_t i = 0; i < 3; ++i)
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
    Sample first, min, max;
    uint64_t count;
  };

  void open_bucket(const Sample& s) {
    if (buckets_.size() == max_buckets_) merge_pairs();
    if (buckets_.empty() || buckets_.back().count == width_) {
      buckets_.push_back({s, s, s, 1});
      return;
    }
    Bucket& b = buckets_.back();  // merging left room in the last bucket
    ++b.count;
    if (s.y < b.min.y) b.min = s;
    if (s.y > b.max.y) b.max = s;
  }

  void merge_pairs() {
    size_t kept = 0;
    for (size_t i = 0; i < buckets_.size(); i += 2) {
      Bucket b = buckets_[i];
      if (i + 1 < buckets_.size()) {
        const Bucket& next = buckets_[i + 1];
        if (next.min.y < b.min.y) b.min = next.min;
        if (next.max.y > b.max.y) b.max = next.max;
        b.count += next.count;
      }
      buckets_[kept++] = b;
    }
    buckets_.resize(kept);
    width_ *= 2;
  }

  std::size_t max_buckets_;
  uint64_t seen_ = 0, width_ = 1;
  std::vector<Bucket> buckets_;
};

}  // namespace edgemem
