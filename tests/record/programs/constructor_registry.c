/* A library that allocates in its constructor, as protobuf, ONNX Runtime
 * and libstdc++ do: its constructor runs before the recorder's (a library
 * the program links is initialised before the preloaded one), and the
 * program frees most of what it made later. */
#include <stdlib.h>

#define REGISTRY_ENTRIES 8

static void* registry[REGISTRY_ENTRIES];

__attribute__((noinline)) static void register_builtins(void) {
  for (int i = 0; i < REGISTRY_ENTRIES; ++i) registry[i] = malloc(4000); /* record-test: constructor allocation */
  registry[0] = realloc(registry[0], 4100);                             /* record-test: constructor realloc */
}

__attribute__((constructor)) static void registry_init(void) { register_builtins(); }

/* Frees every entry but the last, which the program keeps to its end. */
void registry_release(void) {
  for (int i = 0; i + 1 < REGISTRY_ENTRIES; ++i) free(registry[i]);
}
