#include <stdint.h>
#include <string.h>
uint8_t tensor_arena[20000] __attribute__((aligned(16)));
static uint8_t ccm_buf[3000] __attribute__((section(".ccmram"))) ;
uint32_t dtcm_table[512] __attribute__((section(".dtcm_data"))) = {1,2,3};
uint8_t noinit_log[1024] __attribute__((section(".noinit")));
const uint8_t g_model[5000] = {1,2,3,4,5};
const uint32_t at_addr_const[8] __attribute__((section(".fixed"))) = {0xdeadbeef};
int counter = 5;
static int scounter;
extern int helper(int);
float fir(const float *x, int n) { float s=0; for (int i=0;i<n;i++) s+=x[i]*0.5f; return s; }
__attribute__((noinline)) void fill(uint8_t *p, int n) { for (int i=0;i<n;i++) p[i]=i; }
int main(void) {
  fill(tensor_arena, sizeof tensor_arena);
  fill(ccm_buf, sizeof ccm_buf);
  scounter += helper(counter) + dtcm_table[2] + g_model[3] + at_addr_const[0] + noinit_log[4];
  return scounter + (int)fir((float*)tensor_arena, 10);
}
void Reset_Handler(void) { main(); for(;;); }
__attribute__((section(".isr_vector"))) void (*const vectors[])(void) = { (void(*)(void))0x20020000, Reset_Handler };
