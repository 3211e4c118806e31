/* Keyword-spotting loop instrumented with edgemem: audio front end on the
 * heap (malloc, recorded through --wrap), the network on a tensor arena,
 * a guard check after every inference. The capture goes to a host file
 * through semihosting: the RAM ring buffer is drained after each inference
 * (TRANSPORT_RING), or ITM packets / [MEM] lines are written directly.
 * TRANSPORT_UART streams the capture out of UART0 instead, as a device on
 * a soak rig would, one inference per INFERENCE_PERIOD_MS of real time
 * (run without -icount, the FPGAIO counter follows the host clock).
 * VARIANT 6 is the leak of VARIANT 1 on a device that restarts: a watchdog
 * resets it after its 30th inference, and the second boot runs 20 more
 * inferences, appending to the same capture. */
#include <stdlib.h>
#include <string.h>

#include "edgemem.h"
#include "model.h"
#include "semihost.h"

#ifndef INFERENCES
#define INFERENCES 50
#endif
#ifndef INFERENCE_PERIOD_MS
#define INFERENCE_PERIOD_MS 10
#endif
#if VARIANT == 3
#define ARENA_SIZE 3392 /* 224 B of activations + 3072 B free + 96 B of op data */
#elif !defined(ARENA_SIZE)
#define ARENA_SIZE 40960
#endif

/* The arena, its guard zone, and room for a runaway write to land in. */
static struct {
  uint8_t arena[ARENA_SIZE + EM_GUARD_BYTES];
  uint8_t spill[2048];
} memory __attribute__((aligned(16)));

#if !defined(TRANSPORT_UART)
static int trace_fd;
#endif

#if defined(TRANSPORT_RING)
static uint8_t ring_storage[8192];
static em_ring ring;
static void drain(void) {
  uint8_t chunk[1024];
  uint32_t n;
  while ((n = em_ring_read(&ring, chunk, sizeof chunk)) > 0) sh_write(trace_fd, chunk, n);
}
#elif defined(TRANSPORT_UART)
void uart_write(const uint8_t *data, uint32_t len);
void wait_ms(uint32_t ms);
static void drain(void) {}
#else
static void to_file(const uint8_t *data, uint32_t len) { sh_write(trace_fd, data, len); }
static void drain(void) {}
#endif

extern uint8_t __heap_start, __heap_end;

#if VARIANT == 6
#define REBOOT_AFTER 30
#define SECOND_BOOT_INFERENCES 20
/* In .noinit: startup.c does not zero it and QEMU does not reload it on a
 * reset (its RAM starts zeroed; the magic tells a first power-on). */
static struct {
  uint32_t magic, boots;
} persist __attribute__((section(".noinit")));

static void watchdog_reset(void) {
  __asm volatile("dsb" ::: "memory");
  *(volatile uint32_t *)0xE000ED0Cu = 0x05FA0004u; /* AIRCR: VECTKEY | SYSRESETREQ */
  for (;;) {
  }
}
#endif

static uint32_t seed = 99;
static uint32_t next_random(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

/* MFCC features for one utterance of 0.5 to 2 s: 40 to 160 frames x 32 bins. */
static uint8_t *mfcc[4];
static uint32_t mfcc_count;

static void front_end(int8_t *features) {
  uint32_t frames = 40 + next_random() % 121;
  uint8_t *buf = malloc(frames * 20);
  if (buf) {
    for (uint32_t i = 0; i < frames * 20; ++i) buf[i] = (uint8_t)(i * 7 + frames);
    for (int i = 0; i < 64; ++i) features[i] = (int8_t)(buf[i * 3] - 128);
  } else {
    memset(features, 0, 64);
  }
#if VARIANT == 2
  /* Keep the last three utterances for smoothing; drop a random older one. */
  if (buf) mfcc[mfcc_count++] = buf;
  if (mfcc_count > 3) {
    uint32_t victim = next_random() % (mfcc_count - 1);
    free(mfcc[victim]);
    mfcc[victim] = mfcc[--mfcc_count];
  }
#else
  free(buf);
  (void)mfcc;
  (void)mfcc_count;
#endif
}

#if VARIANT == 5
/* Cost of one recorded event on this core: QEMU -icount shift=0 retires one
 * instruction per virtual ns and the FPGAIO counter ticks at 25 MHz, so a
 * tick is 40 instructions. Batches of 128 events into the ring, drained
 * outside the timed part; an identical empty loop is subtracted. */
#define FPGAIO_COUNTER (*(volatile uint32_t *)0x40028018u)
static volatile uint32_t sink;
static uint32_t timed_batches(int what, uint8_t pool) {
  uint32_t ticks = 0;
  for (uint32_t batch = 0; batch < 64; ++batch) {
    uint32_t t0 = FPGAIO_COUNTER;
    for (uint32_t i = 0; i < 128; ++i) {
      uintptr_t address = 0x20100000u + (batch * 128 + i) * 64u;
      if (what == 1) em_alloc(pool, address, 644, 8, 0x8001235u);
      else if (what == 2) em_free(pool, address, 0x8001235u);
      else sink = (uint32_t)address;
    }
    ticks += FPGAIO_COUNTER - t0;
    drain();
  }
  return ticks;
}

static int measure_cost(void) {
  uint8_t pool = em_pool("heap", EM_POOL_HEAP, 0x20100000u, 1u << 20, 8);
  uint32_t empty = timed_batches(0, pool);
  uint32_t alloc = timed_batches(1, pool);
  uint32_t freed = timed_batches(2, pool);
  char line[96];
  uint32_t n = 0;
  const char *a = "alloc_instructions_x10=", *f = " free_instructions_x10=";
  uint32_t events = 64 * 128;
  uint32_t values[2] = {(alloc - empty) * 400u / events, (freed - empty) * 400u / events};
  for (int k = 0; k < 2; ++k) {
    for (const char *p = k ? f : a; *p; ++p) line[n++] = *p;
    char digits[10];
    uint32_t d = 0, v = values[k];
    do digits[d++] = (char)('0' + v % 10); while ((v /= 10) != 0);
    while (d) line[n++] = digits[--d];
  }
  line[n++] = '\n';
  int fd = sh_open("cost.txt", 4);
  sh_write(fd, line, n);
  sh_close(fd);
  return 0;
}
#endif

int main(void) {
  uint32_t inferences = INFERENCES;
  int capture_mode = 4; /* "w" */
#if VARIANT == 6
  if (persist.magic != 0xB0075AFEu) {
    persist.magic = 0xB0075AFEu;
    persist.boots = 0;
  }
  const uint32_t boot = ++persist.boots;
  inferences = boot == 1 ? REBOOT_AFTER : SECOND_BOOT_INFERENCES; /* INFERENCES does not apply */
  if (boot > 1) capture_mode = 2; /* "r+", then to its end: the capture goes on after the first boot's */
#endif
#if !defined(TRANSPORT_UART)
  trace_fd = sh_open("capture.bin", capture_mode);
  if (trace_fd < 0) return 3;
  if (capture_mode == 2) sh_seek_end(trace_fd);
#else
  (void)capture_mode;
#endif
  em_config config;
  memset(&config, 0, sizeof config);
  config.tick_hz = 25000000;
#if defined(TRANSPORT_RING)
  em_ring_init(&ring, ring_storage, sizeof ring_storage);
  config.ring = &ring;
#elif defined(TRANSPORT_UART)
  config.write = uart_write;
#elif defined(TRANSPORT_ITM)
  config.itm = 1;
  config.itm_framed = 1; /* QEMU has no ITM: the packets go to the file */
  config.write = to_file;
#else
  config.write = to_file;
#endif
  em_init(&config);
#if VARIANT == 5
  return measure_cost();
#endif
  uint8_t heap = em_pool("heap", EM_POOL_HEAP, (uintptr_t)&__heap_start,
                         (uint32_t)(&__heap_end - &__heap_start), 8);
  em_malloc_wrap_pool(heap);

  em_arena arena;
  em_arena_init(&arena, "arena", memory.arena, ARENA_SIZE);
  model_prepare(&arena);
  drain();

  int8_t features[64];
  uint32_t votes[8] = {0};
  for (uint32_t i = 1; i <= inferences; ++i) {
    em_inference_begin(i);
    front_end(features);
    int label = model_invoke(&arena, features, i);
    if (label >= 0) ++votes[label];
    em_arena_check_guard(&arena);
    em_inference_end(i);
    drain();
#if defined(TRANSPORT_UART)
    wait_ms(INFERENCE_PERIOD_MS);
#endif
#if VARIANT == 6
    if (boot == 1 && i == inferences) {
#if !defined(TRANSPORT_UART)
      sh_close(trace_fd);
#endif
      watchdog_reset();
    }
#endif
  }
#if !defined(TRANSPORT_UART)
  sh_close(trace_fd);
#endif
  return em_dropped() ? 4 : 0;
}
