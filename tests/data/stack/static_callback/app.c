typedef struct { volatile unsigned SR, DR; int rx; } UART_HandleTypeDef;
extern void HAL_UART_IRQHandler(UART_HandleTypeDef *h);
UART_HandleTypeDef huart1;
extern void consume(volatile char *p, int n);
/* the application's strong callback: big frame */
void HAL_UART_RxCpltCallback(UART_HandleTypeDef *h) { volatile char line[512]; line[h->rx & 511] = 1; consume(line, 512); }
void consume(volatile char *p, int n) { volatile int acc[8]; acc[n & 7] = p[0]; }
void USART1_IRQHandler(void) { HAL_UART_IRQHandler(&huart1); }
int main(void) { volatile char big[256]; big[3] = 0; for(;;) consume(big, 256); }
