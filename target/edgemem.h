/* edgemem device library: records every allocation, free and inference
 * marker of an MCU inference runtime and sends it to the host in the emt
 * format (docs/formats/emt.md) or as "[MEM]" text lines.
 *
 * C99, no heap, no libc beyond memcpy and memset. Compile with -DEDGEMEM_ENABLE=1 to
 * record; without it every macro expands to nothing and no symbol remains.
 * -DEDGEMEM_TEXT=1 sends seed-001 "[MEM]" text lines instead of emt.
 * -DEDGEMEM_SUMMARY=1 sends no allocation or free at all: per pool it keeps
 * used bytes, the peak, the largest free block and failed requests, and
 * sends one SUMMARY record per pool at each inference end (or em_summary()
 * call, a heartbeat) - a few bytes an inference for fleets (docs/device.md).
 */
#ifndef EDGEMEM_H
#define EDGEMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { EM_POOL_HEAP = 0, EM_POOL_ARENA = 1 } em_pool_kind;

/* Where encoded bytes go. */
typedef void (*em_write_fn)(const uint8_t *data, uint32_t len);

/* A RAM ring buffer the host drains (debugger read, UART or semihosting
 * dump). Writers never block: a record that does not fit is dropped whole
 * and counted; the next record that fits is preceded by a SYNC and a DROP
 * record so the host knows what was lost. */
typedef struct {
  uint32_t magic; /* EM_RING_MAGIC, so a debugger script can find it */
  uint32_t size;  /* bytes in data, a power of two */
  volatile uint32_t head; /* written by the device */
  volatile uint32_t tail; /* advanced by whoever drains */
  volatile uint32_t dropped;
  uint8_t *data;
} em_ring;
#define EM_RING_MAGIC 0x474E5245u /* "ERNG" */
#define EM_LARGEST_UNKNOWN 0xFFFFFFFFu /* em_pool_level: the allocator cannot tell */

typedef struct {
  em_write_fn write;    /* raw byte sink (UART, semihosting, ...) or NULL */
  em_ring *ring;        /* or a ring buffer */
  int itm;              /* 1: send over ITM stimulus port 1 */
  int itm_framed;       /* with itm: hand ITM packets to `write` instead of the
                           stimulus registers (QEMU, which has no ITM) */
  uint32_t tick_hz;     /* clock of em_now(); 0 = unknown */
} em_config;

#if defined(EDGEMEM_ENABLE) && EDGEMEM_ENABLE

void em_init(const em_config *config);
void em_ring_init(em_ring *ring, uint8_t *storage, uint32_t size);
/* Copies up to `max` bytes out of the ring; returns how many. */
uint32_t em_ring_read(em_ring *ring, uint8_t *out, uint32_t max);
/* Timestamp: DWT CYCCNT by default; override this weak function otherwise. */
uint32_t em_now(void);

/* A pool that spends the same bytes as `partner` (the two ends of one arena). */
uint8_t em_pool_shared(const char *name, em_pool_kind kind, uintptr_t base, uint32_t size, uint32_t align,
                       uint8_t partner);
/* A pool of its own (inline: one function less in flash; its address can
 * still be taken). */
static inline uint8_t em_pool(const char *name, em_pool_kind kind, uintptr_t base, uint32_t size, uint32_t align) {
  return em_pool_shared(name, kind, base, size, align, 0xFF);
}

/* Writes `name` to `out` (no NUL) and returns its length. A name longer
 * than `max` (at least 9) becomes its first max - 9 characters, '~' and 8
 * hex digits of an FNV-1a hash of the whole name: names that share a long
 * prefix stay distinct. */
uint32_t em_fit_name(char *out, const char *name, uint32_t max);

/* Call sites: a return address (odd site) or a __FILE__/__LINE__ pair. */
#if UINTPTR_MAX > 0xFFFFFFFFu
typedef uint64_t em_site; /* a 64-bit build's return addresses need its width */
#else
typedef uint32_t em_site;
#endif
em_site em_site_here(const char *file, uint32_t line);
#define EM_SITE_HERE() em_site_here(__FILE__, __LINE__)
#define EM_SITE_CALLER() ((em_site)(((uintptr_t)__builtin_return_address(0) << 1) | 1u))

void em_alloc(uint8_t pool, uintptr_t address, uint32_t size, uint32_t align, em_site site);
void em_free(uint8_t pool, uintptr_t address, em_site site);
void em_realloc(uint8_t pool, uintptr_t old_address, uintptr_t address, uint32_t size, em_site site);
void em_alloc_failed(uint8_t pool, uint32_t size, uint32_t align, em_site site);
#if defined(EDGEMEM_SUMMARY) && EDGEMEM_SUMMARY
/* em_free for callers that know the block's size: subtracted from the
 * pool's used bytes (a full trace takes it from the allocation). */
void em_free_sized(uint8_t pool, uintptr_t address, uint32_t size, em_site site);
/* What an allocator knows of a pool: bytes used and the largest free
 * block, EM_LARGEST_UNKNOWN when the allocator cannot tell. */
void em_pool_level(uint8_t pool, uint32_t used, uint32_t largest_free);
/* One SUMMARY record per pool now (a heartbeat); em_inference_end sends them too. */
void em_summary(void);
#else /* a full trace: the host computes all of this from the blocks, and no code is spent */
#define em_free_sized(pool, address, size, site) ((void)sizeof(size), em_free((pool), (address), (site)))
#define em_pool_level(pool, used, largest_free) ((void)sizeof(pool), (void)sizeof(used), (void)sizeof(largest_free))
#define em_summary() ((void)0)
#endif
void em_inference_begin(uint32_t index);
void em_inference_end(uint32_t index);
void em_arena_reset(uint8_t pool);
void em_guard(uint8_t pool, int intact);
void em_mark(const char *text);
void em_counter(const char *name, uint32_t value);
/* Drops since init (records that did not fit the ring). */
uint32_t em_dropped(void);

/* edgemem_malloc_wrap.c: the pool malloc's blocks are recorded in. */
void em_malloc_wrap_pool(uint8_t pool);

/* Guard zone: a sentinel pattern after an arena, checked per inference
 * (seed 001 §4.3). */
void em_guard_fill(uint8_t *zone, uint32_t size);
int em_guard_intact(const uint8_t *zone, uint32_t size);

#else /* recording compiled out: no code, no data, no symbols */

/* Arguments are named inside sizeof: never evaluated, but not "unused". */
#define EM_U(x) (void)sizeof(x)
#define em_init(config) EM_U(config)
#define em_ring_init(ring, storage, size) (EM_U(ring), EM_U(storage), EM_U(size))
#define em_ring_read(ring, out, max) (EM_U(ring), EM_U(out), EM_U(max), 0u)
#define em_pool(name, kind, base, size, align) \
  (EM_U(name), EM_U(kind), EM_U(base), EM_U(size), EM_U(align), (uint8_t)0)
#define em_pool_shared(name, kind, base, size, align, partner) \
  (EM_U(name), EM_U(kind), EM_U(base), EM_U(size), EM_U(align), EM_U(partner), (uint8_t)0)
#define EM_SITE_HERE() 0u
#define EM_SITE_CALLER() 0u
#define em_alloc(pool, address, size, align, site) \
  (EM_U(pool), EM_U(address), EM_U(size), EM_U(align), EM_U(site))
#define em_free(pool, address, site) (EM_U(pool), EM_U(address), EM_U(site))
#define em_realloc(pool, old_address, address, size, site) \
  (EM_U(pool), EM_U(old_address), EM_U(address), EM_U(size), EM_U(site))
#define em_alloc_failed(pool, size, align, site) (EM_U(pool), EM_U(size), EM_U(align), EM_U(site))
#define em_free_sized(pool, address, size, site) (EM_U(pool), EM_U(address), EM_U(size), EM_U(site))
#define em_pool_level(pool, used, largest_free) (EM_U(pool), EM_U(used), EM_U(largest_free))
#define em_summary() ((void)0)
#define em_inference_begin(index) EM_U(index)
#define em_inference_end(index) EM_U(index)
#define em_arena_reset(pool) EM_U(pool)
#define em_guard(pool, intact) (EM_U(pool), EM_U(intact))
#define em_mark(text) EM_U(text)
#define em_counter(name, value) (EM_U(name), EM_U(value))
#define em_dropped() 0u
#define em_malloc_wrap_pool(pool) EM_U(pool)
#define em_guard_fill(zone, size) (EM_U(zone), EM_U(size))
#define em_guard_intact(zone, size) (EM_U(zone), EM_U(size), 1)

#endif

#ifdef __cplusplus
}
#endif

#endif /* EDGEMEM_H */
