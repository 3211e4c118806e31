#include "gap_index.h"

#include <algorithm>

namespace edgemem {

void GapIndex::extend(uint64_t low, uint64_t high) {
  if (high <= low) return;
  if (empty_extent()) {
    low_ = low;
    high_ = high;
    add_gap(low, high);
    return;
  }
  if (low < low_) {
    add_gap(low, low_);
    low_ = low;
  }
  if (high > high_) {
    add_gap(high_, high);
    high_ = high;
  }
}

void GapIndex::push(uint64_t size, uint64_t end) {
  // A new or merged gap only ever raises the maximum.
  if (largest_valid_ && size > largest_known_) largest_known_ = size;
  largest_.emplace_back(size, end);
  std::push_heap(largest_.begin(), largest_.end());
  if (largest_.size() > 4 * gaps_.size() + 64) {  // keep the heap O(gaps)
    largest_.clear();
    for (auto [e, s] : gaps_) largest_.emplace_back(e - s, e);
    std::make_heap(largest_.begin(), largest_.end());
  }
}

void GapIndex::add_gap(uint64_t start, uint64_t end) {
  // Merge with touching or overlapping neighbours. The gap that reaches
  // furthest keeps its node (keyed by end); only its start changes.
  auto it = gaps_.lower_bound(start);
  while (it != gaps_.end() && it->second <= end) {
    start = std::min(start, it->second);
    total_ -= it->first - it->second;
    if (it->first >= end) {
      end = it->first;
      it->second = start;
      total_ += end - start;
      push(end - start, end);
      return;
    }
    it = gaps_.erase(it);
  }
  gaps_.emplace_hint(it, end, start);
  total_ += end - start;
  push(end - start, end);
}

void GapIndex::remove_range(uint64_t start, uint64_t end) {
  auto it = gaps_.upper_bound(start);
  while (it != gaps_.end() && it->second < end) {
    uint64_t gs = it->second, ge = it->first;
    if (ge - gs >= largest_known_) largest_valid_ = false;
    total_ -= ge - gs;
    if (ge > end) {
      // The tail [end, ge) survives in the same node: the common case of a
      // block placed at the start of a gap costs one lookup.
      it->second = end;
      total_ += ge - end;
      push(ge - end, ge);
      if (gs < start) {
        gaps_.emplace_hint(it, start, gs);
        total_ += start - gs;
        push(start - gs, start);
      }
      return;
    }
    it = gaps_.erase(it);
    if (gs < start) {
      gaps_.emplace_hint(it, start, gs);
      total_ += start - gs;
      push(start - gs, start);
    }
  }
}

void GapIndex::occupy(uint64_t address, uint64_t size) {
  if (size) remove_range(address, address + size);
}

void GapIndex::release(uint64_t address, uint64_t size) {
  // Clip to the extent: a block that overflowed the pool frees only its
  // part inside it.
  uint64_t start = std::max(address, low_), end = std::min(address + size, high_);
  if (start < end) add_gap(start, end);
}

void GapIndex::reset() {
  gaps_.clear();
  largest_.clear();
  total_ = 0;
  largest_known_ = 0;
  largest_valid_ = true;
  if (!empty_extent()) add_gap(low_, high_);
}

uint64_t GapIndex::largest_free() {
  if (largest_valid_) return largest_known_;
  largest_known_ = 0;
  while (!largest_.empty()) {
    auto [size, end] = largest_.front();
    auto it = gaps_.find(end);
    if (it != gaps_.end() && it->first - it->second == size) {
      largest_known_ = size;
      break;
    }
    std::pop_heap(largest_.begin(), largest_.end());
    largest_.pop_back();
  }
  largest_valid_ = true;
  return largest_known_;
}

}  // namespace edgemem
