/* A library the dlopen test loads after start-up: its allocation can only
 * be named if the recording's module map follows dlopen. The allocating
 * helper is inlined, so its frame exists only in the DWARF. */
#include <stdlib.h>

void* volatile plugin_block;

static inline __attribute__((always_inline)) void* plugin_buffer(size_t n) {
  return malloc(n); /* record-test: plugin allocation */
}

__attribute__((noinline)) void plugin_allocate(void) {
  plugin_block = plugin_buffer(777); /* record-test: inlined call */
}
