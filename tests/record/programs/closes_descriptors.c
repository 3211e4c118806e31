/* A daemon's start-up: closes every descriptor past stderr, then opens
 * files of its own (which take the lowest numbers) and writes them, while
 * it allocates: 1,000 blocks before, then 100,000 allocations of which
 * every 100th is kept. argv[1]: a directory for its 4 files of 256 KiB of
 * 'U'. The recorder's own file must neither lose records nor be written
 * through a number the program now owns. Then fopen calls, whose stacks
 * (through libc, no frame pointers) go to libunwind, which tests addresses
 * through a pipe of its own: a pipe at numbers the program now owns read,
 * wrote and closed its files. Each file then gets a 'V' through the
 * program's own descriptor. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void* volatile kept;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  for (int i = 0; i < 1000; ++i) kept = malloc(32);
  for (int fd = 3; fd < 4096; ++fd) close(fd);
  static char block[256 * 1024];
  memset(block, 'U', sizeof block);
  int fds[4];
  for (int i = 0; i < 4; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data%d", argv[1], i);
    fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fds[i] < 0 || write(fds[i], block, sizeof block) != (ssize_t)sizeof block) return 1;
  }
  for (int i = 0; i < 20; ++i) {
    FILE* f = fopen("/proc/self/stat", "r");
    if (!f) return 1;
    fclose(f);
  }
  for (int i = 0; i < 4; ++i)
    if (write(fds[i], "V", 1) != 1) return 3;
  for (int i = 0; i < 100000; ++i) {
    void* p = malloc(48);
    if (i % 100) free(p);
    else kept = p;
  }
  return 0;
}
