/* Anonymous mappings made by the program itself, beside those the C library
 * makes for its own use, for the recorders' "mmap" pool:
 *   a 64 KiB mapping unmapped whole            (gone)
 *   a 64 KiB mapping unmapped by its first 16  (its 48 KiB tail stays)
 *   a 64 KiB mapping grown to 128 KiB (mremap) (stays)
 *   a 32 KiB mapping                           (stays)
 *   an 8 KiB mapping through mmap64, as programs built with
 *     _FILE_OFFSET_BITS=64 (CPython) make them (stays)
 *   a 16 KiB mapping by a thread's start routine that ends in
 *     `return mmap(...)`: built at -O2, a jump to mmap, which then returns
 *     into the C library's thread start                  (stays)
 *   a file mapped (not anonymous: not recorded), a 1 MiB and a 2 MiB malloc
 *   (malloc maps those itself: its pool, not this one; the 2 MiB one stays),
 *   and the thread's stack (the C library's mapping).
 * Left in the mmap pool: 48 + 128 + 32 + 8 + 16 KiB in 5 mappings. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void* volatile kept;

__attribute__((noinline)) static void* map_anonymous(size_t length) {
  void* p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) exit(1);
  return p;
}

/* The tail call: nothing after mmap, so GCC jumps to it at -O2. */
static void* map_in_thread(void* length) {
  return mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int main(void) {
  void* whole = map_anonymous(64 << 10);
  if (munmap(whole, 64 << 10) != 0) return 1;
  char* head_gone = map_anonymous(64 << 10);
  if (munmap(head_gone, 16 << 10) != 0) return 1;
  void* grown = map_anonymous(64 << 10);
  if (mremap(grown, 64 << 10, 128 << 10, MREMAP_MAYMOVE) == MAP_FAILED) return 1;
  map_anonymous(32 << 10);
  if (mmap64(NULL, 8 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) return 1;
  int fd = open("/proc/self/exe", O_RDONLY);
  if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) return 1;
  free(malloc(1 << 20));
  kept = malloc(2 << 20);
  pthread_t thread;
  void* mapped = NULL;
  if (pthread_create(&thread, NULL, map_in_thread, (void*)(16 << 10)) != 0 || pthread_join(thread, &mapped) != 0 ||
      mapped == MAP_FAILED)
    return 1;
  return 0;
}
