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

void GapIndex::push(uint64_t size, uint64_t start) {
  // A new or merged gap only ever raises the maximum.
  if (largest_valid_ && size > largest_known_) largest_known_ = size;
  largest_.emplace_back(size, start);
  std::push_heap(largest_.begin(), largest_.end());
  if (largest_.size() > 4 * gaps_.size() + 64) {  // keep the heap O(gaps)
    largest_.clear();
    for (auto [s, e] : gaps_) largest_.emplace_back(e - s, s);
    std::make_heap(largest_.begin(), largest_.end());
  }
}

void GapIndex::add_gap(uint64_t start, uint64_t end) {
  // Merge with touching or overlapping neighbours.
  auto it = gaps_.upper_bound(start);
  if (it != gaps_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= start) {
      start = prev->first;
      end = std::max(end, prev->second);
      total_ -= prev->second - prev->first;
      it = gaps_.erase(prev);
    }
  }
  while (it != gaps_.end() && it->first <= end) {
    end = std::max(end, it->second);
    total_ -= it->second - it->first;
    it = gaps_.erase(it);
  }
  gaps_.emplace_hint(it, start, end);
  total_ += end - start;
  push(end - start, start);
}

void GapIndex::remove_range(uint64_t start, uint64_t end) {
  auto it = gaps_.upper_bound(start);
  if (it != gaps_.begin() && std::prev(it)->second > start) --it;
  while (it != gaps_.end() && it->first < end) {
    uint64_t gs = it->first, ge = it->second;
    it = gaps_.erase(it);
    total_ -= ge - gs;
    if (ge - gs >= largest_known_) largest_valid_ = false;
    if (gs < start) {
      gaps_.emplace(gs, start);
      total_ += start - gs;
      push(start - gs, gs);
    }
    if (ge > end) {
      it = gaps_.emplace_hint(it, end, ge);
      total_ += ge - end;
      push(ge - end, end);
      break;
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
    auto [size, start] = largest_.front();
    auto it = gaps_.find(start);
    if (it != gaps_.end() && it->second - it->first == size) {
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
