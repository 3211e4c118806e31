/* ONNX Runtime OrtAllocator wrapper (C API). em_ort_allocator starts with
 * the four members of OrtAllocator (version, Alloc, Free, Info), so a
 * pointer to it can be passed where ORT expects an OrtAllocator*: every
 * allocation the session makes is forwarded to `inner` and recorded.
 *
 *   em_ort_allocator a;
 *   em_ort_wrap(&a, inner_allocator, pool);
 *   api->CreateSessionWithAllocator... / RegisterAllocator(env, (OrtAllocator*)&a)
 */
#ifndef EDGEMEM_ORT_H
#define EDGEMEM_ORT_H

#include "edgemem.h"

typedef struct em_ort_allocator em_ort_allocator;
struct em_ort_allocator {
  uint32_t version;
  void *(*Alloc)(em_ort_allocator *self, size_t size);
  void (*Free)(em_ort_allocator *self, void *p);
  const void *(*Info)(const em_ort_allocator *self);
  /* wrapper state */
  em_ort_allocator *inner; /* the allocator ORT would have used (same layout) */
  uint8_t pool;
};

static inline void *em_ort_alloc(em_ort_allocator *self, size_t size) {
  void *p = self->inner->Alloc(self->inner, size);
  if (p) em_alloc(self->pool, (uintptr_t)p, (uint32_t)size, 64, EM_SITE_CALLER());
  else em_alloc_failed(self->pool, (uint32_t)size, 64, EM_SITE_CALLER());
  return p;
}
static inline void em_ort_free(em_ort_allocator *self, void *p) {
  if (p) em_free(self->pool, (uintptr_t)p, EM_SITE_CALLER());
  self->inner->Free(self->inner, p);
}
static inline const void *em_ort_info(const em_ort_allocator *self) { return self->inner->Info(self->inner); }

static inline void em_ort_wrap(em_ort_allocator *self, void *inner, uint8_t pool) {
  self->inner = (em_ort_allocator *)inner;
  self->version = self->inner->version;
  self->Alloc = em_ort_alloc;
  self->Free = em_ort_free;
  self->Info = em_ort_info;
  self->pool = pool;
}

#endif
