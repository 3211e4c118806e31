#include "occupancy_grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgemem {

namespace {

// Units of [from, to] (inclusive) inside cell `cell` of width `step`.
uint64_t overlap(uint64_t from, uint64_t to, uint64_t cell, uint64_t step) {
  uint64_t start = cell * step, end = start + (step - 1);
  return std::min(to, end) - std::max(from, start) + 1;
}

}  // namespace

void OccupancyGrid::ensure(bool time_axis, uint64_t lo, uint64_t hi) {
  Axis& a = time_axis ? time_ : address_;
  const uint64_t cells = time_axis ? kTimes : kAddresses;
  // The fewest doublings of the cell width after which [lo, hi] and what the
  // axis holds fit in the window, found first so the cells move once (one
  // doubling at a time cost a pass over the grid each: ~40 for a region
  // terabytes away). At a width of 2^63 any two positions are within two
  // cells, so this ends.
  unsigned k = 0;
  uint64_t new_lo, new_hi;  // the cells [lo, hi] and what the axis holds span, k doublings on
  for (;; ++k) {
    new_lo = lo >> (a.shift + k);
    new_hi = hi >> (a.shift + k);
    if (a.used) {
      new_lo = std::min(new_lo, a.lo >> k);
      new_hi = std::max(new_hi, a.hi >> k);
    }
    if (new_hi - new_lo < cells) break;
  }
  if (k) {
    if (a.used) remap(time_axis, a.first >> k, k);
    a.step <<= k;
    a.shift += k;
    a.first >>= k;
  }
  uint64_t first = a.first;
  if (!a.used || new_lo < a.first) first = new_lo;
  // Sliding forward (time goes on): half a window ahead, not one cell, so
  // the cells move once per half window instead of once per new cell.
  // Only lo..hi hold anything, so where the window starts changes no cell.
  else if (new_hi - a.first >= cells) first = std::min(new_lo, new_hi + 1 - cells / 2);
  if (a.used && first != a.first) remap(time_axis, first, 0);
  a.first = first;
  a.lo = new_lo;
  a.hi = new_hi;
  a.used = true;
}

void OccupancyGrid::remap(bool time_axis, uint64_t first, unsigned coarser) {
  fold();
  std::vector<double> out(cells_.size(), 0.0);
  const Axis& a = time_axis ? time_ : address_;
  for (uint32_t t = 0; t < kTimes; ++t)
    for (uint32_t x = 0; x < kAddresses; ++x) {
      double v = cells_[size_t{t} * kAddresses + x];
      if (v == 0) continue;
      uint64_t absolute = a.first + (time_axis ? t : x);
      uint64_t moved = (absolute >> coarser) - first;
      size_t to = time_axis ? moved * kAddresses + x : size_t{t} * kAddresses + moved;
      out[to] += v;
    }
  cells_.swap(out);
}

void OccupancyGrid::place(uint64_t address, uint64_t size, uint64_t from, uint64_t to) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (from == kMax) --from;
  uint64_t last_time = to > from ? to - 1 : from;
  uint64_t last_address = size == 0 ? address : (size - 1 > kMax - address ? kMax : address + (size - 1));
  cover(address, last_address, from, last_time, 1.0);
}

void OccupancyGrid::cover(uint64_t address, uint64_t last_address, uint64_t from, uint64_t last_time, double density) {
  // Most blocks land inside both windows: then ensure() would only widen
  // lo/hi, so do that here and skip its loop (a call per axis on every free).
  const uint64_t t0 = from >> time_.shift, t1 = last_time >> time_.shift;
  const uint64_t x0 = address >> address_.shift, x1 = last_address >> address_.shift;
  if (time_.used && address_.used && t0 >= time_.first && t1 - time_.first < kTimes && x0 >= address_.first &&
      x1 - address_.first < kAddresses) {
    time_.lo = std::min(time_.lo, t0);
    time_.hi = std::max(time_.hi, t1);
    address_.lo = std::min(address_.lo, x0);
    address_.hi = std::max(address_.hi, x1);
  } else {
    ensure(true, from, last_time);
    ensure(false, address, last_address);
  }
  const uint64_t first_t = from >> time_.shift, last_t = last_time >> time_.shift;
  const uint64_t first_x = address >> address_.shift, last_x = last_address >> address_.shift;
  auto add_row = [&](uint64_t t, double time_units, std::vector<double>& to) {
    for (uint64_t x = first_x; x <= last_x; ++x)
      to[(t - time_.first) * kAddresses + (x - address_.first)] +=
          time_units * static_cast<double>(overlap(address, last_address, x, address_.step));
  };
  add_row(first_t, static_cast<double>(overlap(from, last_time, first_t, time_.step)) * density, cells_);
  if (last_t == first_t) return;
  add_row(last_t, static_cast<double>(overlap(from, last_time, last_t, time_.step)) * density, cells_);
  if (last_t == first_t + 1) return;
  // The whole time cells between: the same amount each, as a step up and
  // a step down (summed into the cells by fold()), not a row at a time.
  if (steps_.empty()) steps_.assign(cells_.size(), 0.0);
  const double full = static_cast<double>(time_.step) * density;
  add_row(first_t + 1, full, steps_);
  add_row(last_t, -full, steps_);
  stepped_ = true;
}

void OccupancyGrid::fold() const {
  if (!stepped_) return;
  // Every step lies at or before the last used row; past it a sum of steps
  // up and down could leave a rounding residue in a cell nothing covers.
  const uint64_t rows = time_.hi - time_.first + 1;
  for (uint32_t x = 0; x < kAddresses; ++x) {
    double run = 0;
    for (uint32_t t = 0; t < rows; ++t) {
      double& step = steps_[size_t{t} * kAddresses + x];
      run += step;
      step = 0;
      cells_[size_t{t} * kAddresses + x] += run;
    }
  }
  stepped_ = false;
}

void OccupancyGrid::merge(const OccupancyGrid& other) {
  if (!other.time_.used) return;
  other.fold();
  const Axis &ot = other.time_, &oa = other.address_;
  for (uint64_t t = ot.lo; t <= ot.hi; ++t)
    for (uint64_t x = oa.lo; x <= oa.hi; ++x) {
      const double v = other.cells_[(t - ot.first) * kAddresses + (x - oa.first)];
      if (v == 0) continue;
      // The cell's byte-time spread evenly over its rectangle.
      cover(x * oa.step, x * oa.step + (oa.step - 1), t * ot.step, t * ot.step + (ot.step - 1),
            v / (static_cast<double>(ot.step) * static_cast<double>(oa.step)));
    }
}

LayoutRaster OccupancyGrid::raster(uint64_t origin) const {
  LayoutRaster r;
  if (!time_.used) return r;
  fold();
  r.time0 = time_.lo * time_.step;
  r.time_step = time_.step;
  r.offset0 = static_cast<int64_t>(address_.lo * address_.step - origin);
  r.offset_step = address_.step;
  r.times = static_cast<uint32_t>(time_.hi - time_.lo + 1);
  r.offsets = static_cast<uint32_t>(address_.hi - address_.lo + 1);
  r.bytes.reserve(size_t{r.times} * r.offsets);
  for (uint64_t t = time_.lo; t <= time_.hi; ++t)
    for (uint64_t x = address_.lo; x <= address_.hi; ++x)
      r.bytes.push_back(static_cast<uint64_t>(std::llround(
          cells_[(t - time_.first) * kAddresses + (x - address_.first)] / static_cast<double>(time_.step))));
  return r;
}

}  // namespace edgemem
