volatile int h;
static int work(int x) { volatile char b[3000]; b[0] = x; return b[0]; }
void TIM2_IRQHandler(void) { h = work(h); }
