/* STM32 HAL's pattern with a static callback instead of a weak one, and an
   unused function the linker removes (-ffunction-sections, --gc-sections) */
typedef struct { volatile unsigned SR, DR; int rx; } UART_HandleTypeDef;
static __attribute__((noinline)) void HAL_UART_RxCpltCallback(UART_HandleTypeDef *h) { h->rx = 0; }
void HAL_UART_IRQHandler(UART_HandleTypeDef *h) {
  if (h->SR & 0x20) { h->rx = h->DR; HAL_UART_RxCpltCallback(h); }
}
void HAL_UART_DeInit(UART_HandleTypeDef *h) { volatile char scratch[1024]; scratch[h->rx & 1023] = 0; }
