/* Vector table and reset: copy .data, zero .bss, run main, exit QEMU with
 * its return code. A fault exits with 127. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
int main(void);

void Reset_Handler(void) {
  uint32_t *src = &__data_load;
  for (uint32_t *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (uint32_t *dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
#if defined(__ARM_FP)
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: enable the FPU */
#endif
  sh_exit(main());
}

static void Fault_Handler(void) { sh_exit(127); }

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(&__stack_top), Reset_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0,
    Fault_Handler, Fault_Handler};
