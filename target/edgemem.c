/* Encoder and transports. Every public call builds one record in a small
 * stack buffer and hands it to the transport whole, inside a short
 * interrupt-masked section so records from thread and ISR never interleave. */
#include "edgemem.h"

#if defined(EDGEMEM_ENABLE) && EDGEMEM_ENABLE

#include <string.h>

/* The output format is chosen at build time so the unused encoder is not
 * linked: -DEDGEMEM_TEXT=1 for "[MEM]" lines, emt records otherwise. */
#if defined(EDGEMEM_TEXT) && EDGEMEM_TEXT
#define EM_TEXT 1
#else
#define EM_TEXT 0
#endif

/* -DEDGEMEM_SUMMARY=1: per-pool numbers instead of every event. */
#if defined(EDGEMEM_SUMMARY) && EDGEMEM_SUMMARY
#define EM_SUMMARY 1
#else
#define EM_SUMMARY 0
#endif

#if EM_SUMMARY && EM_TEXT
#error "EDGEMEM_SUMMARY sends emt SUMMARY records; it cannot be combined with EDGEMEM_TEXT"
#endif

/* Every emt record ends with a check byte, the XOR of its bytes, so the
 * host finds a record damaged on a UART or SWO line instead of reading a
 * flipped size as a 1 GB overflow. -DEDGEMEM_CHECK=0 leaves it out (a byte
 * and 8 to 11 instructions an event) where no byte can be damaged: a ring
 * read by a debugger, semihosting. */
#if !defined(EDGEMEM_CHECK) || EDGEMEM_CHECK
#define EM_CHECK 1
#else
#define EM_CHECK 0
#endif
/* The hot path folds the check byte from the words it holds in registers
 * (fewer instructions); an -Os build runs the byte loop every other record
 * uses (about 50 bytes less flash). */
#if EM_CHECK && !defined(__OPTIMIZE_SIZE__)
#define EM_CHECK_WORDS 1
#else
#define EM_CHECK_WORDS 0
#endif

#define EM_MAX_RECORD 64
/* Pointers wider than 32 bits (a 64-bit host build, say of the ONNX Runtime
 * wrapper) go out in varint ALLOC and FREE records, not ALLOC32/FREE32. */
#if UINTPTR_MAX > 0xFFFFFFFFu
#define EM_WIDE 1
#else
#define EM_WIDE 0
#endif
/* Pools the text and summary modes keep a name, kind and counters for
 * (-DEM_MAX_POOLS=16, at most 255; each em_arena takes two). An emt trace
 * names every pool in its POOL record and needs no table. */
#ifndef EM_MAX_POOLS
#define EM_MAX_POOLS 8
#endif
#if EM_MAX_POOLS > 255
#error "EM_MAX_POOLS is at most 255 (pool ids are one byte)"
#endif
/* Distinct file names for call sites; a host tool that names sites after
 * what they allocate needs more (-DEM_MAX_FILES=128, at most 255). */
#ifndef EM_MAX_FILES
#define EM_MAX_FILES 8
#endif
#define EM_SYNC_EVERY 256
/* The longest pool name a POOL record holds whole: with its other fields
 * (22 bytes at most, 27 with a 64-bit base) it fits EM_MAX_RECORD. */
#define EM_POOL_NAME_MAX (EM_WIDE ? 35 : 40)
/* The longest file name a STRING record holds (with tag, id and length). */
#define EM_FILE_MAX (EM_MAX_RECORD - 8)

enum {
  TAG_HEADER = 0x01, TAG_POOL = 0x02, TAG_STRING = 0x03, TAG_DROP = 0x04,
  TAG_ALLOC = 0x10, TAG_FREE = 0x11, TAG_REALLOC = 0x12, TAG_ALLOC_FAIL = 0x13,
  TAG_INFER_BEGIN = 0x14, TAG_INFER_END = 0x15, TAG_RESET = 0x16, TAG_GUARD = 0x17,
  TAG_MARK = 0x18, TAG_COUNTER = 0x19, TAG_SUMMARY = 0x1A,
  TAG_ALLOC32 = 0x20, TAG_FREE32 = 0x21, /* fixed-width hot path */
  TAG_SYNC = 0x7E
};

static struct {
  em_config cfg;
  uint32_t last_time;
  uint16_t until_sync; /* records left before the next periodic SYNC; 0 = SYNC due */
  uint8_t need_sync;
  uint8_t pools;
  uint8_t files_used;
  uint32_t dropped;
  uint32_t dropped_told; /* of `dropped`, what DROP records that were sent carried */
  uint8_t itm_stalled; /* the stimulus FIFO stayed full: poll once per word until it drains */
  const char *files[EM_MAX_FILES];
  char pool_kind[EM_MAX_POOLS]; /* 'h' or 'a' per pool, for the text output */
  const char *pool_name[EM_MAX_POOLS];
#if EM_SUMMARY
  /* Since the last SUMMARY record of the pool that was sent: a dropped
   * one leaves them to the next, so the peak and failures are never lost. */
  struct { uint32_t used, peak, largest_free, failures; } level[EM_MAX_POOLS];
#endif
} em;

/* ---- platform ---------------------------------------------------------- */

#if defined(__ARM_ARCH) && defined(__ARM_ARCH_PROFILE) && (__ARM_ARCH_PROFILE == 'M')
#define EM_REG(addr) (*(volatile uint32_t *)(addr))
/* Mainline cores (ARMv7-M, ARMv8-M Mainline: Thumb-2) have ITM and CYCCNT;
 * ARMv6-M (M0/M0+) and ARMv8-M Baseline (M23) have neither. */
#define EM_HAS_DWT (__ARM_ARCH_ISA_THUMB == 2)
static uint32_t em_irq_save(void) {
  uint32_t primask;
  __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
  return primask;
}
static void em_irq_restore(uint32_t primask) { __asm volatile("msr primask, %0" ::"r"(primask) : "memory"); }
#define EM_HAS_ITM (__ARM_ARCH_ISA_THUMB == 2) /* elsewhere its registers would fault */
#else /* host build (tests, benchmarks): single-threaded */
#define EM_HAS_DWT 0
#define EM_HAS_ITM 0
static uint32_t em_irq_save(void) { return 0; }
static void em_irq_restore(uint32_t primask) { (void)primask; }
#endif

/* The ring's bytes are plain memory and its head and tail volatile, which
 * the compiler may reorder: a byte must be written before head says it is
 * there, and read before tail gives its slot back. */
#define EM_COMPILER_BARRIER() __asm volatile("" ::: "memory")

__attribute__((weak)) uint32_t em_now(void) {
#if EM_HAS_DWT
  return EM_REG(0xE0001004u); /* DWT_CYCCNT */
#else
  static uint32_t ticks;
  return ++ticks;
#endif
}

/* A free-running counter at a fixed address (-DEDGEMEM_NOW_ADDR=0xE0001004
 * for DWT CYCCNT) is read inline: the hot path then calls no function, so
 * its arguments need no saving (about 10 instructions less per event). */
#if defined(EDGEMEM_NOW_ADDR)
#define EM_NOW() (*(volatile uint32_t *)(EDGEMEM_NOW_ADDR))
#else
#define EM_NOW() em_now()
#endif

/* ---- transports -------------------------------------------------------- */

void em_ring_init(em_ring *ring, uint8_t *storage, uint32_t size) {
  /* Positions are masked with size - 1: use the largest power of two that fits. */
  while (size & (size - 1)) size &= size - 1;
  ring->size = size;
  ring->head = ring->tail = ring->dropped = 0;
  ring->data = storage;
  ring->magic = EM_RING_MAGIC;
}

static int ring_put(em_ring *r, const uint8_t *p, uint32_t n) {
  if (r->size - (r->head - r->tail) < n) return 0;
  uint32_t at = r->head & (r->size - 1), first = r->size - at;
  if (first >= n) {
    memcpy(r->data + at, p, n);
  } else {
    memcpy(r->data + at, p, first);
    memcpy(r->data, p + first, n - first);
  }
  EM_COMPILER_BARRIER();
  r->head += n;
  return 1;
}

/* The reader may be interrupted by a writer: the bytes are copied out first
 * and their slots given back once, after them. */
uint32_t em_ring_read(em_ring *r, uint8_t *out, uint32_t max) {
  uint32_t n = 0, tail = r->tail, head = r->head;
  EM_COMPILER_BARRIER();
  while (n < max && tail != head) out[n++] = r->data[tail++ & (r->size - 1)];
  EM_COMPILER_BARRIER();
  r->tail = tail;
  return n;
}

/* Polls of a full stimulus FIFO before a record is given up as dropped: a
 * trace port that does not drain (no SWO clock, probe gone) must not hang
 * the device with interrupts masked. */
#ifndef EM_ITM_MAX_POLLS
#define EM_ITM_MAX_POLLS 100000u
#endif

/* Returns 0 when the record could not go out (counted as dropped). */
static int itm_send(const uint8_t *p, uint32_t n) {
  if (em.cfg.itm_framed) {
    /* The bytes a SWO probe records: stimulus packets for port 1. */
    uint8_t pkt[5];
    while (n) {
      uint32_t k = n >= 4 ? 4 : 1;
      pkt[0] = (uint8_t)((1u << 3) | (k == 4 ? 3u : 1u));
      memcpy(pkt + 1, p, k);
      em.cfg.write(pkt, k + 1);
      p += k;
      n -= k;
    }
    return 1;
  }
#if EM_HAS_ITM
  /* ITM enabled (TCR.ITMENA) and port 1 enabled (TER bit 1)? If not (a
   * probe enables it after boot), the record is lost: say so. */
  if (!(EM_REG(0xE0000E80u) & 1u) || !(EM_REG(0xE0000E00u) & 2u)) return 0;
  volatile uint32_t *port = (volatile uint32_t *)(0xE0000000u + 4u * 1u);
  /* After a stall a record is tried only if the port takes a word at once;
   * once it does, the whole record goes out with the full wait per word
   * (the FIFO holds a word or two: a record never fits without waiting). */
  if (em.itm_stalled && (*port & 1u) == 0) return 0;
  em.itm_stalled = 0;
  while (n) {
    uint32_t polls = 0;
    while ((*port & 1u) == 0) /* FIFO full */
      if (++polls == EM_ITM_MAX_POLLS) {
        em.itm_stalled = 1; /* the next records do not wait again */
        return 0;
      }
    if (n >= 4) {
      uint32_t word;
      memcpy(&word, p, 4);
      *port = word;
      p += 4;
      n -= 4;
    } else {
      *(volatile uint8_t *)port = *p++;
      --n;
    }
  }
  return 1;
#else
  (void)p;
  (void)n;
  return 0;
#endif
}

static int transmit(const uint8_t *p, uint32_t n) {
  if (em.cfg.ring) return ring_put(em.cfg.ring, p, n);
  if (em.cfg.itm) return itm_send(p, n);
  if (em.cfg.write) em.cfg.write(p, n);
  return 1;
}

/* ---- emt encoding ------------------------------------------------------ */

static uint32_t put_varint(uint8_t *out, uint32_t v) {
  uint32_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

/* Ends the record [from, end) with its check byte; returns its new end. */
static uint8_t *check_end(const uint8_t *from, uint8_t *end) {
#if EM_CHECK
  uint8_t x = 0;
  while (from != end) x ^= *from++;
  *end++ = x;
#else
  (void)from;
#endif
  return end;
}

/* "~emt#" opens a stream whose records carry check bytes, "~emt!" one
 * whose records do not. */
static uint8_t *sync_record(uint8_t *out, uint32_t now) {
  out[0] = TAG_SYNC;
  out[1] = 'e';
  out[2] = 'm';
  out[3] = 't';
  out[4] = EM_CHECK ? '#' : '!';
  return check_end(out, out + 5 + put_varint(out + 5, now));
}

/* A record is built in one pass: open_record() writes any pending SYNC and
 * DROP, the tag and (for events) the delta time with interrupts masked; the
 * caller appends its fields; close_record() hands the bytes to the
 * transport whole, or counts a drop. */
typedef struct {
  uint8_t *buf;   /* where the record is built: the ring itself, or local */
  uint8_t *tag;   /* where the record begins in buf, after any SYNC and DROP */
  int direct;     /* buf points into the ring: closing only advances head */
  uint32_t now, primask;
  int synced;
  uint32_t dropped_told; /* em.dropped as the record's DROP tells it */
  uint8_t local[EM_MAX_RECORD + 24]; /* a SYNC and a DROP before the record, check bytes */
} record_t;

static uint8_t *open_record(record_t *r, uint8_t tag, int timed) {
  r->primask = em_irq_save();
  r->now = EM_NOW();
  /* Fast path: room for the longest record without wrapping, so the
   * fields are encoded straight into the ring and nothing is copied. */
  em_ring *ring = em.cfg.ring;
  r->direct = 0;
  r->buf = r->local;
  if (ring) {
    uint32_t at = ring->head & (ring->size - 1);
    if (ring->size - (ring->head - ring->tail) >= sizeof r->local && ring->size - at >= sizeof r->local) {
      r->buf = ring->data + at;
      r->direct = 1;
    }
  }
  uint8_t *p = r->buf;
  r->synced = em.need_sync || em.until_sync == 0;
  r->dropped_told = em.dropped_told;
  if (r->synced) {
    p = sync_record(p, r->now);
    em.last_time = r->now;
    /* DROP counts the records lost since the last DROP that went out. */
    if (em.dropped != em.dropped_told) {
      *p = TAG_DROP;
      p = check_end(p, p + 1 + put_varint(p + 1, em.dropped - em.dropped_told));
      r->dropped_told = em.dropped;
    }
  }
  r->tag = p;
  *p++ = tag;
  if (timed) p += put_varint(p, r->now - em.last_time);
  return p;
}

static void close_record(record_t *r, uint8_t *end, int timed) {
  uint32_t n = (uint32_t)(check_end(r->tag, end) - r->buf);
  int sent;
  if (r->direct) {
    EM_COMPILER_BARRIER();
    em.cfg.ring->head += n;
    sent = 1;
  } else {
    sent = transmit(r->buf, n);
  }
  if (sent) {
    if (timed) em.last_time = r->now;
    em.until_sync = (uint16_t)(r->synced ? EM_SYNC_EVERY : em.until_sync - 1);
    em.need_sync = 0;
    em.dropped_told = r->dropped_told;
  } else {
    ++em.dropped;
    if (em.cfg.ring) ++em.cfg.ring->dropped;
    em.need_sync = 1;
    em.until_sync = 0;
  }
  em_irq_restore(r->primask);
}

/* Appends a varint at p; returns the new end. */
static uint8_t *v(uint8_t *p, uint32_t value) { return p + put_varint(p, value); }

/* A varint of pointer width, for addresses and sites. */
static uint8_t *vw(uint8_t *p, uintptr_t value) {
  if (!EM_WIDE) return v(p, (uint32_t)value);
  while (value >= 0x80) {
    *p++ = (uint8_t)(value | 0x80);
    value >>= 7;
  }
  *p++ = (uint8_t)value;
  return p;
}

/* Appends a text field: its length (under 128, so one varint byte) and its
 * first `max` bytes at most. */
static uint8_t *text_field(uint8_t *p, const char *text, uint32_t max) {
  uint32_t len = 0;
  while (text[len] && len < max) ++len;
  *p++ = (uint8_t)len;
  memcpy(p, text, len);
  return p + len;
}

/* Appends a file name of at most EM_FILE_MAX characters; a longer one
 * (CMake passes absolute paths) keeps its end, the file's own name, after
 * "...". */
static uint8_t *file_field(uint8_t *p, const char *file) {
  uint32_t len = 0;
  while (file[len] && len < 0xFFFFu) ++len; /* bounded: no call to strlen */
  uint8_t *end = text_field(p, len > EM_FILE_MAX ? file + len - EM_FILE_MAX : file, EM_FILE_MAX);
  if (len > EM_FILE_MAX) memcpy(p + 1, "...", 3);
  return end;
}

uint32_t em_fit_name(char *out, const char *name, uint32_t max) {
  uint32_t hash = 2166136261u, n = 0; /* FNV-1a */
  for (; name[n]; ++n) {
    hash = (hash ^ (uint8_t)name[n]) * 16777619u;
    if (n < max) out[n] = name[n];
  }
  if (n <= max) return n;
  for (n = max; n > max - 8; hash >>= 4) out[--n] = "0123456789abcdef"[hash & 15];
  out[max - 9] = '~';
  return max;
}

/* Appends a little-endian u32: one unaligned store on Cortex-M3/M4/M7,
 * byte stores on M0+. Allocations and frees use these so the hot path has
 * no varint loops (docs/formats/emt.md, ALLOC32/FREE32). */
static uint8_t *u32(uint8_t *p, uint32_t value) {
#if defined(__ARM_BIG_ENDIAN)
  p[0] = (uint8_t)value; p[1] = (uint8_t)(value >> 8); p[2] = (uint8_t)(value >> 16); p[3] = (uint8_t)(value >> 24);
#else
  memcpy(p, &value, 4);
#endif
  return p + 4;
}

/* The hot path for allocations and frees: ring transport, no SYNC due and
 * room for the record without wrapping - then the record is written straight
 * into the ring by this one function. Returns 0 when the general path
 * (open_record/close_record) has to run instead. */
static inline int fast_record(uint8_t tag, uint8_t pool, uint32_t align, uint32_t address, uint32_t size,
                              uint32_t site) {
  em_ring *ring = em.cfg.ring;
  if (!ring) return 0;
  uint32_t primask = em_irq_save();
  /* The clock is read before the ring, so nothing computed from the ring
   * has to survive the call in a spilled register. */
  uint32_t now = EM_NOW();
  uint32_t head = ring->head, at = head & (ring->size - 1);
  /* A SYNC due (a drop also zeroes until_sync) is tested with interrupts
   * masked: an interrupt's record can take it to 0 just before. */
  if (em.until_sync == 0 || ring->size - (head - ring->tail) < 24 || ring->size - at < 24) {
    em_irq_restore(primask);
    return 0;
  }
  uint32_t dt = now - em.last_time;
  uint8_t *start = ring->data + at, *p = start;
  uint32_t check = address ^ site ^ pool ^ tag; /* with EM_CHECK_WORDS */
  *p++ = tag;
  while (dt >= 0x80) {
    *p++ = (uint8_t)(dt | 0x80);
    check ^= (dt | 0x80) & 0xFF;
    dt >>= 7;
  }
  *p++ = (uint8_t)dt;
  check ^= dt;
  *p++ = pool;
  if (tag == TAG_ALLOC32) {
    uint8_t a = (uint8_t)(align > 255 ? 255 : align);
    *p++ = a;
    check ^= size ^ a;
  }
  p = u32(p, (uint32_t)address);
  if (tag == TAG_ALLOC32) p = u32(p, size);
  p = u32(p, site);
  if (EM_CHECK_WORDS) {
    /* The XOR of the record's bytes is that of the words' bytes. */
    check ^= check >> 16;
    check ^= check >> 8;
    *p++ = (uint8_t)check;
  } else {
    p = check_end(start, p);
  }
  EM_COMPILER_BARRIER();
  ring->head = head + (uint32_t)(p - start);
  em.last_time = now;
  --em.until_sync;
  em_irq_restore(primask);
  return 1;
}

/* ---- [MEM] text encoding (seed 001) ------------------------------------ */

static uint32_t put_dec(char *out, uintptr_t v) {
  char tmp[20];
  uint32_t n = 0, k = 0;
  do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (n) out[k++] = tmp[--n];
  return k;
}

static uint32_t put_str(char *out, const char *s) {
  uint32_t n = 0;
  while (s[n] && n < 96) { out[n] = s[n]; ++n; }
  return n;
}

static int plain(uint8_t c) { return c > ' ' && c < 0x7F && c != '%' && c != '='; }

/* A name or text value: space, tab, '%', '=', control characters and DEL
 * as %XX (docs/formats/textlog.md), at most 96 characters written. */
static uint32_t put_esc(char *out, const char *s) {
  static const char digits[] = "0123456789ABCDEF";
  uint32_t n = 0;
  for (; *s; ++s) {
    uint8_t c = (uint8_t)*s;
    if (plain(c)) {
      if (n + 1 > 96) break;
      out[n++] = (char)c;
    } else {
      if (n + 3 > 96) break;
      out[n++] = '%';
      out[n++] = digits[c >> 4];
      out[n++] = digits[c & 15];
    }
  }
  return n;
}

/* Eight digits, more for an address of a 64-bit build past 32 bits. */
static uint32_t put_hex(char *out, uintptr_t v) {
  static const char digits[] = "0123456789abcdef";
  int n = 8;
#if UINTPTR_MAX > 0xFFFFFFFFu
  while (n < 16 && (v >> (4 * n))) ++n;
#endif
  out[0] = '0';
  out[1] = 'x';
  for (int i = 0; i < n; ++i) out[2 + i] = digits[(v >> (4 * (n - 1 - i))) & 15];
  return (uint32_t)n + 2;
}

static uint32_t put_site(char *out, em_site site) {
  uint32_t n = 0;
  if (!site) return 0;
  n += put_str(out, " site=");
  if (site & 1u) return n + put_hex(out + n, (uintptr_t)(site >> 1));
  uint32_t file = (site >> 1) >> 20, line = (site >> 1) & 0xFFFFFu;
  if (file >= 1 && file <= EM_MAX_FILES && em.files[file - 1]) {
    const char *name = em.files[file - 1];
    /* As in emt, the end of a long path names the file: the longest end
     * whose escaped form fits after "..." (escapes take three characters). */
    uint32_t len = 0, escaped = 0;
    while (name[len] && len < 0xFFFFu) escaped += plain((uint8_t)name[len++]) ? 1 : 3;
    if (escaped > 96) {
      n += put_str(out + n, "...");
      uint32_t from = len, room = 93;
      while (from > 0 && (plain((uint8_t)name[from - 1]) ? 1u : 3u) <= room)
        room -= plain((uint8_t)name[--from]) ? 1 : 3;
      name += from;
    }
    n += put_esc(out + n, name);
  }
  out[n++] = ':';
  return n + put_dec(out + n, line);
}

/* The longest line holds two strings of at most 96 characters (a site's
 * file, 99 when cut after "...", and a pool name, or a pool and the pool it
 * shares) and under 110 more: REALLOC with a site and a pool is 288, 306
 * with a 64-bit build's addresses. */
typedef struct {
  char text[320];
  uint32_t n;
  int lost; /* of a pool past EM_MAX_POOLS: no name to send it under */
} line_t;

/* Room before the verb for "[MEM][<stamp>] ", written by line_end. */
#define EM_STAMP_ROOM 18

static void line_start(line_t *l, const char *verb) {
  l->lost = 0;
  l->n = EM_STAMP_ROOM;
  l->n += put_str(l->text + l->n, verb);
}
static void line_num(line_t *l, const char *key, uintptr_t v) {
  l->n += put_str(l->text + l->n, key);
  l->n += put_dec(l->text + l->n, v);
}
static void line_pool(line_t *l, uint8_t pool) {
  if (pool < EM_MAX_POOLS && em.pool_name[pool]) {
    l->n += put_str(l->text + l->n, " pool=");
    l->n += put_esc(l->text + l->n, em.pool_name[pool]);
  } else if (pool >= EM_MAX_POOLS && pool < em.pools) {
    l->lost = 1; /* without pool= the host would count it to the default heap */
  }
}
static void line_addr(line_t *l, uint8_t pool, uintptr_t address) {
  int arena = pool < EM_MAX_POOLS && em.pool_kind[pool] == 'a';
  if (arena) {
    line_num(l, " offset=", address);
  } else {
    l->n += put_str(l->text + l->n, " addr=");
    l->n += put_hex(l->text + l->n, address);
  }
}
static void line_end(line_t *l);
/* Site, pool and newline: how every memory record's line ends. */
static void line_close(line_t *l, uint8_t pool, em_site site) {
  l->n += put_site(l->text + l->n, site);
  line_pool(l, pool);
  line_end(l);
}

/* The stamp is read with interrupts masked, as the line goes out: read
 * before, an interrupt's line could go out between with a later stamp.
 * Lines lost since the last DROP line go out first, in a DROP line of
 * their own (docs/formats/textlog.md); a line that cannot follow one is
 * lost too, so the host never reads a record after a loss it was not told. */
static void line_end(line_t *l) {
  l->text[l->n++] = '\n';
  uint32_t primask = em_irq_save();
  char stamp[EM_STAMP_ROOM];
  uint32_t k = put_str(stamp, "[MEM][");
  k += put_dec(stamp + k, EM_NOW());
  k += put_str(stamp + k, "] ");
  char *line = l->text + EM_STAMP_ROOM - k;
  memcpy(line, stamp, k);
  int told = em.dropped == em.dropped_told;
  if (!told) {
    char drop[40];
    uint32_t n = k;
    memcpy(drop, stamp, k);
    n += put_str(drop + n, "DROP ");
    n += put_dec(drop + n, em.dropped - em.dropped_told);
    drop[n++] = '\n';
    told = transmit((const uint8_t *)drop, n);
    if (told) em.dropped_told = em.dropped;
  }
  if (l->lost) {
    ++em.dropped;
  } else if (!told || !transmit((const uint8_t *)line, l->n - (EM_STAMP_ROOM - k))) {
    ++em.dropped;
    if (em.cfg.ring) ++em.cfg.ring->dropped;
  }
  em_irq_restore(primask);
}

/* ---- summary mode ------------------------------------------------------ */

#if EM_SUMMARY
/* A pool past EM_MAX_POOLS has no counters: what it does is lost, and said
 * so by the DROP count the next record carries (after a SYNC, which is
 * what sends a DROP). */
static int level_lost(uint8_t pool) {
  if (pool < EM_MAX_POOLS) return 0;
  uint32_t primask = em_irq_save();
  ++em.dropped;
  em.need_sync = 1;
  em_irq_restore(primask);
  return 1;
}

/* Counters only, with interrupts masked for the read-modify-write. */
static void level_set(uint8_t pool, uint32_t used) {
  em.level[pool].used = used;
  if (used > em.level[pool].peak) em.level[pool].peak = used;
}

static void level_alloc(uint8_t pool, uintptr_t address, uint32_t size) {
  if (level_lost(pool)) return;
  uint32_t primask = em_irq_save();
  /* A heap uses the bytes of its blocks; an arena its top, as the host counts. */
  uint32_t used = em.level[pool].used;
  if (em.pool_kind[pool] == 'a') used = (uint32_t)address + size > used ? (uint32_t)address + size : used;
  else used += size;
  level_set(pool, used);
  em_irq_restore(primask);
}

static void level_free(uint8_t pool, uint32_t size) {
  if (level_lost(pool)) return;
  uint32_t primask = em_irq_save();
  em.level[pool].used = em.level[pool].used > size ? em.level[pool].used - size : 0;
  em_irq_restore(primask);
}

void em_pool_level(uint8_t pool, uint32_t used, uint32_t largest_free) {
  if (level_lost(pool)) return;
  uint32_t primask = em_irq_save();
  level_set(pool, used);
  em.level[pool].largest_free = largest_free;
  em_irq_restore(primask);
}

void em_summary(void) {
  for (uint8_t pool = 0; pool < em.pools && pool < EM_MAX_POOLS; ++pool) {
    record_t r;
    uint8_t *p = open_record(&r, TAG_SUMMARY, 1);
    uint32_t used = em.level[pool].used, largest = em.level[pool].largest_free;
    p = v(p, pool);
    p = v(p, used);
    p = v(p, em.level[pool].peak - used); /* the peak above what is used now: 0 mostly */
    p = v(p, largest == EM_LARGEST_UNKNOWN ? 0u : largest + 1u);
    p = v(p, em.level[pool].failures);
    /* close_record restores interrupts: reset what was sent while still masked. */
    uint32_t dropped_before = em.dropped;
    uint32_t primask = r.primask;
    r.primask = 1;
    close_record(&r, p, 1);
    if (em.dropped == dropped_before) {
      em.level[pool].peak = used;
      em.level[pool].failures = 0;
    }
    em_irq_restore(primask);
  }
}
#endif

/* ---- public API -------------------------------------------------------- */

void em_init(const em_config *config) {
  memset(&em, 0, sizeof em);
  em.cfg = *config;
#if EM_HAS_DWT
  EM_REG(0xE000EDFCu) |= 1u << 24; /* DEMCR.TRCENA */
  EM_REG(0xE0001000u) |= 1u;       /* DWT_CTRL.CYCCNTENA */
#endif
  if (em.cfg.itm && em.cfg.itm_framed && em.cfg.write) {
    static const uint8_t itm_sync[6] = {0, 0, 0, 0, 0, 0x80};
    em.cfg.write(itm_sync, sizeof itm_sync);
  }
  if (EM_TEXT) {
    line_t l; /* one per boot: a second one tells the host the device started again */
    line_start(&l, "BOOT");
    line_end(&l);
  } else {
    record_t r;
    em.need_sync = 1;
    uint8_t *p = open_record(&r, TAG_HEADER, 0);
    p = v(p, EM_WIDE ? 4 : 1); /* format version: 4 is 1 with 64-bit addresses */
    close_record(&r, v(p, em.cfg.tick_hz), 0);
  }
}

uint32_t em_dropped(void) { return em.dropped; }

uint8_t em_pool_shared(const char *name, em_pool_kind kind, uintptr_t base, uint32_t size, uint32_t align,
                       uint8_t partner) {
  uint8_t id = em.pools++;
  if (id < EM_MAX_POOLS) {
    em.pool_kind[id] = kind == EM_POOL_ARENA ? 'a' : 'h';
    em.pool_name[id] = name;
#if EM_SUMMARY
    em.level[id].largest_free = EM_LARGEST_UNKNOWN;
#endif
  }
  if (EM_TEXT) {
    line_t l;
    line_start(&l, "POOL name=");
    l.lost = id >= EM_MAX_POOLS; /* its events cannot be sent under its name either */
    l.n += put_esc(l.text + l.n, name);
    l.n += put_str(l.text + l.n, kind == EM_POOL_ARENA ? " kind=arena" : " kind=heap");
    /* A heap's base 0 is "not known", as in emt: base=0 would declare one at address 0. */
    if (base || kind == EM_POOL_ARENA) {
      l.n += put_str(l.text + l.n, " base=");
      l.n += put_hex(l.text + l.n, base);
    }
    line_num(&l, " size=", size);
    if (partner < EM_MAX_POOLS && em.pool_name[partner]) {
      l.n += put_str(l.text + l.n, " shares=");
      l.n += put_esc(l.text + l.n, em.pool_name[partner]);
    }
    line_end(&l);
    return id;
  }
  record_t r;
  uint8_t *p = open_record(&r, TAG_POOL, 0);
  p = v(p, id);
  *p++ = (uint8_t)kind;
  p = vw(p, base);
  p = v(p, size);
  p = v(p, align);
  uint32_t len = em_fit_name((char *)p + 1, name, EM_POOL_NAME_MAX);
  *p = (uint8_t)len;
  p += 1 + len;
  close_record(&r, v(p, partner == 0xFF ? 0u : partner + 1u), 0);
  return id;
}

em_site em_site_here(const char *file, uint32_t line) {
  uint32_t id = 0;
  /* Masked: an interrupt registering another file between the lookup and
   * the insert would take the same slot. */
  uint32_t primask = em_irq_save();
  for (uint32_t i = 0; i < em.files_used; ++i)
    if (em.files[i] == file) id = i + 1;
  if (!id && em.files_used < EM_MAX_FILES) {
    em.files[em.files_used] = file;
    id = ++em.files_used;
    if (!EM_TEXT && !EM_SUMMARY) { /* summaries name no site */
      record_t r;
      uint8_t *p = open_record(&r, TAG_STRING, 0);
      close_record(&r, file_field(v(p, id), file), 0);
    }
  }
  em_irq_restore(primask);
  /* No id left: a site without a file would join every other file's sites
   * of the same line number. "No site" instead. */
  return id ? ((id << 20) | (line & 0xFFFFFu)) << 1 : 0;
}

/* The general path, kept out of line: its record buffer and registers would
 * otherwise be set up on every call, fast path included. */
static __attribute__((noinline)) void alloc_slow(uint8_t pool, uintptr_t address, uint32_t size, uint32_t align,
                                                 em_site site) {
  record_t r;
  if (EM_WIDE) {
    uint8_t *p = v(v(vw(v(open_record(&r, TAG_ALLOC, 1), pool), address), size), align);
    close_record(&r, vw(p, (uintptr_t)site), 1);
    return;
  }
  uint8_t *p = open_record(&r, TAG_ALLOC32, 1);
  *p++ = pool;
  *p++ = (uint8_t)(align > 255 ? 255 : align);
  p = u32(p, (uint32_t)address);
  p = u32(p, size);
  close_record(&r, u32(p, site), 1);
}

static __attribute__((noinline)) void free_slow(uint8_t pool, uintptr_t address, em_site site) {
  record_t r;
  if (EM_WIDE) {
    close_record(&r, vw(vw(v(open_record(&r, TAG_FREE, 1), pool), address), (uintptr_t)site), 1);
    return;
  }
  uint8_t *p = open_record(&r, TAG_FREE32, 1);
  *p++ = pool;
  p = u32(p, (uint32_t)address);
  close_record(&r, u32(p, site), 1);
}

void em_alloc(uint8_t pool, uintptr_t address, uint32_t size, uint32_t align, em_site site) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, "ALLOC");
    line_num(&l, " size=", size);
    line_num(&l, " align=", align);
    line_addr(&l, pool, address);
    line_close(&l, pool, site);
    return;
  }
#if EM_SUMMARY
  (void)align;
  (void)site;
  level_alloc(pool, address, size);
  return;
#endif
  if (!EM_WIDE && fast_record(TAG_ALLOC32, pool, align, (uint32_t)address, size, (uint32_t)site)) return;
  alloc_slow(pool, address, size, align, site);
}

void em_free(uint8_t pool, uintptr_t address, em_site site) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, "FREE");
    line_addr(&l, pool, address);
    line_close(&l, pool, site);
    return;
  }
#if EM_SUMMARY
  /* No size: a heap's used bytes cannot go down (em_free_sized can); an
   * arena's top is reported by its allocator through em_pool_level. */
  (void)pool;
  (void)address;
  (void)site;
  return;
#endif
  if (!EM_WIDE && fast_record(TAG_FREE32, pool, 0, (uint32_t)address, 0, (uint32_t)site)) return;
  free_slow(pool, address, site);
}

#if EM_SUMMARY
void em_free_sized(uint8_t pool, uintptr_t address, uint32_t size, em_site site) {
  (void)address;
  (void)site;
  level_free(pool, size);
}
#endif

void em_realloc(uint8_t pool, uintptr_t old_address, uintptr_t address, uint32_t size, em_site site) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, "REALLOC");
    line_num(&l, " old=", old_address);
    line_num(&l, " size=", size);
    line_addr(&l, pool, address);
    line_close(&l, pool, site);
    return;
  }
#if EM_SUMMARY
  /* The old block's size is unknown here: summary callers free it with
   * em_free_sized and allocate the new one (edgemem_malloc_wrap.c). */
  (void)old_address;
  level_alloc(pool, address, size);
  (void)site;
  return;
#endif
  record_t r;
  uint8_t *p = open_record(&r, TAG_REALLOC, 1);
  p = v(p, pool);
  p = vw(p, old_address);
  p = vw(p, address);
  p = v(p, size);
  close_record(&r, vw(p, (uintptr_t)site), 1);
}

void em_alloc_failed(uint8_t pool, uint32_t size, uint32_t align, em_site site) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, "ALLOC_FAIL");
    line_num(&l, " size=", size);
    line_num(&l, " align=", align);
    line_close(&l, pool, site);
    return;
  }
#if EM_SUMMARY
  (void)size;
  (void)align;
  (void)site;
  if (!level_lost(pool)) {
    uint32_t primask = em_irq_save();
    ++em.level[pool].failures;
    em_irq_restore(primask);
  }
  return;
#endif
  record_t r;
  uint8_t *p = open_record(&r, TAG_ALLOC_FAIL, 1);
  p = v(p, pool);
  p = v(p, size);
  p = v(p, align);
  close_record(&r, vw(p, (uintptr_t)site), 1);
}

static void simple(uint8_t tag, const char *text_verb, uint32_t value, int has_value) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, text_verb);
    if (has_value) line_num(&l, " ", value);
    line_end(&l);
    return;
  }
  record_t r;
  uint8_t *p = open_record(&r, tag, 1);
  close_record(&r, v(p, value), 1);
}

void em_inference_begin(uint32_t index) { simple(TAG_INFER_BEGIN, "INFER begin", index, 1); }
/* Summaries go before the end marker: the host reads them as this inference's. */
void em_inference_end(uint32_t index) {
#if EM_SUMMARY
  em_summary();
#endif
  simple(TAG_INFER_END, "INFER end", index, 1);
}

void em_arena_reset(uint8_t pool) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, "RESET");
    line_pool(&l, pool);
    line_end(&l);
    return;
  }
#if EM_SUMMARY
  if (!level_lost(pool)) {
    uint32_t primask = em_irq_save();
    em.level[pool].used = 0;
    em_irq_restore(primask);
  }
  return;
#endif
  simple(TAG_RESET, "", pool, 1);
}

void em_guard(uint8_t pool, int intact) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, intact ? "GUARD ok" : "GUARD corrupt");
    line_pool(&l, pool);
    line_end(&l);
    return;
  }
  record_t r;
  uint8_t *p = open_record(&r, TAG_GUARD, 1);
  p = v(p, pool);
  *p++ = intact ? 0 : 1;
  close_record(&r, p, 1);
}

static void named(uint8_t tag, const char *verb, const char *text, uint32_t value) {
  if (EM_TEXT) {
    line_t l;
    line_start(&l, verb);
    if (tag == TAG_COUNTER) {
      l.n += put_str(l.text + l.n, " name=");
      l.n += put_esc(l.text + l.n, text);
      line_num(&l, " value=", value);
    } else {
      l.n += put_str(l.text + l.n, " ");
      l.n += put_esc(l.text + l.n, text);
    }
    line_end(&l);
    return;
  }
  record_t r;
  uint8_t *p = text_field(open_record(&r, tag, 1), text, 32);
  if (tag == TAG_COUNTER) p = v(p, value);
  close_record(&r, p, 1);
}

void em_mark(const char *text) { named(TAG_MARK, "MARK", text, 0); }
void em_counter(const char *name, uint32_t value) { named(TAG_COUNTER, "COUNTER", name, value); }

static const uint8_t guard_pattern[4] = {0xEF, 0xBE, 0xAD, 0xDE}; /* 0xDEADBEEF, little-endian */

void em_guard_fill(uint8_t *zone, uint32_t size) {
  for (uint32_t i = 0; i < size; ++i) zone[i] = guard_pattern[i & 3];
}

int em_guard_intact(const uint8_t *zone, uint32_t size) {
  for (uint32_t i = 0; i < size; ++i)
    if (zone[i] != guard_pattern[i & 3]) return 0;
  return 1;
}

#endif /* EDGEMEM_ENABLE */
