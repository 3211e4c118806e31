#include "attached_blocks.h"

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "real_functions.h"

namespace edgemem::preload {

bool tracking_attached_blocks = false;
bool recording_after_attach = false;

namespace {

// Addresses in open-addressing tables split into stripes by address, each
// under its own spin lock (held for a probe, never across a call into
// libc): threads freeing different blocks rarely meet. 0 is an empty slot,
// 1 a removed one; a table is rebuilt (in anonymous memory, never
// malloc's) when half its slots are taken, removed ones counted, at four
// times its live blocks: removed slots are dropped, so churn does not grow it.
constexpr uintptr_t kEmpty = 0, kRemoved = 1;
constexpr size_t kStripes = 64, kFirstCapacity = 1024;

struct Stripe {
  std::atomic<bool> locked{false};
  uintptr_t* slots = nullptr;
  size_t capacity = 0;  // a power of two
  size_t filled = 0;    // live and removed slots
};
Stripe stripes[kStripes];

uint64_t mix(uintptr_t p) { return (p >> 4) * 0x9E3779B97F4A7C15ull; }
Stripe& stripe_of(uintptr_t p) { return stripes[mix(p) >> 58]; }

void lock(Stripe& s) {
  while (s.locked.exchange(true, std::memory_order_acquire))
    while (s.locked.load(std::memory_order_relaxed)) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
}
void unlock(Stripe& s) { s.locked.store(false, std::memory_order_release); }

// The slot holding `p`, else where it goes: the first removed slot on its
// probe path, or the empty one that ends it.
size_t find(const Stripe& s, uintptr_t p) {
  size_t mask = s.capacity - 1, removed = SIZE_MAX;
  for (size_t i = (mix(p) >> 20) & mask;; i = (i + 1) & mask) {
    if (s.slots[i] == p) return i;
    if (s.slots[i] == kEmpty) return removed != SIZE_MAX ? removed : i;
    if (s.slots[i] == kRemoved && removed == SIZE_MAX) removed = i;
  }
}

// False when no memory could be had: the block is then not tracked (its
// free is left out, as one made before the attach).
bool make_room(Stripe& s) {
  if (s.slots && (s.filled + 1) * 2 <= s.capacity) return true;
  size_t live = 0;
  for (size_t i = 0; i < s.capacity; ++i) live += s.slots[i] > kRemoved;
  size_t capacity = kFirstCapacity;
  while (capacity < (live + 1) * 4) capacity *= 2;
  void* memory = real.mmap(nullptr, capacity * sizeof(uintptr_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return false;
  Stripe grown;
  grown.slots = static_cast<uintptr_t*>(memory);
  grown.capacity = capacity;
  for (size_t i = 0; i < s.capacity; ++i)
    if (s.slots[i] > kRemoved) grown.slots[find(grown, s.slots[i])] = s.slots[i], ++grown.filled;
  if (s.slots) real.munmap(s.slots, s.capacity * sizeof(uintptr_t));
  s.slots = grown.slots;
  s.capacity = grown.capacity;
  s.filled = grown.filled;
  return true;
}

}  // namespace

void attached_block_made(const void* block) {
  auto p = reinterpret_cast<uintptr_t>(block);
  Stripe& s = stripe_of(p);
  lock(s);
  if (make_room(s)) {
    size_t i = find(s, p);
    if (s.slots[i] != p) {
      if (s.slots[i] == kEmpty) ++s.filled;
      s.slots[i] = p;
    }
  }
  unlock(s);
}

bool attached_block_freed(const void* block) {
  auto p = reinterpret_cast<uintptr_t>(block);
  Stripe& s = stripe_of(p);
  lock(s);
  bool made = false;
  if (s.slots) {
    size_t i = find(s, p);
    made = s.slots[i] == p;
    if (made) s.slots[i] = kRemoved;
  }
  unlock(s);
  return made;
}

void lock_attached_blocks_for_fork() {
  for (Stripe& s : stripes) lock(s);
}

void unlock_attached_blocks_after_fork() {
  for (Stripe& s : stripes) unlock(s);
}

void track_blocks_made_after_fork() {
  for (Stripe& s : stripes) {
    if (s.slots) real.munmap(s.slots, s.capacity * sizeof(uintptr_t));
    s.slots = nullptr;
    s.capacity = s.filled = 0;
  }
  tracking_attached_blocks = true;
  recording_after_attach = false;
}

}  // namespace edgemem::preload
