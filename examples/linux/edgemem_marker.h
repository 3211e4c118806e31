/* Optional inference markers for `edgemem record`: call
 * edgemem_mark_inference_begin(i) / _end(i) around each inference and
 * `edgemem analyze` reports growth per inference. The functions live in the
 * preload library; the references are weak, so the program runs unchanged
 * (the calls do nothing) without it. C and C++. */
#ifndef EDGEMEM_MARKER_H
#define EDGEMEM_MARKER_H

#include <dlfcn.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void edgemem_inference_begin(uint64_t index) __attribute__((weak));
void edgemem_inference_end(uint64_t index) __attribute__((weak));

typedef void (*edgemem_marker_fn)(uint64_t);

/* The weak reference is bound when the program starts. A recorder attached
 * later (edgemem record --pid) is looked up by name, on every call: the
 * compiler takes a symbol's address for a constant and may test it once
 * before a loop. (void *)0 is glibc's and musl's RTLD_DEFAULT, which C
 * declares only with _GNU_SOURCE. */
static inline edgemem_marker_fn edgemem_marker(edgemem_marker_fn bound, const char *name) {
  return bound ? bound : (edgemem_marker_fn)dlsym((void *)0, name);
}

static inline void edgemem_mark_inference_begin(uint64_t index) {
  edgemem_marker_fn f = edgemem_marker(edgemem_inference_begin, "edgemem_inference_begin");
  if (f) f(index);
}

static inline void edgemem_mark_inference_end(uint64_t index) {
  edgemem_marker_fn f = edgemem_marker(edgemem_inference_end, "edgemem_inference_end");
  if (f) f(index);
}

#ifdef __cplusplus
}
#endif

#endif
