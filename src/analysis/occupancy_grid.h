// Byte-time occupied per cell of a time x address grid of fixed size. Cells
// sit on multiples of their width on both axes; when a block falls outside
// the window, the window slides if what it holds still fits, else the cell
// width doubles and neighbours merge. So the grid stays kTimes x kAddresses
// cells for any trace length and any address spread, and every byte-time
// added stays counted (only its position gets coarser).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "edgemem/analysis_result.h"

namespace edgemem {

class OccupancyGrid {
 public:
  static constexpr uint32_t kTimes = 128, kAddresses = 64;

  OccupancyGrid() : cells_(size_t{kTimes} * kAddresses, 0.0) {}

  // A block at [address, address + size) from `from` to `to` (exclusive; a
  // block that lived no time counts as one time unit). Inline, as it runs on
  // most frees of a long trace: a block inside the window, in one time cell
  // and one or two address cells, is added here with the very products
  // place() would add; any other goes to place().
  [[gnu::always_inline]] void add(uint64_t address, uint64_t size, uint64_t from, uint64_t to) {
    const uint64_t last_time = to > from ? to - 1 : from, last_address = address + (size - 1);
    const uint64_t t = from >> time_.shift, x0 = address >> address_.shift, x1 = last_address >> address_.shift;
    // Unsigned differences: a cell below the window's first wraps to a huge one.
    if (size == 0 || last_address < address || from == UINT64_MAX || !time_.used ||
        t != last_time >> time_.shift || t - time_.first >= kTimes || x0 - address_.first >= kAddresses ||
        x1 - address_.first >= kAddresses || x1 - x0 > 1) [[unlikely]] {
      place(address, size, from, to);
      return;
    }
    // Branches, not min/max: the used cells rarely grow, and a store per
    // bound on every block cost more than the compares.
    if (t < time_.lo) [[unlikely]] time_.lo = t;
    if (t > time_.hi) [[unlikely]] time_.hi = t;
    if (x0 < address_.lo) [[unlikely]] address_.lo = x0;
    if (x1 > address_.hi) [[unlikely]] address_.hi = x1;
    const double time_units = static_cast<double>(last_time - from + 1);
    double* cell = &cells_[(t - time_.first) * kAddresses + (x0 - address_.first)];
    if (x0 == x1) {
      cell[0] += time_units * static_cast<double>(size);
    } else {
      cell[0] += time_units * static_cast<double>(((x0 + 1) << address_.shift) - address);
      cell[1] += time_units * static_cast<double>(last_address - (x1 << address_.shift) + 1);
    }
  }
  // The same as add() for any block: slides or widens the window to fit it.
  void place(uint64_t address, uint64_t size, uint64_t from, uint64_t to);
  // Adds every byte-time of `other`, each cell's spread evenly over the
  // cells of this grid its rectangle meets (two address regions become one).
  void merge(const OccupancyGrid& other);

  // Mean bytes occupied per cell over the used part of the window, with
  // offsets measured from `origin`.
  LayoutRaster raster(uint64_t origin) const;

 private:
  struct Axis {
    uint64_t step = 1;   // cell width, always a power of two
    unsigned shift = 0;  // log2(step): a position's cell is a shift, not a division, on every free
    uint64_t first = 0;  // absolute cell index (position / step) of window cell 0
    uint64_t lo = 0, hi = 0;  // absolute cells that hold something
    bool used = false;
  };
  // Adds density x (time units x bytes) of the rectangle [address,
  // last_address] x [from, last_time] (inclusive) to each cell it meets.
  void cover(uint64_t address, uint64_t last_address, uint64_t from, uint64_t last_time, double density);
  // Makes absolute positions [lo, hi] (inclusive) fall inside the window of `axis`.
  void ensure(bool time_axis, uint64_t lo, uint64_t hi);
  // Moves every cell to the window given by the new first cells, each cell
  // index shifted right by `coarser` (the step multiplied by 2^coarser).
  void remap(bool time_axis, uint64_t first, unsigned coarser);
  // Adds the pending steps into the cells: a long-lived block covers its
  // whole time cells by two steps, so a block costs its address cells, not
  // its address cells times its time cells.
  void fold() const;

  Axis time_, address_;
  // Cells and pending steps are one value, folded when read: mutable, so
  // reading a grid stays const.
  mutable std::vector<double> cells_;  // [time cell][address cell]
  mutable std::vector<double> steps_;  // [time cell][address cell]: a running sum down each column adds to cells_; empty until needed
  mutable bool stepped_ = false;
};

}  // namespace edgemem
