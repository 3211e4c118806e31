#include <stdint.h>
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern int main(void); extern void __libc_init_array(void);
void Reset_Handler(void) {
  uint32_t *s=&_sidata,*d=&_sdata; while(d<&_edata)*d++=*s++;
  for(d=&_sbss; d<&_ebss;) *d++=0;
  __libc_init_array(); main(); for(;;);
}
void Default_Handler(void){for(;;);}
__attribute__((section(".isr_vector"),used)) void (* const g_pfnVectors[16])(void) = {(void(*)(void))&_estack, Reset_Handler, Default_Handler, Default_Handler};
void _init(void){} void _fini(void){}
void *__dso_handle = 0;
void _ZdlPvj(void*p, unsigned n){(void)p;(void)n;}  /* operator delete(void*, unsigned) */
