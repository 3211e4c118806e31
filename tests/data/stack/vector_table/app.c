volatile unsigned sink;

/* In the vector table as SysTick's handler. */
void sys_tick_handler(void) {
  volatile char buf[200];
  for (int i = 0; i < 200; i++) buf[i] = (char)i;
  sink += buf[sink % 200];
}

/* In the vector table, and called by main too when it polls. */
void PendSV_Handler(void) {
  volatile char buf[120];
  for (int i = 0; i < 120; i++) buf[i] = (char)i;
  sink += buf[sink % 120];
}

/* Called by nobody but itself: --gc-sections removes it. */
int recurse(int n) {
  volatile char buf[64];
  buf[0] = (char)n;
  if (n > 0) buf[1] = (char)recurse(n - 1);
  return buf[1];
}

int main(void) {
  volatile char buf[300];
  for (int i = 0; i < 300; i++) buf[i] = (char)i;
  sink += buf[sink % 300];
  if (sink & 1) PendSV_Handler(); /* a polling fallback */
  return 0;
}
