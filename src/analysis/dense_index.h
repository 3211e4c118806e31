// Keys to dense indices (0, 1, 2, ... in the order met), looked up on every
// memory event by the per-thread analyses: kernel thread ids, and pairs of
// them. Events come in runs from one thread, so the last key met is checked
// first; otherwise open addressing, one or two probes in one array.
// Bounded: past `cap` keys, new ones share the index `cap` (a process that
// starts a thread per request keeps the analysis flat on any trace length).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgemem {

class DenseIndex {
 public:
  explicit DenseIndex(uint32_t cap) : cap_(cap) { slots_.resize(64); }

  // The key's index: size() before the call the first time it is met, or
  // overflow() once `cap` keys are known.
  uint32_t of(uint64_t key) {
    if (key == last_key_ && count_ > 0) return last_index_;
    if ((count_ + 1) * 2 > slots_.size()) grow();
    Slot& s = slots_[probe(key)];
    if (s.index == 0) {
      if (count_ >= cap_) return remember(key, cap_);
      s = Slot{key, ++count_};
    }
    return remember(key, s.index - 1);
  }
  // The key's index if it is known, overflow() if not; changes nothing.
  uint32_t find(uint64_t key) const {
    const Slot& s = slots_[probe(key)];
    return s.index ? s.index - 1 : cap_;
  }
  uint32_t size() const { return count_; }
  uint32_t overflow() const { return cap_; }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t index = 0;  // index + 1; 0 = empty
  };
  uint32_t remember(uint64_t key, uint32_t index) {
    last_key_ = key;
    last_index_ = index;
    return index;
  }
  size_t probe(uint64_t key) const {
    uint64_t x = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9u;  // splitmix64's finaliser: tids are clustered
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    size_t mask = slots_.size() - 1;
    for (size_t i = static_cast<size_t>(x ^ (x >> 31)) & mask;; i = (i + 1) & mask)
      if (slots_[i].index == 0 || slots_[i].key == key) return i;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.index) slots_[probe(s.key)] = s;
  }

  uint32_t cap_;
  std::vector<Slot> slots_;
  uint32_t count_ = 0;
  uint64_t last_key_ = 0;
  uint32_t last_index_ = 0;
};

}  // namespace edgemem
