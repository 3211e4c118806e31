/* a driver's weak default callback, called from its own ISR */
__attribute__((weak, noinline)) void cb(void) { volatile char b[16]; b[0] = 0; }
void USART1_IRQHandler(void) { cb(); }
