/* ONNX Runtime OrtAllocator wrapper (C API). em_ort_allocator starts with
 * the members of OrtAllocator up to API version 23 (version, Alloc, Free,
 * Info; Reserve from 18; GetStats and AllocOnStream from 23), so a pointer
 * to it can be passed where ORT expects an OrtAllocator*: every allocation
 * the session makes is forwarded to `inner` and recorded.
 *
 *   em_ort_allocator a;
 *   em_ort_wrap(&a, inner_allocator, pool);
 *   api->CreateSessionWithAllocator... / RegisterAllocator(env, (OrtAllocator*)&a)
 *
 * The wrapper states the inner allocator's version, at most 23: ORT reads
 * no member past the ones that version has, and a member the inner
 * allocator lacks is NULL here too (ORT then falls back to Alloc). */
#ifndef EDGEMEM_ORT_H
#define EDGEMEM_ORT_H

#include "edgemem.h"

/* ORT frees by address alone: in summary mode the pool's used bytes could
 * never go down, and every run would read as a leak. */
#if defined(EDGEMEM_SUMMARY) && EDGEMEM_SUMMARY
#error "edgemem_ort.h records every block and needs a full trace: ORT's Free carries no size, so summary mode cannot count it. Report the pool with em_pool_level() from the allocator's own statistics instead, or build without EDGEMEM_SUMMARY."
#endif

#define EM_ORT_MAX_VERSION 23u

typedef struct em_ort_allocator em_ort_allocator;
struct em_ort_allocator {
  uint32_t version;
  void *(*Alloc)(em_ort_allocator *self, size_t size);
  void (*Free)(em_ort_allocator *self, void *p);
  const void *(*Info)(const em_ort_allocator *self);
  void *(*Reserve)(em_ort_allocator *self, size_t size);                  /* version >= 18 */
  void *(*GetStats)(const em_ort_allocator *self, void **out);            /* version >= 23: OrtStatus*, OrtKeyValuePairs** */
  void *(*AllocOnStream)(em_ort_allocator *self, size_t size, void *stream); /* version >= 23: OrtSyncStream* */
  /* wrapper state */
  em_ort_allocator *inner; /* the allocator ORT would have used (same layout) */
  uint8_t pool;
};

static inline void *em_ort_recorded(em_ort_allocator *self, void *p, size_t size) {
  if (p) em_alloc(self->pool, (uintptr_t)p, (uint32_t)size, 64, EM_SITE_CALLER());
  else em_alloc_failed(self->pool, (uint32_t)size, 64, EM_SITE_CALLER());
  return p;
}
static inline void *em_ort_alloc(em_ort_allocator *self, size_t size) {
  return em_ort_recorded(self, self->inner->Alloc(self->inner, size), size);
}
static inline void *em_ort_reserve(em_ort_allocator *self, size_t size) {
  return em_ort_recorded(self, self->inner->Reserve(self->inner, size), size);
}
static inline void *em_ort_alloc_on_stream(em_ort_allocator *self, size_t size, void *stream) {
  return em_ort_recorded(self, self->inner->AllocOnStream(self->inner, size, stream), size);
}
static inline void em_ort_free(em_ort_allocator *self, void *p) {
  if (p) em_free(self->pool, (uintptr_t)p, EM_SITE_CALLER());
  self->inner->Free(self->inner, p);
}
static inline const void *em_ort_info(const em_ort_allocator *self) { return self->inner->Info(self->inner); }
static inline void *em_ort_stats(const em_ort_allocator *self, void **out) {
  return self->inner->GetStats(self->inner, out);
}

static inline void em_ort_wrap(em_ort_allocator *self, void *inner, uint8_t pool) {
  self->inner = (em_ort_allocator *)inner;
  uint32_t version = self->inner->version;
  self->version = version < EM_ORT_MAX_VERSION ? version : EM_ORT_MAX_VERSION;
  self->Alloc = em_ort_alloc;
  self->Free = em_ort_free;
  self->Info = em_ort_info;
  self->Reserve = version >= 18 && self->inner->Reserve ? em_ort_reserve : 0;
  self->GetStats = version >= 23 && self->inner->GetStats ? em_ort_stats : 0;
  self->AllocOnStream = version >= 23 && self->inner->AllocOnStream ? em_ort_alloc_on_stream : 0;
  self->pool = pool;
}

#endif
