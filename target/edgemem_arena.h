/* A tensor arena in the shape of TFLite Micro's single-arena allocator:
 * persistent buffers (weights, op state) come from the tail, non-persistent
 * (activations, scratch) from the head, and a guard zone of sentinel bytes
 * sits past the end (seed 001 §4.3). Every call is recorded: head blocks in
 * pool "<name>" at offsets from the arena start, tail blocks in pool
 * "<name>.persistent" at offsets measured back from the arena end, so both
 * grow upward in their own pool.
 *
 * Head blocks may also be freed one by one; the head is a stack, so only
 * the top block (and any freed blocks directly below it) is reclaimed.
 * em_arena_reset_temp releases every head block; TFLite Micro's
 * ResetTempAllocations keeps its resizable head buffer (the plan and scratch
 * buffers), so a port that maps it here records that buffer as released —
 * record TFLite Micro itself with tools/tflm_oracle/capture_probe.cc. */
#ifndef EDGEMEM_ARENA_H
#define EDGEMEM_ARENA_H

#include "edgemem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EM_GUARD_BYTES 32u

typedef struct {
  uint8_t *base;
  uint32_t size;   /* usable bytes; the guard zone follows them */
  uint32_t head;   /* bytes used from the start */
  uint32_t tail;   /* bytes used from the end */
  uint8_t head_pool, tail_pool;
  uint32_t freed_top; /* head offsets of blocks freed out of order (bitmask of the last 32 blocks) */
  uint32_t stack[32], depth; /* head block offsets, for LIFO frees */
  uint32_t untracked; /* live head blocks past the stack's 32: frees reclaim nothing until a reset */
  char tail_name[32]; /* "<name>.persistent", a name past 20 characters cut by em_fit_name: the text output names pools by pointer, so the
                         em_arena must live as long as the capture (as `name` must) */
} em_arena;

/* `memory` must hold size + EM_GUARD_BYTES bytes. An unaligned start is
 * rounded up to 16 bytes (the arena then has that much less), as TFLite
 * Micro does with its arena. Alignments must be powers of two (0: 16). */
void em_arena_init(em_arena *arena, const char *name, uint8_t *memory, uint32_t size);
void *em_arena_persistent(em_arena *arena, uint32_t size, uint32_t align, uint32_t site);
void *em_arena_temp(em_arena *arena, uint32_t size, uint32_t align, uint32_t site);
void em_arena_free_temp(em_arena *arena, void *p, uint32_t site);
void em_arena_reset_temp(em_arena *arena);
/* Checks the guard zone and records the result; returns 1 if intact. */
int em_arena_check_guard(em_arena *arena);

#define EM_ARENA_PERSISTENT(a, size, align) em_arena_persistent((a), (size), (align), EM_SITE_HERE())
#define EM_ARENA_TEMP(a, size, align) em_arena_temp((a), (size), (align), EM_SITE_HERE())
#define EM_ARENA_FREE_TEMP(a, p) em_arena_free_temp((a), (p), EM_SITE_HERE())

#ifdef __cplusplus
}
#endif

#endif
