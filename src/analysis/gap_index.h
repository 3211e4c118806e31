// Free space of one pool as address-ordered gaps, with the largest gap
// available at any moment: what fragmentation needs after every allocation.
//
// Gaps live in sorted chunks of at most 2*kChunk entries (end, start), each
// chunk knowing its largest gap. A lookup is two binary searches (chunk
// ends, then the chunk); chunks are small so a split or merge moves half a
// KiB and a shrunk maximum rescans a few cache lines. Runs of kGroup chunks
// keep their largest gap too, so the largest gap of a pool whose biggest
// gap shrinks on every allocation (a fragmented heap served from its top)
// is found in a few dozen steps instead of one per chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgemem {

class GapIndex {
 public:
  // The pool spans [low, high); anything newly inside it is free.
  void extend(uint64_t low, uint64_t high);
  void occupy(uint64_t address, uint64_t size);
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
    uint64_t largest = 0;
    size_t size() const { return gaps.size(); }
    uint64_t gap(size_t i) const { return gaps[i].end - gaps[i].start; }
  };
  struct Pos {
    size_t chunk, index;
  };
  static constexpr size_t kChunk = 16;

  void add_gap(uint64_t start, uint64_t end);
  void remove_range(uint64_t start, uint64_t end);
  Pos first_ending_after(uint64_t x, bool inclusive) const;  // end > x (or >= x)
  bool valid(Pos p) const { return p.chunk < chunks_.size(); }
  uint64_t& start_at(Pos p) { return chunks_[p.chunk].gaps[p.index].start; }
  uint64_t end_at(Pos p) const { return chunks_[p.chunk].gaps[p.index].end; }
  Pos next(Pos p) const;
  Pos erase(Pos p);             // returns the position of the following gap
  void insert(Pos p, uint64_t end, uint64_t start);  // before p (p may be the end)
  void resized(Pos p, uint64_t old_size);
  void rescan(size_t chunk);
  // Chunk `chunk`'s largest gap is now `largest`, was `old`.
  void chunk_largest(size_t chunk, uint64_t old, uint64_t largest);
  // Chunks were inserted or erased: every group's members moved.
  void regroup() { groups_.clear(); }

  std::vector<Chunk> chunks_;
  std::vector<uint64_t> last_end_;  // per chunk, for the top-level search
  static constexpr size_t kGroup = 32;
  struct Group {
    uint64_t largest = 0;
    bool valid = true;
  };
  std::vector<Group> groups_;  // chunks [g*kGroup, (g+1)*kGroup); empty: to be rebuilt
  uint64_t total_ = 0;
  uint64_t largest_ = 0;
  bool largest_valid_ = true;  // the largest gap stays known unless it shrinks
  uint64_t low_ = 0, high_ = 0;
};

}  // namespace edgemem
