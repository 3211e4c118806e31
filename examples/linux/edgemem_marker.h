/* Optional inference markers for `edgemem record`: call
 * edgemem_mark_inference_begin(i) / _end(i) around each inference and
 * `edgemem analyze` reports growth per inference. The functions live in the
 * preload library; the references are weak, so the program runs unchanged
 * (the calls do nothing) without it. C and C++. */
#ifndef EDGEMEM_MARKER_H
#define EDGEMEM_MARKER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void edgemem_inference_begin(uint64_t index) __attribute__((weak));
void edgemem_inference_end(uint64_t index) __attribute__((weak));

/* The weak references are bound when the program starts, or by a recorder
 * attached later (edgemem record --pid patches them). Not inlined: the
 * compiler takes a symbol's address for a constant and, inlined in a loop,
 * would test it once before the loop, missing an attach. */
#if defined(__GNUC__) && !defined(__clang__)
#define EDGEMEM_MARKER_FUNCTION static __attribute__((noipa, unused)) void
#else
#define EDGEMEM_MARKER_FUNCTION static __attribute__((noinline, unused)) void
#endif

EDGEMEM_MARKER_FUNCTION edgemem_mark_inference_begin(uint64_t index) {
  if (edgemem_inference_begin) edgemem_inference_begin(index);
}

EDGEMEM_MARKER_FUNCTION edgemem_mark_inference_end(uint64_t index) {
  if (edgemem_inference_end) edgemem_inference_end(index);
}

#ifdef __cplusplus
}
#endif

#endif
