/* MPS2 board support under QEMU. QEMU models neither ITM nor DWT (CYCCNT
 * reads 0), so timestamps come from the FPGAIO free-running counter. */
#include <stdint.h>

#include "edgemem.h"

#define FPGAIO_COUNTER (*(volatile uint32_t *)0x40028018u) /* 25 MHz */

uint32_t em_now(void) { return FPGAIO_COUNTER; }
