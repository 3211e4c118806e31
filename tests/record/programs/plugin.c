/* A library the dlopen test loads after start-up: its allocation can only
 * be named if the recording's module map follows dlopen. */
#include <stdlib.h>

void* volatile plugin_block;

__attribute__((noinline)) void plugin_allocate(void) {
  plugin_block = malloc(777); /* record-test: plugin allocation */
}
