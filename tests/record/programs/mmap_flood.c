/* Fills a mapping watcher's buffer: COUNT anonymous mappings (each one a
 * PERF_RECORD_MMAP2, as a large malloc's is), then a byte on stdout, then,
 * once a byte arrives on stdin, maps FILE read-only (a library dlopen'd
 * after the flood) and exits. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s COUNT FILE\n", argv[0]);
    return 2;
  }
  long count = atol(argv[1]);
  for (long i = 0; i < count; ++i) {
    void* p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    munmap(p, 1 << 20);
  }
  char byte = 'f';
  if (write(1, &byte, 1) != 1 || read(0, &byte, 1) != 1) return 1;
  int fd = open(argv[2], O_RDONLY);
  if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) return 1;
  return 0;
}
