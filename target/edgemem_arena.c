#include "edgemem_arena.h"

/* Summary mode: both ends' used bytes and the one gap between them, the
 * largest (and only reusable) free block of either end. */
#if defined(EDGEMEM_ENABLE) && EDGEMEM_ENABLE && defined(EDGEMEM_SUMMARY) && EDGEMEM_SUMMARY
static void levels(const em_arena *a) {
  uint32_t gap = a->size - a->head - a->tail;
  em_pool_level(a->head_pool, a->head, gap);
  em_pool_level(a->tail_pool, a->tail, gap);
}
#else
#define levels(a) ((void)(a))
#endif

/* Alignments are powers of two; 0 means the arena's default of 16. */
static uintptr_t align_of(uint32_t align) { return align ? align : 16u; }

void em_arena_init(em_arena *a, const char *name, uint8_t *memory, uint32_t size) {
  /* TFLite Micro aligns the arena's start (MicroAllocator::Create): then an
   * offset aligned to 16 is an address aligned to 16. */
  uint32_t pad = (uint32_t)((16u - ((uintptr_t)memory & 15u)) & 15u);
  if (pad > size) pad = size = 0; /* no room even for the padding: an empty arena */
  a->base = memory + pad;
  a->size = size - pad;
  a->head = a->tail = 0;
  a->depth = 0;
  a->untracked = 0;
  a->freed_top = 0;
#if defined(EDGEMEM_ENABLE) && EDGEMEM_ENABLE
  uint32_t n = em_fit_name(a->tail_name, name, 20);
  const char *suffix = ".persistent";
  for (uint32_t i = 0; suffix[i]; ++i) a->tail_name[n++] = suffix[i];
  a->tail_name[n] = 0;
  a->head_pool = em_pool(name, EM_POOL_ARENA, (uintptr_t)a->base, a->size, 16);
  a->tail_pool = em_pool_shared(a->tail_name, EM_POOL_ARENA, (uintptr_t)a->base, a->size, 16, a->head_pool);
  em_guard_fill(a->base + a->size, EM_GUARD_BYTES); /* memory + size: where the caller left room */
  levels(a);
#else
  (void)name;
#endif
}

/* As SingleArenaBufferAllocator::AllocatePersistentBuffer: the block ends
 * at the tail and its start is aligned down, so the padding lies between it
 * and the block after it. Compared as addresses, which cannot wrap. */
void *em_arena_persistent(em_arena *a, uint32_t size, uint32_t align, uint32_t site) {
  uintptr_t low = (uintptr_t)a->base + a->head, top = (uintptr_t)a->base + a->size - a->tail;
  uintptr_t at = size <= top - low ? (top - size) & ~(align_of(align) - 1u) : 0;
  if (size > top - low || at < low) {
    em_alloc_failed(a->tail_pool, size, align, site);
    return 0;
  }
  a->tail = (uint32_t)((uintptr_t)a->base + a->size - at);
  /* Offsets from the arena end to the block's upper end: the pool grows upward. */
  em_alloc(a->tail_pool, a->tail - size, size, align, site);
  levels(a);
  return (void *)at;
}

/* As AllocateTemp: the start is aligned up from the head. */
void *em_arena_temp(em_arena *a, uint32_t size, uint32_t align, uint32_t site) {
  uintptr_t mask = align_of(align) - 1u, low = (uintptr_t)a->base + a->head;
  uintptr_t top = (uintptr_t)a->base + a->size - a->tail, pad = (0u - low) & mask;
  /* Differences from `low`, which cannot wrap: low <= top always. */
  if (pad > top - low || size > top - low - pad) {
    em_alloc_failed(a->head_pool, size, align, site);
    return 0;
  }
  uintptr_t at = low + pad;
  uint32_t start = (uint32_t)(at - (uintptr_t)a->base);
  /* Past 32 live blocks the stack cannot follow them: the head then stays
   * up until em_arena_reset_temp, so no live block is handed out again. */
  if (a->depth < 32 && !a->untracked) a->stack[a->depth++] = start;
  else ++a->untracked;
  a->head = start + size;
  em_alloc(a->head_pool, start, size, align, site);
  levels(a);
  return (void *)at;
}

void em_arena_free_temp(em_arena *a, void *p, uint32_t site) {
  uint32_t offset = (uint32_t)((uint8_t *)p - a->base);
  em_free(a->head_pool, offset, site);
  if (a->untracked) return; /* blocks above the stack may still be live */
  /* Mark it; pop every freed block from the top of the stack. Blocks of 0
   * bytes share their offset with the block above them: mark the lowest one
   * not yet freed, so freeing one never pops a live block. */
  for (uint32_t i = 0; i < a->depth; ++i)
    if (a->stack[i] == offset && !(a->freed_top & (1u << i))) {
      a->freed_top |= 1u << i;
      break;
    }
  while (a->depth > 0 && (a->freed_top & (1u << (a->depth - 1)))) {
    a->freed_top &= ~(1u << (a->depth - 1));
    a->head = a->stack[--a->depth];
  }
  levels(a);
}

void em_arena_reset_temp(em_arena *a) {
  a->head = 0;
  a->depth = 0;
  a->untracked = 0;
  a->freed_top = 0;
  em_arena_reset(a->head_pool);
  levels(a);
}

int em_arena_check_guard(em_arena *a) {
  int intact = em_guard_intact(a->base + a->size, EM_GUARD_BYTES);
  em_guard(a->head_pool, intact);
  return intact;
}
