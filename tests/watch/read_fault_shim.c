/* LD_PRELOAD shim for the watch tests: the Nth read() of the file named by
 * EDGEMEM_FAIL_READ_PATH (as /proc/self/fd names it) fails once with EIO,
 * as a flaky NFS mount or USB disk does. N is EDGEMEM_FAIL_READ_AT (2 when
 * unset). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t read(int fd, void* buf, size_t count) {
  static ssize_t (*real_read)(int, void*, size_t);
  static int reads, failed;
  if (!real_read) real_read = (ssize_t(*)(int, void*, size_t))dlsym(RTLD_NEXT, "read");
  const char* path = getenv("EDGEMEM_FAIL_READ_PATH");
  if (path && !failed) {
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n > 0) {
      target[n] = 0;
      const char* at = getenv("EDGEMEM_FAIL_READ_AT");
      if (strcmp(target, path) == 0 && ++reads == (at ? atoi(at) : 2)) {
        failed = 1;
        errno = EIO;
        return -1;
      }
    }
  }
  return real_read(fd, buf, count);
}
