/* examples/firmware/startup.c with the external interrupts' vectors:
 * CMSDK TIMER0 is IRQ 8 on mps2-an385. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
int main(void);
void TIMER0_Handler(void);

void Reset_Handler(void) {
  uint32_t *src = &__data_load;
  for (uint32_t *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (uint32_t *dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
  sh_exit(main());
}

static void Fault_Handler(void) { sh_exit(127); }
static void Other_Handler(void) { sh_exit(126); }

#define OTHER8 Other_Handler, Other_Handler, Other_Handler, Other_Handler, \
               Other_Handler, Other_Handler, Other_Handler, Other_Handler
__attribute__((section(".vectors"), used)) static void (*const vectors[16 + 16])(void) = {
    (void (*)(void))(&__stack_top), Reset_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0,
    Fault_Handler, Fault_Handler, OTHER8, TIMER0_Handler, Other_Handler, Other_Handler, Other_Handler,
    Other_Handler, Other_Handler, Other_Handler, Other_Handler};
