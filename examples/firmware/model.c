#include "model.h"

#include <string.h>

#define IN 64
#define HIDDEN 32
#define OUT 8

/* Weights stay in RAM outside the arena (as if loaded from flash). */
static int8_t w1[IN * HIDDEN], w2[HIDDEN * OUT];
static int32_t b1[HIDDEN], b2[OUT];

typedef struct {
  int32_t multiplier; /* requantisation: (acc * multiplier) >> shift */
  int32_t shift;
  int32_t relu;
} fc_params;

static fc_params *fc1_params, *fc2_params;

static uint32_t rng = 12345;
static int8_t rnd8(void) {
  rng = rng * 1103515245u + 12345u;
  return (int8_t)((rng >> 16) & 0xFF);
}

void model_prepare(em_arena *arena) {
  for (int i = 0; i < IN * HIDDEN; ++i) w1[i] = (int8_t)(rnd8() / 8);
  for (int i = 0; i < HIDDEN * OUT; ++i) w2[i] = (int8_t)(rnd8() / 8);
  for (int i = 0; i < HIDDEN; ++i) b1[i] = rnd8();
  for (int i = 0; i < OUT; ++i) b2[i] = rnd8();
  /* Op data lives for the model's lifetime: persistent, from the tail. */
  fc1_params = EM_ARENA_PERSISTENT(arena, sizeof(fc_params) * 4, 16);
  fc2_params = EM_ARENA_PERSISTENT(arena, sizeof(fc_params) * 4, 16);
  fc1_params->multiplier = 3;
  fc1_params->shift = 7;
  fc1_params->relu = 1;
  fc2_params->multiplier = 5;
  fc2_params->shift = 8;
  fc2_params->relu = 0;
}

static void fully_connected(const int8_t *in, int n_in, const int8_t *w, const int32_t *bias, int8_t *out,
                            int n_out, int32_t *acc, const fc_params *p) {
  for (int o = 0; o < n_out; ++o) {
    acc[o] = bias[o];
    for (int i = 0; i < n_in; ++i) acc[o] += (int32_t)in[i] * w[o * n_in + i];
    int32_t v = (acc[o] * p->multiplier) >> p->shift;
    if (p->relu && v < 0) v = 0;
    out[o] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
  }
}

#if VARIANT == 1 || VARIANT == 6
/* The bug: state that should be allocated once in Prepare is allocated
 * from the persistent region in every Invoke and never returned. */
static void lstm_step(em_arena *arena, const int8_t *h) {
  float *state = EM_ARENA_PERSISTENT(arena, 161 * sizeof(float), 4);
  if (!state) return;
  for (int i = 0; i < 161; ++i) state[i] = (float)h[i % HIDDEN] * 0.5f;
}
#endif

#if VARIANT == 3
/* The bug: a custom depthwise kernel bumps the arena head itself, sized
 * for int8 by the converter, but accumulates in int32: 4x the bytes. At the
 * 8th inference the input is larger and the accumulator runs past the end. */
static void depthwise(em_arena *arena, const int8_t *h, uint32_t inference) {
  uint32_t channels = inference == 8 ? 1024 : 256;
  uint32_t offset = (arena->head + 15u) & ~15u;
  uint32_t bytes = channels * 4;
  em_alloc(arena->head_pool, offset, bytes, 16, EM_SITE_HERE()); /* no bound check */
  int32_t *acc = (int32_t *)(arena->base + offset);
  for (uint32_t c = 0; c < channels; ++c) acc[c] = h[c % HIDDEN] * 3;
  em_free(arena->head_pool, offset, EM_SITE_HERE());
}
#endif

int model_invoke(em_arena *arena, const int8_t *features, uint32_t inference) {
  int8_t *in = EM_ARENA_TEMP(arena, IN, 16);
  int32_t *acc = EM_ARENA_TEMP(arena, HIDDEN * sizeof(int32_t), 16);
  int8_t *h = EM_ARENA_TEMP(arena, HIDDEN, 16);
  if (!in || !acc || !h) return -1;
  memcpy(in, features, IN);
  fully_connected(in, IN, w1, b1, h, HIDDEN, acc, fc1_params);
#if VARIANT == 1 || VARIANT == 6
  lstm_step(arena, h);
#elif VARIANT == 3
  depthwise(arena, h, inference);
#elif VARIANT == 4
  /* im2col scratch freed while the projection buffer above it is live:
   * its 512 B cannot be reused until the projection is freed too. */
  int8_t *im2col = EM_ARENA_TEMP(arena, 512, 16);
  int8_t *proj = EM_ARENA_TEMP(arena, 256, 16);
  if (im2col && proj) {
    memcpy(im2col, h, HIDDEN);
    memcpy(proj, im2col, HIDDEN);
  }
  if (im2col) EM_ARENA_FREE_TEMP(arena, im2col);
  int8_t *extra = EM_ARENA_TEMP(arena, 384, 16); /* lands above proj, not in the hole */
  if (extra) EM_ARENA_FREE_TEMP(arena, extra);
  if (proj) EM_ARENA_FREE_TEMP(arena, proj);
#endif
  (void)inference;
  int8_t *out = EM_ARENA_TEMP(arena, OUT, 16);
  if (!out) return -1;
  fully_connected(h, HIDDEN, w2, b2, out, OUT, acc, fc2_params);
  int best = 0;
  for (int i = 1; i < OUT; ++i)
    if (out[i] > out[best]) best = i;
  em_arena_reset_temp(arena);
  return best;
}
