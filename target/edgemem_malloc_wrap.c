/* malloc/free/calloc/realloc recorded through the linker:
 *   -Wl,--wrap=malloc,--wrap=free,--wrap=calloc,--wrap=realloc
 * Call em_malloc_wrap_pool(pool) once with the heap's pool id. The site is
 * the caller's return address; `edgemem analyze --elf fw.elf` turns it into
 * file:line. Compile callers with -fno-builtin-malloc so GCC keeps calls
 * whose result looks unused. */
#include "edgemem.h"

#if defined(EDGEMEM_ENABLE) && EDGEMEM_ENABLE

void *__real_malloc(size_t size);
void __real_free(void *p);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

static uint8_t heap_pool;

void em_malloc_wrap_pool(uint8_t pool) { heap_pool = pool; }

void *__wrap_malloc(size_t size) {
  void *p = __real_malloc(size);
  if (p) em_alloc(heap_pool, (uintptr_t)p, (uint32_t)size, 8, EM_SITE_CALLER());
  else em_alloc_failed(heap_pool, (uint32_t)size, 8, EM_SITE_CALLER());
  return p;
}

void __wrap_free(void *p) {
  if (p) em_free(heap_pool, (uintptr_t)p, EM_SITE_CALLER());
  __real_free(p);
}

void *__wrap_calloc(size_t n, size_t size) {
  void *p = __real_calloc(n, size);
  if (p) em_alloc(heap_pool, (uintptr_t)p, (uint32_t)(n * size), 8, EM_SITE_CALLER());
  else em_alloc_failed(heap_pool, (uint32_t)(n * size), 8, EM_SITE_CALLER());
  return p;
}

void *__wrap_realloc(void *old, size_t size) {
  void *p = __real_realloc(old, size);
  if (p) em_realloc(heap_pool, (uintptr_t)old, (uintptr_t)p, (uint32_t)size, EM_SITE_CALLER());
  else if (size) em_alloc_failed(heap_pool, (uint32_t)size, 8, EM_SITE_CALLER());
  return p;
}

#endif
