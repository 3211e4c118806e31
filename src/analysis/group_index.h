// Leak groups by (pool, site, size), looked up on every allocation. Groups
// are never removed, so an insert-only open-addressing table suffices: a
// lookup is one or two probes in one array instead of a walk through the
// scattered nodes of std::unordered_map.
#pragma once

#include <cstdint>
#include <vector>

#include "edgemem/event.h"

namespace edgemem {

class GroupIndex {
 public:
  GroupIndex() { slots_.resize(64); }

  // The id stored for the key, or `fresh` (stored now) if it had none.
  uint32_t find_or_add(PoolId pool, SiteId site, uint64_t size, uint32_t fresh) {
    if ((count_ + 1) * 2 > mask_ + 1) grow();
    Slot& s = slots_[probe(pool, site, size)];
    if (s.id == 0) {
      s = Slot{size, site, pool, fresh + 1};
      ++count_;
    }
    return s.id - 1;
  }
  // The id stored for the key; kNone when it has none.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t find(PoolId pool, SiteId site, uint64_t size) const {
    const Slot& s = slots_[probe(pool, site, size)];
    return s.id == 0 ? kNone : s.id - 1;
  }

 private:
  struct Slot {
    uint64_t size = 0;
    SiteId site = 0;
    PoolId pool = 0;
    uint32_t id = 0;  // stored id + 1; 0 = empty
  };
  // The key's slot, or the empty slot where it would go.
  size_t probe(PoolId pool, SiteId site, uint64_t size) const {
    // splitmix64's finaliser: sizes and sites are small and clustered.
    uint64_t x = (uint64_t{pool} << 48) ^ (uint64_t{site} << 16) ^ (size * 0x9e3779b97f4a7c15u);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    for (size_t i = static_cast<size_t>(x ^ (x >> 31)) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == 0 || (s.size == size && s.site == site && s.pool == pool)) return i;
    }
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.id) slots_[probe(s.pool, s.site, s.size)] = s;
  }

  std::vector<Slot> slots_;
  size_t mask_ = 63;  // kept, not computed: slots_.size() divides by the slot's size
  size_t count_ = 0;
};

}  // namespace edgemem
