#include "live_map.h"

#include <sys/mman.h>

#include <algorithm>

namespace edgemem {

void LiveMap::advise_huge_pages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < 4 * kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  // A hint: kernels without transparent huge pages ignore it.
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

bool LiveMap::collided(Block& in_table, const Block& block, Block* previous, bool stacking) {
  if (stacking && (block.size == 0 || in_table.size == 0)) {
    stack(in_table, block);
    return false;
  }
  if (previous) *previous = in_table;
  in_table = block;
  if (!stacked_.empty()) came_after(block.address);
  return true;
}

void LiveMap::stack(Block& in_table, const Block& block) {
  if (block.size == 0) {
    stacked_.push_back({block, true});
    return;
  }
  // A block with bytes over a 0-byte one takes the table's place. The
  // blocks at the offset stay in the order they came: those below the
  // table's, the table's, those above it; all now below the new one.
  const uint64_t address = block.address;
  auto above = std::find_if(stacked_.begin(), stacked_.end(),
                            [&](const Stacked& s) { return s.block.address == address && s.above; });
  stacked_.insert(above, {in_table, false});
  came_after(address);
  in_table = block;
}

void LiveMap::came_after(uint64_t address) {
  for (Stacked& s : stacked_)
    if (s.block.address == address) s.above = false;
}

bool LiveMap::erase_stacked(uint64_t address, Block* out, bool sized_only) {
  auto latest = stacked_.end();
  for (auto it = stacked_.begin(); it != stacked_.end(); ++it)
    if (it->block.address == address) latest = it;
  if (latest == stacked_.end()) return erase_from_table(address, out);
  if (latest->above && !sized_only) {
    if (out) *out = latest->block;
    stacked_.erase(latest);
    return true;
  }
  if (!erase_from_table(address, out)) return false;
  // The latest left at the offset takes the table's place.
  const Block up = latest->block;
  stacked_.erase(latest);
  came_after(address);
  put(up, nullptr);
  return true;
}

}  // namespace edgemem
