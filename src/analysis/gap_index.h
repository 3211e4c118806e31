// Free space of one pool as address-ordered gaps, with the largest gap
// available at any moment: what fragmentation needs after every allocation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
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
  void add_gap(uint64_t start, uint64_t end);
  void remove_range(uint64_t start, uint64_t end);
  void push(uint64_t size, uint64_t end);

  // Nodes come from a pool: the map churns on every allocation and free.
  // Held by pointer so the index can move (pools live in a growing vector).
  std::unique_ptr<std::pmr::unsynchronized_pool_resource> pool_ =
      std::make_unique<std::pmr::unsynchronized_pool_resource>();
  std::pmr::map<uint64_t, uint64_t> gaps_{pool_.get()};  // end -> start
  // Max-heap of (size, end); entries whose gap has changed are skipped lazily.
  std::vector<std::pair<uint64_t, uint64_t>> largest_;
  uint64_t total_ = 0;
  // The largest gap stays known unless that very gap is split or shrunk.
  uint64_t largest_known_ = 0;
  bool largest_valid_ = true;
  uint64_t low_ = 0, high_ = 0;
};

}  // namespace edgemem
