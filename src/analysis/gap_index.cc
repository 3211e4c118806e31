#include "gap_index.h"

#include <algorithm>
#include <utility>

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

namespace {

// Index of the first element >= x (or > x when `after`). Written without a
// data-dependent branch: gap addresses are unpredictable, and a mispredicted
// binary search costs more than the search itself.
template <typename T, typename Key>
size_t bound(const std::vector<T>& v, uint64_t x, bool after, Key key) {
  size_t n = v.size();
  if (n == 0) return 0;
  const T* base = v.data();
  const uint64_t k = after ? x + 1 : x;  // "> x" is ">= x+1"; x+1 cannot wrap for real addresses
  while (n > 1) {
    size_t half = n / 2;
    // A select (cmov), not a multiply: the step's latency is the load and the compare only.
    const T* upper = base + half;
    base = key(upper[-1]) < k ? upper : base;
    n -= half;
  }
  return static_cast<size_t>(base - v.data()) + (key(*base) < k);
}

}  // namespace

// Forced inline here and on erase() and resized(): called once or twice per
// occupy and release, and left out of line in the unity build otherwise.
[[gnu::always_inline]] inline GapIndex::Pos GapIndex::first_ending_after(uint64_t x, bool inclusive) const {
  size_t c = bound(last_end_, x, !inclusive, [](uint64_t end) { return end; });
  if (c == order_.size()) return {c, 0};
  return {c, bound(at(c).gaps, x, !inclusive, [](const Gap& g) { return g.end; })};
}

GapIndex::Pos GapIndex::next(Pos p) const {
  if (++p.index < at(p.chunk).size()) return p;
  return {p.chunk + 1, 0};
}

uint32_t GapIndex::new_chunk() {
  if (!free_ids_.empty()) {
    const uint32_t id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  chunks_.emplace_back();
  tracked_ = tracked_ || chunks_.size() > kGroup;
  // A new group holds only empty chunks and groups: its largest is 0.
  size_t n = chunks_.size();
  for (std::vector<Group>& level : levels_) {
    n = (n + kGroup - 1) / kGroup;
    if (level.size() < n) level.push_back({0, true});
  }
  if (!levels_.empty() && levels_.back().size() > kGroup) levels_.clear();  // a level more: built when next asked
  return static_cast<uint32_t>(chunks_.size() - 1);
}

void GapIndex::rescan(uint32_t id) {
  const Chunk& c = chunks_[id];
  uint64_t largest = 0;
  for (size_t i = 0; i < c.size(); ++i) largest = std::max(largest, c.gap(i));
  set_largest(id, largest);
}

inline void GapIndex::shrank(uint32_t id, uint64_t size) {
  Chunk& c = chunks_[id];
  if (!tracked_) {
    if (size >= c.largest) rescan(id);
    return;
  }
  if (c.stale || size < c.largest) return;
  c.stale = true;
  size_t i = id;
  for (std::vector<Group>& level : levels_) {
    i /= kGroup;
    if (!level[i].valid) return;  // nor is any group above it
    level[i].valid = false;
  }
}

void GapIndex::set_largest(uint32_t id, uint64_t largest) {
  Chunk& c = chunks_[id];
  // A stale chunk's groups are not valid: the walk below stops at once.
  c.stale = false;
  const uint64_t old = std::exchange(c.largest, largest);
  size_t i = id;
  bool shrank = false;
  for (std::vector<Group>& level : levels_) {
    i /= kGroup;
    Group& g = level[i];
    if (!g.valid) return;  // nor is any group above it
    if (shrank) {
      // Every group above one not valid is not valid either, or a later
      // raise stopping at that one would leave a stale maximum above it.
      g.valid = false;
      continue;
    }
    if (largest >= g.largest) {
      g.largest = largest;  // raised: its parent may be too
    } else if (old >= g.largest) {
      g.valid = false;  // its largest may have shrunk
      shrank = true;
    } else {
      return;  // its largest stands, and so every one above
    }
  }
}

uint64_t GapIndex::group_largest(size_t level, size_t group) {
  Group& g = levels_[level][group];
  if (g.valid) return g.largest;
  const size_t first = group * kGroup;
  uint64_t largest = 0;
  if (level == 0) {
    for (size_t c = first; c < std::min(first + kGroup, chunks_.size()); ++c) {
      if (chunks_[c].stale) rescan(static_cast<uint32_t>(c));
      largest = std::max(largest, chunks_[c].largest);
    }
  } else {
    for (size_t c = first; c < std::min(first + kGroup, levels_[level - 1].size()); ++c)
      largest = std::max(largest, group_largest(level - 1, c));
  }
  g = {largest, true};  // nothing above grew a vector: `g` still stands
  return largest;
}

[[gnu::always_inline]] inline GapIndex::Pos GapIndex::erase(Pos p) {
  const uint32_t id = order_[p.chunk];
  Chunk& c = chunks_[id];
  const uint64_t size = c.gap(p.index);
  if (may_be_largest(c.gaps[p.index].end, size)) largest_valid_ = false;
  c.gaps.erase(c.gaps.begin() + static_cast<long>(p.index));
  if (c.gaps.empty()) {
    set_largest(id, 0);
    free_ids_.push_back(id);
    order_.erase(order_.begin() + static_cast<long>(p.chunk));
    last_end_.erase(last_end_.begin() + static_cast<long>(p.chunk));
    return {p.chunk, 0};
  }
  last_end_[p.chunk] = c.gaps.back().end;
  shrank(id, size);
  if (p.index == c.size()) return {p.chunk + 1, 0};
  return p;
}

void GapIndex::insert(Pos p, uint64_t end, uint64_t start) {
  if (order_.empty()) {
    const uint32_t id = new_chunk();
    chunks_[id].gaps.push_back({end, start});
    set_largest(id, end - start);
    order_.push_back(id);
    last_end_.push_back(end);
  } else {
    if (p.chunk == order_.size()) p = {p.chunk - 1, at(p.chunk - 1).size()};  // append to the last chunk
    const uint32_t id = order_[p.chunk];
    {
      Chunk& c = chunks_[id];
      c.gaps.insert(c.gaps.begin() + static_cast<long>(p.index), Gap{end, start});
      if (end - start > c.largest) set_largest(id, end - start);
      last_end_[p.chunk] = c.gaps.back().end;
    }
    if (chunks_[id].size() > 2 * kChunk) {  // split in halves; new_chunk() may move chunks_
      const uint32_t upper = new_chunk();
      Chunk& c = chunks_[id];
      chunks_[upper].gaps.assign(c.gaps.begin() + kChunk, c.gaps.end());
      c.gaps.resize(kChunk);
      order_.insert(order_.begin() + static_cast<long>(p.chunk) + 1, upper);
      last_end_.insert(last_end_.begin() + static_cast<long>(p.chunk) + 1, chunks_[upper].gaps.back().end);
      last_end_[p.chunk] = c.gaps.back().end;
      rescan(upper);
      rescan(id);
    }
  }
  grew(end, end - start);
}

inline void GapIndex::grew(uint64_t end, uint64_t size) {
  if (!largest_valid_) return;
  if (!tracked_) {
    largest_ = std::max(largest_, size);
  } else if (end == largest_end_) {
    largest_ = size;
  } else if (size > largest_) {
    second_ = largest_;
    largest_ = size;
    largest_end_ = end;
  } else {
    second_ = std::max(second_, size);
  }
}

[[gnu::always_inline]] inline void GapIndex::resized(Pos p, uint64_t old_size) {
  const uint32_t id = order_[p.chunk];
  Chunk& c = chunks_[id];
  uint64_t size = c.gap(p.index);
  if (size > old_size) {
    if (size > c.largest) set_largest(id, size);
    grew(c.gaps[p.index].end, size);
  } else {
    shrank(id, old_size);
    if (may_be_largest(c.gaps[p.index].end, old_size)) {
      if (largest_end_ && size >= second_) largest_ = size;  // still the largest
      else largest_valid_ = false;
    }
  }
}

void GapIndex::add_gap(uint64_t start, uint64_t end) {
  // Merge with touching or overlapping neighbours; the gap that reaches
  // furthest keeps its slot (its end is the key) and only its start moves.
  Pos p = first_ending_after(start, true);
  while (valid(p) && start_at(p) <= end) {
    uint64_t gs = start_at(p), ge = end_at(p);
    start = std::min(start, gs);
    total_ -= ge - gs;
    if (ge >= end) {
      start_at(p) = start;
      total_ += ge - start;
      resized(p, ge - gs);
      return;
    }
    p = erase(p);
  }
  insert(p, end, start);
  total_ += end - start;
}

bool GapIndex::remove_range(uint64_t start, uint64_t end) {
  Pos p = first_ending_after(start, false);
  const bool in_one_gap = valid(p) && start_at(p) <= start && end_at(p) >= end;
  while (valid(p) && start_at(p) < end) {
    uint64_t gs = start_at(p), ge = end_at(p);
    total_ -= ge - gs;
    if (ge > end) {
      // The tail [end, ge) keeps the slot: a block placed at the start of
      // a gap, what most allocators do, costs one search and no move.
      start_at(p) = end;
      total_ += ge - end;
      resized(p, ge - gs);
      if (gs < start) {
        insert(p, start, gs);
        total_ += start - gs;
      }
      return in_one_gap;
    }
    p = erase(p);
    if (gs < start) {
      insert(p, start, gs);
      total_ += start - gs;
      p = first_ending_after(start, false);
    }
  }
  return in_one_gap;
}

bool GapIndex::occupy(uint64_t address, uint64_t size) { return size == 0 || remove_range(address, address + size); }

void GapIndex::release(uint64_t address, uint64_t size) {
  // Clip to the extent: a block that overflowed the pool frees only its
  // part inside it.
  uint64_t start = std::max(address, low_), end = std::min(address + size, high_);
  if (start < end) add_gap(start, end);
}

void GapIndex::reset() {
  chunks_.clear();
  free_ids_.clear();
  order_.clear();
  last_end_.clear();
  levels_.clear();
  total_ = 0;
  largest_ = largest_end_ = second_ = 0;
  largest_valid_ = true;
  tracked_ = false;
  if (!empty_extent()) add_gap(low_, high_);
}

uint64_t GapIndex::largest_free() {
  if (!largest_valid_) {
    if (levels_.empty()) {
      size_t n = chunks_.size();
      do {
        n = std::max<size_t>(1, (n + kGroup - 1) / kGroup);
        levels_.emplace_back(n, Group{0, false});
      } while (n > kGroup);
    }
    largest_ = 0;
    for (size_t g = 0; g < levels_.back().size(); ++g) largest_ = std::max(largest_, group_largest(levels_.size() - 1, g));
    find_largest();
    largest_valid_ = true;
  }
  return largest_;
}

void GapIndex::find_largest() {
  largest_end_ = 0;
  if (!tracked_ || largest_ == 0) return;
  // Down the groups to a chunk holding the largest (kGroup entries a level),
  // every sibling passed on the way bounding the others.
  second_ = 0;
  size_t first = 0, count = levels_.back().size();
  for (size_t level = levels_.size(); level-- > 0;) {
    size_t at = first + count;
    for (size_t g = first; g < first + count; ++g) {
      const uint64_t l = levels_[level][g].largest;
      if (l == largest_ && at == first + count) at = g;
      else second_ = std::max(second_, l);
    }
    first = at * kGroup;
    count = std::min(first + kGroup, level ? levels_[level - 1].size() : chunks_.size()) - first;
  }
  size_t id = first + count;
  for (size_t c = first; c < first + count; ++c) {
    if (chunks_[c].largest == largest_ && id == first + count) id = c;
    else second_ = std::max(second_, chunks_[c].largest);
  }
  const Chunk& c = chunks_[id];
  size_t at = c.size();
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.gap(i) == largest_ && at == c.size()) at = i;
    else second_ = std::max(second_, c.gap(i));
  }
  largest_end_ = c.gaps[at].end;
}

}  // namespace edgemem
