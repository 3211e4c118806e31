/* Anonymous mappings cut in pieces, the way allocators and runtimes do:
 *   4 MiB mapped, its ends unmapped to leave a 2 MiB-aligned 2 MiB middle
 *     (jemalloc, mimalloc)                                     (2 MiB stays)
 *   a 128 KiB PROT_NONE reservation filled by two 64 KiB MAP_FIXED
 *     mappings, then unmapped by one munmap over both         (gone)
 *   a 64 KiB mapping unmapped by its middle, then its head, then its tail
 *                                                              (gone)
 *   a 64 KiB mapping whose first 16 KiB mremap moves and grows to 32 KiB
 *                                                   (48 + 32 KiB stay)
 *   a 64 KiB mapping moved by mremap with MREMAP_DONTUNMAP
 *                                          (both 64 KiB ranges stay)
 *   with --file-over, a 64 KiB mapping a file mapped with MAP_FIXED
 *     replaces (the preload follows it; the eBPF recorder sees only
 *     anonymous mappings)                                     (gone)
 *   with --terabytes, first 2 TiB mapped read-write with MAP_NORESERVE,
 *     its top half unmapped, then the rest (sanitizers' shadow memory and
 *     runtimes reserve that much)                  (gone; the peak is 2 TiB)
 *   with --mremap-edges, a 16 KiB mapping that mremap cannot grow in place
 *     (a mapping lies above it), five times            (16 + 16 KiB stay,
 *     both made by map()), and a 64 KiB reservation whose last 16 KiB are
 *     committed, shrunk by mremap to its first 16 KiB, still reserved
 *                                                              (gone),
 *     and two 64 KiB mappings shrunk where they lie by mremap, to 16 KiB
 *     and (MREMAP_MAYMOVE) to 32 KiB          (16 + 32 KiB stay, made by map())
 * Left in the mmap pool: 2,310,144 B in 5 mappings; its peak is the first
 * 4 MiB. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static char* map(void* at, size_t length, int prot, int extra) {
  void* p = mmap(at, length, prot, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  return p;
}

static void unmap(void* p, size_t length) {
  if (munmap(p, length) != 0) {
    perror("munmap");
    exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--terabytes") == 0) {
    const size_t tib = (size_t)1 << 40;
    char* vast = mmap(NULL, 2 * tib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (vast == MAP_FAILED) {  /* strict overcommit, or a small address space */
      puts("mmap-pieces-test: no terabytes");
      return 0;
    }
    vast[0] = vast[2 * tib - 1] = 1;
    unmap(vast + tib, tib);
    unmap(vast, tib);
  }
  char* raw = map(NULL, 4 * MIB, PROT_READ | PROT_WRITE, 0);
  char* aligned = (char*)(((uintptr_t)raw + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1));
  if (aligned > raw) unmap(raw, (size_t)(aligned - raw));
  if (aligned + 2 * MIB < raw + 4 * MIB) unmap(aligned + 2 * MIB, (size_t)(raw + 4 * MIB - (aligned + 2 * MIB)));

  char* reserved = map(NULL, 128 * KIB, PROT_NONE, 0);
  map(reserved, 64 * KIB, PROT_READ | PROT_WRITE, MAP_FIXED);
  map(reserved + 64 * KIB, 64 * KIB, PROT_READ | PROT_WRITE, MAP_FIXED);
  unmap(reserved, 128 * KIB);

  char* pieces = map(NULL, 64 * KIB, PROT_READ | PROT_WRITE, 0);
  unmap(pieces + 16 * KIB, 16 * KIB);
  unmap(pieces, 16 * KIB);
  unmap(pieces + 32 * KIB, 32 * KIB);

  char* head = map(NULL, 64 * KIB, PROT_READ | PROT_WRITE, 0);
  if (mremap(head, 16 * KIB, 32 * KIB, MREMAP_MAYMOVE) == MAP_FAILED) return 1;

  char* moved = map(NULL, 64 * KIB, PROT_READ | PROT_WRITE, 0);
  /* With MREMAP_DONTUNMAP the kernel takes the fifth argument as a hint: NULL, not what the register holds. */
  if (mremap(moved, 64 * KIB, 64 * KIB, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL) == MAP_FAILED) {
    perror("mremap DONTUNMAP");
    return 1;
  }
  if (argc > 1 && strcmp(argv[1], "--mremap-edges") == 0) {
    char* low = map(NULL, 32 * KIB, PROT_READ | PROT_WRITE, 0);
    unmap(low + 16 * KIB, 16 * KIB);
    map(low + 16 * KIB, 16 * KIB, PROT_READ, MAP_FIXED);
    for (int i = 0; i < 5; ++i)
      if (mremap(low, 16 * KIB, 24 * KIB, 0) != MAP_FAILED) return 1;
    char* reservation = map(NULL, 64 * KIB, PROT_NONE, 0);
    if (mprotect(reservation + 48 * KIB, 16 * KIB, PROT_READ | PROT_WRITE) != 0) return 1;
    reservation[48 * KIB] = 1;
    if (mremap(reservation, 64 * KIB, 16 * KIB, 0) != reservation) return 1;
    char* shrunk = map(NULL, 64 * KIB, PROT_READ | PROT_WRITE, 0);
    if (mremap(shrunk, 64 * KIB, 16 * KIB, 0) != shrunk) return 1;
    shrunk = map(NULL, 64 * KIB, PROT_READ | PROT_WRITE, 0);
    if (mremap(shrunk, 64 * KIB, 32 * KIB, MREMAP_MAYMOVE) != shrunk) return 1;
  }
  if (argc > 1 && strcmp(argv[1], "--file-over") == 0) {
    char* replaced = map(NULL, 64 * KIB, PROT_READ | PROT_WRITE, 0);
    int fd = open("/proc/self/exe", O_RDONLY);
    /* Mapped past the file's end is allowed (only touching it faults); it stays mapped. */
    if (fd < 0 || mmap(replaced, 64 * KIB, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) return 1;
  }
  puts("mmap-pieces-test: done");
  return 0;
}
