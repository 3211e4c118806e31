/* A Cortex-M3 vector table as libopencm3 names its handlers: SysTick's is
   sys_tick_handler, a name that says nothing of an exception handler. */
typedef void (*vector_t)(void);
int main(void);
void Reset_Handler(void);
void NMI_Handler(void);
void PendSV_Handler(void);
void sys_tick_handler(void);

void NMI_Handler(void) { for (;;) {} }

__attribute__((section(".vectors"), used)) const vector_t vector_table[16] = {
    (vector_t)0x20004000, Reset_Handler, NMI_Handler, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, PendSV_Handler,
    sys_tick_handler,
};

void Reset_Handler(void) {
  main();
  for (;;) {}
}
