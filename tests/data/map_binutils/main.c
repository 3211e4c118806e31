extern int f1(int), f2(int), ov1_func(int), ov2_func(int);
extern int (*volatile fp)(int);
extern unsigned char dma_rx[], dma_tx[];
int main(void){ volatile int x = f1(3) + f2(4) + fp(5) + dma_rx[1] + dma_tx[2]; x+=ov1_func(x)+ov2_func(x); return x; }
void Reset_Handler(void){ main(); for(;;); }
__attribute__((section(".isr_vector"))) void (* const vectors[])(void) = { (void(*)(void))0x20005000, Reset_Handler };
