// Free space of a pool of bounded extent (a device heap or arena, up to a
// few MiB) with a bit per byte for where each gap starts and where it ends,
// and a tournament tree of the largest gap starting in each 64-byte word.
// A step is a few word operations: no search through sorted arrays, no
// memmove. The tree is brought up to date only when the largest gap shrank
// (growth is seen directly), from the words changed since. Addresses and
// sizes stay exact to the byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgemem {

// Bits in 64-bit words, each level summarising the one below (a bit per
// non-zero word), so the next or previous set bit costs a word per level.
class LevelBitmap {
 public:
  static constexpr uint64_t kNone = ~0ull;
  void assign(uint64_t bits);  // all clear
  void set(uint64_t x);
  void clear(uint64_t x);
  uint64_t next(uint64_t x) const;      // first set bit >= x, or kNone
  uint64_t previous(uint64_t x) const;  // last set bit <= x, or kNone
  bool test(uint64_t x) const { return (words_[x >> 6] >> (x & 63)) & 1; }
  uint64_t word(uint64_t w) const { return words_[w]; }
  void clear_all();

 private:
  static constexpr size_t kMaxLevels = 6;  // 64^6 bits
  // 32-bit bookkeeping cannot alias the words it indexes, so it stays in
  // registers across the stores.
  std::vector<uint64_t> words_;         // every level, level 0 first
  uint32_t offset_[kMaxLevels] = {};    // of each level in words_
  uint32_t count_[kMaxLevels] = {};     // words in each level
  size_t levels_ = 0;
};

class GapBitmap {
 public:
  // The widest extent kept as bits: 4 MiB of pool cost 1.5 MiB here.
  static constexpr uint64_t kMaxCapacity = uint64_t{1} << 22;

  bool holds(uint64_t low, uint64_t high) const {
    return capacity_ > 0 && low >= base_ && high - base_ <= capacity_;
  }
  // Makes room for [low, high) (at most kMaxCapacity bytes), keeping every
  // gap; `old_low`/`old_high` is the extent before, empty when there was none,
  // so the spare room goes where the extent grew.
  void make_room(uint64_t old_low, uint64_t old_high, uint64_t low, uint64_t high);
  // Both take a range inside the room; `add` merges touching gaps.
  void add(uint64_t start, uint64_t end);
  void remove(uint64_t start, uint64_t end);
  void clear();  // no gaps, the room kept

  uint64_t total() const { return total_; }
  uint64_t largest();
  template <typename F>
  void for_each_gap(F f) const {  // in address order
    for (uint64_t s = starts_.next(0); s != LevelBitmap::kNone;) {
      uint64_t last = lasts_.next(s);
      f(base_ + s, base_ + last + 1);
      s = last + 1 < capacity_ ? starts_.next(last + 1) : LevelBitmap::kNone;
    }
  }

 private:
  void place(uint64_t start, uint64_t length);  // sets both bits of a new gap
  void drop(uint64_t start, uint64_t last);     // clears both
  void word_changed(uint64_t start);  // its leaf is stale
  uint32_t largest_in_word(uint64_t w) const;
  void set_leaf(uint64_t w, uint32_t value);
  void build_tree();
  void grew(uint64_t length) {
    if (largest_valid_ && length > largest_) largest_ = length;
  }
  void shrank(uint64_t old_length) {
    if (old_length >= largest_) largest_valid_ = false;
  }

  // Offsets from base_: a gap [s, e) has bit s in starts_ and bit e-1 in lasts_.
  LevelBitmap starts_, lasts_;
  std::vector<uint32_t> tree_;  // tree_[1] is the root; leaves from tree_[words_]
  uint64_t base_ = 0, capacity_ = 0, words_ = 0;
  uint64_t total_ = 0, gaps_ = 0;
  uint64_t largest_ = 0;
  bool largest_valid_ = true;
  std::vector<uint64_t> stale_bits_;  // a bit per leaf
  std::vector<uint32_t> stale_;       // those leaves, unless all_stale_
  bool all_stale_ = false;
};

}  // namespace edgemem
