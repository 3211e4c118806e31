/* A tiny int8 keyword-spotting network computed on a TFLite-Micro-style
 * arena, with an audio front end on the malloc heap. VARIANT (build time)
 * plants one defect of the seed articles:
 *   0 clean     nothing
 *   1 leak      a custom LSTM-like op allocates 644 B of persistent state in
 *               every Invoke instead of once in Prepare (seed 001 §4.1)
 *   2 fragment  MFCC buffers of varying shape are kept and freed out of
 *               order until malloc fails with enough total free (§4.2)
 *   3 overflow  a depthwise op sizes its int32 accumulator for int8 and
 *               writes past the arena at the 8th inference (§4.3)
 *   4 lifo      an op frees its scratch before the buffer above it (§4.1) */
#ifndef MODEL_H
#define MODEL_H
#include <stdint.h>

#include "edgemem_arena.h"

#ifndef VARIANT
#define VARIANT 0
#endif

void model_prepare(em_arena *arena);
int model_invoke(em_arena *arena, const int8_t *features, uint32_t inference);
#endif
