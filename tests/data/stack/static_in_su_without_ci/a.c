volatile int g;
static int work(int x) { volatile char b[16]; b[0] = x; return b[0]; }
void Reset_Handler(void) { g = work(g); }
