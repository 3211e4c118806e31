/* compiled WITHOUT -ffunction-sections/-fdata-sections */
#include <stdint.h>
char c_small[3];        /* COMMON 3, followed by int-aligned one */
int  c_int;             /* COMMON 4 */
char c_odd[5];          /* COMMON 5 */
double c_dbl;           /* COMMON 8, align 8 */
static int s1[3];
static int s2[7] = {1};
const int ro_tab[33] = {1};
int f1(int x){ s1[x&3]=x; return s2[x&7] + ro_tab[x&31]; }
int f2(int x){ return x*x + c_small[x&3] + c_int + c_odd[x&3] + (int)c_dbl; }
static int f3(int x){ return x+ 77;}
int (*volatile fp)(int) = f3;
__attribute__((section(".dma_buffers"))) uint8_t dma_rx[512];
__attribute__((section(".dma_buffers"))) uint8_t dma_tx[256];
__attribute__((section(".ovl1"))) int ov1_func(int x){ return x*5+1; }
__attribute__((section(".ovl2"))) int ov2_func(int x){ return x*7+3; }
