// Live blocks of one pool keyed by address: open addressing with linear
// probing and backward-shift deletion, so lookups touch one or two cache
// lines and memory follows the number of live blocks, not the trace length.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "edgemem/event.h"

namespace edgemem {

struct Block {
  uint64_t address = 0, size = 0, time = 0;
  SiteId site = kUnknownSite;
  uint32_t align = 0;
  uint32_t inference = 0;  // 0 = made before the first inference began
  uint32_t group = 0;      // its leak group (LeakAnalysis::group_of), fixed when it is made
  uint32_t thread = 0;     // the thread that made it (Event::thread)
  // Its place on that thread's own clock: the thread's memory events up to
  // its allocation (LeakAnalysis). A float, in the struct's padding: exact
  // to 2^24 events, then to 1 part in 10^7, and never wraps.
  float thread_clock = 0;
};
static_assert(sizeof(Block) == 48, "a block is a live-map slot's payload: keep it small");

class LiveMap {
 public:
  LiveMap() : slots_(16) {}

  Block* find(uint64_t address) {
    for (size_t i = slot(address);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.block.address == address) return &s.block;
    }
  }

  // Inserts or overwrites; returns true if the address was already live.
  // `stacking` (an arena's): a 0-byte block and another block at one offset
  // are both live, as a bump allocator hands a 0-byte block the offset the
  // next block gets; neither replaced the other, and frees there take the
  // latest first (see erase).
  bool put(const Block& block, Block* previous, bool stacking = false) {
    // At most half full: a free's backward shift walks the rest of its probe run.
    if ((count_ + 1) * 2 > mask_ + 1) grow();
    for (size_t i = slot(block.address);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (!s.used) {
        s.used = true;
        s.block = block;
        ++count_;
        return false;
      }
      if (s.block.address == block.address) [[unlikely]]
        return collided(s.block, block, previous, stacking);
    }
  }

  // The block at `address`: of several stacked there, the latest made
  // (`sized_only`: the one with bytes, when there is one).
  bool erase(uint64_t address, Block* out, bool sized_only = false) {
    if (!stacked_.empty()) [[unlikely]]
      return erase_stacked(address, out, sized_only);
    return erase_from_table(address, out);
  }

  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.block);
    for (const Stacked& s : stacked_) f(s.block);
  }

  void clear() {
    slots_ = Slots(16);
    mask_ = 15;
    count_ = 0;
    stacked_.clear();
  }
  size_t size() const { return count_ + stacked_.size(); }
  // Some offset holds more than one block.
  bool stacked() const { return !stacked_.empty(); }

 private:
  bool erase_from_table(uint64_t address, Block* out) {
    size_t i = slot(address);
    for (;; i = (i + 1) & mask()) {
      if (!slots_[i].used) return false;
      if (slots_[i].block.address == address) break;
    }
    if (out) *out = slots_[i].block;
    // Backward shift: move later entries of the probe run into the hole.
    size_t hole = i;
    for (size_t j = (i + 1) & mask(); slots_[j].used; j = (j + 1) & mask()) {
      size_t home = slot(slots_[j].block.address);
      bool movable = (j > hole) ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].used = false;
    --count_;
    return true;
  }

  // Blocks sharing an offset with the table's block there, in the order
  // they came. The table holds the one with bytes, if any: a 0-byte block
  // has no end above another's to keep an arena's top up. `above`: it came
  // after the table's block, so a free there takes it first.
  struct Stacked {
    Block block;
    bool above;
  };
  std::vector<Stacked> stacked_;
  // Out of line (the unity build would inline them): put() and erase()
  // stay as small as their common case.
  [[gnu::noinline, gnu::cold]] bool collided(Block& in_table, const Block& block, Block* previous, bool stacking);
  void stack(Block& in_table, const Block& block);
  void came_after(uint64_t address);
  [[gnu::noinline, gnu::cold]] bool erase_stacked(uint64_t address, Block* out, bool sized_only);

  struct Slot {
    Block block;
    bool used = false;
  };
  // An empty slot is all zero bytes, so a table comes from calloc: a large
  // one is fresh pages the kernel zeroes as they are first touched, not a
  // memset of the whole table at each doubling (a million live blocks grew
  // tables of 117 MB by zeroing them), and may be backed by huge pages.
  static_assert(std::is_trivially_copyable_v<Slot>);
  class Slots {
   public:
    explicit Slots(size_t n) : data_(static_cast<Slot*>(std::calloc(n, sizeof(Slot)))), size_(n) {
      if (!data_) throw std::bad_alloc();
      advise_huge_pages(data_, n * sizeof(Slot));
    }
    Slots(Slots&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    Slots& operator=(Slots&& o) noexcept {
      std::swap(data_, o.data_);
      std::swap(size_, o.size_);
      return *this;
    }
    ~Slots() { std::free(data_); }
    Slot& operator[](size_t i) { return data_[i]; }
    const Slot& operator[](size_t i) const { return data_[i]; }
    size_t size() const { return size_; }
    const Slot* begin() const { return data_; }
    const Slot* end() const { return data_ + size_; }

   private:
    Slot* data_;
    size_t size_;
  };
  static void advise_huge_pages(void* data, size_t bytes);
  // Kept, not computed: slots_.size() divides by the slot's size.
  size_t mask() const { return mask_; }
  size_t slot(uint64_t address) const {
    return static_cast<size_t>((address * 0x9E3779B97F4A7C15ull) >> 32) & mask();
  }
  void grow() {
    const Slots old = std::exchange(slots_, Slots(slots_.size() * 2));
    mask_ = slots_.size() - 1;
    count_ = 0;
    for (const Slot& s : old)
      if (s.used) put(s.block, nullptr);
  }

  Slots slots_;
  size_t mask_ = 15;
  size_t count_ = 0;
};

}  // namespace edgemem
