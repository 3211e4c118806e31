/* More distinct call stacks than SiteTable::kMaxSites (65,536), as a node
 * process has at start-up: 17 levels, each entered through one of two
 * callers, give 2^17 stacks that allocate and free a block. Then 30 marked
 * inferences each leak one 200-byte block at planted_leak, first allocated
 * after all the other stacks, so a capped table would have no name left
 * for it. Built without optimisation so left and right stay two functions.
 */
#include <stdint.h>
#include <stdlib.h>

#include "edgemem_marker.h"

enum { kLevels = 17, kInferences = 30, kLeakBytes = 200 };

void* volatile kept;

static void step(int level, uint32_t path);

__attribute__((noinline)) static void left(int level, uint32_t path) { step(level + 1, path); }

__attribute__((noinline)) static void right(int level, uint32_t path) { step(level + 1, path); }

__attribute__((noinline)) static void step(int level, uint32_t path) {
  if (level == kLevels) {
    void* p = malloc(24 + level);
    kept = p;
    free(p);
    return;
  }
  if (path >> level & 1)
    right(level, path);
  else
    left(level, path);
}

__attribute__((noinline)) static void planted_leak(void) { kept = malloc(kLeakBytes); }

int main(void) {
  for (uint32_t path = 0; path < (1u << kLevels); ++path) step(0, path);
  for (int i = 1; i <= kInferences; ++i) {
    edgemem_mark_inference_begin((uint64_t)i);
    for (uint32_t path = 0; path < 64; ++path) step(0, path * 2047u + (uint32_t)i);
    planted_leak();
    edgemem_mark_inference_end((uint64_t)i);
  }
  return 0;
}
