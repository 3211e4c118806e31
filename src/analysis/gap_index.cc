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

GapIndex::Pos GapIndex::first_ending_after(uint64_t x, bool inclusive) const {
  auto top = inclusive ? std::lower_bound(last_end_.begin(), last_end_.end(), x)
                       : std::upper_bound(last_end_.begin(), last_end_.end(), x);
  size_t c = static_cast<size_t>(top - last_end_.begin());
  if (c == chunks_.size()) return {c, 0};
  const auto& g = chunks_[c].gaps;
  auto it = inclusive ? std::lower_bound(g.begin(), g.end(), x, [](const Gap& a, uint64_t v) { return a.end < v; })
                      : std::upper_bound(g.begin(), g.end(), x, [](uint64_t v, const Gap& a) { return v < a.end; });
  return {c, static_cast<size_t>(it - g.begin())};
}

GapIndex::Pos GapIndex::next(Pos p) const {
  if (++p.index < chunks_[p.chunk].gaps.size()) return p;
  return {p.chunk + 1, 0};
}

void GapIndex::rescan(Chunk& c) {
  c.largest = 0;
  for (const Gap& g : c.gaps) c.largest = std::max(c.largest, g.size());
}

GapIndex::Pos GapIndex::erase(Pos p) {
  Chunk& c = chunks_[p.chunk];
  uint64_t size = c.gaps[p.index].size();
  c.gaps.erase(c.gaps.begin() + static_cast<long>(p.index));
  if (size >= largest_) largest_valid_ = false;
  if (c.gaps.empty()) {
    chunks_.erase(chunks_.begin() + static_cast<long>(p.chunk));
    last_end_.erase(last_end_.begin() + static_cast<long>(p.chunk));
    return {p.chunk, 0};
  }
  last_end_[p.chunk] = c.gaps.back().end;
  if (size == c.largest) rescan(c);
  if (p.index == c.gaps.size()) return {p.chunk + 1, 0};
  return p;
}

void GapIndex::insert(Pos p, Gap gap) {
  if (chunks_.empty()) {
    chunks_.push_back({{gap}, gap.size()});
    last_end_.push_back(gap.end);
  } else {
    if (p.chunk == chunks_.size()) p = {p.chunk - 1, chunks_.back().gaps.size()};  // append to the last chunk
    Chunk& c = chunks_[p.chunk];
    c.gaps.insert(c.gaps.begin() + static_cast<long>(p.index), gap);
    c.largest = std::max(c.largest, gap.size());
    last_end_[p.chunk] = c.gaps.back().end;
    if (c.gaps.size() > 2 * kChunk) {  // split in halves
      Chunk upper;
      upper.gaps.assign(c.gaps.begin() + kChunk, c.gaps.end());
      c.gaps.resize(kChunk);
      rescan(c);
      rescan(upper);
      last_end_[p.chunk] = c.gaps.back().end;
      uint64_t upper_last = upper.gaps.back().end;
      chunks_.insert(chunks_.begin() + static_cast<long>(p.chunk) + 1, std::move(upper));
      last_end_.insert(last_end_.begin() + static_cast<long>(p.chunk) + 1, upper_last);
    }
  }
  if (largest_valid_) largest_ = std::max(largest_, gap.size());
}

void GapIndex::resized(Pos p, uint64_t old_size) {
  Chunk& c = chunks_[p.chunk];
  uint64_t size = c.gaps[p.index].size();
  if (size > old_size) {
    c.largest = std::max(c.largest, size);
    if (largest_valid_) largest_ = std::max(largest_, size);
  } else {
    if (old_size == c.largest) rescan(c);
    if (old_size >= largest_) largest_valid_ = false;
  }
}

void GapIndex::add_gap(uint64_t start, uint64_t end) {
  // Merge with touching or overlapping neighbours; the gap that reaches
  // furthest keeps its slot (its end is the key) and only its start moves.
  Pos p = first_ending_after(start, true);
  while (valid(p) && at(p).start <= end) {
    Gap& g = at(p);
    start = std::min(start, g.start);
    total_ -= g.size();
    if (g.end >= end) {
      uint64_t old = g.size();
      g.start = start;
      total_ += g.size();
      resized(p, old);
      return;
    }
    p = erase(p);
  }
  insert(p, {end, start});
  total_ += end - start;
}

void GapIndex::remove_range(uint64_t start, uint64_t end) {
  Pos p = first_ending_after(start, false);
  while (valid(p) && at(p).start < end) {
    Gap g = at(p);
    total_ -= g.size();
    if (g.end > end) {
      // The tail [end, g.end) keeps the slot: a block placed at the start of
      // a gap, what most allocators do, costs one search and no move.
      at(p).start = end;
      total_ += g.end - end;
      resized(p, g.size());
      if (g.start < start) {
        insert(p, {start, g.start});
        total_ += start - g.start;
      }
      return;
    }
    p = erase(p);
    if (g.start < start) {
      insert(p, {start, g.start});
      total_ += start - g.start;
      p = first_ending_after(start, false);
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
  chunks_.clear();
  last_end_.clear();
  total_ = 0;
  largest_ = 0;
  largest_valid_ = true;
  if (!empty_extent()) add_gap(low_, high_);
}

uint64_t GapIndex::largest_free() {
  if (!largest_valid_) {
    largest_ = 0;
    for (const Chunk& c : chunks_) largest_ = std::max(largest_, c.largest);
    largest_valid_ = true;
  }
  return largest_;
}

}  // namespace edgemem
