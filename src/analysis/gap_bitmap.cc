#include "gap_bitmap.h"

#include <algorithm>
#include <bit>

namespace edgemem {

void LevelBitmap::assign(uint64_t bits) {
  uint32_t total = 0, n = static_cast<uint32_t>((bits + 63) / 64);
  for (levels_ = 0;; n = (n + 63) / 64) {
    offset_[levels_] = total;
    count_[levels_++] = n;
    total += n;
    if (n <= 1) break;
  }
  words_.assign(total, 0);
}

void LevelBitmap::clear_all() { std::fill(words_.begin(), words_.end(), 0); }

void LevelBitmap::set(uint64_t x) {
  for (size_t k = 0; k < levels_; ++k) {
    uint64_t& word = words_[offset_[k] + (x >> 6)];
    const bool had = word != 0;
    word |= uint64_t{1} << (x & 63);
    if (had) return;
    x >>= 6;
  }
}

void LevelBitmap::clear(uint64_t x) {
  for (size_t k = 0; k < levels_; ++k) {
    uint64_t& word = words_[offset_[k] + (x >> 6)];
    word &= ~(uint64_t{1} << (x & 63));
    if (word) return;
    x >>= 6;
  }
}

uint64_t LevelBitmap::next(uint64_t x) const {
  for (size_t k = 0; k < levels_; ++k) {
    const uint64_t w = x >> 6;
    if (w >= count_[k]) return kNone;
    const uint64_t m = words_[offset_[k] + w] & (~uint64_t{0} << (x & 63));
    if (m) {
      x = (w << 6) | static_cast<uint64_t>(std::countr_zero(m));
      while (k-- > 0) x = (x << 6) | static_cast<uint64_t>(std::countr_zero(words_[offset_[k] + x]));
      return x;
    }
    x = w + 1;
  }
  return kNone;
}

uint64_t LevelBitmap::previous(uint64_t x) const {
  for (size_t k = 0; k < levels_; ++k) {
    const uint64_t w = x >> 6;
    const uint64_t m = words_[offset_[k] + w] & (~uint64_t{0} >> (63 - (x & 63)));
    if (m) {
      x = (w << 6) | static_cast<uint64_t>(63 - std::countl_zero(m));
      while (k-- > 0) x = (x << 6) | static_cast<uint64_t>(63 - std::countl_zero(words_[offset_[k] + x]));
      return x;
    }
    if (w == 0) return kNone;
    x = w - 1;
  }
  return kNone;
}

void GapBitmap::make_room(uint64_t old_low, uint64_t old_high, uint64_t low, uint64_t high) {
  const uint64_t span = high - low;
  const bool fresh = old_high <= old_low;
  // A declared pool gets exactly its size (rounded to a power of two); an
  // extent that grows gets half as much again, so it is rebuilt only when
  // it has grown by a factor.
  const uint64_t want = fresh ? span : span + span / 2;
  uint64_t capacity = 4096;
  while (capacity < want && capacity < kMaxCapacity) capacity <<= 1;
  const uint64_t spare = capacity - span;
  uint64_t below = spare / 2;
  if (!fresh && high == old_high) below = spare;  // grew downwards only
  else if (!fresh && low == old_low) below = 0;   // upwards only
  below = std::min(below, low);

  GapBitmap room;
  room.base_ = low - below;
  room.capacity_ = capacity;
  room.words_ = capacity / 64;
  room.starts_.assign(capacity);
  room.lasts_.assign(capacity);
  room.tree_.assign(2 * room.words_, 0);
  room.stale_bits_.assign((room.words_ + 63) / 64, 0);
  for_each_gap([&](uint64_t s, uint64_t e) { room.place(s - room.base_, e - s); });
  room.total_ = total_;
  room.build_tree();
  *this = std::move(room);
}

void GapBitmap::place(uint64_t start, uint64_t length) {
  starts_.set(start);
  lasts_.set(start + length - 1);
  ++gaps_;
}

void GapBitmap::drop(uint64_t start, uint64_t last) {
  starts_.clear(start);
  lasts_.clear(last);
  --gaps_;
}

uint32_t GapBitmap::largest_in_word(uint64_t w) const {
  uint64_t largest = 0;
  for (uint64_t bits = starts_.word(w); bits; bits &= bits - 1) {
    const uint64_t s = (w << 6) | static_cast<uint64_t>(std::countr_zero(bits));
    largest = std::max(largest, lasts_.next(s) + 1 - s);
  }
  return static_cast<uint32_t>(largest);
}

void GapBitmap::set_leaf(uint64_t w, uint32_t value) {
  size_t i = words_ + w;
  if (tree_[i] == value) return;
  tree_[i] = value;
  // Up while the maximum changes: a small gap stops where a larger one rules.
  while (i > 1) {
    const uint32_t m = std::max(value, tree_[i ^ 1]);
    i >>= 1;
    if (tree_[i] == m) return;
    tree_[i] = m;
    value = m;
  }
}

void GapBitmap::word_changed(uint64_t start) {
  const uint64_t w = start >> 6, bit = uint64_t{1} << (w & 63);
  uint64_t& stale = stale_bits_[w >> 6];
  if (stale & bit) return;
  stale |= bit;
  // Past a quarter of the leaves, rebuilding them all costs less.
  if (stale_.size() < words_ / 4) stale_.push_back(static_cast<uint32_t>(w));
  else all_stale_ = true;
}

void GapBitmap::build_tree() {
  for (uint64_t w = 0; w < words_; ++w) tree_[words_ + w] = starts_.word(w) ? largest_in_word(w) : 0;
  for (size_t i = words_ - 1; i >= 1; --i) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  largest_ = tree_[1];
  largest_valid_ = true;
}

uint64_t GapBitmap::largest() {
  if (largest_valid_) return largest_;
  if (all_stale_) {
    build_tree();
  } else {
    for (uint32_t w : stale_) set_leaf(w, starts_.word(w) ? largest_in_word(w) : 0);
    largest_ = tree_.size() > 1 ? tree_[1] : 0;
    largest_valid_ = true;
  }
  if (all_stale_) std::fill(stale_bits_.begin(), stale_bits_.end(), 0);
  else
    for (uint32_t w : stale_) stale_bits_[w >> 6] = 0;
  stale_.clear();
  all_stale_ = false;
  return largest_;
}

void GapBitmap::add(uint64_t start, uint64_t end) {
  const uint64_t s = start - base_, e = end - base_;
  uint64_t first = s, stop = e;
  // Every gap overlapping or touching [s, e) is swallowed.
  for (uint64_t last = lasts_.next(s ? s - 1 : 0); last != LevelBitmap::kNone; last = lasts_.next(last + 1)) {
    // A gap starting at e that reaches `last` is the one ending there.
    const uint64_t gs = e <= last && starts_.test(e) ? e : starts_.previous(last);
    if (gs > e) break;
    first = std::min(first, gs);
    stop = std::max(stop, last + 1);
    total_ -= last + 1 - gs;
    drop(gs, last);
    word_changed(gs);
    if (last >= e) break;  // the next gap starts past last + 1
  }
  place(first, stop - first);
  total_ += stop - first;
  word_changed(first);
  grew(stop - first);
}

void GapBitmap::remove(uint64_t start, uint64_t end) {
  const uint64_t s = start - base_, e = end - base_;
  for (uint64_t last = lasts_.next(s); last != LevelBitmap::kNone; last = lasts_.next(last + 1)) {
    // A block placed at the start of a gap, what most allocators do.
    const uint64_t gs = starts_.test(s) ? s : starts_.previous(last);
    if (gs >= e) return;
    const bool head = gs < s, tail = last >= e;
    total_ -= last + 1 - gs;
    shrank(last + 1 - gs);
    if (head) {
      lasts_.set(s - 1);
      total_ += s - gs;
    } else {
      starts_.clear(gs);
    }
    word_changed(gs);
    if (head && tail) ++gaps_;
    if (!head && !tail) --gaps_;
    if (tail) {
      starts_.set(e);
      total_ += last + 1 - e;
      word_changed(e);
      return;
    }
    lasts_.clear(last);
  }
}

void GapBitmap::clear() {
  // Gap by gap when there are few (an arena reset every inference), the
  // whole room when that is cheaper.
  if (gaps_ * 16 < words_) {
    for (uint64_t s = starts_.next(0); s != LevelBitmap::kNone; s = starts_.next(s)) {
      drop(s, lasts_.next(s));
      word_changed(s);
    }
  } else {
    starts_.clear_all();
    lasts_.clear_all();
    std::fill(tree_.begin(), tree_.end(), 0);
    std::fill(stale_bits_.begin(), stale_bits_.end(), 0);
    stale_.clear();
    all_stale_ = false;
    gaps_ = 0;
  }
  total_ = 0;
  largest_ = 0;
  largest_valid_ = true;
}

}  // namespace edgemem
