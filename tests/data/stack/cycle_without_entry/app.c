/* main -> run -> fatal -> main: a "soft restart" that nothing outside the
   cycle calls (the assembly Reset_Handler has no call graph). ping and pong
   call each other and nothing calls them: --gc-sections removes them. */
volatile int g;
void run(void);
int main(void){ volatile char big[200]; big[0]=1; run(); return big[0]; }
void fatal(void){ volatile char b[16]; b[0]=0; main(); }
void run(void){ volatile char r[500]; r[0]=0; if (g) fatal(); }
void SysTick_Handler(void){ volatile char t[24]; t[0]=g; }
void pong(int n);
void ping(int n){ volatile char p[64]; p[0]=0; if (n) pong(n - 1); }
void pong(int n){ volatile char q[64]; q[0]=0; if (n) ping(n - 1); }
