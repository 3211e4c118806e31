/* newlib hooks: the heap is the linker's .heap region, nothing beyond it. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern uint8_t __heap_start, __heap_end;
static uint8_t *brk = &__heap_start;

void *_sbrk(ptrdiff_t increment) {
  if (brk + increment > &__heap_end || brk + increment < &__heap_start) {
    errno = ENOMEM;
    return (void *)-1;
  }
  uint8_t *old = brk;
  brk += increment;
  return old;
}
