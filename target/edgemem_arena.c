#include "edgemem_arena.h"

static uint32_t align_up(uint32_t v, uint32_t a) { return a ? (v + a - 1) / a * a : v; }

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

void em_arena_init(em_arena *a, const char *name, uint8_t *memory, uint32_t size) {
  a->base = memory;
  a->size = size;
  a->head = a->tail = 0;
  a->depth = 0;
  a->freed_top = 0;
#if defined(EDGEMEM_ENABLE) && EDGEMEM_ENABLE
  static char tail_name[32];
  uint32_t n = 0;
  while (name[n] && n < 20) { tail_name[n] = name[n]; ++n; }
  const char *suffix = ".persistent";
  for (uint32_t i = 0; suffix[i]; ++i) tail_name[n++] = suffix[i];
  tail_name[n] = 0;
  a->head_pool = em_pool(name, EM_POOL_ARENA, (uintptr_t)memory, size, 16);
  a->tail_pool = em_pool_shared(tail_name, EM_POOL_ARENA, (uintptr_t)memory, size, 16, a->head_pool);
  em_guard_fill(memory + size, EM_GUARD_BYTES);
  levels(a);
#else
  (void)name;
#endif
}

void *em_arena_persistent(em_arena *a, uint32_t size, uint32_t align, uint32_t site) {
  uint32_t need = align_up(size, align ? align : 16);
  if (a->head + a->tail + need > a->size) {
    em_alloc_failed(a->tail_pool, size, align, site);
    return 0;
  }
  uint32_t from_end = a->tail;
  a->tail += need;
  em_alloc(a->tail_pool, from_end, size, align, site);
  levels(a);
  return a->base + a->size - a->tail;
}

void *em_arena_temp(em_arena *a, uint32_t size, uint32_t align, uint32_t site) {
  uint32_t start = align_up(a->head, align ? align : 16);
  if (start + size + a->tail > a->size) {
    em_alloc_failed(a->head_pool, size, align, site);
    return 0;
  }
  if (a->depth < 32) a->stack[a->depth++] = start;
  a->head = start + size;
  em_alloc(a->head_pool, start, size, align, site);
  levels(a);
  return a->base + start;
}

void em_arena_free_temp(em_arena *a, void *p, uint32_t site) {
  uint32_t offset = (uint32_t)((uint8_t *)p - a->base);
  em_free(a->head_pool, offset, site);
  /* Mark it; pop every freed block from the top of the stack. */
  for (uint32_t i = 0; i < a->depth; ++i)
    if (a->stack[i] == offset) a->freed_top |= 1u << i;
  while (a->depth > 0 && (a->freed_top & (1u << (a->depth - 1)))) {
    a->freed_top &= ~(1u << (a->depth - 1));
    a->head = a->stack[--a->depth];
  }
  levels(a);
}

void em_arena_reset_temp(em_arena *a) {
  a->head = 0;
  a->depth = 0;
  a->freed_top = 0;
  em_arena_reset(a->head_pool);
  levels(a);
}

int em_arena_check_guard(em_arena *a) {
  int intact = em_guard_intact(a->base + a->size, EM_GUARD_BYTES);
  em_guard(a->head_pool, intact);
  return intact;
}
