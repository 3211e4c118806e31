/* A library the dlopen test loads after start-up: its allocations can only
 * be named if the recording's module map follows dlopen, the constructor's
 * even before dlopen returns. The allocating helper is inlined, so its
 * frame exists only in the DWARF. */
#include <stdlib.h>

void* volatile plugin_block;

static inline __attribute__((always_inline)) void* plugin_buffer(size_t n) {
  return malloc(n); /* record-test: plugin allocation */
}

void* volatile plugin_table;

/* Stores the block itself: `return malloc(n)` would be a tail call, and
 * its frame gone from the stack. */
__attribute__((noinline)) static void make_table(size_t n) {
  plugin_table = malloc(n); /* record-test: constructor allocation */
}

__attribute__((constructor)) static void plugin_init(void) {
  make_table(4321);
}

__attribute__((noinline)) void plugin_allocate(void) {
  plugin_block = plugin_buffer(777); /* record-test: inlined call */
}
