/* A tensor arena in the shape of TFLite Micro's single-arena allocator:
 * persistent buffers (weights, op state) come from the tail, non-persistent
 * (activations, scratch) from the head, and a guard zone of sentinel bytes
 * sits past the end (seed 001 §4.3). Every call is recorded: head blocks in
 * pool "<name>" at offsets from the arena start, tail blocks in pool
 * "<name>.persistent" at offsets measured back from the arena end, so both
 * grow upward in their own pool.
 *
 * Head blocks may also be freed one by one; the head is a stack, so only
 * the top block (and any freed blocks directly below it) is reclaimed. */
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
} em_arena;

/* `memory` must hold size + EM_GUARD_BYTES bytes. */
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
