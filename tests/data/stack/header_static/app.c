#include "util.h"
volatile int sink;
int main(void) { volatile char z[8]; for (;;) sink = wrap(z, 8); }
void SysTick_Handler(void) { sink++; }
