#include <stdint.h>
extern uint32_t _estack;
int main(void);
void Reset_Handler(void) { main(); while (1) {} }
void Default_Handler(void) { while (1) {} }
void uart_isr(void);
__attribute__((section(".isr_vector"), used)) void (*const vectors[])(void) = {
  (void (*)(void))&_estack, Reset_Handler, Default_Handler, Default_Handler,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Default_Handler,
  uart_isr,
};
