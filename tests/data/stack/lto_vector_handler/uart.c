volatile unsigned char UART_DR; volatile int sink;
void uart_isr(void) { volatile unsigned char frame[600]; frame[0] = UART_DR; sink = frame[0]; }
