#include <stdint.h>
uint8_t tensor_arena[16*1024] __attribute__((aligned(16)));
volatile uint32_t boot_flag[8] __attribute__((section(".boot_flags")));
volatile uint32_t sink;
void Reset_Handler(void){ tensor_arena[sink]=1; boot_flag[0] = 0xB007; sink = tensor_arena[sink+1]; for(;;); }
__attribute__((used, section(".isr_vector"))) void (*const vectors[])(void) = { (void(*)(void))0x20010000, Reset_Handler };
