/* Address space reserved with PROT_NONE and memory committed inside it, as
 * V8 (its code range and heap pages), glibc's thread arenas and jemalloc do:
 *   64 MiB reserved; four pages of 256 KiB made read-write by mprotect in
 *     commit(), one of them made PROT_NONE again, one switched to
 *     read-execute and back (W^X)                 (3 x 256 KiB stay)
 *   a 1 MiB read-write mapping whose first page becomes a PROT_NONE guard
 *     page                                        (1 MiB - 1 page stays)
 *   1 MiB reserved, 128 KiB of it mapped read-write with MAP_FIXED
 *                                                 (128 KiB stays)
 *   4 MiB reserved and unmapped again             (nothing)
 *   64 pages reserved, each made read-write and PROT_NONE again in turn,
 *     then all 64 made read-write by one mprotect (64 pages stay, one
 *     mapping: the pieces given back are one reservation again)
 * Memory in the mmap pool at the end, and at its peak: 786,432 B + 1 MiB
 * - 1 page + 131,072 B + 64 pages, in 6 mappings. The reservations are address space, not memory:
 * recorded as allocations they made a peak of 70 MiB.
 * With --pkey every change is made by pkey_mprotect (key -1: as mprotect,
 * on any CPU), as V8 does on CPUs with protection keys: the same result. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static char* map(void* at, size_t length, int prot, int extra) {
  void* p = mmap(at, length, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  return p;
}

static int with_pkey;

static void protect(char* p, size_t length, int prot) {
  if ((with_pkey ? pkey_mprotect(p, length, prot, -1) : mprotect(p, length, prot)) != 0) {
    perror(with_pkey ? "pkey_mprotect" : "mprotect");
    exit(1);
  }
}

__attribute__((noinline)) static void commit(char* p, size_t length) {
  protect(p, length, PROT_READ | PROT_WRITE);
  p[0] = 1;
}

int main(int argc, char** argv) {
  with_pkey = argc > 1 && strcmp(argv[1], "--pkey") == 0;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char* cage = map(NULL, 64 * MIB, PROT_NONE, 0);
  for (int i = 0; i < 4; ++i) commit(cage + 4 * MIB + (size_t)i * 256 * KIB, 256 * KIB);
  protect(cage + 4 * MIB + 256 * KIB, 256 * KIB, PROT_NONE);
  protect(cage + 4 * MIB, 256 * KIB, PROT_READ | PROT_EXEC);
  protect(cage + 4 * MIB, 256 * KIB, PROT_READ | PROT_WRITE);

  char* guarded = map(NULL, 1 * MIB, PROT_READ | PROT_WRITE, 0);
  protect(guarded, page, PROT_NONE);

  char* arena = map(NULL, 1 * MIB, PROT_NONE, 0);
  map(arena, 128 * KIB, PROT_READ | PROT_WRITE, MAP_FIXED);

  char* gone = map(NULL, 4 * MIB, PROT_NONE, 0);
  if (munmap(gone, 4 * MIB) != 0) return 1;

  char* pieces = map(NULL, 64 * page, PROT_NONE, 0);
  for (size_t i = 0; i < 64; ++i) {
    protect(pieces + i * page, page, PROT_READ | PROT_WRITE);
    protect(pieces + i * page, page, PROT_NONE);
  }
  protect(pieces, 64 * page, PROT_READ | PROT_WRITE);
  printf("mmap-reserve-test: done, page %zu\n", page);
  return 0;
}
