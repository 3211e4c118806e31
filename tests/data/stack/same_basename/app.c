extern void b_api(void);
extern void USART1_IRQHandler(void);
/* the application's strong override of the driver's weak callback */
void cb(void) { volatile char big[700]; big[1] = 1; }
void (*const vectors[])(void) __attribute__((used, section(".vectors"))) = { USART1_IRQHandler };
__attribute__((noinline)) static void big_work(void) { volatile char w[2000]; w[3] = 3; }
int main(void) { b_api(); big_work(); for (;;); }
