/* mimics STM32 HAL: weak callback defined and called in the same file */
typedef struct { volatile unsigned SR, DR; int rx; } UART_HandleTypeDef;
__attribute__((weak)) void HAL_UART_RxCpltCallback(UART_HandleTypeDef *h) { (void)h; }
void HAL_UART_IRQHandler(UART_HandleTypeDef *h) {
  if (h->SR & 0x20) { h->rx = h->DR; HAL_UART_RxCpltCallback(h); }
}
