/* A timer interrupt records into pool "isr" while the main loop records
 * into pool "main", in [MEM] text lines written straight to a semihosting
 * file: every line's stamp must be no earlier than the line before. */
#include <string.h>

#include "edgemem.h"
#include "semihost.h"

#define TIMER0 ((volatile uint32_t *)0x40000000u) /* CMSDK timer: CTRL, VALUE, RELOAD, INTCLEAR */

static int fd;
static uint8_t isr_pool, main_pool;
static volatile uint32_t ticks;

static void to_file(const uint8_t *data, uint32_t len) { sh_write(fd, data, len); }

void TIMER0_Handler(void) {
  TIMER0[3] = 1;
  uint32_t k = ticks++;
  if (k & 1) em_free(isr_pool, 0x21000000u + (k - 1) % 4096 * 16, EM_SITE_HERE());
  else em_alloc(isr_pool, 0x21000000u + k % 4096 * 16, 16, 8, EM_SITE_HERE());
}

int main(void) {
  fd = sh_open("capture.log", 4);
  em_config c;
  memset(&c, 0, sizeof c);
  c.write = to_file;
  em_init(&c);
  main_pool = em_pool("main", EM_POOL_HEAP, 0x20100000u, 1u << 20, 8);
  isr_pool = em_pool("isr", EM_POOL_HEAP, 0x21000000u, 1u << 20, 8);
  TIMER0[2] = TIMER0[1] = 60; /* an interrupt every 60 cycles: many land inside a line */
  TIMER0[0] = 1u | 8u;        /* enable, interrupt */
  *(volatile uint32_t *)0xE000E100u = 1u << 8; /* NVIC: IRQ 8 */
  for (uint32_t i = 1; i <= 200; ++i) {
    em_inference_begin(i);
    for (uint32_t j = 0; j < 4; ++j) em_alloc(main_pool, 0x20100000u + (i * 8 + j) * 32, 32, 8, EM_SITE_HERE());
    for (uint32_t j = 0; j < 4; ++j) em_free(main_pool, 0x20100000u + (i * 8 + j) * 32, EM_SITE_HERE());
    em_inference_end(i);
  }
  TIMER0[0] = 0;
  sh_close(fd);
  return ticks > 100 ? 0 : 3; /* the interrupt must have run */
}
