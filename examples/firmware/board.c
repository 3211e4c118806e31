/* MPS2 board support under QEMU. QEMU models neither ITM nor DWT (CYCCNT
 * reads 0), so timestamps come from the FPGAIO free-running counter. */
#include <stdint.h>

#include "edgemem.h"

#define FPGAIO_COUNTER (*(volatile uint32_t *)0x40028018u) /* 25 MHz */

uint32_t em_now(void) { return FPGAIO_COUNTER; }

/* CMSDK UART0: no clock to set up under QEMU; a transmit buffer flag to wait on. */
#define UART0_DATA (*(volatile uint32_t *)0x40004000u)
#define UART0_STATE (*(volatile uint32_t *)0x40004004u)
#define UART0_CTRL (*(volatile uint32_t *)0x40004008u)
#define UART0_BAUDDIV (*(volatile uint32_t *)0x40004010u)

void uart_write(const uint8_t *data, uint32_t len) {
  if (!(UART0_CTRL & 1u)) {
    UART0_BAUDDIV = 16;
    UART0_CTRL = 1u; /* TX enable */
  }
  for (uint32_t i = 0; i < len; ++i) {
    while (UART0_STATE & 1u) {
    }
    UART0_DATA = data[i];
  }
}

void wait_ms(uint32_t ms) {
  uint32_t start = FPGAIO_COUNTER;
  while (FPGAIO_COUNTER - start < ms * 25000u) {
  }
}
