/* STM32H7 LwIP-style DMA descriptors and buffers (STM32CubeH7 LwIP examples) */
#include <stdint.h>
__attribute__((section(".RxDecripSection"))) uint32_t DMARxDscrTab[4][6];
__attribute__((section(".TxDecripSection"))) uint32_t DMATxDscrTab[4][6];
__attribute__((section(".Rx_PoolSection"))) uint8_t memp_memory_RX_POOL_base[12 * 1024];
int counter = 3;
int main(void){ DMARxDscrTab[1][counter]=1; DMATxDscrTab[2][counter]=2; memp_memory_RX_POOL_base[counter]=3; return counter; }
void Reset_Handler(void){ main(); for(;;); }
__attribute__((section(".isr_vector"))) void (* const vectors[])(void) = { (void(*)(void))0x20020000, Reset_Handler };
