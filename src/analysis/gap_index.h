// Free space of one pool as address-ordered gaps, with the largest gap
// available at any moment: what fragmentation needs after every allocation.
//
// Gaps live in sorted chunks of at most 2*kChunk entries (end, start), each
// chunk knowing its largest gap. A lookup is two binary searches (chunk
// ends, then the chunk); chunks are small so a split or merge moves half a
// KiB and a shrunk maximum rescans a few cache lines. A chunk keeps its id
// while chunks split and empty around it (their address order is a separate
// list of ids), so runs of kGroup ids can keep their largest gap: a pool
// whose largest gap shrinks on every allocation (a fragmented heap served
// from its top) finds the next largest in a few dozen steps, not one per
// chunk. Over one group of chunks the largest gap is also known by its end,
// with a bound on the others: while it stays above that bound, shrinking it
// needs no search at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgemem {

class GapIndex {
 public:
  // The pool spans [low, high); anything newly inside it is free.
  void extend(uint64_t low, uint64_t high);
  // False when part of the range was not free: it lies over another block
  // (whose free was lost) or outside the extent.
  bool occupy(uint64_t address, uint64_t size);
  void release(uint64_t address, uint64_t size);
  void reset();  // everything inside the extent is free again

  uint64_t total_free() const { return total_; }
  uint64_t largest_free();
  bool empty_extent() const { return high_ <= low_; }
  uint64_t low() const { return low_; }
  uint64_t high() const { return high_; }

 private:
  // End and start side by side: a split or a merge moves one array, and
  // the search still loads one element per step.
  struct Gap {
    uint64_t end, start;
  };
  struct Chunk {
    std::vector<Gap> gaps;  // sorted by end
    uint64_t largest = 0;  // when stale, only a bound: rescanned when a search needs it
    bool stale = false;
    size_t size() const { return gaps.size(); }
    uint64_t gap(size_t i) const { return gaps[i].end - gaps[i].start; }
  };
  struct Pos {
    size_t chunk, index;  // chunk: place in address order (order_), not id
  };
  static constexpr size_t kChunk = 16;

  void add_gap(uint64_t start, uint64_t end);
  bool remove_range(uint64_t start, uint64_t end);  // whether it lay in one gap
  Pos first_ending_after(uint64_t x, bool inclusive) const;  // end > x (or >= x)
  bool valid(Pos p) const { return p.chunk < order_.size(); }
  Chunk& at(size_t place) { return chunks_[order_[place]]; }
  const Chunk& at(size_t place) const { return chunks_[order_[place]]; }
  uint64_t& start_at(Pos p) { return at(p.chunk).gaps[p.index].start; }
  uint64_t end_at(Pos p) const { return at(p.chunk).gaps[p.index].end; }
  Pos next(Pos p) const;
  Pos erase(Pos p);             // returns the position of the following gap
  void insert(Pos p, uint64_t end, uint64_t start);  // before p (p may be the end)
  void resized(Pos p, uint64_t old_size);
  // A gap ending at `end` is now `size` long (a new one, or one grown).
  void grew(uint64_t end, uint64_t size);
  uint32_t new_chunk();  // an id with no gaps
  void rescan(uint32_t id);
  // Chunk `id`'s largest gap is now `largest`; the groups above it follow.
  void set_largest(uint32_t id, uint64_t largest);
  // Chunk `id` lost or shrank a gap of `size`: if that was its largest, the
  // chunk is stale and no group above it is known.
  void shrank(uint32_t id, uint64_t size);
  // The largest gap under group `group` of `level`, computed if not known.
  uint64_t group_largest(size_t level, size_t group);
  // After the groups are known: which gap is the largest, and the largest of the others.
  void find_largest();
  // The gap ending at `end`, of `size`, is or ties the largest.
  bool may_be_largest(uint64_t end, uint64_t size) const { return largest_end_ ? end == largest_end_ : size >= largest_; }

  std::vector<Chunk> chunks_;       // by id
  std::vector<uint32_t> free_ids_;  // chunks emptied, for reuse
  std::vector<uint32_t> order_;     // chunk ids by address
  std::vector<uint64_t> last_end_;  // beside order_, for the top-level search
  // Level 0 groups kGroup chunk ids, level 1 kGroup level-0 groups, up to
  // a level of at most kGroup groups. A group not valid has no ancestor valid.
  static constexpr size_t kGroup = 32;
  struct Group {
    uint64_t largest = 0;
    bool valid = true;
  };
  std::vector<std::vector<Group>> levels_;  // empty until the largest is first searched for
  uint64_t total_ = 0;
  // The largest gap may be known by its end (a gap's end never moves while
  // it lives; 0 when not known), with a bound on every other gap: it may
  // shrink down to that bound and stay the largest, which a heap served from
  // its top does on every allocation. Otherwise it is searched for when next asked.
  uint64_t largest_ = 0, largest_end_ = 0, second_ = 0;
  bool largest_valid_ = true;
  // Over a group of chunks, the largest gap is tracked and chunks rescanned
  // only when searched. Under it a search costs about what tracking would,
  // and tracking measured slower on a small heap (more branches, mispredicted).
  bool tracked_ = false;
  uint64_t low_ = 0, high_ = 0;
};

}  // namespace edgemem
