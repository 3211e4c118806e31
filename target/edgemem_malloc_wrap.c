/* malloc/free/calloc/realloc recorded through the linker:
 *   -Wl,--wrap=malloc,--wrap=free,--wrap=calloc,--wrap=realloc
 * Call em_malloc_wrap_pool(pool) once with the heap's pool id. The site is
 * the caller's return address; `edgemem analyze --elf fw.elf` turns it into
 * file:line. Compile callers with -fno-builtin-malloc so GCC keeps calls
 * whose result looks unused.
 *
 * Summary mode (-DEDGEMEM_SUMMARY=1) counts the heap's used bytes, so a
 * free must say how many: both sides use the allocator's usable size
 * (malloc_usable_size, newlib and glibc), a little more than requested.
 * malloc cannot tell its largest free block: SUMMARY records say unknown.
 *
 * Only these four symbols are wrapped. Blocks from memalign, aligned_alloc,
 * posix_memalign, strdup or newlib's reentrant _malloc_r (which its stdio
 * calls) are not recorded, but their free() is: the host counts those as
 * frees of blocks that were not live, and in summary mode they lower the
 * heap's used bytes. Wrap those entry points too where the program uses them. */
#include "edgemem.h"

#include <stdint.h>

#if defined(EDGEMEM_ENABLE) && EDGEMEM_ENABLE

#if defined(EDGEMEM_SUMMARY) && EDGEMEM_SUMMARY
#include <malloc.h>
#define BLOCK_SIZE(p, requested) ((uint32_t)malloc_usable_size(p))
#else
#define BLOCK_SIZE(p, requested) ((uint32_t)(requested))
#endif

void *__real_malloc(size_t size);
void __real_free(void *p);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

static uint8_t heap_pool;

/* A request as the 32-bit record holds it: past 4 GiB (a 64-bit host), the largest. */
static uint32_t request32(size_t size) {
#if SIZE_MAX > 0xFFFFFFFFu
  if (size > 0xFFFFFFFFu) return 0xFFFFFFFFu;
#endif
  return (uint32_t)size;
}

void em_malloc_wrap_pool(uint8_t pool) { heap_pool = pool; }

void *__wrap_malloc(size_t size) {
  void *p = __real_malloc(size);
  if (p) em_alloc(heap_pool, (uintptr_t)p, BLOCK_SIZE(p, size), 8, EM_SITE_CALLER());
  else em_alloc_failed(heap_pool, request32(size), 8, EM_SITE_CALLER());
  return p;
}

void __wrap_free(void *p) {
  if (p) em_free_sized(heap_pool, (uintptr_t)p, BLOCK_SIZE(p, 0), EM_SITE_CALLER());
  __real_free(p);
}

void *__wrap_calloc(size_t n, size_t size) {
  void *p = __real_calloc(n, size);
  /* n * size past the address space is a request no heap can serve: it is
   * recorded as the largest request (a product that wrapped would read small). */
  uint32_t bytes = size && n > (size_t)0xFFFFFFFFu / size ? 0xFFFFFFFFu : (uint32_t)(n * size);
  if (p) em_alloc(heap_pool, (uintptr_t)p, BLOCK_SIZE(p, bytes), 8, EM_SITE_CALLER());
  else em_alloc_failed(heap_pool, bytes, 8, EM_SITE_CALLER());
  return p;
}

/* realloc(p, 0) returning NULL freed p (newlib and glibc; C23 leaves it
 * undefined): it is recorded as the free it was. */
void *__wrap_realloc(void *old, size_t size) {
#if defined(EDGEMEM_SUMMARY) && EDGEMEM_SUMMARY
  uint32_t old_size = old ? BLOCK_SIZE(old, 0) : 0;
  void *p = __real_realloc(old, size);
  if (p) {
    if (old) em_free_sized(heap_pool, (uintptr_t)old, old_size, EM_SITE_CALLER());
    em_alloc(heap_pool, (uintptr_t)p, BLOCK_SIZE(p, size), 8, EM_SITE_CALLER());
  } else if (!size) {
    if (old) em_free_sized(heap_pool, (uintptr_t)old, old_size, EM_SITE_CALLER());
  }
#else
  void *p = __real_realloc(old, size);
  if (p) em_realloc(heap_pool, (uintptr_t)old, (uintptr_t)p, (uint32_t)size, EM_SITE_CALLER());
  else if (!size) {
    if (old) em_free(heap_pool, (uintptr_t)old, EM_SITE_CALLER());
  }
#endif
  else em_alloc_failed(heap_pool, request32(size), 8, EM_SITE_CALLER());
  return p;
}

#endif
